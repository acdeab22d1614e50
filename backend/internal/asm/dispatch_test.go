package asm

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestPaths(t *testing.T) {
	ps := Paths()
	if len(ps) == 0 || ps[len(ps)-1] != "generic" {
		t.Fatalf("Paths() = %v: generic must be last", ps)
	}
	if !slices.Contains(ps, Path()) {
		t.Fatalf("Path() = %q not in %v", Path(), ps)
	}
	if _, err := SetPath("no-such-path"); err == nil {
		t.Fatal("SetPath accepted an unknown path")
	}
	prev, err := SetPath("generic")
	if err != nil || Path() != "generic" {
		t.Fatalf("SetPath(generic): %v, Path() = %q", err, Path())
	}
	SetPath(prev)
}

// TestNoasmEnv re-runs itself with ZONAL_NOASM=1 and checks that the child
// selected the generic path at init.
func TestNoasmEnv(t *testing.T) {
	if os.Getenv("ZONAL_NOASM") == "1" {
		if Path() != "generic" {
			t.Fatalf("ZONAL_NOASM=1 but Path() = %q", Path())
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestNoasmEnv$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ZONAL_NOASM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child with ZONAL_NOASM=1 failed: %v\n%s", err, out)
	}
}

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

// TestInitialPath: ZONAL_ASM_PATH picks any available path, an unknown or
// empty one leaves the best, and ZONAL_NOASM=1 wins over it; a child
// process checks that init honors the variable.
func TestInitialPath(t *testing.T) {
	best, generic := impls[0].path, impls[len(impls)-1].path
	for _, c := range []struct{ noasm, want, got string }{
		{"", "", best},
		{"", "no-such-path", best},
		{"", "generic", generic},
		{"1", best, generic},
	} {
		if p := initialPath(c.noasm, c.want); p.path != c.got {
			t.Errorf("ZONAL_NOASM=%q ZONAL_ASM_PATH=%q: path %q, want %q", c.noasm, c.want, p.path, c.got)
		}
	}
	for _, p := range Paths() {
		if got := initialPath("", p).path; got != p {
			t.Errorf("ZONAL_ASM_PATH=%q: path %q", p, got)
		}
	}
	if want := os.Getenv("ZONAL_INITIAL_PATH_CHILD"); want != "" {
		if Path() != want {
			t.Fatalf("%s=%s but Path() = %q", EnvPath, want, Path())
		}
		return
	}
	if os.Getenv("ZONAL_NOASM") == "1" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	second := Paths()[min(1, len(impls)-1)] // avx2 on an AVX-512 CPU
	cmd := exec.Command(exe, "-test.run=^TestInitialPath$", "-test.count=1")
	cmd.Env = append(os.Environ(), EnvPath+"="+second, "ZONAL_INITIAL_PATH_CHILD="+second)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child with %s=%s failed: %v\n%s", EnvPath, second, err, out)
	}
}

package purego_test

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/purego"
)

func TestCPUPath(t *testing.T) {
	ps := purego.CPUPaths()
	if len(ps) == 0 || ps[len(ps)-1] != "generic" {
		t.Fatalf("CPUPaths() = %v: generic must be last", ps)
	}
	if !slices.Contains(ps, purego.CPUPath()) {
		t.Fatalf("CPUPath() = %q not in %v", purego.CPUPath(), ps)
	}
	if _, err := purego.SetCPUPath("no-such-path"); !errors.Is(err, zonal.ErrUnknown) {
		t.Fatalf("SetCPUPath(no-such-path) = %v, want an error wrapping zonal.ErrUnknown", err)
	}
	prev, err := purego.SetCPUPath("generic")
	if err != nil || purego.CPUPath() != "generic" {
		t.Fatalf("SetCPUPath(generic): %v, CPUPath() = %q", err, purego.CPUPath())
	}
	if _, err := purego.SetCPUPath(prev); err != nil {
		t.Fatal(err)
	}
}

// TestNoasm checks both ways of forcing the pure-Go kernels: under the noasm
// build tag only "generic" exists; with ZONAL_NOASM=1 (checked in a child
// process, since the path is chosen at init) the generic path is selected,
// and the conformance suite passes there.
func TestNoasm(t *testing.T) {
	if noasmTag && !slices.Equal(purego.CPUPaths(), []string{"generic"}) {
		t.Fatalf("noasm build: CPUPaths() = %v, want [generic]", purego.CPUPaths())
	}
	if os.Getenv("ZONAL_NOASM") == "1" {
		if purego.CPUPath() != "generic" {
			t.Fatalf("ZONAL_NOASM=1 but CPUPath() = %q", purego.CPUPath())
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^(TestNoasm|TestConformance)$", "-test.count=1", "-test.short")
	cmd.Env = append(os.Environ(), "ZONAL_NOASM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child with ZONAL_NOASM=1 failed: %v\n%s", err, out)
	}
}

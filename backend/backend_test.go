package backend_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/backendtest"
)

// TestConformance runs the conformance suite on every compiled-in backend.
func TestConformance(t *testing.T) {
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { backendtest.Run(t, b) })
	}
}

// TestParity compares every pair of compiled-in backends on the same cases
// (with -tags netlib: purego against netlib in one process). With a single
// backend it compares it with itself, which checks determinism.
func TestParity(t *testing.T) {
	names := backend.Names()
	if len(names) == 1 {
		names = append(names, names[0])
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			a, _ := backend.ByName(names[i])
			b, _ := backend.ByName(names[j])
			t.Run(names[i]+"-"+names[j], func(t *testing.T) { backendtest.Parity(t, a, b) })
		}
	}
}

// TestConcurrent calls each backend from many goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	for _, name := range backend.Names() {
		b, _ := backend.ByName(name)
		t.Run(name, func(t *testing.T) { backendtest.Concurrent(t, b) })
	}
}

func TestNames(t *testing.T) {
	names := backend.Names()
	if !slices.Contains(names, "purego") {
		t.Fatalf("Names() = %v, want purego compiled in", names)
	}
	for _, n := range names {
		b, err := backend.ByName(n)
		if err != nil || b.Name() != n {
			t.Errorf("ByName(%q) = %v, %v", n, b, err)
		}
	}
}

func TestByNameUnknown(t *testing.T) {
	_, err := backend.ByName("cuda")
	if !errors.Is(err, zonal.ErrUnknown) {
		t.Fatalf("ByName(cuda) error = %v, want ErrUnknownBackend", err)
	}
	for _, n := range backend.Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list available backend %q", err, n)
		}
	}
	if !strings.Contains(err.Error(), `"cuda"`) {
		t.Errorf("error %q does not name the requested backend", err)
	}
}

func TestEnvOverride(t *testing.T) {
	t.Setenv(backend.EnvVar, "purego")
	b, err := backend.FromEnv()
	if err != nil || b.Name() != "purego" {
		t.Fatalf("FromEnv with %s=purego: %v, %v", backend.EnvVar, b, err)
	}
	if got := backend.Default().Name(); got != "purego" {
		t.Errorf("Default() with %s=purego = %s", backend.EnvVar, got)
	}
	// Surrounding blanks are ignored.
	t.Setenv(backend.EnvVar, " purego ")
	if b, err := backend.FromEnv(); err != nil || b.Name() != "purego" {
		t.Errorf("FromEnv with padded name: %v, %v", b, err)
	}
}

func TestFromEnvError(t *testing.T) {
	t.Setenv(backend.EnvVar, "bogus")
	_, err := backend.FromEnv()
	if !errors.Is(err, zonal.ErrUnknown) || !strings.Contains(err.Error(), backend.EnvVar) {
		t.Fatalf("FromEnv with %s=bogus: err = %v, want ErrUnknownBackend naming the variable", backend.EnvVar, err)
	}
	// Default never fails: it falls back to the compiled-in default.
	if got, want := backend.Default().Name(), backend.Names()[0]; got != want {
		t.Errorf("Default() with a bad %s = %s, want %s", backend.EnvVar, got, want)
	}
}

func TestFromEnvEmpty(t *testing.T) {
	t.Setenv(backend.EnvVar, "")
	b, err := backend.FromEnv()
	if err != nil || b.Name() != backend.Names()[0] {
		t.Fatalf("FromEnv with empty %s: %v, %v; want %s", backend.EnvVar, b, err, backend.Names()[0])
	}
	if got := backend.Default().Name(); got != wantDefault {
		t.Errorf("Default() = %s, want %s for this build", got, wantDefault)
	}
}

package kernels

import (
	"errors"
	"testing"

	"github.com/zonal-ml/zonal"
)

// TestTruncationTableBudget: the truncation tables grow like (R/sigma)^4; a
// radius far beyond sigma is refused with ErrTooLarge before anything is
// allocated (it used to take memory without bound), and a radius the budget
// allows still gives a bound.
func TestTruncationTableBudget(t *testing.T) {
	g, err := NewGaussian(1)
	if err != nil {
		t.Fatal(err)
	}
	// radius 800 sigma: z = 6.4e5, about 1e12 table entries.
	if _, err := TruncationBound(g, 13, 800, 10, 4, Options{}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("radius 800 sigma: got %v, want ErrTooLarge", err)
	}
	if _, err := ChooseTruncation(g, 13, 800, 1e-3, 10, 4, Options{}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("ChooseTruncation at radius 800 sigma: got %v, want ErrTooLarge", err)
	}
	// A small budget refuses a moderate radius too, and the default allows it.
	if _, err := TruncationBound(g, 13, 30, 10, 4, Options{MemoryBudget: 1 << 20}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("radius 30 sigma with a 1 MiB budget: got %v, want ErrTooLarge", err)
	}
	if b, err := TruncationBound(g, 13, 30, 10, 4, Options{}); err != nil || !(b >= 0) {
		t.Fatalf("radius 30 sigma: bound %g, %v", b, err)
	}
}

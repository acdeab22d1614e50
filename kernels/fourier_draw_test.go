package kernels

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
)

// oldFourierW draws the frequencies the way NewFourierMap did before it
// drew them into W^T: m x d (sphereRows with chi scaling, gaussianRows or
// Cauchy draws, divided by sigma), then transposed to d x m.
func oldFourierW(k Kernel, d, m int, seed uint64, orth bool) []float64 {
	rng := newRand(seed, 2)
	var w []float64
	switch kk := k.(type) {
	case Gaussian:
		if orth {
			w = sphereRows(rng, m, d, true)
			for i := 0; i < m; i++ {
				chi := 0.0
				for j := 0; j < d; j++ {
					v := rng.NormFloat64()
					chi += v * v
				}
				chi = math.Sqrt(chi)
				for j := 0; j < d; j++ {
					w[i*d+j] *= chi
				}
			}
		} else {
			w = gaussianRows(rng, m, d)
		}
		for i := range w {
			w[i] /= kk.Sigma
		}
	case Laplacian:
		w = make([]float64, m*d)
		for i := range w {
			w[i] = math.Tan(math.Pi*(rng.Float64()-0.5)) / kk.Sigma
		}
	}
	return transposed(w, m, d)
}

// TestFourierDrawnAsBefore: the frequencies drawn straight into W^T are
// the old m x d draw transposed, bit for bit, for Gaussian (plain and
// orthogonal, m below, equal to and above a multiple of d) and Laplacian
// kernels over several seeds.
func TestFourierDrawnAsBefore(t *testing.T) {
	for _, c := range []struct {
		k    Kernel
		d, m int
		orth bool
	}{
		{Gaussian{Sigma: 1.5}, 7, 20, false},
		{Gaussian{Sigma: 0.7}, 1, 3, false},
		{Gaussian{Sigma: 1.5}, 5, 12, true},
		{Gaussian{Sigma: 2}, 6, 6, true},
		{Gaussian{Sigma: 2}, 9, 4, true},
		{Laplacian{Sigma: 0.8}, 4, 10, false},
	} {
		for _, seed := range []uint64{0, 3, 12345} {
			f, err := NewFourierMap(c.k, c.d, FourierOptions{Features: 2 * c.m, Seed: seed, Orthogonal: c.orth})
			if err != nil {
				t.Fatal(err)
			}
			if want := oldFourierW(c.k, c.d, c.m, seed, c.orth); !slices.Equal(f.wt, want) {
				t.Errorf("%v d %d m %d orthogonal %t seed %d: W^T differs from the old draw transposed", c.k, c.d, c.m, c.orth, seed)
			}
		}
	}
}

// TestFourierBudget: building the map needs the d x m frequencies alone:
// a budget of exactly budget.Floats(m, d) bytes builds it, one byte less
// is a *zonal.TooLargeError needing that figure.
func TestFourierBudget(t *testing.T) {
	const d, m = 30, 50
	need := budget.Floats(m, d)
	for _, orth := range []bool{false, true} {
		o := FourierOptions{Options: Options{MemoryBudget: need}, Features: 2 * m, Orthogonal: orth}
		if _, err := NewFourierMap(Gaussian{Sigma: 1}, d, o); err != nil {
			t.Errorf("orthogonal %t, budget %d: %v", orth, need, err)
		}
		o.MemoryBudget = need - 1
		var te *zonal.TooLargeError
		if _, err := NewFourierMap(Gaussian{Sigma: 1}, d, o); !errors.As(err, &te) || te.Need != need {
			t.Errorf("orthogonal %t, budget %d: %v, want a TooLargeError needing %d", orth, need-1, err, need)
		}
	}
}

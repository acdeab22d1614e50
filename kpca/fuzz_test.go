package kpca

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// FuzzKPCA: NewIncremental, Fit, NewNystrom (and their first updates) with
// fuzzed dimensions and options on small data (n in 1..8 rows) return an
// error or a usable object, never panic, and allocate at most
// testctx.FuzzAllocFactor times the 64 MiB budget.
func FuzzKPCA(f *testing.F) {
	f.Add(1.0, 3, 5, 2, 0.0, 0, 0, 0.0, true, 1.0)
	f.Add(1.0, 1000000000, 5, 1000000000, 1e-3, 1000000, 1000000, 1.0, false, 1.0)
	f.Add(1e-160, 3, 8, 0, 0.5, 1, 1, 1e-300, true, 1e200)
	f.Add(1.0, -1, 2, -1, -1.0, -1, -1, math.NaN(), false, 0.0)
	f.Add(2.0, 2, 1, 3, math.NaN(), 0, 3, math.Inf(1), true, 1.0)
	f.Fuzz(func(t *testing.T, sigma float64, dim, n, comps int, reorth float64, every, probes int, rcond float64, mean bool, scale float64) {
		testctx.WithinBudget(t, "kpca constructors", func() {
			k, err := kernels.NewGaussian(sigma)
			if err != nil {
				return
			}
			opts := Options{MemoryBudget: testctx.FuzzBudget, MeanAdjust: mean, Components: comps, ReorthThreshold: reorth,
				CheckEvery: every, Probes: probes, RCond: rcond, Seed: 1}
			small := dim >= 1 && dim <= 6
			var x *mat.Dense
			if small {
				n = 1 + int(uint(n)%8)
				x = mat.NewDense(n, dim, nil)
				for i := 0; i < n; i++ {
					for j := 0; j < dim; j++ {
						x.Set(i, j, scale*math.Sin(float64(2*i+5*j+1)))
					}
				}
			}
			ctx := context.Background()
			if inc, err := NewIncremental(k, dim, opts); err == nil && small {
				if err := inc.Init(ctx, x); err == nil {
					_ = inc.Add(x.RawRowView(0))
					_, _ = inc.Model(comps)
				}
			}
			if small {
				if m, err := Fit(ctx, k, x, opts); err == nil {
					if m == nil {
						t.Fatal("Fit returned nil, nil")
					}
				}
			}
			noMean := opts
			noMean.MeanAdjust, noMean.Components = false, 0
			if ny, err := NewNystrom(k, dim, noMean); err == nil && small {
				for i := 0; i < n; i++ {
					if ny.Add(x.RawRowView(i)) != nil {
						break
					}
				}
				_, _ = ny.Map()
			}
		})
	})
}

package solvers

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// TestScaleRefusedBeforeFactoring: features near 1e308 and a sigma of
// 1e-160 are refused by every kernel solver with the sentinel and a message
// naming the problem, before any factorization; ParK in particular returns
// an error instead of panicking in a cell goroutine.
func TestScaleRefusedBeforeFactoring(t *testing.T) {
	x, y := synth(60, 2, 5)
	huge := mat.DenseCopyOf(x)
	huge.Scale(0.5e308, huge)
	ctx := context.Background()
	fits := map[string]func(k kernels.Kernel, x *mat.Dense) error{
		"KRR": func(k kernels.Kernel, x *mat.Dense) error { _, e := FitKRR(ctx, k, x, y, 1e-6, Options{}); return e },
		"Falkon": func(k kernels.Kernel, x *mat.Dense) error {
			_, e := FitFalkon(ctx, k, x, y, 1e-6, FalkonOptions{Centers: 20})
			return e
		},
		"ParK": func(k kernels.Kernel, x *mat.Dense) error {
			_, e := FitParK(ctx, k, x, y, 1e-6, ParKOptions{Cells: 4, Centers: 20})
			return e
		},
	}
	for name, fit := range fits {
		err := fit(kernels.Gaussian{Sigma: 1}, huge)
		if !errors.Is(err, zonal.ErrNonFinite) || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("%s on features of 1e308: %v, want ErrNonFinite naming the overflow", name, err)
		}
		err = fit(kernels.Gaussian{Sigma: 1e-160}, x)
		if !errors.Is(err, zonal.ErrParam) || !strings.Contains(err.Error(), "sigma=1e-160") || !strings.Contains(err.Error(), "median distance") {
			t.Errorf("%s with sigma 1e-160: %v, want ErrParam naming sigma and the distance", name, err)
		}
	}
	// A sigma small but not underflowing is still fitted.
	if _, err := FitParK(ctx, kernels.Gaussian{Sigma: 0.05}, x, y, 1e-6, ParKOptions{Cells: 4, Centers: 20}); err != nil {
		t.Errorf("ParK with sigma 0.05: %v", err)
	}
}

// fuzzXY returns n x d training data (n in 4..35, d in 1..4) scaled by scale.
func fuzzXY(n, d int, scale float64) (*mat.Dense, *mat.Dense) {
	x, y := synth(4+int(uint(n)%32), 1+int(uint(d)%4), 3)
	x.Scale(scale, x)
	return x, y
}

// FuzzFits: FitKRR, FitRidge, FitFalkon and FitParK on small data with
// fuzzed sizes and parameters return an error or a model that predicts,
// never panic, and stay within the allocation bound of testctx.
func FuzzFits(f *testing.F) {
	f.Add(30, 2, 1.0, 1.0, 1e-6, 10, 2, 20, 1e-9, 1, uint8(0))
	f.Add(30, 2, 1e300, 1.0, 1e-6, 10, 2, 20, 1e-9, 1, uint8(1))
	f.Add(30, 2, 1.0, 1e-160, 1e-6, 10, 3, 20, 1e-9, 0, uint8(0))
	f.Add(8, 1, 1.0, 1.0, 1e-6, 1000000000, 1000000000, -1, -1.0, -1, uint8(1))
	f.Add(8, 3, 0.0, 1.0, math.NaN(), 0, 0, 0, math.NaN(), 1000000, uint8(2))
	f.Fuzz(func(t *testing.T, n, d int, scale, sigma, lambda float64, centers, cells, iters int, tol float64, workers int, sampling uint8) {
		testctx.WithinBudget(t, "fits", func() {
			x, y := fuzzXY(n, d, scale)
			k, err := kernels.NewGaussian(sigma)
			if err != nil {
				return
			}
			ctx := context.Background()
			opt := Options{MemoryBudget: testctx.FuzzBudget}
			samp := []Sampling{SamplingUniform, SamplingRLS, "other"}[sampling%3]
			var models []Model
			if m, err := FitKRR(ctx, k, x, y, lambda, opt); err == nil {
				models = append(models, m)
			}
			if m, err := FitFalkon(ctx, k, x, y, lambda, FalkonOptions{Options: opt, Centers: centers, Sampling: samp, Iterations: iters, Tol: tol, Seed: 1}); err == nil {
				models = append(models, m)
			}
			if m, err := FitParK(ctx, k, x, y, lambda, ParKOptions{Options: opt, Cells: cells, Centers: centers, Iterations: iters, Tol: tol, Workers: workers, Seed: 1}); err == nil {
				models = append(models, m)
			}
			_, dd := x.Dims()
			if fm, err := kernels.NewFourierMap(k, dd, kernels.FourierOptions{Options: kernels.Options{MemoryBudget: testctx.FuzzBudget}, Features: 2 * max(1, centers%64)}); err == nil {
				if m, err := FitRidge(ctx, fm, x, y, lambda, RidgeOptions{Options: opt}); err == nil {
					models = append(models, m)
				}
			}
			for _, m := range models {
				r, _ := x.Dims()
				if err := m.Predict(mat.NewDense(r, 1, nil), x); err != nil {
					t.Fatalf("%s Predict: %v", m.Kind(), err)
				}
			}
		})
	})
}

// FuzzNewEncoding: any target vector and task gives an error or an
// encoding whose targets have one row per label.
func FuzzNewEncoding(f *testing.F) {
	f.Add([]byte{1, 2, 3, 1, 2, 3}, uint8(0), 1.0)
	f.Add([]byte{0, 0, 0}, uint8(2), 0.37)
	f.Add([]byte{}, uint8(1), 1.0)
	f.Add([]byte{255, 0, 7, 9}, uint8(2), math.NaN())
	f.Fuzz(func(t *testing.T, raw []byte, task uint8, step float64) {
		if len(raw) > 4096 {
			raw = raw[:4096]
		}
		y := make([]float64, len(raw))
		for i, b := range raw {
			y[i] = float64(b) * step
		}
		enc, err := NewEncoding(y, Task(task%3))
		if err != nil {
			return
		}
		if tg, err := enc.Targets(y); err == nil {
			if r, _ := tg.Dims(); r != len(y) {
				t.Fatalf("targets have %d rows for %d labels", r, len(y))
			}
		}
	})
}

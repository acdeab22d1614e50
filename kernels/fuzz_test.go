package kernels

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/internal/testctx"
)

// The fuzz targets of this file assert the constructors' contract on any
// parameters: an error or a usable object, never a panic, and never more
// than testctx.FuzzAllocFactor times the memory budget (testctx.FuzzBudget,
// 64 MiB) allocated. Sizes of the data handed to them are kept small (rows
// and columns are reduced modulo a few units) so each execution is fast;
// the size parameters themselves are passed as fuzzed.

// fuzzData returns an n x d matrix (n in 1..8, d in 1..6 from the fuzzed
// values) of a deterministic pattern times scale.
func fuzzData(n, d int, scale float64) *mat.Dense {
	n = 1 + int(uint(n)%8)
	d = 1 + int(uint(d)%6)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, scale*math.Sin(float64(3*i+7*j+1)))
		}
	}
	return x
}

// fuzzKernel picks one of the package's kernels by kind from fuzzed
// parameters, through its checking constructor (nil on error).
func fuzzKernel(kind uint8, a, b float64, n int) Kernel {
	var k Kernel
	var err error
	switch kind % 8 {
	case 0:
		k, err = NewGaussian(a)
	case 1:
		k, err = NewGaussianGamma(a)
	case 2:
		k, err = NewLaplacian(a)
	case 3:
		k, err = NewPolynomial(n, a, b)
	case 4:
		k, err = NewExpDot(a)
	case 5:
		k, err = NewArcCosine(n)
	case 6:
		k, err = NewNTK(n)
	default:
		k, err = NewDotProduct([]float64{a, b, a * b})
	}
	if err != nil {
		return nil
	}
	return k
}

func FuzzKernelConstructors(f *testing.F) {
	f.Add(uint8(0), 1.0, 0.5, 2)
	f.Add(uint8(3), 1.0, 1.0, 1000000)
	f.Add(uint8(4), 1e-300, 0.0, -1)
	f.Add(uint8(5), math.NaN(), math.Inf(1), 3)
	f.Add(uint8(7), -1.0, 2.0, 0)
	f.Fuzz(func(t *testing.T, kind uint8, a, b float64, n int) {
		testctx.WithinBudget(t, "kernel constructor", func() {
			k := fuzzKernel(kind, a, b, n)
			if k == nil {
				return
			}
			x := []float64{0.3, -0.2, 0.1}
			_ = k.Eval(x, x)
			_ = k.String()
			if _, err := k.MarshalBinary(); err == nil && k.Kind() == "" {
				t.Fatalf("%v: empty kind", k)
			}
		})
	})
}

func FuzzNewFourierMap(f *testing.F) {
	f.Add(3, 64, 1.0, false, uint64(1), uint8(0))
	f.Add(3, 1000000000, 1.0, false, uint64(1), uint8(0))
	f.Add(1000000, 1000000, 1.0, true, uint64(2), uint8(0))
	f.Add(2, 8, 0.5, true, uint64(3), uint8(2))
	f.Add(-1, 7, 1.0, false, uint64(4), uint8(3))
	f.Fuzz(func(t *testing.T, d, features int, sigma float64, orth bool, seed uint64, kind uint8) {
		testctx.WithinBudget(t, "NewFourierMap", func() {
			k := fuzzKernel(kind, sigma, 1, 2)
			if k == nil {
				return
			}
			fm, err := NewFourierMap(k, d, FourierOptions{Options: Options{MemoryBudget: testctx.FuzzBudget}, Features: features, Orthogonal: orth, Seed: seed})
			if err != nil {
				return
			}
			if fm.Dim() != features || fm.InputDim() != d {
				t.Fatalf("map is %d -> %d, asked %d -> %d", fm.InputDim(), fm.Dim(), d, features)
			}
			if d <= 6 && features <= 4096 {
				x := fuzzData(1, d-1, 1) // 2 x d
				if err := fm.Transform(mat.NewDense(2, features, nil), x); err != nil {
					t.Fatalf("Transform: %v", err)
				}
			}
		})
	})
}

func FuzzGZKAndTruncation(f *testing.F) {
	f.Add(uint8(0), 1.0, 5, 4, 2, 3.0, 1e-3)
	f.Add(uint8(0), 0.01, 784, 12, 6, 800.0, 1e-6)
	f.Add(uint8(3), 1.0, 1000000, 1000000, 1000000, 1e300, 1e-300)
	f.Add(uint8(6), 1.0, 3, 40, 1, 1.0, 0.1)
	f.Add(uint8(4), 2.0, 2, -1, 0, math.NaN(), math.Inf(1))
	f.Fuzz(func(t *testing.T, kind uint8, a float64, d, q, s int, radius, tol float64) {
		opt := Options{MemoryBudget: testctx.FuzzBudget}
		testctx.WithinBudget(t, "NewGZKFor/ChooseTruncation", func() {
			k := fuzzKernel(kind, a, 1, 2)
			if k == nil {
				return
			}
			if g, err := NewGZKFor(k, d, q, s, opt); err == nil && d <= 6 {
				x := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}[:d]
				_ = g.Eval(x, x)
			}
			_, _ = TruncationBound(k, d, radius, q, s, opt)
			if tr, err := ChooseTruncation(k, d, radius, tol, q, s, opt); err == nil && (tr.Q < 0 || tr.S < 1) {
				t.Fatalf("truncation %+v", tr)
			}
		})
	})
}

func FuzzNewGegenbauerMap(f *testing.F) {
	f.Add(uint8(0), 1.0, 6, 3, 64, 0, 0, 0.0, 0.0, 1.0, false, false)
	f.Add(uint8(0), 0.05, 8, 4, 64, 0, 0, 0.0, 0.0, 800.0, false, false)
	f.Add(uint8(3), 1.0, 4, 2, 1000000000, 3, 2, 0.0, 1e-3, 1.0, true, true)
	f.Add(uint8(0), 1.0, 5, 5, 30, 1000, 1000, 1e6, 0.0, 1.0, false, true)
	f.Add(uint8(6), 1.0, 3, 3, 17, 0, 3, 0.0, 1e-9, 1.0, true, false)
	f.Fuzz(func(t *testing.T, kind uint8, a float64, n, d, features, q, s int, radius, tol, scale float64, anti, orth bool) {
		testctx.WithinBudget(t, "NewGegenbauerMap", func() {
			k := fuzzKernel(kind, a, 1, 2)
			if k == nil {
				return
			}
			x := fuzzData(n, d, scale)
			opt := GegenbauerOptions{Options: Options{MemoryBudget: testctx.FuzzBudget}, Features: features, Q: q, S: s,
				Radius: radius, Tol: tol, Antithetic: anti, Orthogonal: orth, Seed: 1}
			g, err := NewGegenbauerMap(context.Background(), k, x, opt)
			if err != nil {
				return
			}
			if g.Dim() < 1 || g.Dim() > features {
				t.Fatalf("map has %d features, asked %d", g.Dim(), features)
			}
			r, c := x.Dims()
			if g.Dim() <= 4096 {
				if err := g.Transform(mat.NewDense(r, g.Dim(), nil), x); err != nil {
					t.Fatalf("Transform: %v", err)
				}
			}
			_, _ = SelectTruncation(context.Background(), k, x, features, SelectOptions{Options: Options{MemoryBudget: testctx.FuzzBudget}})
			_ = c
		})
	})
}

func FuzzNystrom(f *testing.F) {
	f.Add(uint8(0), 1.0, 8, 3, 4, uint8(0), 0.0, 1.0)
	f.Add(uint8(0), 1e-160, 8, 3, 4, uint8(1), 1e-3, 1.0)
	f.Add(uint8(0), 1.0, 8, 3, 1000000000, uint8(1), 0.0, 1e200)
	f.Add(uint8(3), 1.0, 5, 2, 5, uint8(1), math.NaN(), 1.0)
	f.Add(uint8(2), 1.0, 3, 2, -3, uint8(2), 0.0, 0.0)
	f.Fuzz(func(t *testing.T, kind uint8, a float64, n, d, m int, sampling uint8, lambda, scale float64) {
		testctx.WithinBudget(t, "NewNystrom", func() {
			k := fuzzKernel(kind, a, 1, 2)
			if k == nil {
				return
			}
			x := fuzzData(n, d, scale)
			opt := Options{MemoryBudget: testctx.FuzzBudget}
			samp := []string{SamplingUniform, SamplingRLS, "bogus"}[sampling%3]
			ctx := context.Background()
			if ny, err := NewNystrom(ctx, k, x, NystromOptions{Options: opt, Landmarks: m, Sampling: samp, Lambda: lambda, Seed: 1}); err == nil {
				r, _ := x.Dims()
				if err := ny.Transform(mat.NewDense(r, ny.Dim(), nil), x); err != nil {
					t.Fatalf("Transform: %v", err)
				}
			}
			if idx, err := RecursiveRLS(ctx, k, x, m, RLSOptions{Options: opt, Lambda: lambda, Seed: 1}); err == nil && len(idx) != m {
				t.Fatalf("RecursiveRLS returned %d indices, asked %d", len(idx), m)
			}
			_, _ = NewNystromFromLandmarks(ctx, k, x, opt)
		})
	})
}

package tensorsketch

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// The fuzz targets assert the constructors' contract on any parameters: an
// error or a sketch that transforms, never a panic, and never more than
// testctx.FuzzAllocFactor times the 64 MiB budget (testctx.FuzzBudget)
// allocated. The data is small (n in 1..8, d in 1..6 rows and columns);
// the size parameters are passed as fuzzed.

func fuzzX(n, d int, scale float64) *mat.Dense {
	n, d = 1+int(uint(n)%8), 1+int(uint(d)%6)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, scale*math.Cos(float64(5*i+3*j+2)))
		}
	}
	return x
}

// fuzzSketchKernel is a Gaussian (kind even) or polynomial kernel from
// fuzzed parameters, nil when its constructor refuses them.
func fuzzSketchKernel(kind uint8, a float64, degree int) kernels.Kernel {
	var k kernels.Kernel
	var err error
	if kind%2 == 0 {
		k, err = kernels.NewGaussian(a)
	} else {
		k, err = kernels.NewPolynomial(degree, a, 1)
	}
	if err != nil {
		return nil
	}
	return k
}

func FuzzSketches(f *testing.F) {
	f.Add(uint8(0), 1.0, 2, 4, 64, 3, uint64(1))
	f.Add(uint8(1), 1.0, 3, 4, 1000000000, 0, uint64(1))
	f.Add(uint8(1), 1.0, 1, 1000000000, 1000000000, 0, uint64(2))
	f.Add(uint8(0), 1e-3, 2, 4, 65, 1000000, uint64(3))
	f.Add(uint8(1), math.Inf(1), -2, -4, -1, -1, uint64(4))
	f.Fuzz(func(t *testing.T, kind uint8, a float64, degree, d, features, taylor int, seed uint64) {
		testctx.WithinBudget(t, "sketch constructors", func() {
			k := fuzzSketchKernel(kind, a, degree)
			if k == nil {
				return
			}
			opt := SketchOptions{Features: features, TaylorDegree: taylor, Seed: seed, MemoryBudget: testctx.FuzzBudget}
			var maps []kernels.FeatureMap
			if s, err := NewTensorSketch(k, d, opt); err == nil {
				maps = append(maps, s)
			}
			if s, err := NewPolySketch(k, d, opt); err == nil {
				maps = append(maps, s)
			}
			if s, err := NewCountSketch(k, d, opt); err == nil {
				maps = append(maps, s)
			}
			for _, m := range maps {
				if m.InputDim() != d || m.Dim() < 1 || m.Dim() > features {
					t.Fatalf("%T is %d -> %d, asked %d -> %d", m, m.InputDim(), m.Dim(), d, features)
				}
				if d <= 6 && m.Dim() <= 4096 {
					x := fuzzX(1, d-1, 0.5) // 2 x d
					if err := m.Transform(mat.NewDense(2, m.Dim(), nil), x); err != nil {
						t.Fatalf("%T Transform: %v", m, err)
					}
				}
			}
		})
	})
}

func FuzzFitAdaptive(f *testing.F) {
	f.Add(uint8(0), 1.0, 2, 8, 4, 1.0, 16, 1e-3, 0, 0, 0, 0.0, 0.0)
	f.Add(uint8(1), 1.0, 3, 8, 4, 1.0, 1000000000, 1e-3, 1000000, 1000000000, 1000000000, 0.5, 2.0)
	f.Add(uint8(0), 1e-200, 2, 5, 3, 1e300, 8, 1e-300, -1, -1, -1, 1.0, -1.0)
	f.Add(uint8(1), 1.0, 1, 3, 2, 0.0, 4, math.NaN(), 3, 4, 5, math.NaN(), math.Inf(1))
	f.Fuzz(func(t *testing.T, kind uint8, a float64, degree, n, d int, scale float64, samples int, lambda float64,
		taylor, sketchDim, projections int, mix, oversample float64) {
		testctx.WithinBudget(t, "FitAdaptive", func() {
			k := fuzzSketchKernel(kind, a, degree)
			if k == nil {
				return
			}
			x := fuzzX(n, d, scale)
			opt := AdaptiveOptions{Options: Options{MemoryBudget: testctx.FuzzBudget}, Samples: samples, Lambda: lambda,
				TaylorDegree: taylor, SketchDim: sketchDim, Projections: projections, Mix: mix, Oversample: oversample}
			ad, err := FitAdaptive(context.Background(), x, k, opt)
			if err != nil {
				return
			}
			r, _ := x.Dims()
			if ad.Dim() <= 4096 {
				if err := ad.Transform(mat.NewDense(r, ad.Dim(), nil), x); err != nil {
					t.Fatalf("Transform: %v", err)
				}
			}
		})
	})
}

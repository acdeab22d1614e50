package tensorsketch

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// TestTransform32Sketches: the sketches have no FeatureMap32 of their own,
// so kernels.Transform32 takes its generic fallback (Transform on blocks of
// 256 rows, rounded): on 600 rows (three blocks) every float32 feature is
// within 1.5 float32 ulps (3 u |z|, u = 2^-24) of the float64 one, for
// dense and CSR input: half an ulp of rounding, plus one in case a
// different row blocking moved the float64 value across a rounding
// boundary. Bad input gives Transform's sentinels.
func TestTransform32Sketches(t *testing.T) {
	const n, d = 600, 10
	x := randData(n, d, 0.5, 3)
	xs := toCSR(x)
	poly := kernels.Polynomial{Degree: 3, Gamma: 0.8, Coef0: 0.5}
	gauss := kernels.Gaussian{Sigma: 1.5}
	var maps []kernels.FeatureMap
	ts, err := NewTensorSketch(poly, d, SketchOptions{Features: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := NewPolySketch(gauss, d, SketchOptions{Features: 41, TaylorDegree: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewCountSketch(kernels.Polynomial{Degree: 1, Gamma: 1}, d, SketchOptions{Features: 32, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := FitAdaptive(context.Background(), x, gauss, AdaptiveOptions{Samples: 40, Lambda: 0.1, TaylorDegree: 4, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	maps = append(maps, ts, ps, cs, ad)
	nan := mat.DenseCopyOf(x)
	nan.Set(4, 2, math.NaN())
	for _, fm := range maps {
		if _, ok := fm.(kernels.FeatureMap32); ok {
			t.Errorf("%T implements FeatureMap32; its doc says it uses the fallback", fm)
		}
		D := fm.Dim()
		for _, in := range []mat.Matrix{x, xs} {
			want := mat.NewDense(n, D, nil)
			if err := fm.Transform(want, in); err != nil {
				t.Fatal(err)
			}
			got := blas32.General{Rows: n, Cols: D, Stride: D, Data: make([]float32, n*D)}
			if err := kernels.Transform32(fm, got, in); err != nil {
				t.Fatalf("%T %T: %v", fm, in, err)
			}
			for i := 0; i < n; i++ {
				for j := 0; j < D; j++ {
					w := want.At(i, j)
					if e := math.Abs(float64(got.Data[i*D+j]) - w); e > 3*0x1p-24*math.Abs(w)+1e-38 {
						t.Fatalf("%T %T: [%d,%d] = %v, float64 %v", fm, in, i, j, got.Data[i*D+j], w)
					}
				}
			}
		}
		for _, c := range []struct {
			name string
			x    mat.Matrix
			r, c int
			want error
		}{
			{"NaN", nan, n, D, zonal.ErrNonFinite},
			{"width", randData(5, d+1, 1, 1), 5, D, zonal.ErrShape},
			{"dst", x, n - 1, D, zonal.ErrShape},
			{"nil", nil, n, D, zonal.ErrEmpty},
		} {
			dst := blas32.General{Rows: c.r, Cols: c.c, Stride: c.c, Data: make([]float32, c.r*c.c)}
			if err := kernels.Transform32(fm, dst, c.x); !errors.Is(err, c.want) {
				t.Errorf("%T %s: %v, want %v", fm, c.name, err, c.want)
			}
			if err := fm.Transform(mat.NewDense(c.r, c.c, nil), c.x); !errors.Is(err, c.want) {
				t.Errorf("%T %s: Transform gives %v, want %v as Transform32", fm, c.name, err, c.want)
			}
		}
	}
}

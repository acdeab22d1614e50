package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// TestRows32Block: the blocks of a Rows32 have the bits of RowsInto32 for
// the same rows, for a *mat.Dense X, a *dataset.Dense32 X and a CSR X (the
// float64 route), on the Gaussian kernel and on another kernel; bad
// ranges, shapes and short scratch are errors.
func TestRows32Block(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	x := mat.NewDense(300, 6, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	x32, err := dataset.NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	y := mat.DenseCopyOf(x.Slice(0, 70, 0, 6))
	for _, k := range []Kernel{Gaussian{Sigma: 1.3}, Laplacian{Sigma: 2}} {
		c, err := NewCenters32(k, y, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, xm := range []mat.Matrix{x, x32, dataset.NewCSRFromDense(x)} {
			r, err := c.NewRows32(xm, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, rg := range [][2]int{{0, 1}, {5, 17}, {100, 300}} {
				m := rg[1] - rg[0]
				got := blas32.General{Rows: m, Cols: 70, Stride: 70, Data: make([]float32, m*70)}
				want := blas32.General{Rows: m, Cols: 70, Stride: 70, Data: make([]float32, m*70)}
				if err := r.Block(context.Background(), got, rg[0], rg[1], make([]float32, r.ScratchLen(m))); err != nil {
					t.Fatal(err)
				}
				if err := c.RowsInto32(context.Background(), want, xm, rg[0], rg[1], Options{}); err != nil {
					t.Fatal(err)
				}
				for i := range want.Data {
					if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("%T %T rows %v: entry %d = %v, RowsInto32 %v", k, xm, rg, i, got.Data[i], want.Data[i])
					}
				}
			}
			dst := blas32.General{Rows: 3, Cols: 70, Stride: 70, Data: make([]float32, 3*70)}
			if err := r.Block(context.Background(), dst, 298, 301, make([]float32, 18)); !errors.Is(err, zonal.ErrShape) {
				t.Fatalf("%T %T: rows past the end: %v", k, xm, err)
			}
			if r.ScratchLen(3) > 0 {
				if err := r.Block(context.Background(), dst, 0, 3, make([]float32, 2)); !errors.Is(err, zonal.ErrShape) {
					t.Fatalf("%T %T: short scratch: %v", k, xm, err)
				}
			}
		}
	}
	c, _ := NewCenters32(Gaussian{Sigma: 1}, y, Options{})
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 2, math.NaN())
	if _, err := c.NewRows32(bad, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN in X: %v", err)
	}
	if _, err := c.NewRows32(mat.NewDense(2, 5, nil), Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("wrong width: %v", err)
	}
}

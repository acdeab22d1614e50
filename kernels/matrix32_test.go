package kernels

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

const u32 = 1.0 / (1 << 24) // float32 unit roundoff

func newBlock32(r, c int) blas32.General {
	return blas32.General{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
}

// TestMatrixInto32 compares every kernel's float32 block with MatrixInto's
// float64 one. Tolerances: the Gaussian (float32 route) within
// K gamma (d + 4) u (|x|^2 + |y|^2) + 2u per entry, the a priori bound of
// the inputs' rounding and worst-case float32 inner products; the other
// kernels (float64 route, rounded) within u |K| + 1e-13 (the rounding plus
// room for MatrixInto's order of summation in another row blocking).
func TestMatrixInto32(t *testing.T) {
	const nx, ny, d = 300, 70, 13 // nx not a multiple of blockRows
	x := randMatrix(1, nx, d, 0.6)
	y := randMatrix(2, ny, d, 0.6)
	for _, k := range allKernels(t) {
		t.Run(k.String(), func(t *testing.T) {
			want, err := Matrix(context.Background(), k, x, y, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := newBlock32(nx, ny)
			if err := MatrixInto32(context.Background(), got, k, x, y, Options{}); err != nil {
				t.Fatal(err)
			}
			g, gauss := k.(Gaussian)
			worst := 0.0
			for i := 0; i < nx; i++ {
				xi := mat.Row(nil, i, x)
				for j := 0; j < ny; j++ {
					w, v := want.At(i, j), float64(got.Data[i*ny+j])
					tol := u32*math.Abs(w) + 1e-13
					if gauss {
						yj := mat.Row(nil, j, y)
						tol = w*g.Gamma()*(d+4)*u32*(dot(xi, xi)+dot(yj, yj)) + 2*u32
					}
					if e := math.Abs(v - w); e > tol {
						t.Fatalf("K[%d,%d] = %v in float32, %v in float64: error %.3g above %.3g", i, j, v, w, e, tol)
					} else {
						worst = max(worst, e/tol)
					}
				}
			}
			if gauss && worst == 0 {
				t.Fatal("the float32 Gaussian block equals the float64 one exactly: not computed in float32?")
			}
		})
	}
}

// TestMatrixInto32Sparse: a CSR X takes the float64 route (never densified),
// giving the rounded float64 block.
func TestMatrixInto32Sparse(t *testing.T) {
	x := randMatrix(3, 150, 9, 1)
	for i := 0; i < 150; i++ {
		for j := 0; j < 9; j += 2 {
			x.Set(i, j, 0)
		}
	}
	y := randMatrix(4, 20, 9, 1)
	k := Gaussian{Sigma: 2}
	want, err := Matrix(context.Background(), k, x, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCenters32(k, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := newBlock32(150, 20)
	if err := c.MatrixInto32(context.Background(), got, dataset.NewCSRFromDense(x), Options{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150; i++ {
		for j := 0; j < 20; j++ {
			w := want.At(i, j)
			if e := math.Abs(float64(got.Data[i*20+j]) - w); e > u32*w+1e-13 {
				t.Fatalf("K[%d,%d]: %v, want %v rounded", i, j, got.Data[i*20+j], w)
			}
		}
	}
}

// TestMatrixInto32Progress: the reports count rows up to nx, and the
// entries are those of the call without progress.
//
// A report follows each chunk of 4 blockRows GOMAXPROCS rows, so nx is two
// and a bit chunks whatever the core count (a fixed 2100 rows was a single
// chunk from 5 cores on: two reports, 0 and 2100).
func TestMatrixInto32Progress(t *testing.T) {
	n := 2*blockRows*4*runtime.GOMAXPROCS(0) + 52
	x := randMatrix(5, n, 5, 1)
	y := randMatrix(6, 30, 5, 1)
	for _, k := range []Kernel{Gaussian{Sigma: 1.5}, Laplacian{Sigma: 1.5}} {
		plain, got := newBlock32(n, 30), newBlock32(n, 30)
		if err := MatrixInto32(context.Background(), plain, k, x, y, Options{}); err != nil {
			t.Fatal(err)
		}
		last, calls := -1, 0
		opt := Options{Progress: func(p zonal.Progress) {
			if p.Stage != "kernel" || p.Total != n || p.Done < last {
				t.Errorf("report %+v after Done %d", p, last)
			}
			last = p.Done
			calls++
		}}
		if err := MatrixInto32(context.Background(), got, k, x, y, opt); err != nil {
			t.Fatal(err)
		}
		if last != n || calls < 3 {
			t.Fatalf("%v: %d reports ending at %d, want several ending at %d", k, calls, last, n)
		}
		for i, v := range plain.Data {
			if got.Data[i] != v {
				t.Fatalf("%v: entry %d differs with progress: %v vs %v", k, i, got.Data[i], v)
			}
		}
	}
}

func TestMatrixInto32Errors(t *testing.T) {
	ctx := context.Background()
	x := randMatrix(7, 10, 4, 1)
	y := randMatrix(8, 6, 4, 1)
	k := Gaussian{Sigma: 1}
	if err := MatrixInto32(ctx, newBlock32(10, 6), nil, x, y, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("nil kernel: %v", err)
	}
	if err := MatrixInto32(ctx, newBlock32(10, 5), k, x, y, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong dst: %v", err)
	}
	if err := MatrixInto32(ctx, newBlock32(10, 6), k, x, randMatrix(9, 6, 3, 1), Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong width: %v", err)
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 2, math.NaN())
	if err := MatrixInto32(ctx, newBlock32(10, 6), k, bad, y, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in X: %v", err)
	}
	if err := MatrixInto32(ctx, newBlock32(10, 6), k, x, bad.Slice(0, 6, 0, 4), Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in Y: %v", err)
	}
	if _, err := NewCenters32(k, y, Options{MemoryBudget: 16}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("float32 copy above the budget: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := MatrixInto32(cctx, newBlock32(10, 6), k, x, y, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

package kernels

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// TestCentersSameAsMatrixInto: Centers.MatrixInto writes exactly (bit for
// bit) the entries MatrixInto writes, for every kernel, dense and CSR X
// and Y in every combination, blocks of one row to several row blocks
// (blockRows), with and without progress reports, and called again on
// the same Centers (the kept norms and column index).
func TestCentersSameAsMatrixInto(t *testing.T) {
	const d = 12
	ys, yd := sparseData(3, 70, d, 0.4, 2)
	for _, k := range sparseTestKernels(t, d) {
		for _, y := range []mat.Matrix{yd, ys} {
			c, err := NewCenters(k, y)
			if err != nil {
				t.Fatalf("%v: %v", k, err)
			}
			if ny, cd := c.Dims(); ny != 70 || cd != d {
				t.Fatalf("Dims %d x %d, want 70 x %d", ny, cd, d)
			}
			for _, nx := range []int{1, 5, blockRows + 3} {
				xs, xd := sparseData(uint64(nx), nx, d, 0.5, 2)
				for _, x := range []mat.Matrix{xd, xs} {
					for _, progress := range []bool{false, true} {
						var opt Options
						reports := 0
						if progress {
							opt.Progress = func(zonal.Progress) { reports++ }
						}
						want := mat.NewDense(nx, 70, nil)
						if err := MatrixInto(context.Background(), want, k, x, y, Options{}); err != nil {
							t.Fatal(err)
						}
						for rep := 0; rep < 2; rep++ {
							got := mat.NewDense(nx, 70, nil)
							if err := c.MatrixInto(context.Background(), got, x, opt); err != nil {
								t.Fatalf("%v: %v", k, err)
							}
							for i := 0; i < nx; i++ {
								for j := 0; j < 70; j++ {
									if g, w := got.At(i, j), want.At(i, j); math.Float64bits(g) != math.Float64bits(w) {
										t.Fatalf("%v, %T x %T, %d rows, progress %v: entry (%d,%d) %v, MatrixInto %v", k, x, y, nx, progress, i, j, g, w)
									}
								}
							}
						}
						if progress && reports == 0 {
							t.Errorf("%v: no progress reports", k)
						}
					}
				}
			}
		}
	}
}

// TestCentersConcurrent: one Centers serves concurrent blocks (the norms
// and, for sparse X against sparse Y, the column index made once); run
// with -race.
func TestCentersConcurrent(t *testing.T) {
	const d = 10
	ys, _ := sparseData(5, 40, d, 0.5, 1)
	xs, _ := sparseData(6, 9, d, 0.5, 1)
	k := Gaussian{Sigma: 1.2}
	want := mat.NewDense(9, 40, nil)
	if err := MatrixInto(context.Background(), want, k, xs, ys, Options{}); err != nil {
		t.Fatal(err)
	}
	c, err := NewCenters(k, ys)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := mat.NewDense(9, 40, nil)
			if err := c.MatrixInto(context.Background(), got, xs, Options{}); err != nil {
				errs[g] = err
				return
			}
			if !mat.Equal(got, want) {
				errs[g] = errors.New("entries differ from MatrixInto")
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// NewCenters refuses what MatrixInto refuses of Y, and Centers.MatrixInto
// what it refuses of X and dst, with the same sentinels; a cancelled
// context stops it.
func TestCentersErrors(t *testing.T) {
	k := Gaussian{Sigma: 1}
	y := randMatrix(1, 6, 3, 1)
	bad := mat.DenseCopyOf(y)
	bad.Set(2, 1, math.Inf(1))
	for name, tc := range map[string]struct {
		k    Kernel
		y    mat.Matrix
		want error
	}{
		"nil kernel": {nil, y, zonal.ErrParam},
		"nil y":      {k, nil, zonal.ErrEmpty},
		"inf in y":   {k, bad, zonal.ErrNonFinite},
	} {
		if _, err := NewCenters(tc.k, tc.y); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	c, err := NewCenters(k, y)
	if err != nil {
		t.Fatal(err)
	}
	x := randMatrix(2, 4, 3, 1)
	nanX := mat.DenseCopyOf(x)
	nanX.Set(0, 0, math.NaN())
	for name, tc := range map[string]struct {
		dst  *mat.Dense
		x    mat.Matrix
		want error
	}{
		"nil x":      {mat.NewDense(4, 6, nil), nil, zonal.ErrEmpty},
		"nil dst":    {nil, x, zonal.ErrEmpty},
		"wide x":     {mat.NewDense(4, 6, nil), randMatrix(2, 4, 5, 1), zonal.ErrShape},
		"dst shape":  {mat.NewDense(4, 5, nil), x, zonal.ErrShape},
		"nan in x":   {mat.NewDense(4, 6, nil), nanX, zonal.ErrNonFinite},
		"no columns": {mat.NewDense(4, 6, nil), &mat.Dense{}, zonal.ErrEmpty},
	} {
		if err := c.MatrixInto(context.Background(), tc.dst, tc.x, Options{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.MatrixInto(ctx, mat.NewDense(4, 6, nil), x, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRowsBlockSameAsMatrixInto: Rows.Block writes, for any row range, the
// entries of Centers.MatrixInto on all the rows, for every kernel and dense
// and CSR X and Y, up to the rounding of the inner products (a backend's
// GEMM may sum a block of one row in another order than a block of many):
// |got - want| <= 1e-13 (1 + |want|), about 500 ulp of entries whose inner
// products over d = 12 terms of size below 4 are exact to 12 u 16; and it
// refuses bad ranges, shapes and inputs.
func TestRowsBlockSameAsMatrixInto(t *testing.T) {
	const d, nx = 12, blockRows + 37
	ys, yd := sparseData(5, 70, d, 0.4, 2)
	xs, xd := sparseData(6, nx, d, 0.5, 2)
	ctx := context.Background()
	for _, k := range sparseTestKernels(t, d) {
		for _, y := range []mat.Matrix{yd, ys} {
			c, err := NewCenters(k, y)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []mat.Matrix{xd, xs} {
				want := mat.NewDense(nx, 70, nil)
				if err := c.MatrixInto(ctx, want, x, Options{}); err != nil {
					t.Fatal(err)
				}
				r, err := c.NewRows(x, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, rg := range [][2]int{{0, 1}, {3, 20}, {0, nx}, {nx - 7, nx}, {blockRows - 2, blockRows + 9}} {
					m := rg[1] - rg[0]
					got := mat.NewDense(m, 70, nil)
					if err := r.Block(ctx, got.RawMatrix(), rg[0], rg[1]); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < m; i++ {
						for j := 0; j < 70; j++ {
							if g, w := got.At(i, j), want.At(rg[0]+i, j); !(math.Abs(g-w) <= 1e-13*(1+math.Abs(w))) {
								t.Fatalf("%v, %T x %T, rows %v: entry (%d,%d) %v, MatrixInto %v", k, x, y, rg, i, j, g, w)
							}
						}
					}
				}
				if err := r.Block(ctx, mat.NewDense(3, 70, nil).RawMatrix(), nx-2, nx+1); !errors.Is(err, zonal.ErrShape) {
					t.Errorf("range past the end: %v", err)
				}
				if err := r.Block(ctx, mat.NewDense(3, 69, nil).RawMatrix(), 0, 3); !errors.Is(err, zonal.ErrShape) {
					t.Errorf("narrow dst: %v", err)
				}
			}
		}
	}
	c, _ := NewCenters(Gaussian{Sigma: 1}, yd)
	bad := mat.NewDense(2, d, nil)
	bad.Set(1, 3, math.NaN())
	if _, err := c.NewRows(bad, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN x: %v", err)
	}
	if _, err := c.NewRows(mat.NewDense(2, d+1, nil), Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wide x: %v", err)
	}
}

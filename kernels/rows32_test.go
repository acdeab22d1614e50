package kernels

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// TestMatrixInto32Dense32: a *dataset.Dense32 X gives, for every kernel,
// the block of the float64 X holding the same (float32) values, entry for
// entry (the Gaussian's float32 route reads the same float32 rows; the
// other kernels widen them exactly), whole and by RowsInto32.
func TestMatrixInto32Dense32(t *testing.T) {
	const nx, ny, d = 300, 70, 13
	x := randMatrix(1, nx, d, 0.6)
	y := randMatrix(2, ny, d, 0.6)
	x32, err := dataset.NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	xr := x32.ToDense() // the same values in float64
	ctx := context.Background()
	for _, k := range allKernels(t) {
		t.Run(k.String(), func(t *testing.T) {
			c, err := NewCenters32(k, y, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, got := newBlock32(nx, ny), newBlock32(nx, ny)
			if err := c.MatrixInto32(ctx, want, xr, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := c.MatrixInto32(ctx, got, x32, Options{}); err != nil {
				t.Fatal(err)
			}
			for i, v := range got.Data {
				if math.Abs(float64(v-want.Data[i])) > 1e-12 {
					t.Fatalf("entry %d: %g from Dense32, %g from the float64 rows", i, v, want.Data[i])
				}
			}
			part := newBlock32(40, ny)
			if err := c.RowsInto32(ctx, part, x32, 100, 140, Options{}); err != nil {
				t.Fatal(err)
			}
			// A row's float32 entries are the same bits in any block: both
			// backends compute float32 Gaussian blocks with one kernel
			// (package asm's, one summation order whatever the block's
			// rows).
			whole := got.Data[100*ny : 140*ny]
			if !slices.Equal(part.Data, whole) {
				t.Fatal("RowsInto32 on rows 100..139 of a Dense32 differs from the whole block's rows")
			}
		})
	}
}

// TestMatrixInto32Dense32Errors: NaN in a Dense32 is zonal.ErrNonFinite, a
// Data length other than Rows*Cols or a width other than Y's zonal.ErrShape.
func TestMatrixInto32Dense32Errors(t *testing.T) {
	y := randMatrix(2, 5, 3, 0.6)
	c, err := NewCenters32(Gaussian{Sigma: 1}, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	nan := &dataset.Dense32{Rows: 2, Cols: 3, Data: []float32{0, 1, 2, 3, float32(math.NaN()), 5}}
	if err := c.MatrixInto32(ctx, newBlock32(2, 5), nan, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN: %v, want ErrNonFinite", err)
	}
	short := &dataset.Dense32{Rows: 2, Cols: 3, Data: make([]float32, 5)}
	if err := c.MatrixInto32(ctx, newBlock32(2, 5), short, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short Data: %v, want ErrShape", err)
	}
	wide := &dataset.Dense32{Rows: 2, Cols: 4, Data: make([]float32, 8)}
	if err := c.MatrixInto32(ctx, newBlock32(2, 5), wide, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("width 4: %v, want ErrShape", err)
	}
}

// TestRowsInto32Dense32Short: RowsInto32 on a Dense32 whose Data is short
// is zonal.ErrShape, not a panic.
func TestRowsInto32Dense32Short(t *testing.T) {
	c, err := NewCenters32(Gaussian{Sigma: 1}, randMatrix(2, 5, 3, 0.6), Options{})
	if err != nil {
		t.Fatal(err)
	}
	short := &dataset.Dense32{Rows: 4, Cols: 3, Data: make([]float32, 5)}
	if err := c.RowsInto32(context.Background(), newBlock32(2, 5), short, 2, 4, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("RowsInto32 on short Data: %v, want ErrShape", err)
	}
}

package kernels

import (
	"context"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Centers is the Y side of kernel blocks K(X, Y) of one kernel, prepared
// once for many blocks against the same Y (a fitted model's centres
// against the rows it predicts), the float64 counterpart of Centers32.
// MatrixInto checks the entries of Y (and a CSR's structure) and computes
// its squared row norms on every call, which for a block of a few rows
// against thousands of centres costs as much as the block's product;
// NewCenters checks Y once and keeps its norms (and, for a sparse Y, the
// column index that sparse X needs, made on first use). The entries of
// Centers.MatrixInto are those of MatrixInto with the same kernel and Y.
//
// Y is not copied: it must not change while the Centers is in use. A
// Centers is safe for concurrent use.
type Centers struct {
	k     Kernel
	in    input
	ny, d int
	norms []float64 // squared row norms (kernels that take them), as MatrixInto computes them

	indexOnce sync.Once
	indexed   input // in with its column index (sparse Y)
}

// NewCenters checks y (ny x d, the columns of the blocks: finite entries,
// and a *dataset.CSR must pass Validate) and prepares it for blocks of
// kernel k.
//
// Errors: zonal.ErrParam for a nil kernel, zonal.ErrEmpty for a nil or
// empty y, zonal.ErrNonFinite for NaN or Inf in y, a CSR's Validate error
// (zonal.ErrShape, zonal.ErrRange).
func NewCenters(k Kernel, y mat.Matrix) (*Centers, error) {
	ny, d, err := checkCenters(k, y)
	if err != nil {
		return nil, err
	}
	in, err := asInput(y)
	if err != nil {
		return nil, err
	}
	c := &Centers{k: k, in: in, ny: ny, d: d}
	if usesSqNorms(k) {
		c.norms = in.sqNorms()
	}
	return c, nil
}

// Dims returns ny and d.
func (c *Centers) Dims() (ny, d int) { return c.ny, c.d }

// MatrixInto writes K(X, Y) into dst (nx x ny) for the rows of x (nx x
// d), the entries that MatrixInto(ctx, dst, k, x, Y, opt) writes, with the
// same row blocks, parallelism, progress reports (opt.Progress) and
// cancellation.
//
// Errors: those of MatrixInto for x and dst (Y was checked by NewCenters).
func (c *Centers) MatrixInto(ctx context.Context, dst *mat.Dense, x mat.Matrix, opt Options) error {
	if x == nil || dst == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	if err := checkBlockShapes(dst, x, c.ny, c.d); err != nil {
		return err
	}
	xg, err := asInput(x)
	if err != nil {
		return err
	}
	yg := c.in
	if xg.sparse && yg.sparse {
		c.indexOnce.Do(func() { c.indexed = c.in.withIndex() })
		yg = c.indexed
	}
	if opt.Progress != nil {
		return matrixProgress(ctx, dst.RawMatrix(), c.k, xg, yg, false, c.norms, opt)
	}
	return matrixGeneral(ctx, dst.RawMatrix(), opt.backend(), c.k, xg, yg, false, nil, c.norms)
}

// checkCenters checks the kernel and the Y of NewCenters and
// NewCenters32 and returns Y's shape.
func checkCenters(k Kernel, y mat.Matrix) (ny, d int, err error) {
	if k == nil {
		return 0, 0, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if y == nil {
		return 0, 0, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	ny, d = y.Dims()
	if ny == 0 || d == 0 {
		return 0, 0, fmt.Errorf("%w: %dx%d kernel-block columns", zonal.ErrEmpty, ny, d)
	}
	return ny, d, nil
}

// usesSqNorms reports whether matrixGeneral takes the squared row norms
// for kernel k (the Gaussian and the inner-product kernels).
func usesSqNorms(k Kernel) bool {
	if _, ok := k.(Gaussian); ok {
		return true
	}
	_, ok := k.(innerKernel)
	return ok
}

// Rows is a source of float64 kernel blocks for the rows of one X against
// Centers, checked and prepared once for many blocks (the row blocks of
// every CG pass of a streamed FALKON fit), the float64 counterpart of
// Rows32: NewRows validates X's entries (and a CSR's structure) and keeps
// its squared row norms, and Block computes one block on the calling
// goroutine, so that callers can run one block per worker and use it while
// it is in cache. Block's entries are those of Centers.MatrixInto for the
// same rows up to the rounding of the backend's products, which may sum a
// block of few rows in another order. X must not change while the Rows is in use; a Rows is safe
// for concurrent use.
type Rows struct {
	c  *Centers
	xg input
	yg input
	xn []float64 // squared row norms of X (kernels that take them)
	b  backend.Backend
}

// NewRows prepares the rows of x (n x d, d the centres' width) for Block;
// blocks run on opt's Backend (opt's Progress and MemoryBudget are not
// used: a block writes only its dst).
//
// Errors: zonal.ErrEmpty for a nil or empty x, zonal.ErrShape for a width
// other than the centres', zonal.ErrNonFinite for NaN or Inf in x, a CSR's
// Validate error.
func (c *Centers) NewRows(x mat.Matrix, opt Options) (*Rows, error) {
	if err := checkRowsInput(x, c.d); err != nil {
		return nil, err
	}
	xg, err := asInput(x)
	if err != nil {
		return nil, err
	}
	r := &Rows{c: c, xg: xg, yg: c.in, b: opt.backend()}
	if xg.sparse && c.in.sparse {
		c.indexOnce.Do(func() { c.indexed = c.in.withIndex() })
		r.yg = c.indexed
	}
	if c.norms != nil {
		r.xn = xg.sqNorms()
	}
	return r, nil
}

// checkRowsInput checks the rows x that NewRows and NewRows32 prepare
// against centres of width d: zonal.ErrEmpty for a nil or empty x,
// zonal.ErrShape for another width.
func checkRowsInput(x mat.Matrix, d int) error {
	if x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	nx, dx := x.Dims()
	if nx == 0 || dx == 0 {
		return fmt.Errorf("%w: kernel block of a %dx%d input", zonal.ErrEmpty, nx, dx)
	}
	if dx != d {
		return fmt.Errorf("%w: X has %d columns, Y has %d", zonal.ErrShape, dx, d)
	}
	return nil
}

// Bytes is the memory r holds beyond X: its squared row norms.
func (r *Rows) Bytes() int64 { return int64(len(r.xn)) * 8 }

// Block writes the kernel block of rows [i0, i1) of X into dst ((i1-i0) x
// ny), on the calling goroutine.
//
// Errors: zonal.ErrShape for a range outside X's rows or a dst of the
// wrong shape; ctx.Err() when canceled.
func (r *Rows) Block(ctx context.Context, dst blas64.General, i0, i1 int) error {
	nx := r.xg.rows()
	if i0 < 0 || i1 > nx || i0 >= i1 {
		return fmt.Errorf("%w: rows [%d, %d) of a %d-row matrix", zonal.ErrShape, i0, i1, nx)
	}
	m := i1 - i0
	if dst.Rows != m || dst.Cols != r.c.ny || dst.Stride < r.c.ny || len(dst.Data) < (m-1)*dst.Stride+r.c.ny {
		return fmt.Errorf("%w: dst is %dx%d (stride %d), want %dx%d", zonal.ErrShape, dst.Rows, dst.Cols, dst.Stride, m, r.c.ny)
	}
	var xn []float64
	if r.xn != nil {
		xn = r.xn[i0:i1]
	}
	return matrixGeneralOf(ctx, dst, r.b, r.c.k, r.xg.sub(i0, i1), r.yg, false, xn, r.c.norms, m)
}

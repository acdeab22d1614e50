package kernels

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/parallel"
)

// blockRows is the number of rows of X handled by one task of MatrixInto and
// of the feature maps' Transform; scratch memory is O(blockRows * max(ny, D)).
const blockRows = 128

// expInPlace sets v[i] = exp(v[i]). It is the one place where the kernel
// matrices exponentiate: the backends' shared vector exp (backend.Exp, below
// 2 ulp; the pure-Go fallback under the noasm tag runs the same algorithm).
func expInPlace(v []float64) { backend.Exp(nil, v, v) }

// MatrixInto writes the kernel matrix K(X, Y), K_ij = k(x_i, y_j) for the
// rows x_i of X (nx x d) and y_j of Y (ny x d), into dst (nx x ny).
//
// Kernels that depend on x and y only through <x,y>, |x| and |y| (Gaussian,
// polynomial, exponential dot-product, arc-cosine, NTK, dot-product, GZK) get
// the inner products from the backend's Gemm, one block of rows at a time,
// then apply the kernel function in place; the Gaussian uses
// |x-y|^2 = |x|^2 + |y|^2 - 2<x,y> clamped at 0. Other kernels are evaluated
// pairwise.
//
// X and Y may each be a *dataset.CSR, which is never densified: the inner
// products come from backend.SparseGemm (sparse-dense) or from a column
// index of Y (sparse-sparse: per row of X, the entries of Y in its columns,
// so the cost follows the number of common non-zeros), the Gaussian from
// them and the row norms; the Laplacian takes |x-y|_1 = |x|_1 + |y|_1 +
// sum over the common support of (|x_c-y_c| - |x_c| - |y_c|); other kernels
// are evaluated on rows densified one at a time. A CSR must pass Validate
// (its error is returned) and hold finite values.
//
// Row blocks run in parallel and ctx is checked between them. No memory
// beyond dst and O(nx + ny) scratch is allocated (plus, for sparse input,
// O(nnz(Y)) for the column index, O(blockRows ny) per block for dense X
// against sparse Y, and two d-vectors per block for the pairwise
// fallback; dst itself is the caller's: nothing n x n is made here unless
// the caller asks for it), so opt.MemoryBudget is not consulted. With opt.Progress set, reports of stage
// "kernel" count the rows of dst done (Done of Total = nx); the entries are
// the same with or without it.
//
// Errors: zonal.ErrParam for a nil kernel, zonal.ErrShape for mismatched
// shapes (and malformed CSR lengths), zonal.ErrRange for CSR column indices
// out of range or not increasing, zonal.ErrEmpty for empty inputs,
// zonal.ErrNonFinite for NaN/Inf in X or Y, ctx.Err() when cancelled (dst is
// then partly written).
func MatrixInto(ctx context.Context, dst *mat.Dense, k Kernel, x, y mat.Matrix, opt Options) error {
	if k == nil {
		return fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if x == nil || y == nil || dst == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	ny, d2 := y.Dims()
	if err := checkBlockShapes(dst, x, ny, d2); err != nil {
		return err
	}
	xg, err := asInput(x)
	if err != nil {
		return err
	}
	yg := xg
	if y != x {
		if yg, err = asInput(y); err != nil {
			return err
		}
	}
	if opt.Progress == nil {
		return matrixGeneral(ctx, dst.RawMatrix(), opt.backend(), k, xg, yg, y == x, nil, nil)
	}
	return matrixProgress(ctx, dst.RawMatrix(), k, xg, yg, y == x, nil, opt)
}

// checkBlockShapes checks the shapes of a kernel block K(X, Y) into dst
// for x (nx x d) and a Y of ny rows of d2 columns.
func checkBlockShapes(dst *mat.Dense, x mat.Matrix, ny, d2 int) error {
	nx, d := x.Dims()
	if nx == 0 || ny == 0 || d == 0 {
		return fmt.Errorf("%w: kernel matrix of %dx%d and %dx%d inputs", zonal.ErrEmpty, nx, d, ny, d2)
	}
	if d != d2 {
		return fmt.Errorf("%w: X has %d columns, Y has %d", zonal.ErrShape, d, d2)
	}
	if r, c := dst.Dims(); r != nx || c != ny {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, c, nx, ny)
	}
	return nil
}

// matrixProgress is MatrixInto in chunks of whole row blocks with a progress
// report after each. The chunks start at multiples of blockRows and the norms
// are the ones matrixGeneral would compute, so every entry is the same as in
// one call. yn, when not nil, holds the squared row norms of yg.
func matrixProgress(ctx context.Context, dg blas64.General, k Kernel, xg, yg input, same bool, yn []float64, opt Options) error {
	b, nx := opt.backend(), xg.rows()
	if yn == nil {
		yn = yg.sqNorms()
	}
	xn := yn
	if !same {
		xn = xg.sqNorms()
	}
	if xg.sparse && yg.sparse {
		yg = yg.withIndex()
	}
	chunk := blockRows * 4 * runtime.GOMAXPROCS(0)
	opt.report("kernel", 0, nx)
	for i0 := 0; i0 < nx; i0 += chunk {
		i1 := min(nx, i0+chunk)
		if err := matrixGeneral(ctx, subRows(dg, i0, i1), b, k, xg.sub(i0, i1), yg, false, xn[i0:i1], yn); err != nil {
			return err
		}
		opt.report("kernel", i1, nx)
	}
	return nil
}

// matrixGeneral writes K(xg, yg) to dg for validated (finite, same width)
// inputs, dense or sparse. same says that xg and yg are the same matrix. xn
// and yn, when not nil, hold the squared row norms of xg and yg (Centers
// keeps those of its Y); nil means compute them here.
//
// With a sparse input the Gaussian and the inner-product kernels take
// their inner products from innerBlock (backend.SparseGemm, or y's column
// index when both are sparse), the Laplacian its l1 distances from l1Block,
// and other kernels are evaluated on rows densified one at a time (two
// d-vectors of scratch per block).
func matrixGeneral(ctx context.Context, dg blas64.General, b backend.Backend, k Kernel, xg, yg input, same bool, xn, yn []float64) error {
	return matrixGeneralOf(ctx, dg, b, k, xg, yg, same, xn, yn, blockRows)
}

// matrixGeneralOf is matrixGeneral with parallel row blocks of bs rows (bs
// at least the rows of xg: one block, on the calling goroutine).
func matrixGeneralOf(ctx context.Context, dg blas64.General, b backend.Backend, k Kernel, xg, yg input, same bool, xn, yn []float64, bs int) error {
	nx, ny, d := xg.rows(), yg.rows(), xg.cols()
	parallelBlocks := func(ctx context.Context, n int, f func(i0, i1 int)) error {
		return parallelBlocksOf(ctx, n, bs, f)
	}
	norms := func() ([]float64, []float64) {
		if yn == nil {
			yn = yg.sqNorms()
		}
		if xn == nil {
			if same {
				xn = yn
			} else {
				xn = xg.sqNorms()
			}
		}
		return xn, yn
	}
	sparse := xg.sparse || yg.sparse
	if xg.sparse && yg.sparse {
		yg = yg.withIndex()
	}
	if g, ok := k.(Gaussian); ok {
		xn, yn := norms()
		gamma := g.Gamma()
		if !sparse {
			// The backend's Gaussian block (purego fuses the exponential
			// into its GEMM, while each strip is in cache).
			return parallelBlocks(ctx, nx, func(i0, i1 int) {
				backend.GaussianBlock(b, subRows(xg.g, i0, i1), yg.g, xn[i0:i1], yn, gamma, subRows(dg, i0, i1))
			})
		}
		return parallelBlocks(ctx, nx, func(i0, i1 int) {
			innerBlock(b, -2, xg.sub(i0, i1), yg, subRows(dg, i0, i1))
			for i := i0; i < i1; i++ {
				row := dg.Data[i*dg.Stride : i*dg.Stride+ny]
				for j, v := range row {
					row[j] = -gamma * math.Max(0, xn[i]+yn[j]+v)
				}
				expInPlace(row)
			}
		})
	}
	if ik, ok := k.(innerKernel); ok {
		xn, yn := norms()
		return parallelBlocks(ctx, nx, func(i0, i1 int) {
			innerBlock(b, 1, xg.sub(i0, i1), yg, subRows(dg, i0, i1))
			for i := i0; i < i1; i++ {
				ik.fromInner(dg.Data[i*dg.Stride:i*dg.Stride+ny], xn[i], yn)
			}
		})
	}
	if l, ok := k.(Laplacian); ok && sparse {
		xl, yl := xg.l1Norms(), yg.l1Norms()
		return parallelBlocks(ctx, nx, func(i0, i1 int) {
			l1Block(xg.sub(i0, i1), yg, xl[i0:i1], yl, subRows(dg, i0, i1))
			for i := i0; i < i1; i++ {
				row := dg.Data[i*dg.Stride : i*dg.Stride+ny]
				for j := range row {
					row[j] /= -l.Sigma
				}
				expInPlace(row)
			}
		})
	}
	return parallelBlocks(ctx, nx, func(i0, i1 int) {
		var xbuf, ybuf []float64
		if xg.sparse {
			xbuf = make([]float64, d)
		}
		if yg.sparse {
			ybuf = make([]float64, d)
		}
		for i := i0; i < i1; i++ {
			xr := xg.denseRow(i, xbuf)
			for j := 0; j < ny; j++ {
				dg.Data[i*dg.Stride+j] = k.Eval(xr, yg.denseRow(j, ybuf))
			}
		}
	})
}

// Matrix allocates and returns K(X, Y) (see MatrixInto), after checking
// that its nx * ny entries fit opt.MemoryBudget. Errors: those of MatrixInto,
// and zonal.ErrTooLarge when K does not fit the budget.
func Matrix(ctx context.Context, k Kernel, x, y mat.Matrix, opt Options) (*mat.Dense, error) {
	if x == nil || y == nil {
		return nil, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	nx, _ := x.Dims()
	ny, _ := y.Dims()
	if nx == 0 || ny == 0 {
		return nil, fmt.Errorf("%w: kernel matrix with %d and %d rows", zonal.ErrEmpty, nx, ny)
	}
	if err := opt.check(fmt.Sprintf("the %dx%d kernel matrix", nx, ny), budget.Floats(nx, ny)); err != nil {
		return nil, err
	}
	dst := mat.NewDense(nx, ny, nil)
	if err := MatrixInto(ctx, dst, k, x, y, opt); err != nil {
		return nil, err
	}
	return dst, nil
}

// parallelBlocks runs f on [i0, i1) row blocks of [0, n) on GOMAXPROCS
// goroutines, checking ctx between blocks.
func parallelBlocks(ctx context.Context, n int, f func(i0, i1 int)) error {
	return parallelBlocksOf(ctx, n, blockRows, f)
}

// transformRows is the row block of the feature maps' Transform: large
// enough to amortise the GEMM's packing of the directions.
const transformRows = 256

// parallelBlocksOf is parallelBlocks with blocks of bs rows.
func parallelBlocksOf(ctx context.Context, n, bs int, f func(i0, i1 int)) error {
	return parallel.Blocks(ctx, n, bs, f)
}

// general returns a row-major view of m (no copy for *mat.Dense) after
// checking that every entry is finite.
func general(m mat.Matrix) (blas64.General, error) {
	var g blas64.General
	if rm, ok := m.(mat.RawMatrixer); ok {
		g = rm.RawMatrix()
	} else {
		g = mat.DenseCopyOf(m).RawMatrix()
	}
	for i := 0; i < g.Rows; i++ {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return g, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
		}
	}
	return g, nil
}

func subRows(g blas64.General, i0, i1 int) blas64.General {
	if i1 == i0 {
		return blas64.General{Rows: 0, Cols: g.Cols, Stride: g.Stride}
	}
	return blas64.General{Rows: i1 - i0, Cols: g.Cols, Stride: g.Stride,
		Data: g.Data[i0*g.Stride : (i1-1)*g.Stride+g.Cols]}
}

func rowSqNorms(g blas64.General) []float64 {
	out := make([]float64, g.Rows)
	for i := range out {
		r := g.Data[i*g.Stride : i*g.Stride+g.Cols]
		out[i] = dot(r, r)
	}
	return out
}

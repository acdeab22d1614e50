package kernels

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Single-precision kernel blocks (zonal.Float32).
//
// A block K(X, Y) is stored in float32. For the Gaussian kernel with dense X
// and Y it is also computed in float32: the squared row norms are computed
// in float64 and rounded, the rows of X are rounded to float32 one block of
// blockRows rows at a time (per worker: no float32 copy of the whole of X;
// the rows of a *dataset.Dense32 X are already float32 and read as they
// are, their norms summed in float64), and backend.GaussianBlock32 forms
//
//	K_ij = exp(-gamma max(0, |x_i|^2 + |y_j|^2 - 2 x_i.y_j))
//
// with a single-precision product and exponential. The error of an entry is
// then about K_ij gamma (d + 4) u (|x_i|^2 + |y_j|^2) + 2u, u = 2^-24 (the
// rounding of the inputs and the float32 sums of the d-term inner products,
// worst case, plus the exponential and the final rounding). Every other
// kernel, and any X or Y that is not dense (for instance a *dataset.CSR;
// a *dataset.Dense32 X counts as dense, a Dense32 Y does not), is
// evaluated in float64 by MatrixInto a strip of rows at a time (a Dense32
// strip widened) and rounded to float32, an error of at most u |K_ij|
// beyond MatrixInto's.
// Inputs whose squared norms exceed float32's range (above 1e30) take the
// float64 route too.

// Centers32 is the Y side of single-precision kernel blocks K(X, Y),
// prepared once for many blocks against the same Y (FALKON's centres, a
// model's expansion): for the Gaussian kernel on a dense Y it holds Y
// rounded to float32 (ny x d) and the rounded squared norms |y_j|^2. It is
// immutable and safe for concurrent use.
type Centers32 struct {
	k     Kernel
	y     mat.Matrix     // as given: the float64 route
	ny, d int            // shape of Y
	y32   blas32.General // Y in float32; Data nil when the float32 route is off
	yn32  []float32      // |y_j|^2, computed in float64
	gamma float32
	// prep is y32 prepared once by backend.PrepareGaussian32 on be (the
	// backend of NewCenters32's options): purego packs it for its float32
	// GEMM kernel, so blocks do not repack the centres.
	prep backend.GaussianCentres32
	be   backend.Backend
}

// maxNorm2For32 bounds the squared row norms of the float32 Gaussian route:
// below float32's largest value (3.4e38) with room for |x|^2 + |y|^2 + 2|x.y|.
const maxNorm2For32 = 1e30

// NewCenters32 prepares y (ny x d, the columns of the blocks) for
// single-precision kernel blocks of kernel k. For the Gaussian kernel on a
// dense y it allocates the ny x d float32 copy, after checking its 4 ny d
// bytes against opt.MemoryBudget; otherwise it keeps y itself.
//
// Errors: zonal.ErrParam for a nil kernel, zonal.ErrEmpty for a nil or empty
// y, zonal.ErrNonFinite for NaN or Inf in a dense y, zonal.ErrTooLarge when
// the float32 copy exceeds the budget.
func NewCenters32(k Kernel, y mat.Matrix, opt Options) (*Centers32, error) {
	ny, d, err := checkCenters(k, y)
	if err != nil {
		return nil, err
	}
	c := &Centers32{k: k, y: y, ny: ny, d: d}
	g, gauss := k.(Gaussian)
	_, dense := y.(mat.RawMatrixer)
	if !gauss || !dense {
		return c, nil
	}
	yg, err := general(y) // a view: y is dense
	if err != nil {
		return nil, err
	}
	yn := rowSqNorms(yg)
	for _, v := range yn {
		if v > maxNorm2For32 {
			return c, nil // float64 route
		}
	}
	// The float32 copy and the backend's packed copy (about the same size,
	// its columns rounded up to a kernel tile).
	if err := opt.check(fmt.Sprintf("the %dx%d float32 and packed copies of the kernel block's columns", ny, d), budget.Floats(ny+packSlack, d)); err != nil {
		return nil, err
	}
	c.y32 = blas32.General{Rows: ny, Cols: d, Stride: d, Data: make([]float32, ny*d)}
	c.yn32 = make([]float32, ny)
	for j := 0; j < ny; j++ {
		round32(c.y32.Data[j*d:(j+1)*d], yg.Data[j*yg.Stride:j*yg.Stride+d])
		c.yn32[j] = float32(yn[j])
	}
	c.gamma = float32(g.Gamma())
	c.be = opt.backend()
	c.prep = backend.PrepareGaussian32(c.be, c.y32, c.yn32, c.gamma)
	return c, nil
}

// packSlack bounds the columns a backend's packed copy of the centres adds
// (padding to its widest kernel tile, 48 columns).
const packSlack = 64

// prepared returns the prepared centres when b is the backend they were
// prepared on, else nil (blocks then call backend.GaussianBlock32 on b).
func (c *Centers32) prepared(b backend.Backend) backend.GaussianCentres32 {
	if c.prep == nil || !sameBackend(b, c.be) {
		return nil
	}
	return c.prep
}

// sameBackend reports whether a and b are the same backend value (false
// for values that cannot be compared).
func sameBackend(a, b backend.Backend) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// Dims returns ny and d.
func (c *Centers32) Dims() (ny, d int) { return c.ny, c.d }

// Computes32 reports whether blocks against these centres are computed in
// float32 for a dense X (the Gaussian kernel on a dense Y of moderate norm);
// otherwise they are evaluated in float64 by MatrixInto, a strip of at most
// 4 blockRows GOMAXPROCS rows at a time, and rounded.
func (c *Centers32) Computes32() bool { return c.y32.Data != nil }

// ScratchBytes is the scratch memory a MatrixInto32 call on nx rows
// allocates beyond dst (the float32 row blocks of the workers, or the
// float64 strip), for budgets that callers keep; it does not count the
// O(nx + ny) norms. The size of the float32 copy of Y itself is Bytes.
func (c *Centers32) ScratchBytes(nx int) int64 {
	w := runtime.GOMAXPROCS(0)
	if c.Computes32() {
		return int64(w) * budget.Floats(blockRows, c.d+1) / 2
	}
	return budget.Floats(min(nx, blockRows*4*w), c.ny)
}

// Bytes is the memory held by c beyond Y itself: the float32 copy of Y and
// its norms, and the backend's prepared (packed) copy (0 when blocks are
// evaluated in float64).
func (c *Centers32) Bytes() int64 {
	if !c.Computes32() {
		return 0
	}
	return budget.Floats(c.ny, c.d+1)/2 + c.prep.Bytes()
}

// MatrixInto32 writes the single-precision kernel block K(X, Y) of kernel k,
// K_ij = k(x_i, y_j) for the rows of X (nx x d) and Y (ny x d), into dst
// (nx x ny, row-major, dst.Stride >= ny): NewCenters32(k, y, opt) followed
// by its MatrixInto32 (see there, and the accuracy note above NewCenters32).
//
// Errors: those of NewCenters32 and Centers32.MatrixInto32.
func MatrixInto32(ctx context.Context, dst blas32.General, k Kernel, x, y mat.Matrix, opt Options) error {
	c, err := NewCenters32(k, y, opt)
	if err != nil {
		return err
	}
	return c.MatrixInto32(ctx, dst, x, opt)
}

// MatrixInto32 writes K(X, Y) in float32 into dst (nx x ny, dst.Stride >=
// ny), Y being the prepared centres. Rows are done in parallel blocks and
// ctx is checked between them. Scratch memory: per worker blockRows rows of
// X in float32 on the float32 route; on the float64 route a float64 strip
// of at most 4 blockRows GOMAXPROCS rows of K, shrunk to fit opt.MemoryBudget
// (the strip's rows of a non-dense X are extracted, never densified whole).
// With opt.Progress set, reports of stage "kernel" count the rows done.
//
// Errors: zonal.ErrEmpty for a nil or empty X, zonal.ErrShape for a width
// other than Y's or a dst of the wrong shape, zonal.ErrNonFinite for NaN or
// Inf in X, zonal.ErrTooLarge when not even the scratch of one row fits the
// budget, MatrixInto's errors on the float64 route, ctx.Err() when
// cancelled (dst is then partly written).
func (c *Centers32) MatrixInto32(ctx context.Context, dst blas32.General, x mat.Matrix, opt Options) error {
	if x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	nx, d := x.Dims()
	if nx == 0 || d == 0 {
		return fmt.Errorf("%w: kernel block of a %dx%d input", zonal.ErrEmpty, nx, d)
	}
	if d != c.d {
		return fmt.Errorf("%w: X has %d columns, Y has %d", zonal.ErrShape, d, c.d)
	}
	if dst.Rows != nx || dst.Cols != c.ny || dst.Stride < c.ny || len(dst.Data) < (nx-1)*dst.Stride+c.ny {
		return fmt.Errorf("%w: float32 dst is %dx%d (stride %d, %d entries), want %dx%d",
			zonal.ErrShape, dst.Rows, dst.Cols, dst.Stride, len(dst.Data), nx, c.ny)
	}
	if x32, ok := x.(*dataset.Dense32); ok {
		if err := x32.Validate(); err != nil {
			return err
		}
		if c.y32.Data != nil {
			xn, err := sqNorms32(x32)
			if err != nil {
				return err
			}
			if maxOf(xn) <= maxNorm2For32 {
				fill := func(r int, dst []float32) { copy(dst, x32.Row(r)) }
				return c.gaussian32(ctx, dst, nx, fill, xn, opt)
			}
		}
	}
	if _, ok := x.(mat.RawMatrixer); ok && c.y32.Data != nil {
		xg, err := general(x) // a view: x is dense
		if err != nil {
			return err
		}
		xn := rowSqNorms(xg)
		if maxOf(xn) <= maxNorm2For32 {
			fill := func(r int, dst []float32) { round32(dst, xg.Data[r*xg.Stride:r*xg.Stride+d]) }
			return c.gaussian32(ctx, dst, nx, fill, xn, opt)
		}
	}
	return c.viaFloat64(ctx, dst, x, opt)
}

// RowsInto32 is MatrixInto32 for rows [i0, i1) of x only (dst is
// (i1-i0) x ny): a view of a *mat.Dense, the sparse rows of a
// *dataset.CSR, a read-through strip of any other matrix. Only those rows
// are checked and converted.
//
// Errors: zonal.ErrShape for a range outside x's rows; those of
// MatrixInto32.
func (c *Centers32) RowsInto32(ctx context.Context, dst blas32.General, x mat.Matrix, i0, i1 int, opt Options) error {
	if x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	if n, _ := x.Dims(); i0 < 0 || i1 > n || i0 >= i1 {
		return fmt.Errorf("%w: rows [%d, %d) of a %d-row matrix", zonal.ErrShape, i0, i1, n)
	}
	xs, err := rowStrip(x, i0, i1)
	if err != nil {
		return err
	}
	return c.MatrixInto32(ctx, dst, xs, opt)
}

// sqNorms32 returns the squared row norms of x, summed in float64.
//
// Errors: zonal.ErrNonFinite for NaN or Inf in x, naming the entry.
func sqNorms32(x *dataset.Dense32) ([]float64, error) {
	xn := make([]float64, x.Rows)
	for i := range xn {
		s := 0.0
		for j, v := range x.Row(i) {
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, f)
			}
			s += f * f
		}
		xn[i] = s
	}
	return xn, nil
}

// gaussian32 is the float32 route of MatrixInto32 for nx dense, finite rows
// of X with squared row norms xn: fill(r, dst) writes row r of X in float32
// into dst (rounding a float64 row, or copying a float32 one).
func (c *Centers32) gaussian32(ctx context.Context, dst blas32.General, nx int, fill func(r int, dst []float32), xn []float64, opt Options) error {
	d := c.d
	workers := runtime.GOMAXPROCS(0)
	if err := opt.check("the float32 row blocks of X", int64(workers)*budget.Floats(blockRows, d+1)/2); err != nil {
		return err
	}
	b := opt.backend()
	// The prepared centres run each block on its goroutine: with fewer
	// blocks than workers the backend's own threading does better.
	prep := c.prepared(b)
	if nx < blockRows*workers {
		prep = nil
	}
	pool := sync.Pool{New: func() any { s := make([]float32, blockRows*(d+1)); return &s }}
	block := func(i0, i1 int) {
		sp := pool.Get().(*[]float32)
		s := *sp
		m := i1 - i0
		xs := blas32.General{Rows: m, Cols: d, Stride: d, Data: s[:m*d]}
		xn32 := s[blockRows*d : blockRows*d+m]
		for i := 0; i < m; i++ {
			r := i0 + i
			fill(r, xs.Data[i*d:(i+1)*d])
			xn32[i] = float32(xn[r])
		}
		if prep != nil {
			prep.GaussianBlock32(xs, xn32, subRows32(dst, i0, i1))
		} else {
			backend.GaussianBlock32(b, xs, c.y32, xn32, c.yn32, c.gamma, subRows32(dst, i0, i1))
		}
		pool.Put(sp)
	}
	chunk := nx
	if opt.Progress != nil {
		chunk = blockRows * 4 * workers
	}
	opt.report("kernel", 0, nx)
	for i0 := 0; i0 < nx; i0 += chunk {
		i1 := min(nx, i0+chunk)
		if err := parallelBlocks(ctx, i1-i0, func(a, e int) { block(i0+a, i0+e) }); err != nil {
			return err
		}
		opt.report("kernel", i1, nx)
	}
	return nil
}

// viaFloat64 is the float64 route of MatrixInto32: strips of rows by
// MatrixInto into float64 scratch, rounded into dst.
func (c *Centers32) viaFloat64(ctx context.Context, dst blas32.General, x mat.Matrix, opt Options) error {
	nx, _ := x.Dims()
	rowBytes := budget.Floats(1, c.ny)
	if err := opt.check(fmt.Sprintf("one float64 row of the %d-column kernel block", c.ny), rowBytes); err != nil {
		return err
	}
	limit := budget.Or(opt.MemoryBudget)
	rows := min(nx, blockRows*4*runtime.GOMAXPROCS(0), int(min(limit/rowBytes, math.MaxInt32))) // see ScratchBytes
	rows = max(rows, 1)
	scratch := mat.NewDense(rows, c.ny, nil)
	inner := opt.quiet()
	opt.report("kernel", 0, nx)
	for i0 := 0; i0 < nx; i0 += rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		i1 := min(nx, i0+rows)
		xs, err := rowStrip(x, i0, i1)
		if err != nil {
			return err
		}
		s := scratch.Slice(0, i1-i0, 0, c.ny).(*mat.Dense)
		if err := MatrixInto(ctx, s, c.k, xs, c.y, inner); err != nil {
			return err
		}
		sg := s.RawMatrix()
		for i := 0; i < i1-i0; i++ {
			round32(dst.Data[(i0+i)*dst.Stride:(i0+i)*dst.Stride+c.ny], sg.Data[i*sg.Stride:i*sg.Stride+c.ny])
		}
		opt.report("kernel", i1, nx)
	}
	return nil
}

// rowStrip returns rows [i0, i1) of x as a matrix: a view of a *mat.Dense,
// the sparse rows of a *dataset.CSR, or a read-through view of any other
// matrix (MatrixInto copies that one strip).
func rowStrip(x mat.Matrix, i0, i1 int) (mat.Matrix, error) {
	_, d := x.Dims()
	switch m := x.(type) {
	case *mat.Dense:
		return m.Slice(i0, i1, 0, d), nil
	case *dataset.Dense32:
		if err := m.Validate(); err != nil {
			return nil, err
		}
		return m.RowRange(i0, i1)
	case *dataset.CSR:
		idx := make([]int, i1-i0)
		for i := range idx {
			idx[i] = i0 + i
		}
		return m.Subset(idx)
	}
	return rowView{m: x, i0: i0, rows: i1 - i0}, nil
}

// rowView is rows [i0, i0+rows) of m.
type rowView struct {
	m        mat.Matrix
	i0, rows int
}

func (v rowView) Dims() (int, int) { _, c := v.m.Dims(); return v.rows, c }
func (v rowView) At(i, j int) float64 {
	if i < 0 || i >= v.rows {
		panic(mat.ErrRowAccess)
	}
	return v.m.At(v.i0+i, j)
}
func (v rowView) T() mat.Matrix { return mat.Transpose{Matrix: v} }

// round32 sets dst[i] = float32(src[i]) (round to nearest).
func round32(dst []float32, src []float64) {
	for i, v := range src {
		dst[i] = float32(v)
	}
}

func subRows32(g blas32.General, i0, i1 int) blas32.General {
	if i1 == i0 {
		return blas32.General{Rows: 0, Cols: g.Cols, Stride: g.Stride}
	}
	return blas32.General{Rows: i1 - i0, Cols: g.Cols, Stride: g.Stride,
		Data: g.Data[i0*g.Stride : (i1-1)*g.Stride+g.Cols]}
}

// Rows32 is a source of single-precision kernel blocks for the rows of one
// X against prepared centres, checked and prepared once for many blocks
// (the row blocks of every CG pass of a streamed float32 FALKON fit): on
// the float32 Gaussian route X's entries are validated and its squared
// row norms computed (in float64) and rounded once, and Block computes one
// block on the calling goroutine against the centres prepared by
// NewCenters32, so that callers can run one block per worker and use it
// while it is in cache. Block's entries are those of Centers32.RowsInto32
// for the same rows. X must not change while the Rows32 is in use; a
// Rows32 is safe for concurrent use.
type Rows32 struct {
	c    *Centers32
	x    mat.Matrix
	fill func(r int, dst []float32) // row r of X in float32
	xn32 []float32                  // nil: blocks go through RowsInto32
	opt  Options
}

// NewRows32 prepares the rows of x (n x d, d the centres' width) for
// Block; opt is used by every block (its Backend, and MemoryBudget on the
// float64 route; Progress is ignored).
//
// Errors: zonal.ErrEmpty for a nil or empty x, zonal.ErrShape for a width
// other than the centres', zonal.ErrNonFinite for NaN or Inf in a dense x
// (other inputs are checked block by block, as RowsInto32 does).
func (c *Centers32) NewRows32(x mat.Matrix, opt Options) (*Rows32, error) {
	if err := checkRowsInput(x, c.d); err != nil {
		return nil, err
	}
	nx, d := x.Dims()
	opt.Progress = nil
	r := &Rows32{c: c, x: x, opt: opt}
	if c.y32.Data == nil {
		return r, nil
	}
	var xn []float64
	switch m := x.(type) {
	case *dataset.Dense32:
		if err := m.Validate(); err != nil {
			return nil, err
		}
		var err error
		if xn, err = sqNorms32(m); err != nil {
			return nil, err
		}
		r.fill = func(i int, dst []float32) { copy(dst, m.Row(i)) }
	case mat.RawMatrixer:
		xg, err := general(x) // a view: x is dense
		if err != nil {
			return nil, err
		}
		xn = rowSqNorms(xg)
		r.fill = func(i int, dst []float32) { round32(dst, xg.Data[i*xg.Stride:i*xg.Stride+d]) }
	default:
		return r, nil
	}
	if maxOf(xn) > maxNorm2For32 {
		return r, nil // the float64 route, as RowsInto32 takes it
	}
	r.xn32 = make([]float32, nx)
	for i, v := range xn {
		r.xn32[i] = float32(v)
	}
	return r, nil
}

// Bytes is the memory r holds: the rounded squared norms of X.
func (r *Rows32) Bytes() int64 { return int64(len(r.xn32)) * 4 }

// ScratchLen is the length of the float32 scratch a Block of rows rows
// needs (rows of X in float32; 0 on the float64 route).
func (r *Rows32) ScratchLen(rows int) int {
	if r.xn32 == nil {
		return 0
	}
	return rows * r.c.d
}

// Block writes the kernel block of rows [i0, i1) of X into dst ((i1-i0) x
// ny), using scratch (at least ScratchLen(i1-i0) values) for the rows in
// float32. On the float32 Gaussian route it runs on the calling goroutine;
// otherwise it is RowsInto32 (which may use more goroutines).
//
// Errors: zonal.ErrShape for a range outside X's rows, a dst of the wrong
// shape or a short scratch; those of RowsInto32 on the float64 route.
func (r *Rows32) Block(ctx context.Context, dst blas32.General, i0, i1 int, scratch []float32) error {
	nx, d := r.x.Dims()
	if i0 < 0 || i1 > nx || i0 >= i1 {
		return fmt.Errorf("%w: rows [%d, %d) of a %d-row matrix", zonal.ErrShape, i0, i1, nx)
	}
	if r.xn32 == nil {
		return r.c.RowsInto32(ctx, dst, r.x, i0, i1, r.opt)
	}
	m := i1 - i0
	if dst.Rows != m || dst.Cols != r.c.ny || dst.Stride < r.c.ny || len(scratch) < m*d {
		return fmt.Errorf("%w: float32 dst is %dx%d (stride %d) with %d scratch values, want %dx%d and %d",
			zonal.ErrShape, dst.Rows, dst.Cols, dst.Stride, len(scratch), m, r.c.ny, m*d)
	}
	xs := blas32.General{Rows: m, Cols: d, Stride: d, Data: scratch[:m*d]}
	for i := 0; i < m; i++ {
		r.fill(i0+i, xs.Data[i*d:(i+1)*d])
	}
	xn := r.xn32[i0:i1]
	b := r.opt.backend()
	if p := r.c.prepared(b); p != nil {
		p.GaussianBlock32(xs, xn, dst)
		return nil
	}
	backend.GaussianBlock32(b, xs, r.c.y32, xn, r.c.yn32, r.c.gamma, dst)
	return nil
}

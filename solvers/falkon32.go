package solvers

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Mixed-precision FALKON (FalkonOptions.Precision = zonal.Float32). Where
// the line is drawn:
//
//   - single precision: the storage of K_nM (cached or streamed blocks,
//     4 bytes an entry) and its computation, by kernels.Centers32: for the
//     Gaussian kernel float32 products x_i.c_j and a float32 exponential
//     (other kernels are evaluated in float64 and rounded).
//   - double precision: everything else. K_MM, its Cholesky factor T and
//     the factor A of T T^T / M + lambda I; every CG vector, dot product
//     and triangular solve; the coefficients alpha; and the two products
//     of each CG pass, K_b w and K_b^T (K_b w), which read the float32
//     entries of K_nM where they lie and widen each exactly
//     (backend.DotRows32, AxpyRows32), so that their sums over M terms and
//     over n rows are float64 sums.
//
// The pass. The rows are cut into blocks of about passBlockBytes of
// float32 (workerRows), shared among GOMAXPROCS workers by a fixed
// assignment. A worker computes its block of K_nM (streamed: against the
// centres prepared once per fit, kernels.Centers32 and Rows32, so no block
// repacks them or rechecks x) and applies it at once, K_b^T W_b (K_b w)
// into its own float64 sum, while the block is in its cache; the block is
// never written to main memory whole, and a streamed fit holds only the
// workers' blocks, however large the budget. Measured by CPU profile on a
// loaded 2-core machine (TestFalkon32StreamedPassProfile: n = 20000,
// d = 28, M = 2000, 8 streamed passes): 8.5 s of CPU when the blocks were
// widened to float64 and multiplied by Gemm (the two skinny products,
// their packing and the widening took 85%), 0.7 s now, three quarters of
// it the float32 distance product and exponential.
//
// Why there. K_nM is the only object of size n M, and forming it (n M d
// multiply-adds and n M exponentials) is the long phase of a fit, so the
// float32 storage halves the memory and the float32 products speed up that
// phase. Rounding the entries once perturbs the system like a tiny,
// fixed, symmetric change of the kernel, which CG solves as accurately as
// the original. Float32 products in the CG passes are different: their
// error, about 2^-24 sum_j |K_ij| |w_j| per entry, changes at every
// iteration and is not symmetric, and w = T^-1 A^-1 u has large entries of
// both signs (T^-1 grows like K_MM's condition number), so CG stalls at
// that level. Measured on synthetic regression data (n = 3000, d = 4,
// Gaussian sigma 1.5, M = 250, 100 iterations; TestFalkonFloat32Products'
// problem): with float32 products (Sgemm, sums of one row block added in
// float64) CG stalls at relative residual 2e-3 to 5e-3 for lambda 1e-5 to
// 1e-8 where float64 reaches 1e-11 to 3e-4, and the predictions differ
// from float64's by 1e-3 to 1e-2 relative RMS; splitting w into two
// float32 parts does not help (the float32 sums are the cause). With the
// products in float64 on the widened float32 entries, CG converges like
// float64's and the predictions agree within 1e-5 (2e-4 at lambda 1e-8).
// Factoring K_MM in float32 (condition limit about 1e7, while K_MM's
// reaches 1e10 and more for M in the thousands) would fail or need a
// jitter that changes the model.

// Float32 rows. With Precision = zonal.Float32, FitFalkon also takes the
// training rows as a *dataset.Dense32 (4 bytes an entry instead of 8): the
// fit reads them only through kernels.Centers32.RowsInto32, whose Gaussian
// route uses the float32 rows as they are (a float64 x is rounded to the
// same values block by block, so the two fits agree up to the order of
// float64 sums; other kernels widen one strip of rows at a time). The M
// centres are widened back to a float64 *mat.Dense (exactly) for K_MM,
// the factors and the model. Not covered: leverage-score sampling (its
// recursion copies the rows to float64) and Precision float64 refuse
// Dense32 rows, as do the other solvers; CSR rows stay float64.

// checkRows32 checks the options FitFalkon accepts *dataset.Dense32 rows
// with: Precision float32, uniform sampling (zonal.ErrParam otherwise).
func checkRows32(opts FalkonOptions) error {
	if opts.Precision != zonal.Float32 {
		return &zonal.ParamError{Param: "Precision", Value: opts.Precision,
			Reason: "float32 training rows (*dataset.Dense32) are read by the float32 kernel blocks only: use Precision float32, or pass a *mat.Dense"}
	}
	if opts.Sampling == SamplingRLS {
		return &zonal.ParamError{Param: "Sampling", Value: opts.Sampling,
			Reason: "leverage-score sampling reads float64 rows: use uniform sampling with float32 training rows (*dataset.Dense32), or pass a *mat.Dense"}
	}
	return nil
}

// knm32 is K_nM in float32: cached whole, or recomputed in row blocks at
// every pass.
type knm32 struct {
	be         backend.Backend
	ko         kernels.Options
	c32        *kernels.Centers32
	src        *kernels.Rows32 // the rows of x prepared for blocks; nil when cached
	x          mat.Matrix
	yc         *mat.Dense // the targets, already multiplied by the weights
	rw         []float64  // the row weights; nil: unweighted
	n, M, kout int
	rb         int            // rows of one worker's block
	cache      blas32.General // n x M; Data nil when streaming
	wT         []float64      // kout x M: w transposed, one column of w a row
	work       []*passWorker
	cached     bool
	// The products32 variant only: bs x M blocks, w and the block's sums
	// in float32.
	bs            int
	blk           blas32.General
	w32, o32, t32 blas32.General
}

// passWorker is one worker's scratch in a pass: its block of K_nM (rb x M
// float32, streamed only) and the block's rows of x in float32, the
// block's K_b w (kout x rb) and the worker's sum K^T (K w) over its blocks
// (kout x M, float64).
type passWorker struct {
	kb  []float32
	xs  []float32
	t   []float64
	acc []float64
}

// products32 switches the CG passes of float32 FALKON to float32 products
// (Sgemm on the float32 blocks, w and the targets rounded, each block's sum
// added into the float64 result): the variant measured in the note above,
// kept for that comparison (TestFalkonFloat32Products); it is not exposed.
var products32 = false

// workerRows is the rows of one worker's block of K_nM in a pass: about
// passBlockBytes of float32 (so the block stays in L2 between its
// computation and its two products), a multiple of 12 rows (the float32
// GEMM kernels' tile heights, 6 and 12) when that is at least 24, and at
// least one row.
func workerRows(n, M int) int {
	rb := int(passBlockBytes / (int64(M) * 4))
	if rb >= 24 {
		rb = rb / 12 * 12
	}
	return max(1, min(rb, n))
}

// newKnM32 returns nil when opts.Precision is Float64. Otherwise it prepares
// K_nM in float32 for x (n x d) and the centres, caching it (and computing
// it, with "kernel" progress reports) when its 4 n M bytes fit the budget
// after fixed (the float64 M x M factors and vectors) and the float32
// scratch, and else preparing x's rows for blocks computed at every pass
// (kernels.Rows32), with as many workers' blocks as the budget holds.
//
// Errors: zonal.ErrTooLarge when not even one streamed row fits; those of
// kernels.NewCenters32, NewRows32 and MatrixInto32; ctx.Err() (wrapped)
// when canceled.
func newKnM32(ctx context.Context, be backend.Backend, k kernels.Kernel, x mat.Matrix, yc *mat.Dense, rw []float64, centers mat.Matrix,
	fixed, limit int64, opts FalkonOptions) (*knm32, error) {
	if opts.Precision != zonal.Float32 {
		return nil, nil
	}
	n, d := x.Dims()
	M, _ := centers.Dims()
	_, kout := yc.Dims()
	ko := kernels.Options{Backend: be, MemoryBudget: limit}
	c32, err := kernels.NewCenters32(k, centers, ko)
	if err != nil {
		return nil, err
	}
	q := &knm32{be: be, ko: ko, c32: c32, x: x, yc: yc, rw: rw, n: n, M: M, kout: kout}
	rb := workerRows(n, M)
	// Always held: the centres in float32 (and packed), w transposed, the
	// float32 w and block sums of the products32 variant.
	held := satAdd(fixed, c32.Bytes(), budget.Floats(M, kout), budget.Floats(2, M, kout)/2)
	sums := budget.Floats(rb+M, kout) // a worker's K_b w and its sum
	maxW := max(1, min(runtime.GOMAXPROCS(0), (n+rb-1)/rb))
	cachedHeld := satAdd(held, budget.Floats(n, M)/2, c32.ScratchBytes(min(n, fillRows32)))
	var per int64
	if satAdd(cachedHeld, sums) <= limit {
		q.cached, held, per = true, cachedHeld, sums
	} else {
		held = satAdd(held, int64(n)*4) // x's rounded norms (kernels.Rows32)
		rowBytes := int64(M+d)*4 + int64(kout)*8
		if !blocks32(c32, x) {
			// RowsInto32's float64 strip of each worker's block.
			rowBytes += int64(M) * 8
		}
		if left := limit - held - budget.Floats(M, kout); left < rowBytes {
			return nil, fmt.Errorf("%w: float32 FALKON with %d centres needs %s for its factors, scratch and one streamed row, the memory budget is %s",
				zonal.ErrTooLarge, M, budget.Format(satAdd(held, budget.Floats(M, kout), rowBytes)), budget.Format(limit))
		} else if int64(rb)*rowBytes > left {
			rb = int(left / rowBytes)
		}
		per = satAdd(int64(rb)*rowBytes, budget.Floats(M, kout))
	}
	q.rb = rb
	workers := 1
	for workers < maxW && satAdd(held, per*int64(workers+1)) <= limit {
		workers++
	}
	q.wT = make([]float64, kout*M)
	for g := 0; g < workers; g++ {
		wk := &passWorker{t: make([]float64, kout*rb), acc: make([]float64, kout*M)}
		q.work = append(q.work, wk)
	}
	q.bs = rb
	q.w32 = newGeneral32(M, kout)
	q.o32 = newGeneral32(M, kout)
	if products32 {
		q.t32 = newGeneral32(q.bs, kout)
	}
	if !q.cached {
		if q.src, err = c32.NewRows32(x, ko); err != nil {
			return nil, err
		}
		for _, wk := range q.work {
			wk.kb = make([]float32, rb*M)
			wk.xs = make([]float32, q.src.ScratchLen(rb))
		}
		if products32 {
			q.blk = newGeneral32(q.bs, M)
		}
		return q, nil
	}
	q.cache = newGeneral32(n, M)
	for i0 := 0; i0 < n; i0 += fillRows32 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("solvers: FALKON canceled: %w", err)
		}
		i1 := min(i0+fillRows32, n)
		if err := c32.RowsInto32(ctx, rows32(q.cache, i0, i1), x, i0, i1, ko); err != nil {
			return nil, err
		}
		opts.report(zonal.Progress{Stage: "kernel", Done: i1, Total: n})
	}
	return q, nil
}

// blocks32 reports whether the streamed blocks of x against c32 are
// computed in float32 (the Gaussian kernel on dense rows: kernels.Rows32's
// float32 route); otherwise each block is evaluated in float64 into a
// strip of the same rows (its scratch counted by newKnM32).
func blocks32(c32 *kernels.Centers32, x mat.Matrix) bool {
	if !c32.Computes32() {
		return false
	}
	if _, ok := x.(*dataset.Dense32); ok {
		return true
	}
	_, ok := x.(mat.RawMatrixer)
	return ok
}

// fillRows32 is the rows of K_nM computed per call when caching (as the
// float64 path's 4096).
const fillRows32 = 4096

// isCached reports whether q holds K_nM whole (false for a nil q).
func (q *knm32) isCached() bool { return q != nil && q.cached }

// pass is FALKON's pass on the float32 K_nM: out = K_nM^T W (K_nM w), or
// out = K_nM^T yc when w is nil (W the row weights, I when unweighted; yc
// holds the weighted targets). The n rows are cut into blocks of rb rows
// (about passBlockBytes of float32), block s going to worker s mod W; a
// worker computes its streamed block K_b (kernels.Rows32, on its own
// goroutine) and at once, while K_b is in cache, t = W_b K_b w and
// acc += K_b^T t (backend.DotRows32 and AxpyRows32: the float32 entries
// widened exactly, every product and sum in float64), so K_b is never
// written to main memory whole. The workers' sums are added in worker
// order, so a pass sums in the same order on every run with the same
// number of workers. With products32 the blocks are multiplied in
// float32 instead (see the note above).
func (q *knm32) pass(ctx context.Context, out blas64.General, w *blas64.General) error {
	zeroGeneral(out)
	if products32 {
		return q.passProducts32(ctx, out, w)
	}
	return rowPass(ctx, out, w, q.wT, q.n, q.rb, len(q.work), func(g int) []float64 { return q.work[g].acc }, q.passBlocks)
}

// passBlocks is worker g's share of a pass (blocks g, g+W, ... of the nb),
// summed into its acc: K_b^T W_b (K_b w) (useW; w transposed in q.wT) or
// K_b^T yc_b.
func (q *knm32) passBlocks(ctx context.Context, g, W, nb int, useW bool) error {
	wk := q.work[g]
	clear(wk.acc)
	M, yc := q.M, q.yc.RawMatrix()
	for s := g; s < nb; s += W {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("solvers: FALKON canceled: %w", err)
		}
		i0 := s * q.rb
		i1 := min(i0+q.rb, q.n)
		m := i1 - i0
		var kv blas32.General
		if q.cached {
			kv = rows32(q.cache, i0, i1)
		} else {
			kv = blas32.General{Rows: m, Cols: M, Stride: M, Data: wk.kb[:m*M]}
			if err := q.src.Block(ctx, kv, i0, i1, wk.xs); err != nil {
				return err
			}
		}
		applyBlock(wk.acc, wk.t, q.wT, q.rw, yc, i0, m, q.kout, useW,
			func(t, v []float64) { backend.DotRows32(q.be, t, kv, v) },
			func(acc, t []float64) { backend.AxpyRows32(q.be, acc, kv, t) })
	}
	return nil
}

// passProducts32 is pass with float32 products (the products32 variant),
// one block of bs rows at a time.
func (q *knm32) passProducts32(ctx context.Context, out blas64.General, w *blas64.General) error {
	if w != nil {
		for i := 0; i < q.M; i++ {
			for j := 0; j < q.kout; j++ {
				q.w32.Data[i*q.kout+j] = float32(w.Data[i*w.Stride+j])
			}
		}
	}
	for i0 := 0; i0 < q.n; i0 += q.bs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("solvers: FALKON canceled: %w", err)
		}
		i1 := min(i0+q.bs, q.n)
		var kv blas32.General
		if q.cached {
			kv = rows32(q.cache, i0, i1)
		} else {
			kv = rows32(q.blk, 0, i1-i0)
			if err := q.src.Block(ctx, kv, i0, i1, q.work[0].xs); err != nil {
				return err
			}
		}
		q.pass32(kv, i0, out, w != nil)
	}
	return nil
}

// pass32 adds K_b^T (K_b w32) (w32 already rounded), or K_b^T yc_b when
// !useW, for the float32 block kv of rows i0..., to out: float32 products,
// the block's sum added in float64 (the products32 variant).
func (q *knm32) pass32(kv blas32.General, i0 int, out blas64.General, useW bool) {
	m := kv.Rows
	t := rows32(q.t32, 0, m)
	if useW {
		backend.Sgemm(q.be, blas.NoTrans, blas.NoTrans, 1, kv, q.w32, 0, t)
		if q.rw != nil {
			for i := 0; i < m; i++ {
				for j := 0; j < q.kout; j++ {
					t.Data[i*t.Stride+j] *= float32(q.rw[i0+i])
				}
			}
		}
	} else {
		yr := q.yc.RawMatrix()
		for i := 0; i < m; i++ {
			for j := 0; j < q.kout; j++ {
				t.Data[i*t.Stride+j] = float32(yr.Data[(i0+i)*yr.Stride+j])
			}
		}
	}
	backend.Sgemm(q.be, blas.Trans, blas.NoTrans, 1, kv, t, 0, q.o32)
	addWidened(out, q.o32)
}

// Precision reports the precision of the model's kernel blocks: Float32
// when it was fitted with FalkonOptions.Precision = zonal.Float32 (its
// batch predictions then compute kernel blocks in float32 too).
func (m *Falkon) Precision() zonal.Precision { return m.exp.prec }

// withPrecision sets e's precision and returns e.
func withPrecision(e *expansion, p zonal.Precision) *expansion {
	e.prec = p
	return e
}

// predictWiden is the rows of a float32 kernel block widened to float64 at
// a time for the product with alpha.
const predictWiden = 64

// predictBatch32 is predictBatch for a float32 expansion: the kernel blocks
// K(x, C) are computed in float32 (kernels.Centers32, prepared once per
// model), then widened to float64 predictWiden rows at a time and
// multiplied by alpha in float64, so that the coefficients, which may be
// large and of both signs, are not rounded.
func (e *expansion) predictBatch32(dst *mat.Dense, x mat.Matrix) error {
	e.c32once.Do(func() {
		// The model holds the M x d centres in float64 already; the float32
		// copy is half that, so no budget beyond it applies.
		e.c32, e.c32err = kernels.NewCenters32(e.kern, e.centers, kernels.Options{Backend: e.be, MemoryBudget: math.MaxInt64})
	})
	if e.c32err != nil {
		return e.c32err
	}
	n, _ := x.Dims()
	m, _, k := e.dims()
	bs := min(predictBlock, n)
	kb := newGeneral32(bs, m)
	wide := mat.NewDense(min(predictWiden, bs), m, nil)
	ko := kernels.Options{Backend: e.be, MemoryBudget: math.MaxInt64}
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		kv := rows32(kb, 0, i1-i0)
		if err := e.c32.RowsInto32(context.Background(), kv, x, i0, i1, ko); err != nil {
			return err
		}
		productWidened(e.be, dst.Slice(i0, i1, 0, k).(*mat.Dense), kv, e.alpha, e.mean, wide)
	}
	return nil
}

// productWidened sets dst = mean + Z W (dst r x k, mean added to every row)
// for the float32 rows of z (r x D) and the float64 W (D x k), widening z
// into wide (at least one row, D columns) that many rows at a time, so the
// weights are never rounded.
func productWidened(be backend.Backend, dst *mat.Dense, z blas32.General, w *mat.Dense, mean []float64, wide *mat.Dense) {
	wr, _ := wide.Dims()
	_, k := dst.Dims()
	for r0 := 0; r0 < z.Rows; r0 += wr {
		r1 := min(r0+wr, z.Rows)
		wv := wide.Slice(0, r1-r0, 0, z.Cols).(*mat.Dense)
		widen32(wv.RawMatrix(), z, r0, r1)
		dv := dst.Slice(r0, r1, 0, k).(*mat.Dense)
		fillRows(dv, mean)
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, wv.RawMatrix(), w.RawMatrix(), 1, dv.RawMatrix())
	}
}

// widen32 copies rows r0..r1-1 of the float32 src into rows 0.. of dst.
func widen32(dst blas64.General, src blas32.General, r0, r1 int) {
	for i := r0; i < r1; i++ {
		out := dst.Data[(i-r0)*dst.Stride : (i-r0)*dst.Stride+src.Cols]
		for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
			out[j] = float64(v)
		}
	}
}

// addWidened adds the float32 matrix s into the float64 a of the same shape.
func addWidened(a blas64.General, s blas32.General) {
	for i := 0; i < a.Rows; i++ {
		dst := a.Data[i*a.Stride : i*a.Stride+a.Cols]
		for j, v := range s.Data[i*s.Stride : i*s.Stride+a.Cols] {
			dst[j] += float64(v)
		}
	}
}

// expansion32 holds the lazily prepared float32 centres of a float32
// expansion (embedded in expansion).
type expansion32 struct {
	prec    zonal.Precision
	c32once sync.Once
	c32     *kernels.Centers32
	c32err  error
}

func newGeneral32(r, c int) blas32.General {
	return blas32.General{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
}

func rows32(g blas32.General, i0, i1 int) blas32.General {
	return blas32.General{Rows: i1 - i0, Cols: g.Cols, Stride: g.Stride, Data: g.Data[i0*g.Stride : (i1-1)*g.Stride+g.Cols]}
}

// satAdd adds byte counts, saturating at math.MaxInt64.
func satAdd(v ...int64) int64 {
	var s int64
	for _, x := range v {
		if s > math.MaxInt64-x {
			return math.MaxInt64
		}
		s += x
	}
	return s
}

// Precision section of expansion models (KindFalkon) in model files: after
// the expansion, a float32 model appends the tag byte then the precision
// byte (1 = float32); a float64 model appends nothing, so it is encoded
// exactly as before precisions existed. Files with a float32 model carry
// format version 2 (see MarshalPipeline).
const expansionPrecisionTag = 1

// precision appends the precision section (tag, then p) when p is not Float64.
func (e *enc) precision(tag uint8, p zonal.Precision) {
	if p != zonal.Float64 {
		e.u8(tag)
		e.u8(uint8(p))
	}
}

// precisionValue reads the precision byte of a precision section whose tag
// has been read.
func (d *dec) precisionValue() zonal.Precision {
	p := zonal.Precision(d.u8("precision"))
	if d.err == nil {
		if p == zonal.Float64 {
			d.fail("explicit float64 precision section (float64 models have none)")
		} else if err := p.Check(); err != nil {
			d.fail("%v", err)
		}
	}
	return p
}

// precisioner is implemented by models whose kernel blocks may be float32.
type precisioner interface{ Precision() zonal.Precision }

// modelFormatVersion is the format version a file holding m is written
// with: 1 unless m records float32 precision (2), so that files earlier
// builds can read stay readable by them.
func modelFormatVersion(m Model) uint16 {
	if p, ok := m.(precisioner); ok && p.Precision() != zonal.Float64 {
		return 2
	}
	return 1
}

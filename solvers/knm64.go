package solvers

import (
	"context"
	"fmt"
	"runtime"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Streamed float64 K_nM. When K_nM does not fit the budget in float64,
// every CG pass recomputes it, and the pass is organised as float32's
// (see "The pass" in falkon32.go): the rows are cut into blocks of
// workerRows64 rows, block s goes to worker s mod W (W up to GOMAXPROCS,
// as many as the budget holds), and a worker computes its block
// (kernels.Rows, prepared once per fit: x checked and its norms taken
// once) and applies it at once, t = W_b K_b w (backend.DotRows) and
// acc += K_b^T t (backend.AxpyRows), while the block is in cache (L2 or
// L3: 64 rows at M = 10^4 are 5 MB). So a streamed fit holds only the
// workers' blocks however large the budget. Before this (until
// 2026-12-03) one block took all the budget left after the factors (about
// 15000 rows, 1.2 GB at M = 10^4 and a 2 GiB budget), computed by
// kernels.MatrixInto and multiplied by two Gemm calls that read it back
// from memory: a streamed CG iteration took 3.1x the time of its flops at
// the measured Gemm rate (bench/scale/README.md).
//
// InterceptFitted: the right-hand side's pass also sums every worker's
// weighted column sums K_b^T w_b; columnMeans adds them in worker order
// into mu, and the later passes centre each block (K_b - 1 mu^T) before
// its products, as the cached path centres K_nM once.

// knm64 is a streamed float64 K_nM: recomputed in row blocks at every
// pass.
type knm64 struct {
	be         backend.Backend
	src        *kernels.Rows
	yc         *mat.Dense // the targets, already multiplied by the weights
	rw         []float64  // the row weights; nil: unweighted
	n, M, kout int
	rb         int       // rows of one worker's block
	wT         []float64 // kout x M: w transposed, one column of w a row
	work       []*pass64Worker
	mu         []float64 // InterceptFitted: K_nM's weighted column sums, then means
	centred    bool      // the blocks are centred by mu (mu is final)
}

// pass64Worker is one worker's scratch: its block of K_nM (rb x M), the
// block's K_b w (kout x rb), its sum K^T (K w) over its blocks (kout x M)
// and, for InterceptFitted, its weighted column sums (M).
type pass64Worker struct {
	kb, t, acc, cs []float64
}

// workerRows64 is the rows of one worker's float64 block: about
// passBlockBytes but at least minPassRows, a multiple of 4 rows (the
// float64 GEMM kernels' tile height) when that is at least 8, at least
// one row and at most n.
func workerRows64(n, M int) int {
	rb := max(minPassRows, int(passBlockBytes/(int64(M)*8)))
	if rb >= 8 {
		rb = rb / 4 * 4
	}
	return max(1, min(rb, n))
}

// minPassRows is the fewest rows of a float64 pass block (the budget
// permitting). The fused kernel of a block computes its m x d by d x M
// distance product with GEMM kernels that pack the M centres for every
// block, so short blocks pay for the packing and for the kernels' poor
// use of few rows: measured on the 2-core AMD EPYC (BenchmarkKnM64Pass,
// n = 20000, d = 28), at M = 10^4 a pass took 2.1 ns per entry in
// passBlockBytes blocks (6 rows), 0.99 at 16 rows, 0.86 at 32, 0.80 at 64
// and 0.98 at 128 (64 rows are 5 MB, past the 1 MiB L2 but within the
// 32 MiB L3); at M = 2000, 0.90 at 32 rows (passBlockBytes), 0.69 at 64
// and 0.67 to 0.69 at 128 and 256.
var minPassRows = 64

// knm64Fixed is what a streamed float64 K_nM holds whatever its workers:
// x's squared norms (kernels.Rows), w transposed and, for a fitted
// intercept, the column means.
func knm64Fixed(n, M, kout int, intercept bool) int64 {
	b := budget.Floats(n) + budget.Floats(M, kout)
	if intercept {
		b = satAdd(b, budget.Floats(M))
	}
	return b
}

// newKnM64 prepares the streamed float64 K_nM of x (n x d) against the
// centres: the rows for kernels.Rows blocks and as many workers as the
// budget holds after fixed (the M x M factors and CG vectors), each with
// a block of workerRows64 rows, or fewer when even one worker's does not
// fit. intercept asks for the column sums of InterceptFitted.
//
// Errors: zonal.ErrTooLarge when not even one streamed row fits; those of
// kernels.NewCenters and Centers.NewRows.
func newKnM64(be backend.Backend, k kernels.Kernel, x mat.Matrix, yc *mat.Dense, rw []float64, centers mat.Matrix,
	fixed, limit int64, intercept bool) (*knm64, error) {
	n, _ := x.Dims()
	M, _ := centers.Dims()
	_, kout := yc.Dims()
	c, err := kernels.NewCenters(k, centers)
	if err != nil {
		return nil, err
	}
	held := satAdd(fixed, knm64Fixed(n, M, kout, intercept))
	rowBytes := budget.Floats(M + kout) // a row of the block and of t
	perFixed := budget.Floats(M, kout)  // the worker's acc
	if intercept {
		perFixed = satAdd(perFixed, budget.Floats(M))
	}
	if left := limit - held - perFixed; left < rowBytes {
		return nil, fmt.Errorf("%w: FALKON with %d centres needs %s for its factors, scratch and one streamed row of K_nM, the memory budget is %s",
			zonal.ErrTooLarge, M, budget.Format(satAdd(held, perFixed, rowBytes)), budget.Format(limit))
	}
	rb := workerRows64(n, M)
	if left := limit - held - perFixed; int64(rb)*rowBytes > left {
		rb = int(left / rowBytes)
	}
	per := satAdd(int64(rb)*rowBytes, perFixed)
	maxW := max(1, min(runtime.GOMAXPROCS(0), (n+rb-1)/rb))
	workers := 1
	for workers < maxW && satAdd(held, per*int64(workers+1)) <= limit {
		workers++
	}
	src, err := c.NewRows(x, kernels.Options{Backend: be})
	if err != nil {
		return nil, err
	}
	q := &knm64{be: be, src: src, yc: yc, rw: rw, n: n, M: M, kout: kout, rb: rb, wT: make([]float64, kout*M)}
	if intercept {
		q.mu = make([]float64, M)
	}
	for g := 0; g < workers; g++ {
		wk := &pass64Worker{kb: make([]float64, rb*M), t: make([]float64, kout*rb), acc: make([]float64, kout*M)}
		if intercept {
			wk.cs = make([]float64, M)
		}
		q.work = append(q.work, wk)
	}
	return q, nil
}

// pass is FALKON's pass on the streamed K_nM: out = K_nM^T W (K_nM w), or
// out = K_nM^T yc when w is nil (W the row weights, I when unweighted; yc
// holds the weighted targets), with K_nM's blocks centred by mu once
// columnMeans has made it final. The workers' sums are added in worker
// order, so a pass sums in the same order on every run with the same
// number of workers.
func (q *knm64) pass(ctx context.Context, out blas64.General, w *blas64.General) error {
	return rowPass(ctx, out, w, q.wT, q.n, q.rb, len(q.work), func(g int) []float64 { return q.work[g].acc }, q.passBlocks)
}

// passBlocks is worker g's share of a pass (blocks g, g+W, ... of the nb),
// summed into its acc: K_b^T W_b (K_b w) (useW; w transposed in q.wT) or
// K_b^T yc_b, and in the right-hand side's pass of InterceptFitted the
// weighted column sums into its cs.
func (q *knm64) passBlocks(ctx context.Context, g, W, nb int, useW bool) error {
	wk := q.work[g]
	clear(wk.acc)
	sums := q.mu != nil && !q.centred && !useW
	if sums {
		clear(wk.cs)
	}
	M, yc := q.M, q.yc.RawMatrix()
	for s := g; s < nb; s += W {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("solvers: FALKON canceled: %w", err)
		}
		i0 := s * q.rb
		i1 := min(i0+q.rb, q.n)
		m := i1 - i0
		kv := blas64.General{Rows: m, Cols: M, Stride: M, Data: wk.kb[:m*M]}
		if err := q.src.Block(ctx, kv, i0, i1); err != nil {
			return err
		}
		if sums {
			t := wk.t[:m]
			for i := range t {
				t[i] = 1
				if q.rw != nil {
					t[i] = q.rw[i0+i]
				}
			}
			backend.AxpyRows(q.be, wk.cs, kv, t)
		}
		if q.centred {
			centreColumns(kv, q.mu)
		}
		applyBlock(wk.acc, wk.t, q.wT, q.rw, yc, i0, m, q.kout, useW,
			func(t, v []float64) { backend.DotRows(q.be, t, kv, v) },
			func(acc, t []float64) { backend.AxpyRows(q.be, acc, kv, t) })
	}
	return nil
}

// columnMeans turns the column sums of the right-hand side's pass into
// K_nM's weighted column means (the workers' sums added in worker order,
// divided by wsum), centres every later block by them, and returns them.
func (q *knm64) columnMeans(wsum float64) []float64 {
	for _, wk := range q.work {
		for j, v := range wk.cs {
			q.mu[j] += v
		}
	}
	for j := range q.mu {
		q.mu[j] /= wsum
	}
	q.centred = true
	return q.mu
}

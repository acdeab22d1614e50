package solvers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Centre sampling schemes for FALKON.
const (
	SamplingUniform Sampling = "uniform" // M distinct training rows uniformly at random
	SamplingRLS     Sampling = "rls"     // recursive ridge leverage scores (kernels.RecursiveRLS)
)

// FalkonOptions configures FitFalkon.
type FalkonOptions struct {
	Options
	// Centers is M, the number of Nystrom centres (1 <= M <= n).
	Centers int
	// Sampling is SamplingUniform (default) or SamplingRLS.
	Sampling Sampling
	// Iterations is a hard cap on the CG iterations. Zero means automatic:
	// CG runs until Tol is met, stopping short only at the cap it derives
	// from the problem (the condition number it estimates, Tol, and the
	// ceiling 3 M + 50). With either, CG also stops when rounding keeps it
	// from making progress (the stall rule; see "Iteration caps" in the
	// package doc), and the model's Diagnostics say whether Tol was met.
	Iterations int
	// Tol is CG's relative-residual tolerance on the preconditioned system;
	// zero means 1e-9 (see "Iteration caps" in the package doc for what it
	// guarantees about the training objective).
	Tol float64
	// Seed drives the centre sampling.
	Seed uint64
	// Precision of K_nM: zonal.Float64 (default) or zonal.Float32, which
	// stores K_nM's entries in 4 bytes (so the same MemoryBudget caches it
	// for twice the M) and computes them and the CG passes' products in
	// float32, with everything that decides accuracy in float64 (see the
	// note in falkon32.go). The model records it and computes its batch
	// predictions' kernel blocks in float32 too.
	Precision zonal.Precision
	// Intercept is how the constant of the model is fitted: InterceptMean
	// (the default) centres the targets by their (weighted) mean and adds
	// it back at prediction; InterceptFitted fits it with the kernel
	// expansion, unpenalised, by least squares (scikit-learn's Ridge with
	// fit_intercept on Nystrom features). See "Intercept" in the package
	// doc. InterceptFitted needs Precision zonal.Float64.
	Intercept Intercept
}

// KindFalkon is the model kind of Falkon in model files.
const KindFalkon = "falkon"

func init() {
	RegisterModel(KindFalkon, expansionDecoder(func(lambda float64, e *expansion) Model {
		return &Falkon{exp: e, lambda: lambda}
	}))
}

// Falkon is a FALKON model: f(x) = mean + K(x, C) alpha, C the M centres.
type Falkon struct {
	exp     *expansion
	lambda  float64
	idx     []int
	cg      CGResult
	auto    bool // the fit's iteration cap was automatic
	kmmJit  float64
	caching bool
	wsum    float64 // sum of the fit's Options.Weights (or the loaded record's); 0: unweighted
}

// FitFalkon fits FALKON (Rudi, Carratino, Rosasco 2017) with k outputs. With
// the centres C (M rows of x), T = chol(K_MM + eps M I) and
// A = chol(T T^T / M + lambda I), CG solves
//
//	A^-T T^-T (K_nM^T K_nM / n + lambda K_MM) T^-1 A^-1 beta = A^-T T^-T K_nM^T Y / n
//
// for all k columns together (one pass over K_nM per iteration serves every
// output), and alpha = T^-1 A^-1 beta. The two factors share one M x M
// array (M^2 doubles, plus a panel scratch of about 128 M). K_nM is cached
// when n M doubles fit opts.MemoryBudget (after the factors) and otherwise
// recomputed in row
// blocks at every iteration (opts.Precision = zonal.Float32: n M floats of
// 4 bytes, see falkon32.go). eps is 1e-14, raised by jitter escalation when
// K_MM has (near-)duplicate centres. Linear algebra runs on opts.Backend, at
// prediction time too.
//
// x is a *mat.Dense or a *dataset.CSR (any other matrix type is refused),
// or, with opts.Precision = zonal.Float32, a *dataset.Dense32: float32 rows
// (half the memory of a *mat.Dense) that the float32 kernel blocks read as
// they are (see "Float32 rows" in falkon32.go).
// A CSR x is never densified: its row blocks are CSR views handed to
// kernels.MatrixInto, the centres kept in the model are its rows as a CSR
// (dataset.CSR.Subset), and the model predicts dense and CSR rows alike.
//
// opts.Weights, when set, makes the fit weighted (see the package doc):
// the rows of weight zero are dropped, the centres are drawn among the
// others (CenterIndices are still rows of x), the passes form
// K_nM^T W K_nM u and the right-hand side K_nM^T W (Y - mean) with the
// weighted mean, n becomes sum(w), and A = chol(T D T^T / M + lambda I)
// with D the centres' weights scaled to sum to M (falkonfactors.go).
//
// Errors: zonal.ErrParam for a nil kernel, lambda not positive and finite,
// bad Weights (CheckWeights), Centers outside 1..n (the rows of positive
// weight when weighted), an unknown Sampling or Precision, a *dataset.Dense32
// x with Precision float64 or Sampling rls; zonal.ErrShape for nil inputs,
// x neither a *mat.Dense nor a *dataset.CSR (nor a Dense32 as above), a
// Dense32 whose Data length is not Rows*Cols, a CSR whose parts disagree with
// its shape, or a label count other than the row count; zonal.ErrRange for
// a CSR column index outside [0, d) or not increasing within its row; zonal.ErrEmpty for no rows or
// columns; zonal.ErrNonFinite for NaN or Inf in x or y; zonal.ErrTooLarge when
// the working arrays exceed opts.MemoryBudget; zonal.ErrNotPositiveDefinite
// when a factorisation fails even with jitter; the kernel's and leverage-score
// sampling's errors; ctx.Err() (wrapped) when canceled.
//
// kernels.CheckScale runs before anything is formed: zonal.ErrNonFinite for
// features so large that the kernel values overflow, zonal.ErrParam for a
// kernel that underflows to 0 between all (sampled) rows, both naming the
// kernel and the data's scale.
func FitFalkon(ctx context.Context, k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambda float64, opts FalkonOptions) (*Falkon, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	_, rows32 := x.(*dataset.Dense32)
	if _, _, _, err := checkXYOf(x, y, rows32); err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if rows32 {
		if err := checkRows32(opts); err != nil {
			return nil, err
		}
	}
	x, y, rw, err := prepareWeights(x, y, opts.Weights)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if err := kernels.CheckScale(k, x); err != nil {
		return nil, err
	}
	M := opts.Centers
	if M < 1 || M > n {
		if rw.kept != nil {
			return nil, fmt.Errorf("%w: FALKON needs 1 <= centres <= %d (the rows of positive weight), got %d", zonal.ErrParam, n, M)
		}
		return nil, fmt.Errorf("%w: FALKON needs 1 <= centres <= n = %d, got %d", zonal.ErrParam, n, M)
	}
	var idx []int
	switch opts.Sampling {
	case "", SamplingUniform:
		idx = uniformCenters(n, M, opts.Seed)
	case SamplingRLS:
		idx, err = rlsCenters(ctx, kernels.Options{Backend: opts.backend(), MemoryBudget: opts.MemoryBudget}, k, x, M, lambda, opts.Seed)
		if err != nil {
			return nil, fmt.Errorf("solvers: leverage-score centres: %w", err)
		}
	default:
		return nil, fmt.Errorf("%w: unknown centre sampling %q (uniform, rls)", zonal.ErrParam, opts.Sampling)
	}
	yc, mean := centerTargets(y, rw.w)
	f, err := fitFalkonCentered(ctx, k, x, yc, mean, lambda, idx, rw.w, rw.sum, opts)
	if err != nil {
		return nil, err
	}
	f.idx = rw.original(f.idx)
	f.wsum = rw.given
	return f, nil
}

// uniformCenters draws M distinct indices of 0..n-1, sorted.
func uniformCenters(n, M int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	idx := rng.Perm(n)[:M]
	slices.Sort(idx)
	return idx
}

// fitFalkonCentered fits FALKON on the centred targets yc with the centres
// at idx, weighted by w (nil: unweighted) whose sum is wsum (n when
// unweighted); opts.Weights is not read.
func fitFalkonCentered(ctx context.Context, k kernels.Kernel, x mat.Matrix, yc *mat.Dense, mean []float64, lambda float64, idx []int,
	w []float64, wsum float64, opts FalkonOptions) (*Falkon, error) {
	n, _ := x.Dims()
	_, kout := yc.Dims()
	M := len(idx)
	be := opts.backend()
	if err := opts.Precision.Check(); err != nil {
		return nil, err
	}
	if err := opts.Intercept.check(opts.Precision); err != nil {
		return nil, err
	}
	limit := budget.Or(opts.MemoryBudget)
	// One M x M array for both factors (falkonFactors), the panel scratch
	// of T T^T, and the CG vectors.
	fixed := int64(M)*int64(M)*8 + factorScratch(M)*8 + 6*int64(M)*int64(kout)*8
	if fixed+int64(M)*8 > limit {
		return nil, fmt.Errorf("%w: FALKON with %d centres needs %s for its M x M factors, the memory budget is %s",
			zonal.ErrTooLarge, M, budget.Format(fixed+int64(M)*8), budget.Format(limit))
	}
	iters, auto := falkonIterCap(opts.Iterations, M)
	tol := opts.Tol
	if tol <= 0 {
		tol = 1e-9
	}
	centers := subsetRows(x, idx)
	if c32, ok := centers.(*dataset.Dense32); ok {
		centers = c32.ToDense() // exact; the model keeps float64 centres
	}

	fac, jit, err := newFalkonFactors(ctx, be, k, centers, M, lambda, centerWeights(w, idx))
	if err != nil {
		return nil, err
	}
	opts.report(zonal.Progress{Stage: "factor", Done: 1, Total: 1})

	// K_nM: cached whole, or streamed in row blocks.
	var knm *mat.Dense
	bs := n
	// Weighted: the right-hand side is K_nM^T W yc, and every pass scales
	// the rows of K_nM u by the weights, K_nM^T W (K_nM u).
	ycw := scaledRows(yc, w)
	k32, err := newKnM32(ctx, be, k, x, ycw, w, centers, fixed, limit, opts)
	if err != nil {
		return nil, err
	}
	if k32 != nil {
		bs = 1 // float32: k32 holds K_nM, the float64 blocks below stay one row
	} else if fixed+int64(n)*int64(M)*8 <= limit {
		knm = mat.NewDense(n, M, nil)
		cb := min(n, 4096)
		for i0 := 0; i0 < n; i0 += cb {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("solvers: FALKON canceled: %w", err)
			}
			i1 := min(i0+cb, n)
			if err := kernels.MatrixInto(ctx, knm.Slice(i0, i1, 0, M).(*mat.Dense), k, rowRange(x, i0, i1), centers, kernels.Options{Backend: be}); err != nil {
				return nil, err
			}
			opts.report(zonal.Progress{Stage: "kernel", Done: i1, Total: n})
		}
	}
	var q64 *knm64
	if k32 == nil && knm == nil {
		// Streamed: per-worker blocks (knm64.go), not the scratch below.
		if q64, err = newKnM64(be, k, x, ycw, w, centers, fixed, limit, opts.Intercept == InterceptFitted); err != nil {
			return nil, err
		}
		bs = 1
	}
	if knm != nil {
		// Cached: still walk K_nM in row blocks of about passBlockBytes
		// (at least 16 rows) so that K_b^T (K_b w) reads each block from
		// cache the second time: on MNIST (n = 20000, M = 2000, 10 outputs)
		// the CG passes took 1.5 s of CPU with 512 KiB blocks against 4.9 s
		// with 2 MiB blocks or one whole-matrix Gemm pair.
		// At least 64 rows: a block of fewer rows times the few output
		// columns is a product the backend's GEMM does poorly (purego
		// takes fewer than 33 rows one by one). At M = 5000 512 KiB is 13
		// rows; with 16-row blocks a 10-iteration fit of MNIST (60000 rows,
		// 10 outputs) took 51.6 s, with 64-row blocks 43.0 s (one run each,
		// idle 2-core AMD EPYC).
		bs = max(64, min(n, int(passBlockBytes/(int64(M)*8))))
		bs = min(bs, n)
	}
	tmp := mat.NewDense(bs, kout, nil)
	// pass computes out = K_nM^T W (K_nM u) (out = K_nM^T W yc when u is
	// nil; W = I when unweighted) on the cached K_nM, block by block; the
	// float32 and streamed passes replace it below.
	// InterceptFitted: the fit is on the columns of K_nM centred by their
	// weighted means mu (see "Intercept" in the package doc), whose normal
	// operator is Kc^T W Kc with Kc = K_nM - 1 mu^T; the right-hand side
	// K^T W yc equals Kc^T W yc because yc has weighted mean 0. The
	// right-hand side's pass sums K^T w into mu on the way (no pass of its
	// own over K_nM); after it, every block is centred before its products
	// (a cached K_nM once, in place; a streamed block each time it is
	// computed, n M subtractions per pass against the n M (2d + c) flops of
	// computing it). Centring the entries, not the product (K^T W K -
	// wsum mu mu^T), is what keeps the operator positive definite in
	// floating point: for a wide kernel, whose entries are all near their
	// column means, the two terms of the difference agree to nearly every
	// digit and their rounding is larger than the centred operator's small
	// eigenvalues.
	var mu []float64
	if opts.Intercept == InterceptFitted {
		mu = make([]float64, M)
	}
	pass := func(ctx context.Context, out blas64.General, u *blas64.General) error {
		zeroGeneral(out)
		for i0 := 0; i0 < n; i0 += bs {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("solvers: FALKON canceled: %w", err)
			}
			i1 := min(i0+bs, n)
			kv := knm.Slice(i0, i1, 0, M).(*mat.Dense)
			var rhs blas64.General
			if u == nil {
				rhs = ycw.Slice(i0, i1, 0, kout).(*mat.Dense).RawMatrix()
				if mu != nil {
					addColumnSums(mu, kv, w, i0)
				}
			} else {
				rhs = tmp.Slice(0, i1-i0, 0, kout).(*mat.Dense).RawMatrix()
				be.Gemm(blas.NoTrans, blas.NoTrans, 1, kv.RawMatrix(), *u, 0, rhs)
				if w != nil {
					scaleRows(rhs, w[i0:i1])
				}
			}
			be.Gemm(blas.Trans, blas.NoTrans, 1, kv.RawMatrix(), rhs, 1, out)
		}
		return nil
	}
	if k32 != nil {
		pass = k32.pass
	}
	if q64 != nil {
		pass = q64.pass
	}
	invN := 1 / wsum
	v := mat.NewDense(M, kout, nil)
	tw := mat.NewDense(M, kout, nil)
	op := OperatorFunc{N: M, F: func(ctx context.Context, dst, u blas64.General) error {
		vr, wr := v.RawMatrix(), tw.RawMatrix()
		copyGeneral(vr, u)
		fac.solveA(blas.NoTrans, vr) // v = A^-1 u
		copyGeneral(wr, vr)
		fac.solveT(blas.NoTrans, wr) // w = T^-1 v
		if err := pass(ctx, dst, &wr); err != nil {
			return err
		}
		fac.solveT(blas.Trans, dst) // T^-T (.)
		scaleAddGeneral(dst, invN, vr, lambda)
		fac.solveA(blas.Trans, dst) // A^-T (.)
		return nil
	}}
	r := mat.NewDense(M, kout, nil)
	rr := r.RawMatrix()
	if err := pass(ctx, rr, nil); err != nil {
		return nil, err
	}
	if mu != nil && q64 != nil {
		mu = q64.columnMeans(wsum)
	} else if mu != nil {
		for j := range mu {
			mu[j] /= wsum // the column sums K^T w, now means
		}
		centreColumns(knm.RawMatrix(), mu)
	}
	fac.solveT(blas.Trans, rr)
	fac.solveA(blas.Trans, rr)
	for i := range rr.Data {
		rr.Data[i] *= invN
	}
	beta := mat.NewDense(M, kout, nil)
	res, err := CG(ctx, op, r, beta, CGOptions{
		Options:     Options{Backend: be, MemoryBudget: limit, Progress: opts.Progress},
		Tol:         tol,
		MaxIter:     iters,
		AutoCap:     auto,
		StopStalled: true,
	})
	if err != nil {
		return nil, err
	}
	br := beta.RawMatrix()
	fac.solveA(blas.NoTrans, br)
	fac.solveT(blas.NoTrans, br)
	if mu != nil {
		mean = fittedIntercept(mean, mu, beta)
	}
	return &Falkon{
		exp: withPrecision(newExpansion(be, k, centers, beta, mean), opts.Precision), lambda: lambda, idx: idx,
		cg: res, auto: auto, kmmJit: jit, caching: knm != nil || k32.isCached(),
	}, nil
}

// falkonCeiling is the hard ceiling of automatic FALKON iterations on M
// centres. CG on the M-dimensional system converges in at most M steps in
// exact arithmetic, but rounding makes the Lanczos vectors lose
// orthogonality and delays convergence (measured: 61 iterations for
// M = 40, lambda 1e-6; plain CG on an 80 x 80 system of condition 1e4
// needs 339), so the ceiling is 3 M + 50. It is a backstop: the predicted
// cap of CG's AutoCap and its stall rule stop a run that cannot
// converge long before it (see "Iteration caps" in the package doc).
func falkonCeiling(M int) int { return 3*M + 50 }

// falkonIterCap resolves FalkonOptions.Iterations for M centres: the hard
// cap, and whether the automatic cap applies below it.
func falkonIterCap(iterations, M int) (int, bool) {
	if iterations > 0 {
		return iterations, false
	}
	return falkonCeiling(M), true
}

// passBlockBytes is the size of the K_nM row blocks of a cached CG pass.
var passBlockBytes int64 = 512 << 10

func zeroGeneral(g blas64.General) {
	for i := 0; i < g.Rows; i++ {
		clear(g.Data[i*g.Stride : i*g.Stride+g.Cols])
	}
}

func copyGeneral(dst, src blas64.General) {
	for i := 0; i < src.Rows; i++ {
		copy(dst.Data[i*dst.Stride:i*dst.Stride+dst.Cols], src.Data[i*src.Stride:i*src.Stride+src.Cols])
	}
}

// scaleAddGeneral: dst = a*dst + b*src.
func scaleAddGeneral(dst blas64.General, a float64, src blas64.General, b float64) {
	for i := 0; i < dst.Rows; i++ {
		d := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		s := src.Data[i*src.Stride : i*src.Stride+src.Cols]
		for j := range d {
			d[j] = a*d[j] + b*s[j]
		}
	}
}

// Kind returns "falkon".
func (m *Falkon) Kind() string { return KindFalkon }

// InputDim is d.
func (m *Falkon) InputDim() int { _, d, _ := m.exp.dims(); return d }

// Outputs is k.
func (m *Falkon) Outputs() int { _, _, k := m.exp.dims(); return k }

// Centers returns the M x d centres (not a copy): a *mat.Dense, or a
// *dataset.CSR when the model was fitted on (or assembled from) CSR rows.
func (m *Falkon) Centers() mat.Matrix { return m.exp.centers }

// CenterIndices returns the training-row indices of the centres (nil after
// loading from a file).
func (m *Falkon) CenterIndices() []int { return m.idx }

// Alpha returns the M x k coefficients (not a copy).
func (m *Falkon) Alpha() *mat.Dense { return m.exp.alpha }

// WeightSum is the sum of the Options.Weights the model was fitted with:
// 0 for an unweighted fit; for a loaded model the Sum of the pipeline's
// recorded TrainingWeights (0 when the file records none).
func (m *Falkon) WeightSum() float64 { return m.wsum }

func (m *Falkon) setWeightSum(s float64) { m.wsum = s }

// CG reports the conjugate-gradient run of the fit.
func (m *Falkon) CG() CGResult { return m.cg }

// CachedKnM reports whether the fit held K_nM whole (it fitted the budget).
func (m *Falkon) CachedKnM() bool { return m.caching }

// Predict writes f(x_i) to the rows of dst; batches of at most 32 rows do not
// allocate after warm-up when x and the centres are dense (with the Gaussian
// kernel the first such batch keeps the centres' squared norms and, up to
// 32 MiB, their transpose, from which rows with zeros read only the rows
// they need). x is a *mat.Dense
// or a *dataset.CSR (CSR rows, or any rows against CSR centres, go through
// kernel blocks: dense rows are then converted to CSR, never the reverse).
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k, or when x is
// neither a *mat.Dense nor a *dataset.CSR or a CSR with inconsistent parts;
// zonal.ErrRange for a CSR column index out of range; zonal.ErrNonFinite
// for NaN or Inf in x; the kernel's errors.
func (m *Falkon) Predict(dst *mat.Dense, x mat.Matrix) error { return predictExpansion(m.exp, dst, x) }

// MarshalBinary encodes the model for a model file: lambda, the kernel's
// kind and parameters, the centres, alpha and the output means (not the
// fit's diagnostics: CenterIndices, CG and CachedKnM are zero after loading).
//
// Errors: the kernel's MarshalBinary error.
func (m *Falkon) MarshalBinary() ([]byte, error) { return marshalExpansionModel(m.lambda, m.exp) }

// rlsCenters draws M centres by recursive ridge leverage scores, sorted.
func rlsCenters(ctx context.Context, ko kernels.Options, k kernels.Kernel, x mat.Matrix, M int, lambda float64, seed uint64) ([]int, error) {
	idx, err := kernels.RecursiveRLS(ctx, k, x, M, kernels.RLSOptions{Options: ko, Lambda: lambda, Seed: seed})
	if err != nil {
		return nil, err
	}
	idx = slices.Clone(idx)
	slices.Sort(idx)
	idx = slices.Compact(idx)
	if len(idx) != M {
		return nil, fmt.Errorf("%w: leverage-score sampling returned %d distinct centres, want %d", zonal.ErrParam, len(idx), M)
	}
	return idx, nil
}

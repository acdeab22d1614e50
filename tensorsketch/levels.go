package tensorsketch

// The level driver of Algorithm 1: the schedule of lambdas, the ridge factor
// W of each level and the split of its draws over the degree blocks.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/interrupt"
)

// LevelStat describes one level of the recursive sampler.
type LevelStat struct {
	Lambda  float64 // lambda_t of this level
	StatDim float64 // estimated statistical dimension tr(K (B^T B + lambda_t I)^{-1})
	Draws   int     // rows drawn
	Unique  int     // distinct rows after merging
}

// minLevels: when tr(K)/s <= Lambda the recursion starts at
// lambda_0 = minLevels * Lambda, so it runs log2(minLevels) + 1 levels.
const minLevels = 8

// interDraws bounds the draws of an intermediate level: it draws
// ceil(Oversample s_t ln(s_t + e)) rows (s_t its estimated statistical
// dimension), but at least Samples and at most interDraws * Samples. These
// levels only build B for the next level's leverage estimates, so their
// draws need not stay within the feature budget, and the final level's
// estimates are only as good as B^T B is close to K. Capped at Samples, a
// fit with Samples = 2 s_lambda drew fewer rows at 2 lambda than its rule
// asked; and a level with a small estimated s_t (7 draws at s_t = 2.7)
// gave a B of four rows, after which the constant row of a polynomial
// kernel took 69% of the final draws against a leverage share of 14%
// (TestAdaptiveDegreeShares, seed 1). Measured at Samples = 2 s_lambda
// (mean eps over 10 seeds, 64 projections, Hadamard-mixed marginals): 300
// debian_text rows at lambda 4, 2.62 with Samples draws, 1.84 with
// Samples to 4 Samples; at lambda 1, 2.69 and 2.02 (exact leverage
// sampling 1.52 and 1.87).
const interDraws = 4

// fitAdaptive runs Algorithm 1 (recursive ridge-leverage-score sampling)
// on the prepared rows.
func fitAdaptive(ctx context.Context, xr *rows, om []float64, e expansion, o AdaptiveOptions) ([]sampledRow, []LevelStat, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := newRowSampler(ctx, xr, om, e, o)
	if err != nil {
		return nil, nil, err
	}
	n, t, q, bk := xr.n, o.Projections, e.maxDegree(), o.Backend
	t2 := 0
	if o.RowNormMix > 0 && t >= 2 {
		t2 = max(1, t/4)
	}
	t1 := t - t2
	sPrev := float64(o.Samples)
	interMax := o.Samples // draws of an intermediate level at most
	if o.Samples <= math.MaxInt/interDraws {
		interMax *= interDraws
	}
	// tr(K) = sum_k omega_k^2 sum_l coef_l |x'_k|^{2l}
	trK := 0.0
	for k := 0; k < n; k++ {
		w := 1.0
		if om != nil {
			w = om[k] * om[k]
		}
		for l := 0; l <= q; l++ {
			if c := e.coef(l); c != 0 {
				trK += w * c * math.Pow(s.sqn[k], float64(l))
			}
		}
	}
	// Level 0 at lambda_0 = tr(K)/s, where the ridge leverage scores sum to
	// at most s, so B = 0 is a valid start; then halve lambda down to o.Lambda.
	// With B = 0 a level samples by row norms |Phi_r|^2/lambda, not by
	// leverage, and each halving only partly corrects that. When
	// tr(K)/s <= o.Lambda the final level would have no predecessor (pure
	// row-norm sampling), so level 0 is then at minLevels * o.Lambda (four
	// levels; there the scores sum to at most s/8): starting at 2 o.Lambda
	// put 25-50% of the draws on the constant row of a polynomial kernel
	// whose exact leverage share is 14% (TestAdaptiveDegreeShares); from
	// 8 o.Lambda, 10-14%. (Raising level 0 to 8 o.Lambda also when
	// tr(K)/s is between o.Lambda and 8 o.Lambda did not help: Gaussian
	// kernel, digits, s = 4096, lambda = 0.1: eps 2.7-15 over three seeds
	// against 4.7-7.6.)
	l0 := trK / float64(o.Samples)
	if l0 <= o.Lambda {
		l0 = minLevels * o.Lambda
	}
	var lam []float64
	for ; l0 > o.Lambda && len(lam) < 60; l0 /= 2 {
		lam = append(lam, l0)
	}
	lam = append(lam, o.Lambda)
	var (
		rs    []sampledRow
		stats []LevelStat
		Zt    []float64 // n x len(rs) features of the training points
	)
	if err := s.checkLevel(0, t1, interMax); err != nil {
		return nil, nil, err
	}
	for lev, lambda := range lam {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s.rng = rand.New(rand.NewPCG(o.Seed, uint64(lev+1)))
		s.seed = splitmix(o.Seed, uint64(lev+1))
		// The level's three large steps (the ridge factor of the previous
		// level's features, the sampling, the new features) each run for
		// seconds on large data, not all of it checking ctx: they run under
		// interrupt.Do, so a cancellation returns at once and the abandoned
		// step stops at its next check or its end. Progress is reported
		// from this goroutine only, never after the return.
		var W1 []float64
		if cerr := interrupt.Do(ctx, func() { W1, err = ridgeFactor(bk, Zt, n, len(rs), t1, lambda, s.rng) }); cerr != nil {
			return nil, nil, cerr
		}
		if err != nil {
			return nil, nil, err
		}
		// Row-norm columns: c G2 with c^2 = beta/(1-beta) (t1/t2) s_prev/tr(K),
		// so about a fraction beta of the estimated mass is |Phi_r|^2/tr(K).
		W := make([]float64, n*t)
		c := 0.0
		if t2 > 0 && trK > 0 {
			c = math.Sqrt(o.RowNormMix / (1 - o.RowNormMix) * float64(t1) / float64(t2) * sPrev / trK)
		}
		for k := 0; k < n; k++ {
			copy(W[k*t:k*t+t1], W1[k*t1:(k+1)*t1])
			for j := t1; j < t; j++ {
				W[k*t+j] = c * s.rng.NormFloat64()
			}
		}
		final := lev == len(lam)-1
		nd := func(sd float64) int {
			if final {
				return o.Samples
			}
			c := int(math.Ceil(o.Oversample * sd * math.Log(sd+math.E)))
			if lev > 0 && 2*sd > float64(o.Samples) && !o.ExactLambda {
				// the budget does not support smaller lambdas: stop here
				final = true
				return o.Samples
			}
			return min(interMax, max(o.Samples, c))
		}
		var sd float64
		var draws int
		if cerr := interrupt.Do(ctx, func() { rs, sd, draws, err = s.sampleLevel(W, nd) }); cerr != nil {
			return nil, nil, cerr
		}
		if err != nil {
			return nil, nil, err
		}
		// sum f / t counts the row-norm columns too; keep the leverage part
		sd *= float64(t) * (1 - o.RowNormMix) / float64(t1)
		sPrev = min(sd, float64(o.Samples)) // clamped: no feedback loop through c
		stats = append(stats, LevelStat{Lambda: lambda, StatDim: sd, Draws: draws, Unique: len(rs)})
		total := len(lam)
		if final {
			total = lev + 1
		}
		o.Progress.Report(zonal.Progress{Stage: "level", Done: lev + 1, Total: total})
		if final {
			break
		}
		// the next level holds these features and factors with R = len(rs)
		if err := s.checkLevel(len(rs), t1, interMax); err != nil {
			return nil, nil, err
		}
		Zt = make([]float64, n*len(rs))
		if cerr := interrupt.Do(ctx, func() { features(Zt, len(rs), xr, om, rs) }); cerr != nil {
			return nil, nil, cerr
		}
	}
	return rs, stats, nil
}

// checkLevel checks, before a level's arrays are made, that the shared
// state (s.fixed) plus the level's working arrays fit the memory budget.
// With n points, t = t1 + t2 projections, q+1 degree blocks, R rows
// sampled at the previous level and width d':
//
//	n x R    the previous level's features Zt (B^T)
//	R x R    B B^T + lambda I and its Cholesky factor (in place)
//	2 R x t  G1 and B Y in ridgeFactor
//	n x t    W1 (= Y), W, and U of every degree block ((q+3) n t)
//	nnz x t  the prefix states (U of the kids) of a block
//	min(d', nnz) x max(m, t) per worker: the conditional accumulators
//
// plus the emissions and merged rows of s draws.
func (s *rowSampler) checkLevel(R, t1, samples int) error {
	n, d, nnz, t, m := s.xr.n, s.xr.d, s.xr.nnz(), s.t, s.m
	q := s.e.maxDegree()
	workers := runtime.GOMAXPROCS(0) + 1
	need := satAdd(s.fixed,
		budget.Floats(n, R), budget.Floats(R, R), budget.Floats(2, R, t),
		budget.Floats(q+3, n, t), budget.Floats(t1, n),
		budget.Bytes(8*int64(t)+4, nnz),
		budget.Floats(workers, min(d, nnz), max(m, t)),
		budget.Bytes(4*int64(q)+64, samples))
	return budget.Check(fmt.Sprintf("tensorsketch.FitAdaptive: level working arrays (n=%d, R=%d, t=%d, q=%d)", n, R, t, q), need, s.limit)
}

// ridgeFactor returns W = (B^T B + lambda I)^{-1} (B^T G1 + sqrt(lambda) G2)
// (n x t), with B = Zt^T (R x n) and G1, G2 standard Gaussian. Since
// (B^T B + lambda I)^{-1} [B^T, sqrt(lambda) I] has Gram matrix
// (B^T B + lambda I)^{-1}, E |Phi_r W|^2 = t * Phi_r (B^T B + lambda I)^{-1} Phi_r^T,
// the ridge leverage of row r up to the factor t (Johnson-Lindenstrauss).
// The inverse is applied by Woodbury with a Cholesky factor of
// B B^T + lambda I (R x R).
func ridgeFactor(bk backend.Backend, Zt []float64, n, R, t int, lambda float64, rng *rand.Rand) ([]float64, error) {
	Y := make([]float64, n*t)
	sl := math.Sqrt(lambda)
	for i := range Y {
		Y[i] = sl * rng.NormFloat64()
	}
	if R == 0 {
		for i := range Y {
			Y[i] /= lambda
		}
		return Y, nil
	}
	zt := blas64.General{Rows: n, Cols: R, Stride: R, Data: Zt}
	g1 := blas64.General{Rows: R, Cols: t, Stride: t, Data: make([]float64, R*t)}
	for i := range g1.Data {
		g1.Data[i] = rng.NormFloat64()
	}
	y := blas64.General{Rows: n, Cols: t, Stride: t, Data: Y}
	bk.Gemm(blas.NoTrans, blas.NoTrans, 1, zt, g1, 1, y) // Y = B^T G1 + sqrt(lambda) G2
	by := blas64.General{Rows: R, Cols: t, Stride: t, Data: make([]float64, R*t)}
	bk.Gemm(blas.Trans, blas.NoTrans, 1, zt, y, 0, by) // B Y
	c := blas64.General{Rows: R, Cols: R, Stride: R, Data: make([]float64, R*R)}
	bk.Syrk(blas.Trans, 1, zt, 0, c) // B B^T
	for i := 0; i < R; i++ {
		c.Data[i*R+i] += lambda
	}
	if err := bk.Cholesky(c); err != nil {
		return nil, fmt.Errorf("tensorsketch: factoring B B^T + lambda I: %w", err)
	}
	bk.CholSolve(c, by)                                   // V = (B B^T + lambda I)^{-1} B Y
	bk.Gemm(blas.NoTrans, blas.NoTrans, -1, zt, by, 1, y) // Y - B^T V
	for i := range Y {
		Y[i] /= lambda
	}
	return Y, nil
}

// term is one Taylor/polynomial degree block of Phi at a level: its state
// U = sqrt(coef_l) diag(omega) W and the distribution of its first coordinate.
type term struct {
	l      int
	U      []float64
	coords []int32
	p      []float64
	f, g   float64
}

// terms computes every block's first-coordinate distribution and the block
// probabilities pt (estimated mass f mixed with the diagonal mass g), and
// the estimated statistical dimension sum f / t.
func (s *rowSampler) terms(W []float64, all []int32) ([]term, []float64, float64, error) {
	n, t := s.xr.n, s.t
	q := s.e.maxDegree()
	var terms []term
	for l := 0; l <= q; l++ {
		c := s.e.coef(l)
		if c == 0 {
			continue
		}
		U := make([]float64, n*t)
		sc := math.Sqrt(c)
		for k := 0; k < n; k++ {
			w := sc
			if s.om != nil {
				w *= s.om[k]
			}
			for j := 0; j < t; j++ {
				U[k*t+j] = w * W[k*t+j]
			}
		}
		tm := term{l: l, U: U}
		if l == 0 {
			// the single row omega^T: its squared norm is exact
			sum := make([]float64, t)
			for k := 0; k < n; k++ {
				for j := 0; j < t; j++ {
					sum[j] += U[k*t+j]
					tm.g += U[k*t+j] * U[k*t+j]
				}
			}
			for _, v := range sum {
				tm.f += v * v
			}
		} else {
			tm.coords, tm.p, tm.f, tm.g = s.cond(l-1, all, U)
		}
		terms = append(terms, tm)
	}
	var F, G float64
	for _, tm := range terms {
		F += tm.f
		G += tm.g
	}
	if !(G > 0) {
		return nil, nil, 0, fmt.Errorf("%w: the data give an all-zero kernel matrix", zonal.ErrEmpty)
	}
	pt := make([]float64, len(terms))
	for i, tm := range terms {
		if F > 0 {
			pt[i] = (1-s.alpha)*tm.f/F + s.alpha*tm.g/G
		} else {
			pt[i] = tm.g / G
		}
	}
	return terms, pt, F / float64(t), nil
}

// sampleLevel draws rows of Phi W (W = (B^T B + lambda I)^{-1/2} G) with
// probability proportional to their estimated squared norms. nDraws
// receives the estimated statistical dimension and returns the number of
// draws. It returns the merged rows (weights are final: sqrt applied).
func (s *rowSampler) sampleLevel(W []float64, nDraws func(statDim float64) int) ([]sampledRow, float64, int, error) {
	all := make([]int32, s.xr.n)
	for k := range all {
		all[k] = int32(k)
	}
	terms, pt, statDim, err := s.terms(W, all)
	if err != nil {
		return nil, 0, 0, err
	}
	s.draws = nDraws(statDim)
	s.emits = nil
	counts := s.draw(pt, s.draws)
	base := 0
	for i, tm := range terms {
		if counts[i] == 0 {
			continue
		}
		if tm.l == 0 {
			s.emit(0, nil, counts[i], pt[i])
			continue
		}
		kids := s.expand(tm.l, nil, all, tm.U, counts[i], pt[i], dist{coords: tm.coords, p: tm.p})
		terms[i].U = nil
		if err := s.runKids(tm.l, kids, base); err != nil {
			return nil, 0, 0, err
		}
		base += len(kids)
	}
	res := s.merge()
	s.emits = nil
	return res, statDim, s.draws, nil
}

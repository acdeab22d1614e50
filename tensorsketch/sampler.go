package tensorsketch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// AdaptiveOptions configure the adaptive sampler (FitAdaptive,
// FitAdaptiveCSR, FitAdaptiveGaussian...).
type AdaptiveOptions struct {
	// Samples is s, the number of row draws at the final level; it is the
	// requested feature dimension D. Repeated draws (and draws that are
	// permutations of one another, whose features are identical) are merged,
	// so the map usually has fewer than s features.
	Samples int
	// Lambda is the ridge parameter lambda > 0 of the (eps, lambda) guarantee.
	Lambda float64
	// SketchDim is m, the PolySketch size used to estimate conditional
	// marginals (default 16).
	SketchDim int
	// Projections is t, the number of Gaussian columns of the
	// Johnson-Lindenstrauss sketch of (B^T B + lambda I)^{-1/2} (default 4).
	Projections int
	// Mix is the weight alpha of the "diagonal" proposal mixed into every
	// sketched conditional so no row of nonzero leverage gets probability 0
	// (default 0.1).
	Mix float64
	// Oversample c sets the draws of the intermediate levels to
	// min(Samples, ceil(c * s_hat * ln(s_hat + e))) with s_hat the
	// estimated statistical dimension at that level (default 2).
	Oversample float64
	// Seed drives every random choice.
	Seed uint64
	// Backend does the dense algebra (nil means backend.Default()).
	Backend backend.Backend
	// Progress, if not nil, is called after each level.
	Progress func(level, levels int)
}

func (o *AdaptiveOptions) defaults() error {
	if o.Samples < 1 {
		return fmt.Errorf("%w: Samples must be >= 1, got %d", kernels.ErrParam, o.Samples)
	}
	if !(o.Lambda > 0) || math.IsInf(o.Lambda, 0) {
		return fmt.Errorf("%w: Lambda must be positive and finite, got %g", kernels.ErrParam, o.Lambda)
	}
	if o.SketchDim == 0 {
		o.SketchDim = 16
	}
	if o.Projections == 0 {
		o.Projections = 4
	}
	if o.Mix == 0 {
		o.Mix = 0.1
	}
	if o.Oversample == 0 {
		o.Oversample = 2
	}
	if o.SketchDim < 1 || o.Projections < 1 || !(o.Mix > 0 && o.Mix < 1) || !(o.Oversample > 0) {
		return fmt.Errorf("%w: bad sampler options (SketchDim %d, Projections %d, Mix %g, Oversample %g)",
			kernels.ErrParam, o.SketchDim, o.Projections, o.Mix, o.Oversample)
	}
	if o.Backend == nil {
		o.Backend = backend.Default()
	}
	return nil
}

// LevelStat describes one level of the recursive sampler.
type LevelStat struct {
	Lambda  float64 // lambda_t of this level
	StatDim float64 // estimated statistical dimension tr(K (B^T B + lambda_t I)^{-1})
	Draws   int     // rows drawn
	Unique  int     // distinct rows after merging
}

// sampledRow is one merged row of Phi: the feature
// weight * omega(x) * prod_{i in idx} x'_i of tensor degree len(idx).
type sampledRow struct {
	idx []int32 // sorted
	w   float64
}

// rowSampler draws rows of Phi (B^T B + lambda I)^{-1/2} at one level.
type rowSampler struct {
	xr    *rows
	om    []float64
	e     expansion
	sk    [][]float64 // sk[r-1] is n x m: PolySketch of degree r of each point
	sqn   []float64   // |x'_k|^2
	m, t  int
	alpha float64
	rng   *rand.Rand
	ctx   context.Context

	slot  []int32 // per coordinate scratch, -1 when unused
	acc   []float64
	qbuf  []float64
	draws int
	out   map[string]*sampledRow
	keys  []string
	err   error
}

// cond computes the distribution of the next coordinate i of a row of
// X'^{(x)(r+1)} U (U holds one row per support point), i.e.
// f(i) = sum_j |S_r X'^{(x)r} diag(U_j) X'^T e_i|^2 with S_r the degree-r
// PolySketch (exact when r == 0), mixed with the diagonal proposal
// g(i) = sum_k |U_k|^2 x'_{ki}^2 |x'_k|^{2r} when r >= 1.
func (s *rowSampler) cond(r int, pts []int32, U []float64) (coords []int32, p []float64, fsum, gsum float64) {
	t, m := s.t, s.m
	K := t
	if r > 0 {
		K = t * m
	}
	var g []float64
	for a, k := range pts {
		u := U[a*t : (a+1)*t]
		q := u
		uu := 0.0
		for _, v := range u {
			uu += v * v
		}
		if r > 0 {
			P := s.sk[r-1][int(k)*m : (int(k)+1)*m]
			q = s.qbuf
			for j, uj := range u {
				row := q[j*m : (j+1)*m]
				for c, pc := range P {
					row[c] = uj * pc
				}
			}
			uu *= math.Pow(s.sqn[k], float64(r))
		}
		col, val := s.xr.row(int(k))
		for p, i := range col {
			sl := s.slot[i]
			if sl < 0 {
				sl = int32(len(coords))
				s.slot[i] = sl
				coords = append(coords, int32(i))
				g = append(g, 0)
				need := (int(sl) + 1) * K
				if cap(s.acc) < need {
					s.acc = slices.Grow(s.acc[:len(s.acc)], need-len(s.acc))
				}
				s.acc = s.acc[:need]
				clear(s.acc[int(sl)*K : need])
			}
			v := val[p]
			dst := s.acc[int(sl)*K : (int(sl)+1)*K]
			for c, qc := range q {
				dst[c] += v * qc
			}
			g[sl] += v * v * uu
		}
	}
	p = make([]float64, len(coords))
	for sl, i := range coords {
		s.slot[i] = -1
		f := 0.0
		for _, v := range s.acc[sl*K : (sl+1)*K] {
			f += v * v
		}
		p[sl] = f
		fsum += f
		gsum += g[sl]
	}
	s.acc = s.acc[:0]
	switch {
	case fsum > 0 && r == 0:
		for i := range p {
			p[i] /= fsum
		}
	case fsum > 0 && gsum > 0:
		for i := range p {
			p[i] = (1-s.alpha)*p[i]/fsum + s.alpha*g[i]/gsum
		}
	case gsum > 0:
		for i := range p {
			p[i] = g[i] / gsum
		}
	default:
		return nil, nil, 0, 0
	}
	return coords, p, fsum, gsum
}

// draw returns how many of c categorical draws from p fall on each index.
func (s *rowSampler) draw(p []float64, c int) []int {
	counts := make([]int, len(p))
	if len(p) == 1 {
		counts[0] = c
		return counts
	}
	cum := make([]float64, len(p))
	acc := 0.0
	for i, v := range p {
		acc += v
		cum[i] = acc
	}
	for ; c > 0; c-- {
		u := s.rng.Float64() * acc
		i := sort.SearchFloat64s(cum, u)
		for i < len(p)-1 && (cum[i] <= u || p[i] == 0) {
			i++
		}
		counts[i]++
	}
	return counts
}

// descend draws count rows of degree l below a prefix whose state is
// (pts, U), the prefix having probability prob; coords/p is the
// distribution of the next coordinate.
func (s *rowSampler) descend(l int, prefix []int32, pts []int32, U []float64, count int, prob float64, coords []int32, p []float64) {
	if s.err != nil {
		return
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return
	}
	counts := s.draw(p, count)
	t := s.t
	last := len(prefix)+1 == l
	// child states for the chosen coordinates
	type child struct {
		pts []int32
		U   []float64
	}
	var kids []child
	chosen := make([]int, 0)
	for sl, c := range counts {
		if c == 0 {
			continue
		}
		chosen = append(chosen, sl)
		if !last {
			s.slot[coords[sl]] = int32(len(kids))
			kids = append(kids, child{})
		}
	}
	if !last {
		for a, k := range pts {
			u := U[a*t : (a+1)*t]
			col, val := s.xr.row(int(k))
			for q, i := range col {
				ci := s.slot[i]
				if ci < 0 {
					continue
				}
				kids[ci].pts = append(kids[ci].pts, k)
				for _, uj := range u {
					kids[ci].U = append(kids[ci].U, uj*val[q])
				}
			}
		}
		for _, sl := range chosen {
			s.slot[coords[sl]] = -1
		}
	}
	for ci, sl := range chosen {
		np := append(slices.Clone(prefix), coords[sl])
		pr := prob * p[sl]
		if last {
			s.emit(l, np, counts[sl], pr)
			continue
		}
		kc, kp, _, _ := s.cond(l-len(np)-1, kids[ci].pts, kids[ci].U)
		if kc == nil {
			continue // cannot happen: the chosen coordinate had mass
		}
		s.descend(l, np, kids[ci].pts, kids[ci].U, counts[sl], pr, kc, kp)
		kids[ci] = child{}
	}
}

// emit records c draws of the row (l, idx) drawn with probability prob.
func (s *rowSampler) emit(l int, idx []int32, c int, prob float64) {
	slices.Sort(idx)
	key := make([]byte, 0, 4*len(idx)+4)
	key = fmt.Appendf(key, "%d:", l)
	for _, i := range idx {
		key = fmt.Appendf(key, "%d,", i)
	}
	w2 := s.e.coef(l) * float64(c) / (float64(s.draws) * prob)
	if r, ok := s.out[string(key)]; ok {
		r.w += w2
		return
	}
	s.out[string(key)] = &sampledRow{idx: idx, w: w2}
	s.keys = append(s.keys, string(key))
}

// sampleLevel draws rows of Phi W (W = (B^T B + lambda I)^{-1/2} G) with
// probability proportional to their estimated squared norms. nDraws
// receives the estimated statistical dimension and returns the number of
// draws. It returns the merged rows (weights are final: sqrt applied).
func (s *rowSampler) sampleLevel(W []float64, nDraws func(statDim float64) int) ([]sampledRow, float64, int, error) {
	n, t := s.xr.n, s.t
	q := s.e.maxDegree()
	all := make([]int32, n)
	for k := range all {
		all[k] = int32(k)
	}
	type term struct {
		l      int
		U      []float64
		coords []int32
		p      []float64
		f, g   float64
	}
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
		return nil, 0, 0, fmt.Errorf("%w: the data give an all-zero kernel matrix", kernels.ErrEmpty)
	}
	statDim := F / float64(t)
	s.draws = nDraws(statDim)
	pt := make([]float64, len(terms))
	for i, tm := range terms {
		if F > 0 {
			pt[i] = (1-s.alpha)*tm.f/F + s.alpha*tm.g/G
		} else {
			pt[i] = tm.g / G
		}
	}
	s.out = map[string]*sampledRow{}
	s.keys = nil
	counts := s.draw(pt, s.draws)
	for i, tm := range terms {
		if counts[i] == 0 {
			continue
		}
		if tm.l == 0 {
			s.emit(0, nil, counts[i], pt[i])
			continue
		}
		s.descend(tm.l, nil, all, tm.U, counts[i], pt[i], tm.coords, tm.p)
		terms[i].U = nil
	}
	if s.err != nil {
		return nil, 0, 0, s.err
	}
	sort.Strings(s.keys)
	res := make([]sampledRow, len(s.keys))
	for i, k := range s.keys {
		r := s.out[k]
		res[i] = sampledRow{idx: r.idx, w: math.Sqrt(r.w)}
	}
	return res, statDim, s.draws, nil
}

// features writes the features of the sampled rows for the prepared rows xr
// (with omega om) into dst (n x len(rs), row-major, stride ld).
func features(dst []float64, ld int, xr *rows, om []float64, rs []sampledRow) {
	parallelRows(xr.n, func(lo, hi int) {
		buf := make([]float64, xr.d)
		for k := lo; k < hi; k++ {
			col, val := xr.row(k)
			for p, i := range col {
				buf[i] = val[p]
			}
			w := 1.0
			if om != nil {
				w = om[k]
			}
			out := dst[k*ld : k*ld+len(rs)]
			for j, r := range rs {
				v := r.w * w
				for _, i := range r.idx {
					v *= buf[i]
				}
				out[j] = v
			}
			for _, i := range col {
				buf[i] = 0
			}
		}
	})
}

// fitAdaptive runs Algorithm 1 (recursive ridge-leverage-score sampling)
// on the prepared rows.
func fitAdaptive(ctx context.Context, xr *rows, om []float64, e expansion, o AdaptiveOptions) ([]sampledRow, []LevelStat, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	n, t, m := xr.n, o.Projections, o.SketchDim
	q := e.maxDegree()
	bk := o.Backend
	s := &rowSampler{xr: xr, om: om, e: e, m: m, t: t, alpha: o.Mix, ctx: ctx,
		sqn: xr.sqNorms(), slot: make([]int32, xr.d), qbuf: make([]float64, t*m)}
	for i := range s.slot {
		s.slot[i] = -1
	}
	// PolySketches of every degree 1..q-1 of every point, shared by all levels.
	if q >= 2 {
		tree, err := newPSTree(xr.d, m, q-1, splitmix(o.Seed, 77))
		if err != nil {
			return nil, nil, err
		}
		s.sk = make([][]float64, q-1)
		for r := range s.sk {
			s.sk[r] = make([]float64, n*m)
		}
		parallelRows(n, func(lo, hi int) {
			w := tree.newWork()
			for k := lo; k < hi; k++ {
				col, val := xr.row(k)
				tree.sketchAll(w, col, val, func(r int, v []float64) {
					copy(s.sk[r-1][k*m:(k+1)*m], v)
				})
			}
		})
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
	var lam []float64
	for l0 := trK / float64(o.Samples); l0 > o.Lambda && len(lam) < 60; l0 /= 2 {
		lam = append(lam, l0)
	}
	lam = append(lam, o.Lambda)
	var (
		rs    []sampledRow
		stats []LevelStat
		Zt    []float64 // n x len(rs) features of the training points
	)
	for lev, lambda := range lam {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s.rng = rand.New(rand.NewPCG(o.Seed, uint64(lev+1)))
		W, err := ridgeFactor(bk, Zt, n, len(rs), t, lambda, s.rng)
		if err != nil {
			return nil, nil, err
		}
		final := lev == len(lam)-1
		nd := func(sd float64) int {
			if final {
				return o.Samples
			}
			c := int(math.Ceil(o.Oversample * sd * math.Log(sd+math.E)))
			return max(1, min(o.Samples, c))
		}
		var sd float64
		var draws int
		rs, sd, draws, err = s.sampleLevel(W, nd)
		if err != nil {
			return nil, nil, err
		}
		stats = append(stats, LevelStat{Lambda: lambda, StatDim: sd, Draws: draws, Unique: len(rs)})
		if o.Progress != nil {
			o.Progress(lev+1, len(lam))
		}
		if !final {
			Zt = make([]float64, n*len(rs))
			features(Zt, len(rs), xr, om, rs)
		}
	}
	return rs, stats, nil
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
	bk.CholSolve(c, by)                                    // V = (B B^T + lambda I)^{-1} B Y
	bk.Gemm(blas.NoTrans, blas.NoTrans, -1, zt, by, 1, y) // Y - B^T V
	for i := range Y {
		Y[i] /= lambda
	}
	return Y, nil
}

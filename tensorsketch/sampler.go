package tensorsketch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
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
	// marginals (default 32).
	SketchDim int
	// Projections is t, the number of Gaussian columns of the
	// Johnson-Lindenstrauss sketch of (B^T B + lambda I)^{-1/2} (default 16; with t columns the
	// estimate of each row's leverage is a chi-square with t degrees of
	// freedom, so small t under-samples some rows badly).
	Projections int
	// Mix is the weight alpha of the "diagonal" proposal mixed into every
	// sketched conditional so no row of nonzero leverage gets probability 0
	// (default 0.05).
	Mix float64
	// Oversample c sets the draws of the intermediate levels to
	// min(Samples, ceil(c * s_hat * ln(s_hat + e))) with s_hat the
	// estimated statistical dimension at that level (default 2).
	Oversample float64
	// SupportSample L: below the first coordinate, a prefix whose points
	// number more than L estimates its conditional from L points sampled by
	// their diagonal mass (default 2048); see the package documentation.
	SupportSample int
	// RowNormMix beta: a quarter of the t columns of W are Gaussian columns
	// scaled so that about a fraction beta of the sampling mass follows the
	// row norms |Phi_r|^2 / tr(K) rather than the leverage estimate. Every
	// row then has probability >= ~beta |Phi_r|^2/tr(K), which bounds the
	// weight of any sampled row (its contribution to Z^T Z has norm at most
	// ~tr(K)/(s beta)) and keeps the recursion stable when s is small
	// against the statistical dimension (default 0.05; negative disables).
	RowNormMix float64
	// ExactLambda keeps halving lambda down to Lambda even when a level
	// after the first estimates a statistical dimension s_t > Samples/2. By
	// default the recursion stops at that level and draws the Samples rows
	// there: fewer than two draws per unit of statistical dimension give no
	// (eps, lambda) guarantee below it, and sampling at the larger lambda_t
	// keeps the top of the spectrum accurate (Levels reports the lambda used).
	ExactLambda bool
	// Seed drives every random choice.
	Seed uint64
	// Backend does the dense algebra (nil means backend.Default()).
	Backend backend.Backend
	// Progress, if not nil, is called after each level.
	Progress func(level, levels int)
}

func (o *AdaptiveOptions) defaults() error {
	if o.Samples < 1 {
		return fmt.Errorf("%w: Samples must be >= 1, got %d", zonal.ErrParam, o.Samples)
	}
	if !(o.Lambda > 0) || math.IsInf(o.Lambda, 0) {
		return fmt.Errorf("%w: Lambda must be positive and finite, got %g", zonal.ErrParam, o.Lambda)
	}
	if o.SketchDim == 0 {
		o.SketchDim = 32
	}
	if o.Projections == 0 {
		o.Projections = 16
	}
	if o.Mix == 0 {
		o.Mix = 0.05
	}
	if o.RowNormMix == 0 {
		o.RowNormMix = 0.05
	}
	if o.RowNormMix < 0 {
		o.RowNormMix = 0
	}
	if o.SupportSample == 0 {
		o.SupportSample = 2048
	}
	if o.Oversample == 0 {
		o.Oversample = 2
	}
	if o.SketchDim < 1 || o.Projections < 1 || o.SupportSample < 1 || !(o.Mix > 0 && o.Mix < 1) || !(o.Oversample > 0) || o.RowNormMix >= 1 {
		return fmt.Errorf("%w: bad sampler options (SketchDim %d, Projections %d, Mix %g, Oversample %g)",
			zonal.ErrParam, o.SketchDim, o.Projections, o.Mix, o.Oversample)
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
	cnt int // draws merged into this row
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
	bk    backend.Backend // its slice kernels (AxpySlice, SumSq)

	seed uint64 // seeds the per-subtree generators of the current level

	L      int     // support size above which nodes are subsampled
	colPtr []int   // CSC index of the prepared rows
	colPts []int32 // point of each column entry
	colVal []float64

	pos   []int32 // per point scratch, -1 when unused
	slot  []int32 // per coordinate scratch, -1 when unused
	acc   []float64
	qbuf  []float64
	draws int
	emits []emission
	err   error
}

// emission is c draws of the row (l, idx) with probability prob each.
type emission struct {
	l    int
	idx  []int32
	c    int
	prob float64
}

// clone returns a sampler sharing s's read-only state with its own scratch.
func (s *rowSampler) clone() *rowSampler {
	c := *s
	c.slot = make([]int32, len(s.slot))
	for i := range c.slot {
		c.slot[i] = -1
	}
	c.pos = make([]int32, len(s.pos))
	for i := range c.pos {
		c.pos[i] = -1
	}
	c.acc = nil
	c.qbuf = make([]float64, len(s.qbuf))
	c.emits = nil
	c.err = nil
	return &c
}

// cond computes the distribution of the next coordinate i of a row of
// X'^{(x)(r+1)} U (U holds one row per support point, t columns), i.e. the
// estimate of sum_j |X'^{(x)r} diag(U_j) X'^T e_i|^2. When r == 0 it is
// exact: f(i) = sum_j (sum_k U_kj x'_ki)^2. When r >= 1 the degree-r factor
// is replaced by its PolySketch P_k = S_r x'_k^{(x)r} (m entries) and sketch
// entry c is paired with JL column j = c mod t:
//
//	f(i) = t * sum_c (sum_k x'_ki U_{k, c mod t} P_kc)^2,
//
// an unbiased estimate (over the JL columns and the sketch) of the same
// quantity that costs m operations per nonzero instead of t*m. It is mixed
// (weight alpha) with the diagonal proposal
// g(i) = sum_k |U_k|^2 x'_ki^2 |x'_k|^{2r}, positive wherever the target is,
// so no row of nonzero leverage gets probability 0.
func (s *rowSampler) cond(r int, pts []int32, U []float64) (coords []int32, p []float64, fsum, gsum float64) {
	t, m := s.t, s.m
	K := t
	if r > 0 {
		K = m
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
			for c, pc := range P {
				q[c] = u[c%t] * pc
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
			backend.AxpySlice(s.bk, v, q, s.acc[int(sl)*K:(int(sl)+1)*K])
			g[sl] += v * v * uu
		}
	}
	p = make([]float64, len(coords))
	for sl, i := range coords {
		s.slot[i] = -1
		f := backend.SumSq(s.bk, s.acc[sl*K:(sl+1)*K])
		if r > 0 {
			f *= float64(t)
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

// kid is the state of a prefix chosen by some draws.
type kid struct {
	prefix []int32
	pts    []int32
	U      []float64
	count  int
	prob   float64
}

// dist is the distribution of a node's next coordinate: with probability
// 1-floor coordinate coords[j] with probability p[j], and with probability
// floor a coordinate uniform on [0, width).
type dist struct {
	coords []int32
	p      []float64
	floor  float64
}

// pick is a coordinate chosen by some draws, with its probability.
type pick struct {
	i     int32
	count int
	prob  float64
}

// drawDist draws c coordinates from ds and returns the distinct ones in
// increasing order.
func (s *rowSampler) drawDist(ds dist, c int) []pick {
	width := s.xr.d
	if ds.floor == 0 {
		counts := s.draw(ds.p, c)
		var out []pick
		for j, n := range counts {
			if n > 0 {
				out = append(out, pick{i: ds.coords[j], count: n, prob: ds.p[j]})
			}
		}
		slices.SortFunc(out, func(a, b pick) int { return int(a.i - b.i) })
		return out
	}
	listed := 0
	for j := 0; j < c; j++ {
		if len(ds.coords) > 0 && s.rng.Float64() >= ds.floor {
			listed++
		}
	}
	byI := map[int32]int{}
	if listed > 0 {
		for j, n := range s.draw(ds.p, listed) {
			if n > 0 {
				byI[ds.coords[j]] += n
			}
		}
	}
	// the remaining draws are uniform on [0, width)
	for u := c - listed; u > 0; u-- {
		byI[int32(s.rng.IntN(width))]++
	}
	pl := map[int32]float64{}
	for j, i := range ds.coords {
		pl[i] = ds.p[j]
	}
	out := make([]pick, 0, len(byI))
	for i, n := range byI {
		pr := (1-ds.floor)*pl[i] + ds.floor/float64(width)
		if len(ds.coords) == 0 {
			pr = 1 / float64(width)
		}
		out = append(out, pick{i: i, count: n, prob: pr})
	}
	slices.SortFunc(out, func(a, b pick) int { return int(a.i - b.i) })
	return out
}

// expand draws count next coordinates below a prefix whose state is
// (pts, U) and probability prob. Completed rows are emitted; the others are
// returned. A chosen coordinate that no point of the support contains (only
// possible through the uniform floor) gives a row that is zero on every
// training point; it is dropped (its draws still count in s).
func (s *rowSampler) expand(l int, prefix []int32, pts []int32, U []float64, count int, prob float64, ds dist) []kid {
	picks := s.drawDist(ds, count)
	t := s.t
	last := len(prefix)+1 == l
	for a, k := range pts {
		s.pos[k] = int32(a)
	}
	var kids []kid
	for _, pk := range picks {
		np := append(slices.Clone(prefix), pk.i)
		kd := kid{prefix: np, count: pk.count, prob: prob * pk.prob}
		col := s.colPts[s.colPtr[pk.i]:s.colPtr[pk.i+1]]
		val := s.colVal[s.colPtr[pk.i]:s.colPtr[pk.i+1]]
		if 8*len(pts) < len(col) {
			// small support: look the coordinate up in each point's row
			for a, k := range pts {
				rc, rv := s.xr.row(int(k))
				if j, ok := slices.BinarySearch(rc, int(pk.i)); ok {
					kd.pts = append(kd.pts, k)
					for _, uj := range U[a*t : (a+1)*t] {
						kd.U = append(kd.U, uj*rv[j])
					}
				}
			}
		} else {
			for q, k := range col {
				a := s.pos[k]
				if a < 0 {
					continue
				}
				kd.pts = append(kd.pts, k)
				for _, uj := range U[int(a)*t : (int(a)+1)*t] {
					kd.U = append(kd.U, uj*val[q])
				}
			}
		}
		if len(kd.pts) == 0 {
			continue
		}
		if last {
			s.emit(l, np, pk.count, kd.prob)
			continue
		}
		kids = append(kids, kd)
	}
	for _, k := range pts {
		s.pos[k] = -1
	}
	return kids
}

// descend draws count rows of degree l below a prefix (see expand),
// depth first.
func (s *rowSampler) descend(l int, prefix []int32, pts []int32, U []float64, count int, prob float64, ds dist) {
	if s.err != nil {
		return
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return
	}
	kids := s.expand(l, prefix, pts, U, count, prob, ds)
	for i := range kids {
		s.runKid(l, &kids[i])
		kids[i] = kid{}
	}
}

// nodeDist is the next-coordinate distribution of a kid. Supports of at
// most L points get the full estimate (cond). Larger supports are first
// subsampled: L points drawn with replacement with probability
// pi_k ~ |U_k|^2 |x'_k|^{2(r+1)} (the point's diagonal mass) and reweighted
// by 1/(L pi_k), which keeps the estimated vector sum_k x'_ki U_k (x) P_k
// unbiased while touching only the nonzeros of L points; coverage of every
// coordinate is then kept by a uniform floor of weight Mix. The
// probabilities used are exact either way, so the weights stay unbiased.
func (s *rowSampler) nodeDist(r int, pts []int32, U []float64) dist {
	t := s.t
	if len(pts) <= s.L {
		coords, p, _, _ := s.cond(r, pts, U)
		return dist{coords: coords, p: p}
	}
	pi := make([]float64, len(pts))
	tot := 0.0
	for a, k := range pts {
		uu := backend.SumSq(s.bk, U[a*t:(a+1)*t])
		v := uu * math.Pow(s.sqn[k], float64(r+1))
		pi[a] = v
		tot += v
	}
	if !(tot > 0) {
		return dist{floor: 1}
	}
	cnt := s.draw(pi, s.L)
	var sp []int32
	var su []float64
	for a, c := range cnt {
		if c == 0 {
			continue
		}
		sp = append(sp, pts[a])
		w := float64(c) * tot / (float64(s.L) * pi[a])
		for _, uj := range U[a*t : (a+1)*t] {
			su = append(su, w*uj)
		}
	}
	coords, p, _, _ := s.cond(r, sp, su)
	return dist{coords: coords, p: p, floor: s.alpha}
}

// runKid computes a kid's next-coordinate distribution and descends.
func (s *rowSampler) runKid(l int, k *kid) {
	ds := s.nodeDist(l-len(k.prefix)-1, k.pts, k.U)
	s.descend(l, k.prefix, k.pts, k.U, k.count, k.prob, ds)
}

// runKids processes the kids of one block on GOMAXPROCS workers. Kid j
// draws from its own generator seeded by (level seed, base+j) and its rows
// are appended in kid order, so the result does not depend on scheduling.
func (s *rowSampler) runKids(l int, kids []kid, base int) error {
	out := make([][]emission, len(kids))
	errs := make([]error, len(kids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(kids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.clone()
			for {
				j := int(next.Add(1) - 1)
				if j >= len(kids) {
					return
				}
				c.rng = rand.New(rand.NewPCG(s.seed, uint64(base+j)))
				c.emits, c.err = nil, nil
				c.runKid(l, &kids[j])
				out[j], errs[j] = c.emits, c.err
				kids[j] = kid{}
			}
		}()
	}
	wg.Wait()
	for j := range out {
		if errs[j] != nil {
			return errs[j]
		}
		s.emits = append(s.emits, out[j]...)
	}
	return nil
}

// emit records c draws of the row (l, idx) drawn with probability prob.
func (s *rowSampler) emit(l int, idx []int32, c int, prob float64) {
	s.emits = append(s.emits, emission{l: l, idx: idx, c: c, prob: prob})
}

// merge combines the emissions into rows: equal multisets of indices have
// equal features, so their squared weights coef_l / pi add.
func (s *rowSampler) merge() []sampledRow {
	type acc struct {
		idx []int32
		w2  float64
		cnt int
	}
	byKey := map[string]*acc{}
	var keys []string
	for _, e := range s.emits {
		slices.Sort(e.idx)
		key := make([]byte, 0, 4*len(e.idx)+4)
		key = fmt.Appendf(key, "%d:", e.l)
		for _, i := range e.idx {
			key = fmt.Appendf(key, "%d,", i)
		}
		// Horvitz-Thompson: the ordered row is drawn at least once with
		// probability pi = 1 - (1-p)^s, so weighting it by 1/pi (whatever its
		// count c) is unbiased; rows with s p >> 1 get weight ~1 and no
		// variance, instead of c/(s p).
		pi := -math.Expm1(float64(s.draws) * math.Log1p(-e.prob))
		w2 := s.e.coef(e.l) / pi
		if a, ok := byKey[string(key)]; ok {
			a.w2 += w2
			a.cnt += e.c
			continue
		}
		byKey[string(key)] = &acc{idx: e.idx, w2: w2, cnt: e.c}
		keys = append(keys, string(key))
	}
	sort.Strings(keys)
	res := make([]sampledRow, len(keys))
	for i, k := range keys {
		a := byKey[k]
		res[i] = sampledRow{idx: a.idx, w: math.Sqrt(a.w2), cnt: a.cnt}
	}
	return res
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

// newRowSampler prepares the sampler state shared by all levels: the
// PolySketches of every degree 1..q-1 of every point.
func newRowSampler(ctx context.Context, xr *rows, om []float64, e expansion, o AdaptiveOptions) (*rowSampler, error) {
	n, t, m := xr.n, o.Projections, o.SketchDim
	q := e.maxDegree()
	s := &rowSampler{xr: xr, om: om, e: e, m: m, t: t, alpha: o.Mix, ctx: ctx, bk: o.Backend,
		sqn: xr.sqNorms(), slot: make([]int32, xr.d), qbuf: make([]float64, m)}
	for i := range s.slot {
		s.slot[i] = -1
	}
	s.L = o.SupportSample
	s.pos = make([]int32, n)
	for i := range s.pos {
		s.pos[i] = -1
	}
	// CSC index: the points holding each coordinate, in increasing order
	s.colPtr = make([]int, xr.d+1)
	for _, c := range xr.col {
		s.colPtr[c+1]++
	}
	for i := 0; i < xr.d; i++ {
		s.colPtr[i+1] += s.colPtr[i]
	}
	s.colPts = make([]int32, len(xr.col))
	s.colVal = make([]float64, len(xr.col))
	next := slices.Clone(s.colPtr[:xr.d])
	for k := 0; k < n; k++ {
		col, val := xr.row(k)
		for p, c := range col {
			s.colPts[next[c]] = int32(k)
			s.colVal[next[c]] = val[p]
			next[c]++
		}
	}
	if q >= 2 {
		tree, err := newPSTree(xr.d, m, q-1, splitmix(o.Seed, 77))
		if err != nil {
			return nil, err
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
	return s, nil
}

// minLevels: when tr(K)/s <= Lambda the recursion starts at
// lambda_0 = minLevels * Lambda, so it runs log2(minLevels) + 1 levels.
const minLevels = 8

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
	for lev, lambda := range lam {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s.rng = rand.New(rand.NewPCG(o.Seed, uint64(lev+1)))
		s.seed = splitmix(o.Seed, uint64(lev+1))
		W1, err := ridgeFactor(bk, Zt, n, len(rs), t1, lambda, s.rng)
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
			return max(1, min(o.Samples, c))
		}
		var sd float64
		var draws int
		rs, sd, draws, err = s.sampleLevel(W, nd)
		if err != nil {
			return nil, nil, err
		}
		// sum f / t counts the row-norm columns too; keep the leverage part
		sd *= float64(t) * (1 - o.RowNormMix) / float64(t1)
		sPrev = min(sd, float64(o.Samples)) // clamped: no feedback loop through c
		stats = append(stats, LevelStat{Lambda: lambda, StatDim: sd, Draws: draws, Unique: len(rs)})
		if o.Progress != nil {
			o.Progress(lev+1, len(lam))
		}
		if final {
			break
		}
		Zt = make([]float64, n*len(rs))
		features(Zt, len(rs), xr, om, rs)
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
	bk.CholSolve(c, by)                                   // V = (B B^T + lambda I)^{-1} B Y
	bk.Gemm(blas.NoTrans, blas.NoTrans, -1, zt, by, 1, y) // Y - B^T V
	for i := range Y {
		Y[i] /= lambda
	}
	return Y, nil
}

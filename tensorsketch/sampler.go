package tensorsketch

// The row sampler: the state shared by all levels (the prepared points, their
// column index and PolySketches) and the estimates of the conditional
// distribution of the next coordinate of a row of Phi W.

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
)

// rowSampler draws rows of Phi (B^T B + lambda I)^{-1/2} at one level.
type rowSampler struct {
	bk    backend.Backend // its slice kernels (AxpySlice, SumSq)
	xr    *rows
	om    []float64
	e     expansion
	sk    [][]float64 // sk[r-1] is n x m: PolySketch of degree r of each point
	sqn   []float64   // |x'_k|^2
	m, t  int
	alpha float64
	rng   *rand.Rand
	ctx   context.Context

	seed uint64 // seeds the per-subtree generators of the current level

	L      int     // support size above which nodes are subsampled
	colPtr []int   // CSC index of the prepared rows
	colPts []int32 // point of each column entry
	colVal []float64

	pos   []int32 // per point scratch, -1 when unused
	slot  []int32 // per coordinate scratch, -1 when unused
	acc   []float64
	qbuf  []float64
	free  [][]float64 // finished kids' states for reuse (grab, release)
	draws int
	emits []emission
	err   error

	limit int64 // MemoryBudget
	fixed int64 // bytes held by the state shared by all levels (fixedBytes)
}

// fixedBytes bounds the sampler state shared by all levels for the prepared
// rows xr and degree q: the prepared rows themselves, |x'_k|^2, the
// per-point and per-coordinate scratch, the column (CSC) index, and the
// PolySketches of degrees 1..q-1 of every point (q-1 blocks of n x m) with
// their tree and per-worker scratch.
func fixedBytes(xr *rows, q, m int) int64 {
	n, d, nnz := xr.n, xr.d, xr.nnz()
	b := satAdd(rowsBytes(n, nnz), budget.Floats(2*n), budget.Bytes(4, d+n), budget.Floats(2*d+1), budget.Bytes(12, nnz))
	if q >= 2 {
		b = satAdd(b, budget.Floats(q-1, n, m), psTreeBytes(d, m, treeDegree(q)), budget.Bytes(psWorkBytes(m, treeDegree(q)), rowWorkers(n)))
	}
	return b
}

// treeDegree is the degree of the PolySketch tree whose sketches of degrees
// 1..q-1 the sampler keeps: at least 2, so that the tree has a TensorSRHT
// node and even the degree-1 sketch is a randomized Hadamard mixture of a
// CountSketch rather than the bare CountSketch a one-leaf tree gives.
//
// cond pairs sketch entry c with JL column c mod t. With a bare CountSketch a
// coordinate with a large share of |x'_k|^2 (the constant sqrt(coef0) of a
// polynomial kernel, a frequent word) sits in one bucket, so its part of the
// first-coordinate marginal was seen by one JL column only: a chi-square
// with one degree of freedom. On 200 MNIST rows (degree 2, lambda 1, the
// exact B = K) that put half the leverage mass of the first coordinate
// below half its probability (E[tau/p] = 1.8 over the exact leverage
// distribution; 1.1 with the mixing), and more JL columns or a larger m did
// not help. The Hadamard mixing spreads every coordinate over all m entries,
// hence over all JL columns, and keeps inner products unbiased.
func treeDegree(q int) int { return max(q-1, 2) }

// newRowSampler prepares the sampler state shared by all levels: the
// PolySketches of every degree 1..q-1 of every point.
func newRowSampler(ctx context.Context, xr *rows, om []float64, e expansion, o AdaptiveOptions) (*rowSampler, error) {
	n, t, m := xr.n, o.Projections, o.SketchDim
	q := e.maxDegree()
	fixed := fixedBytes(xr, q, m)
	if err := budget.Check("tensorsketch.FitAdaptive: column index and PolySketches of the points", fixed, o.MemoryBudget); err != nil {
		return nil, err
	}
	s := &rowSampler{limit: o.MemoryBudget, fixed: fixed, xr: xr, om: om, e: e, m: m, t: t, alpha: o.Mix, ctx: ctx, bk: o.Backend,
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
		tree, err := newPSTree(xr.d, m, treeDegree(q), splitmix(o.Seed, 77))
		if err != nil {
			return nil, err
		}
		s.sk = make([][]float64, q-1)
		for r := range s.sk {
			s.sk[r] = make([]float64, n*m)
		}
		// The sketches of all n rows take seconds on large data: ctx is
		// checked every 64 rows.
		parallelRows(n, func(lo, hi int) {
			w := tree.newWork()
			for k := lo; k < hi; k++ {
				if (k-lo)%64 == 0 && ctx.Err() != nil {
					return
				}
				col, val := xr.row(k)
				tree.sketchAll(w, col, val, func(r int, v []float64) {
					if r > q-1 {
						return // degree q-1 = 1 on a two-leaf tree
					}
					copy(s.sk[r-1][k*m:(k+1)*m], v)
				})
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return s, nil
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
	c.free = nil
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

package tensorsketch

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// srht is one TensorSRHT node of a PolySketch: for u, v in R^m (zero-padded
// to mp = 2^k >= m),
//
//	T(u, v)_j = (mp / sqrt(m)) (H D1 u)_{a_j} (H D2 v)_{b_j},  j = 1..m,
//
// with H the orthonormal Hadamard matrix, D1, D2 random sign diagonals and
// (a_j, b_j) uniform on [mp]^2. (H D1 (x) H D2) is orthogonal and T samples m
// coordinates of it with replacement, rescaled, so
// E[<T(u,v), T(u',v')>] = <u,u'><v,v'>.
type srht struct {
	d1, d2 []float64
	a, b   []int32
}

func newSRHT(m, mp int, rng *rand.Rand) srht {
	s := srht{d1: make([]float64, mp), d2: make([]float64, mp), a: make([]int32, m), b: make([]int32, m)}
	for i := 0; i < mp; i++ {
		s.d1[i] = float64(1 - 2*int(rng.Uint64()&1))
		s.d2[i] = float64(1 - 2*int(rng.Uint64()&1))
	}
	for j := 0; j < m; j++ {
		s.a[j] = int32(rng.IntN(mp))
		s.b[j] = int32(rng.IntN(mp))
	}
	return s
}

// fwht is the unnormalized in-place fast Walsh-Hadamard transform.
func fwht(x []float64) {
	n := len(x)
	for h := 1; h < n; h <<= 1 {
		for i := 0; i < n; i += h << 1 {
			for j := i; j < i+h; j++ {
				a, b := x[j], x[j+h]
				x[j], x[j+h] = a+b, a-b
			}
		}
	}
}

// apply writes T(u, v) to out; bu, bv are scratch of length mp.
func (s *srht) apply(out, u, v, bu, bv []float64) {
	mp := len(bu)
	clear(bu)
	clear(bv)
	for i := range u {
		bu[i] = s.d1[i] * u[i]
		bv[i] = s.d2[i] * v[i]
	}
	fwht(bu)
	fwht(bv)
	// unnormalized H = sqrt(mp) * orthonormal H, so the scale mp/sqrt(m)
	// becomes 1/sqrt(m).
	_ = mp
	sc := 1 / math.Sqrt(float64(len(out)))
	for j := range out {
		out[j] = sc * bu[s.a[j]] * bv[s.b[j]]
	}
}

// psTree is the PolySketch of Ahle et al. (2020): q leaves, each an
// independent CountSketch R^{d'} -> R^m, combined pairwise by TensorSRHT
// nodes up a complete binary tree with Q = 2^L >= q leaves. The sketch of
// x^{(x)k} for k <= q is the root value when leaves 1..k receive C_i x and
// leaves k+1..Q receive the unit vector e_1 in R^m ("degree padding":
// x^{(x)k} (x) e_1^{(x)(Q-k)} has the same inner products as x^{(x)k}).
// A subtree whose leaves are all padding holds a data-independent constant,
// precomputed; every degree 1..q is produced in one pass, sharing the
// subtrees whose leaves are all x.
type psTree struct {
	in, m, mp, q, levels int
	leaves               []*countHash
	nodes                [][]srht             // nodes[lv-1][i], lv = 1..levels
	pad                  map[[2]int][]float64 // all-padding subtree values by (lv, i)
}

// psLevels returns L and mp: Q = 2^L >= q leaves, mp = 2^k >= m.
func psLevels(m, q int) (L, mp int) {
	for 1<<L < q {
		L++
	}
	return L, 1 << bits.Len(uint(m-1))
}

// psTreeBytes bounds the memory of a psTree: the q leaf tables, the Q-1
// TensorSRHT nodes (two sign vectors of mp, two index vectors of m) and the
// all-padding constants.
func psTreeBytes(in, m, q int) int64 {
	L, mp := psLevels(m, q)
	Q := 1 << L
	return satAdd(budget.Bytes(countHashBytes(in), q), budget.Bytes(16*int64(mp)+8*int64(m), Q-1), budget.Floats(Q, m))
}

// psWorkBytes bounds one psWork: two Hadamard buffers and the memoized
// node values of sketchAll (at most 2q per tree level).
func psWorkBytes(m, q int) int64 {
	L, mp := psLevels(m, q)
	return satAdd(budget.Floats(2, mp), budget.Floats(2*q, L+1, m))
}

func newPSTree(in, m, q int, seed uint64) (*psTree, error) {
	if m < 1 || q < 1 || in < 1 {
		return nil, fmt.Errorf("%w: PolySketch needs m, q, d >= 1", zonal.ErrParam)
	}
	L, mp := psLevels(m, q)
	t := &psTree{in: in, m: m, mp: mp, q: q, levels: L, pad: map[[2]int][]float64{}}
	for i := 0; i < q; i++ {
		t.leaves = append(t.leaves, newCountHash(in, m, splitmix(seed, uint64(1000+i))))
	}
	rng := rand.New(rand.NewPCG(seed, 0x706f6c79))
	for lv := 1; lv <= L; lv++ {
		cnt := 1 << (L - lv)
		row := make([]srht, cnt)
		for i := range row {
			row[i] = newSRHT(m, mp, rng)
		}
		t.nodes = append(t.nodes, row)
	}
	// constants of the all-padding subtrees
	e1 := make([]float64, m)
	e1[0] = 1
	bu, bv := make([]float64, mp), make([]float64, mp)
	for i := 0; i < 1<<L; i++ {
		t.pad[[2]int{0, i}] = e1
	}
	for lv := 1; lv <= L; lv++ {
		for i := 0; i < 1<<(L-lv); i++ {
			out := make([]float64, m)
			t.nodes[lv-1][i].apply(out, t.pad[[2]int{lv - 1, 2 * i}], t.pad[[2]int{lv - 1, 2*i + 1}], bu, bv)
			t.pad[[2]int{lv, i}] = out
		}
	}
	return t, nil
}

// psWork is per-goroutine scratch for psTree.sketchAll.
type psWork struct {
	memo   map[[3]int][]float64
	arena  [][]float64
	used   int
	bu, bv []float64
}

func (t *psTree) newWork() *psWork {
	return &psWork{memo: map[[3]int][]float64{}, bu: make([]float64, t.mp), bv: make([]float64, t.mp)}
}

func (w *psWork) vec(m int) []float64 {
	if w.used == len(w.arena) {
		w.arena = append(w.arena, make([]float64, m))
	}
	v := w.arena[w.used]
	w.used++
	return v
}

// node returns the value of node (lv, i) when the first nx of its leaves
// hold x (the sparse vector col, val) and the rest are padding.
func (t *psTree) node(w *psWork, lv, i, nx int, col []int, val []float64) []float64 {
	if nx == 0 {
		return t.pad[[2]int{lv, i}]
	}
	key := [3]int{lv, i, nx}
	if v, ok := w.memo[key]; ok {
		return v
	}
	out := w.vec(t.m)
	if lv == 0 {
		clear(out)
		t.leaves[i].apply(out, col, val, 1)
	} else {
		half := 1 << (lv - 1)
		nl := min(nx, half)
		u := t.node(w, lv-1, 2*i, nl, col, val)
		v := t.node(w, lv-1, 2*i+1, nx-nl, col, val)
		t.nodes[lv-1][i].apply(out, u, v, w.bu, w.bv)
	}
	w.memo[key] = out
	return out
}

// sketchAll calls emit(k, S_k x) for every degree k = 1..q. The slices
// passed to emit are valid until the next call of sketchAll with w.
func (t *psTree) sketchAll(w *psWork, col []int, val []float64, emit func(k int, s []float64)) {
	clear(w.memo)
	w.used = 0
	for k := 1; k <= t.q; k++ {
		emit(k, t.node(w, t.levels, 0, k, col, val))
	}
}

// sketch returns S_k x for a single degree k (valid until the next call with w).
func (t *psTree) sketch(w *psWork, k int, col []int, val []float64) []float64 {
	clear(w.memo)
	w.used = 0
	return t.node(w, t.levels, 0, k, col, val)
}

// PolySketch is the oblivious polynomial-kernel sketch of Ahle et al.
// (2020): CountSketch leaves and a binary tree of TensorSRHT nodes with
// degree padding (see the package documentation). E[<S_p x', S_p y'>] =
// <x',y'>^p, so with x' = (sqrt(gamma) x, sqrt(coef0)) the D features
// estimate (gamma <x,y> + coef0)^p without bias; the variance grows only
// polynomially in p (TensorSketch's grows like 3^p). Cost per point:
// O(p nnz(x) + p m log m).
//
// For the Gaussian kernel the features are [omega(x), sqrt(1/l!) omega(x)
// S_l(x/sigma) for l = 1..q], all degrees from the one tree; omega(x) =
// exp(-|x/sigma|^2/2).
type PolySketch struct {
	sketch
	tree *psTree
}

// NewPolySketch returns the PolySketch of the kernel k on R^d with
// opts.Features features: kernels.Polynomial (exactly D features) or
// kernels.Gaussian truncated at Taylor degree opts.TaylorDegree (required;
// 1 + q*floor((D-1)/q) features).
//
// Errors: zonal.ErrParam (d < 1, D too small, kernel parameters out of
// range, a kernel kind other than polynomial or Gaussian, a Gaussian kernel
// without TaylorDegree), zonal.ErrTooLarge (the leaves and TensorSRHT nodes
// exceed opts.MemoryBudget).
func NewPolySketch(k kernels.Kernel, d int, opts SketchOptions) (*PolySketch, error) {
	s, err := newSketch(k, d, opts)
	if err != nil {
		return nil, err
	}
	return newPolySketch(s)
}

func newPolySketch(s sketch) (*PolySketch, error) {
	q, w := s.e.maxDegree(), s.e.width(s.d)
	if err := budget.Check("tensorsketch.NewPolySketch: sketch tree", psTreeBytes(w, s.m, q), s.limit); err != nil {
		return nil, err
	}
	tree, err := newPSTree(w, s.m, q, s.seed)
	if err != nil {
		return nil, err
	}
	return &PolySketch{sketch: s, tree: tree}, nil
}

// InputDim is d.
func (p *PolySketch) InputDim() int { return p.d }

// Dim is the number of features.
func (p *PolySketch) Dim() int { return p.dim }

// Kind is "polysketch".
func (p *PolySketch) Kind() string { return "polysketch" }

// String describes the map.
func (p *PolySketch) String() string { return fmt.Sprintf("polysketch(%v, D=%d)", p.e, p.dim) }

// Transform writes the features of the rows of x (n x d) to dst
// (n x Dim()). A *dataset.CSR is read through its nonzeros (no dense copy),
// in O(p nnz(x) + n p m log m); dense and CSR input holding the same numbers
// give bit-identical features.
//
// Float32 features (kernels.Transform32) come from this Transform by the
// generic fallback, 256 rows at a time rounded to float32: the sketch's cost
// is FFTs and hashing, not a product that single precision would speed up.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (x or dst), zonal.ErrFormat
// (malformed CSR), zonal.ErrNonFinite, zonal.ErrTooLarge (the copy of the
// nonzeros and the per-worker node values exceed the map's MemoryBudget).
func (p *PolySketch) Transform(dst *mat.Dense, x mat.Matrix) error {
	r, err := p.input(x, "tensorsketch: PolySketch.Transform input and scratch", psWorkBytes(p.m, p.tree.q))
	if err != nil {
		return err
	}
	return p.transformRows(dst, r)
}

func (p *PolySketch) transformRows(dst *mat.Dense, r *rows) error {
	if err := checkDst(dst, r.n, p.dim); err != nil {
		return err
	}
	xr, om := p.e.prepare(r)
	parallelRows(r.n, func(lo, hi int) {
		w := p.tree.newWork()
		for i := lo; i < hi; i++ {
			out := dst.RawRowView(i)
			col, val := xr.row(i)
			if om == nil {
				s := p.tree.sketch(w, p.e.poly.Degree, col, val)
				copy(out, s)
				continue
			}
			out[0] = om[i]
			p.tree.sketchAll(w, col, val, func(k int, s []float64) {
				c := om[i] * math.Sqrt(p.e.coef(k))
				block := out[1+(k-1)*p.m : 1+k*p.m]
				for j := range block {
					block[j] = c * s[j]
				}
			})
		}
	})
	return nil
}

// MarshalBinary encodes the kernel, d, D and the seed.
func (p *PolySketch) MarshalBinary() ([]byte, error) { return p.marshal(codecVersion), nil }

func init() {
	kernels.RegisterMap("polysketch", func(b []byte) (kernels.FeatureMap, error) {
		s, err := decodeSketch(b, nil)
		if err != nil {
			return nil, err
		}
		return newPolySketch(s)
	})
}

package tensorsketch

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Adaptive is the feature map of rows of Phi sampled by the adaptive
// RowSampler (Woodruff and Zandieh, 2020). Phi is the feature matrix of the
// kernel: for the polynomial kernel its rows are indexed by tuples
// (i_1..i_p) in [d+1]^p and hold x'_{i_1}...x'_{i_p} over the points, with
// x' = (sqrt(gamma) x, sqrt(coef0)); for the Gaussian kernel they are the
// rows sqrt(1/l!) exp(-|x|^2/2) x_{i_1}...x_{i_l} of every Taylor degree
// l = 0..q (x already divided by sigma). Each row r drawn at least once in
// s draws of probability p_r becomes the feature
//
//	z_r(x) = sqrt(coef_l / pi_r) omega(x) prod_j x'_{i_j},  pi_r = 1 - (1-p_r)^s,
//
// (Horvitz-Thompson: pi_r is the probability that r is drawn at all), so
// E[Z^T Z] = K (Z is n x Dim over the training points); a row with
// s p_r >> 1 gets weight ~1 and no variance. Rows that are
// permutations of one another have identical features and are merged
// (squared weights add), so Dim() <= s.
type Adaptive struct {
	e     expansion
	d     int
	rows  []sampledRow
	stats []LevelStat
	limit int64 // MemoryBudget of the fit, for Transform
}

// FitAdaptive samples the feature map of the kernel k on the rows of x
// (n x d) by recursive ridge-leverage-score sampling (Algorithm 1 of the
// paper). k is a kernels.Polynomial, or a kernels.Gaussian truncated at
// Taylor degree opts.TaylorDegree (0 chooses q = TaylorDegree(max_i
// |x_i|^2/sigma^2, 1e-3)), where every degree l = 0..q with weight 1/l! is
// a block of Phi and the number of draws of each block follows its
// estimated leverage mass. x may be a *dataset.CSR: it is read through its
// nonzeros (no dense copy), and for the same numbers and seed the map is
// the same as for dense input.
//
// lambda_0 = tr(K)/s, where the ridge leverage scores of Phi sum to at most
// s, starts with B = 0; each following level halves lambda and draws rows
// of Phi (B^T B + lambda I)^{-1/2} with B the previous level's sample,
// until lambda = opts.Lambda, where opts.Samples rows are drawn. Each row
// (i_1..i_l) is drawn coordinate by coordinate: the conditional marginal of
// i_j is estimated through the degree l-j PolySketch of the points
// (computed once for all levels), except for the last coordinate, whose
// conditional is exact. Draws with equal prefixes share their conditional,
// so the work of a level is one pass over the nonzeros of the points in
// each distinct prefix's support, independent of s.
//
// Errors: zonal.ErrParam (options or kernel parameters out of range, a
// kernel kind other than polynomial or Gaussian), zonal.ErrEmpty (no rows,
// or data whose kernel matrix is zero), zonal.ErrFormat (malformed CSR),
// zonal.ErrNonFinite, zonal.ErrTooLarge (working arrays beyond
// opts.MemoryBudget), ctx.Err() when ctx is cancelled, and the backend's
// factorization error if B B^T + lambda I cannot be factored.
func FitAdaptive(ctx context.Context, x mat.Matrix, k kernels.Kernel, opts AdaptiveOptions) (*Adaptive, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	// q = 1 stands in for a Taylor degree still to be chosen from the data
	e, err := newExpansion(k, max(opts.TaylorDegree, 1))
	if err != nil {
		return nil, err
	}
	r, err := toRows(x, -1, opts.MemoryBudget, "tensorsketch.FitAdaptive: copy of the input", e.prepBytes)
	if err != nil {
		return nil, err
	}
	if e.gauss && opts.TaylorDegree == 0 {
		q := TaylorDegree(maxSqNorm(r)/(e.sigma*e.sigma), 1e-3)
		if e, err = gaussExpansion(e.sigma, q); err != nil {
			return nil, err
		}
	}
	xr, om := e.prepare(r)
	rs, stats, err := fitAdaptive(ctx, xr, om, e, opts)
	if err != nil {
		return nil, err
	}
	return &Adaptive{e: e, d: r.d, rows: rs, stats: stats, limit: opts.MemoryBudget}, nil
}

func maxSqNorm(r *rows) float64 {
	mx := 0.0
	for _, v := range r.sqNorms() {
		mx = math.Max(mx, v)
	}
	return mx
}

// MaxSqNorm returns max_i |x_i|^2 over the rows of x (dense or
// *dataset.CSR), the squared data radius that TaylorDegree needs (divide by
// sigma^2 first). Errors: zonal.ErrEmpty, zonal.ErrFormat (malformed CSR),
// zonal.ErrNonFinite, zonal.ErrTooLarge (the copy of the nonzeros exceeds
// zonal.DefaultMemoryBudget).
func MaxSqNorm(x mat.Matrix) (float64, error) {
	r, err := toRows(x, -1, 0, "tensorsketch.MaxSqNorm: copy of the input", nil)
	if err != nil {
		return 0, err
	}
	return maxSqNorm(r), nil
}

// InputDim is d.
func (a *Adaptive) InputDim() int { return a.d }

// Dim is the number of distinct sampled rows (at most opts.Samples).
func (a *Adaptive) Dim() int { return len(a.rows) }

// Kind is "adaptive".
func (a *Adaptive) Kind() string { return "adaptive" }

// String describes the map.
func (a *Adaptive) String() string { return fmt.Sprintf("adaptive(%v, D=%d)", a.e, len(a.rows)) }

// Levels reports the levels of the recursive sampling that built the map
// (empty for a map loaded with UnmarshalMap).
func (a *Adaptive) Levels() []LevelStat { return append([]LevelStat(nil), a.stats...) }

// TaylorDegree is the Gaussian kernel's truncation degree q (0 for the
// polynomial kernel).
func (a *Adaptive) TaylorDegree() int {
	if a.e.gauss {
		return a.e.q
	}
	return 0
}

// Transform writes the features of the rows of x (n x d) to dst
// (n x Dim()). A *dataset.CSR is read through its nonzeros (no dense copy),
// in O(nnz(x) + n Dim q); dense and CSR input holding the same numbers give
// bit-identical features.
//
// Float32 features (kernels.Transform32) come from this Transform by the
// generic fallback, 256 rows at a time rounded to float32: the sketch's cost
// is FFTs and hashing, not a product that single precision would speed up.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (x or dst), zonal.ErrFormat
// (malformed CSR), zonal.ErrNonFinite, zonal.ErrTooLarge (the copy of the
// nonzeros exceeds the MemoryBudget of the fit).
func (a *Adaptive) Transform(dst *mat.Dense, x mat.Matrix) error {
	r, err := toRows(x, a.d, a.limit, "tensorsketch: Adaptive.Transform input and scratch", func(n, nnz int) int64 {
		return satAdd(a.e.prepBytes(n, nnz), budget.Floats(rowWorkers(n), a.e.width(a.d)))
	})
	if err != nil {
		return err
	}
	return a.transformRows(dst, r)
}

func (a *Adaptive) transformRows(dst *mat.Dense, r *rows) error {
	if err := checkDst(dst, r.n, len(a.rows)); err != nil {
		return err
	}
	xr, om := a.e.prepare(r)
	raw := dst.RawMatrix()
	features(raw.Data, raw.Stride, xr, om, a.rows)
	return nil
}

// MarshalBinary encodes the kernel and the sampled rows.
func (a *Adaptive) MarshalBinary() ([]byte, error) {
	var e enc
	e.u(codecVersion)
	e.expansion(a.e)
	e.i(a.d)
	e.i(len(a.rows))
	for _, r := range a.rows {
		e.f(r.w)
		e.i(len(r.idx))
		for _, i := range r.idx {
			e.i(int(i))
		}
	}
	return e.b, nil
}

func init() {
	kernels.RegisterMap("adaptive", func(b []byte) (kernels.FeatureMap, error) {
		d := dec{b: b}
		d.u()
		e, err := d.expansion()
		if err != nil {
			return nil, err
		}
		a := &Adaptive{e: e, d: d.i()}
		n := d.i()
		if d.err != nil || a.d < 1 || n < 0 || n > len(d.b)/8 {
			return nil, fmt.Errorf("%w: bad adaptive map encoding", zonal.ErrFormat)
		}
		w := e.width(a.d)
		for j := 0; j < n && d.err == nil; j++ {
			r := sampledRow{w: d.f()}
			l := d.i()
			if l < 0 || l > e.maxDegree() {
				return nil, fmt.Errorf("%w: bad adaptive map encoding", zonal.ErrFormat)
			}
			for c := 0; c < l; c++ {
				i := d.i()
				if i < 0 || i >= w {
					return nil, fmt.Errorf("%w: bad adaptive map encoding", zonal.ErrFormat)
				}
				r.idx = append(r.idx, int32(i))
			}
			a.rows = append(a.rows, r)
		}
		if d.err != nil {
			return nil, d.err
		}
		return a, nil
	})
}

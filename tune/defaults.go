package tune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
)

// DefaultSigmaPairs is the number of row pairs MedianSigma samples when
// asked for 0.
const DefaultSigmaPairs = 4096

// MedianSigma returns the median heuristic bandwidth: the median of the
// Euclidean distances |x_i - x_j| over pairs i != j of rows of x. When x
// has at most pairs distinct pairs all of them are used (exactly the
// median); otherwise pairs pairs are drawn uniformly with replacement from
// a PCG stream determined by seed, so the result is a function of x, pairs
// and seed. pairs <= 0 means DefaultSigmaPairs. When more than half the
// sampled distances are 0 (many duplicate rows, e.g. sparse binary data)
// the median of the positive distances is returned instead.
//
// Errors: zonal.ErrEmpty for fewer than 2 rows or no columns,
// zonal.ErrNonFinite for NaN or Inf in x, zonal.ErrParam when every
// sampled distance is 0 (constant rows: no scale to read).
func MedianSigma(x mat.Matrix, pairs int, seed uint64) (float64, error) {
	n, d, err := checkRows(x)
	if err != nil {
		return 0, err
	}
	if n < 2 {
		return 0, fmt.Errorf("%w: the median heuristic needs at least 2 rows, got %d", zonal.ErrEmpty, n)
	}
	if pairs <= 0 {
		pairs = DefaultSigmaPairs
	}
	var dist func(i, j int) float64
	if c, ok := x.(*dataset.CSR); ok {
		// |x_i - x_j|^2 = |x_i|^2 + |x_j|^2 - 2 x_i.x_j over the nonzeros
		// (rounding below 0 clamped): O(nnz) a pair, nothing densified.
		norms := c.RowNorms2()
		dist = func(i, j int) float64 {
			ci, vi := c.Row(i)
			cj, vj := c.Row(j)
			return math.Sqrt(max(0, norms[i]+norms[j]-2*dataset.SparseDot(ci, vi, cj, vj)))
		}
	} else {
		a, b := make([]float64, d), make([]float64, d)
		dist = func(i, j int) float64 {
			ra, rb := mat.Row(a, i, x), mat.Row(b, j, x)
			s := 0.0
			for t := range ra {
				v := ra[t] - rb[t]
				s += v * v
			}
			return math.Sqrt(s)
		}
	}
	var ds []float64
	if total := int64(n) * int64(n-1) / 2; total <= int64(pairs) {
		ds = make([]float64, 0, total)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				ds = append(ds, dist(i, j))
			}
		}
	} else {
		rng := rand.New(rand.NewPCG(seed, 0x7475_6e65_7369_676d)) // "tunesigm"
		ds = make([]float64, pairs)
		for p := range ds {
			i := rng.IntN(n)
			j := rng.IntN(n - 1)
			if j >= i {
				j++
			}
			ds[p] = dist(i, j)
		}
	}
	slices.Sort(ds)
	if ds[len(ds)-1] == 0 {
		return 0, fmt.Errorf("%w: all %d sampled pairwise distances are 0 (the rows are identical): set sigma explicitly", zonal.ErrParam, len(ds))
	}
	if med := median(ds); med > 0 {
		return med, nil
	}
	pos, _ := slices.BinarySearch(ds, math.SmallestNonzeroFloat64)
	return median(ds[pos:]), nil
}

// median of a sorted non-empty slice.
func median(s []float64) float64 {
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// ScaleSigma returns the bandwidth equivalent to scikit-learn's
// gamma = 'scale' for the Gaussian kernel: scikit-learn uses
// exp(-gamma |x-y|^2) with gamma = 1 / (d var(X)), var over all n d
// entries of x; zonal's Gaussian is exp(-|x-y|^2 / (2 sigma^2)), so the
// same kernel has sigma = sqrt(d var(X) / 2).
//
// Errors: zonal.ErrEmpty for an empty x, zonal.ErrNonFinite for NaN or
// Inf, zonal.ErrParam when every entry of x is the same (var = 0).
func ScaleSigma(x mat.Matrix) (float64, error) {
	n, d, err := checkRows(x)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: no rows", zonal.ErrEmpty)
	}
	if c, ok := x.(*dataset.CSR); ok {
		return scaleSigmaCSR(c)
	}
	// Two passes (mean, then squared deviations) for accuracy.
	mean := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mean += x.At(i, j)
		}
	}
	mean /= float64(n * d)
	v := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			t := x.At(i, j) - mean
			v += t * t
		}
	}
	v /= float64(n * d)
	if !(v > 0) {
		return 0, fmt.Errorf("%w: every entry of the data is %g (variance 0): set sigma explicitly", zonal.ErrParam, mean)
	}
	return math.Sqrt(float64(d) * v / 2), nil
}

// AutoCenters returns a number of FALKON centres (or Nystrom / random
// features) for n training rows: M = ceil(sqrt(n) ln n) (the order FALKON's
// statistical analysis asks for), at least 1 when n >= 1, at most n, and at
// most MaxCenters(n, limit, p). n <= 0 gives 0.
func AutoCenters(n int, limit int64, p zonal.Precision) int {
	if n <= 0 {
		return 0
	}
	m := int(math.Ceil(math.Sqrt(float64(n)) * math.Log(float64(n))))
	m = max(1, min(m, n))
	return max(1, min(m, MaxCenters(n, limit, p)))
}

// MaxCenters is the largest centre count M for n training rows whose M x M
// factors (one float64 array: see solvers.FitFalkon) and cached n x M
// kernel block (entries of precision p, 4 bytes for zonal.Float32),
// 8 M^2 + p.Bytes() n M bytes, fit the memory budget limit (0 means
// zonal.DefaultMemoryBudget); at least 1.
func MaxCenters(n int, limit int64, p zonal.Precision) int {
	// 8 M^2 + b n M <= B (bytes).
	b := float64(p.Bytes())
	if p.Check() != nil {
		b = 8
	}
	lim := float64(budget.Or(limit))
	nb := b * float64(max(n, 0))
	return max(1, int((-nb+math.Sqrt(nb*nb+32*lim))/16))
}

// checkRows returns the shape of x and checks that it has columns and
// finite entries (for a *dataset.CSR: that it is valid and its stored
// values finite).
func checkRows(x mat.Matrix) (n, d int, err error) {
	if x == nil {
		return 0, 0, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	if c, ok := x.(*dataset.CSR); ok && c == nil {
		return 0, 0, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	n, d = x.Dims()
	if d == 0 {
		return 0, 0, fmt.Errorf("%w: data has no columns", zonal.ErrEmpty)
	}
	if c, ok := x.(*dataset.CSR); ok {
		if err := c.Validate(); err != nil {
			return 0, 0, err
		}
		for i := 0; i < n; i++ {
			cols, vals := c.Row(i)
			for p, v := range vals {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return 0, 0, fmt.Errorf("%w: row %d column %d is %g", zonal.ErrNonFinite, i, cols[p], v)
				}
			}
		}
		return n, d, nil
	}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("%w: row %d column %d is %g", zonal.ErrNonFinite, i, j, v)
			}
		}
	}
	return n, d, nil
}

// scaleSigmaCSR is ScaleSigma over the n d entries of a CSR, its zeros
// included, in O(nnz): mean = sum(v) / (n d), and the squared deviations
// of the stored values plus (n d - nnz) mean^2 for the zeros.
func scaleSigmaCSR(c *dataset.CSR) (float64, error) {
	n, d := c.Dims()
	if n == 0 {
		return 0, fmt.Errorf("%w: no rows", zonal.ErrEmpty)
	}
	nd := float64(n) * float64(d)
	mean := 0.0
	for _, v := range c.Val {
		mean += v
	}
	mean /= nd
	v := (nd - float64(len(c.Val))) * mean * mean
	for _, x := range c.Val {
		v += (x - mean) * (x - mean)
	}
	v /= nd
	if !(v > 0) {
		return 0, fmt.Errorf("%w: every entry of the data is %g (variance 0): set sigma explicitly", zonal.ErrParam, mean)
	}
	return math.Sqrt(float64(d) * v / 2), nil
}

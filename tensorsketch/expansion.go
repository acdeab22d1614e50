package tensorsketch

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// MaxDegree bounds polynomial degrees and Taylor truncation degrees.
const MaxDegree = 64

// TaylorDegree returns the smallest q such that the truncated Taylor
// expansion of the Gaussian kernel,
//
//	exp(-|x|^2/2) exp(-|y|^2/2) sum_{l<=q} <x,y>^l / l!,
//
// differs from exp(-|x-y|^2/2) by at most tol for all x, y with
// |x|^2, |y|^2 <= r2 (points already divided by sigma). The error is
// exp(-(|x|^2+|y|^2)/2) sum_{l>q} <x,y>^l/l! <= e^{-a} sum_{l>q} a^l/l! with
// a = (|x|^2+|y|^2)/2 >= |<x,y>|, the upper tail P(Poisson(a) > q), which
// grows with a; so q is chosen from the Poisson(r2) tail. The result is
// capped at MaxDegree.
func TaylorDegree(r2, tol float64) int {
	if !(tol > 0) || tol >= 1 {
		tol = 1e-6
	}
	if !(r2 > 0) {
		return 1
	}
	// Poisson(r2) pmf in log space, cumulative from 0.
	cdf := 0.0
	for q := 0; q <= MaxDegree; q++ {
		lp := -r2 + float64(q)*math.Log(r2) - lgamma(float64(q)+1)
		cdf += math.Exp(lp)
		if 1-cdf <= tol && q >= 1 {
			return q
		}
	}
	return MaxDegree
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// expansion is the kernel as the inner product of a (possibly infinite)
// feature matrix Phi whose rows are stacked blocks
//
//	sqrt(coef_l) * omega(x) * x'^{(x) l},  l in degrees,
//
// where x' = prep(x). Polynomial: one block l = p on the augmented points,
// omega = 1. Gaussian: l = 0..q on x/sigma, coef_l = 1/l!,
// omega(x) = exp(-|x/sigma|^2/2).
type expansion struct {
	gauss bool
	poly  kernels.Polynomial
	sigma float64
	q     int
}

// newExpansion resolves a kernel to its expansion: kernels.Polynomial (or a
// pointer to one) to the single block of degree p on the augmented points,
// kernels.Gaussian to the Taylor blocks 0..q. q is the Taylor degree of the
// Gaussian kernel (ignored for the polynomial kernel). Parameters out of
// range and every other kernel kind wrap zonal.ErrParam.
func newExpansion(k kernels.Kernel, q int) (expansion, error) {
	switch k := k.(type) {
	case kernels.Polynomial:
		return polyExpansion(k)
	case *kernels.Polynomial:
		if k != nil {
			return polyExpansion(*k)
		}
	case kernels.Gaussian:
		return gaussExpansion(k.Sigma, q)
	case *kernels.Gaussian:
		if k != nil {
			return gaussExpansion(k.Sigma, q)
		}
	case nil:
	default:
		return expansion{}, fmt.Errorf("%w: tensorsketch cannot sketch the %T kernel (it supports kernels.Polynomial and kernels.Gaussian)", zonal.ErrParam, k)
	}
	return expansion{}, fmt.Errorf("%w: nil kernel (tensorsketch needs kernels.Polynomial or kernels.Gaussian)", zonal.ErrParam)
}

// polyExpansion checks (gamma <x,y> + coef0)^p: 1 <= p <= MaxDegree,
// gamma > 0 and coef0 >= 0, both finite (so that <x',y'> with
// x' = (sqrt(gamma) x, sqrt(coef0)) is real).
func polyExpansion(p kernels.Polynomial) (expansion, error) {
	if p.Degree < 1 {
		return expansion{}, fmt.Errorf("%w: polynomial degree must be >= 1, got %d", zonal.ErrParam, p.Degree)
	}
	if p.Degree > MaxDegree {
		return expansion{}, fmt.Errorf("%w: polynomial degree %d exceeds MaxDegree %d", zonal.ErrParam, p.Degree, MaxDegree)
	}
	if !(p.Gamma > 0) || math.IsInf(p.Gamma, 0) {
		return expansion{}, fmt.Errorf("%w: polynomial gamma must be positive and finite, got %g", zonal.ErrParam, p.Gamma)
	}
	if !(p.Coef0 >= 0) || math.IsInf(p.Coef0, 0) {
		return expansion{}, fmt.Errorf("%w: polynomial coef0 must be >= 0 and finite, got %g", zonal.ErrParam, p.Coef0)
	}
	return expansion{poly: p}, nil
}

func gaussExpansion(sigma float64, q int) (expansion, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return expansion{}, fmt.Errorf("%w: gaussian sigma must be positive and finite, got %g", zonal.ErrParam, sigma)
	}
	if q < 1 || q > MaxDegree {
		return expansion{}, fmt.Errorf("%w: Taylor degree of the gaussian kernel must be in [1,%d], got %d", zonal.ErrParam, MaxDegree, q)
	}
	return expansion{gauss: true, sigma: sigma, q: q}, nil
}

// width is the dimension of the prepared points for input dimension d.
func (e expansion) width(d int) int {
	if e.gauss {
		return d
	}
	return d + 1
}

// maxDegree is the largest tensor degree in the expansion.
func (e expansion) maxDegree() int {
	if e.gauss {
		return e.q
	}
	return e.poly.Degree
}

// coef is coef_l (0 for degrees not in the expansion).
func (e expansion) coef(l int) float64 {
	if e.gauss {
		if l < 0 || l > e.q {
			return 0
		}
		return math.Exp(-lgamma(float64(l) + 1))
	}
	if l == e.poly.Degree {
		return 1
	}
	return 0
}

// prepare maps the rows to x' and returns omega (nil means all ones).
func (e expansion) prepare(r *rows) (*rows, []float64) {
	if !e.gauss {
		return r.augment(math.Sqrt(e.poly.Gamma), math.Sqrt(e.poly.Coef0)), nil
	}
	out := &rows{n: r.n, d: r.d, ptr: r.ptr, col: r.col, val: make([]float64, len(r.val))}
	inv := 1 / e.sigma
	for i, v := range r.val {
		out.val[i] = v * inv
	}
	om := out.sqNorms()
	for i, s := range om {
		om[i] = math.Exp(-s / 2)
	}
	return out, om
}

// eval is the kernel this expansion represents (the truncated Taylor series
// for the Gaussian); used by tests.
func (e expansion) eval(x, y []float64) float64 {
	if !e.gauss {
		return e.poly.Eval(x, y)
	}
	var xy, xx, yy float64
	s2 := e.sigma * e.sigma
	for i := range x {
		xy += x[i] * y[i] / s2
		xx += x[i] * x[i] / s2
		yy += y[i] * y[i] / s2
	}
	sum, term := 0.0, 1.0
	for l := 0; l <= e.q; l++ {
		if l > 0 {
			term *= xy / float64(l)
		}
		sum += term
	}
	return math.Exp(-(xx+yy)/2) * sum
}

func (e expansion) String() string {
	if e.gauss {
		return fmt.Sprintf("gaussian(sigma=%g, taylor=%d)", e.sigma, e.q)
	}
	return fmt.Sprintf("polynomial(degree=%d, gamma=%g, coef0=%g)", e.poly.Degree, e.poly.Gamma, e.poly.Coef0)
}

// splitmix derives independent sub-seeds from one seed.
func splitmix(seed, k uint64) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(k+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// parallelRows runs f on contiguous chunks of [0,n) on rowWorkers(n)
// goroutines. Each row is handled by exactly one chunk, so results do not
// depend on the number of workers.
func parallelRows(n int, f func(lo, hi int)) {
	w := rowWorkers(n)
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

// rowWorkers is the number of goroutines parallelRows runs for n rows:
// GOMAXPROCS, at most one per 16 rows, at least one. Per-worker scratch is
// charged to the memory budget for this many workers, not GOMAXPROCS: a
// Transform of a few rows then fits the same budget on any core count.
func rowWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/16))
}

// prepBytes bounds what prepare allocates for n rows with nnz entries: the
// augmented or rescaled copy and omega.
func (e expansion) prepBytes(n, nnz int) int64 {
	return satAdd(rowsBytes(n, nnz+n), budget.Floats(n))
}

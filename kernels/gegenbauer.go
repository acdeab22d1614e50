package kernels

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Gegenbauer returns P_d^l(t), the Gegenbauer polynomial of degree l >= 0 in
// dimension d >= 2 normalised so that P_d^l(1) = 1, by the three-term
// recurrence
//
//	P^0 = 1, P^1 = t, P^l = ((2l+d-4) t P^{l-1} - (l-1) P^{l-2}) / (l+d-3).
//
// d = 2 gives the Chebyshev polynomials T_l, d = 3 the Legendre polynomials.
// For |t| <= 1 the recurrence is forward stable and |P^l(t)| <= 1. Invalid
// l or d give NaN.
func Gegenbauer(l, d int, t float64) float64 {
	if l < 0 || d < 2 {
		return math.NaN()
	}
	p0, p1 := 1.0, t
	if l == 0 {
		return p0
	}
	fd := float64(d)
	for k := 2; k <= l; k++ {
		fk := float64(k)
		p0, p1 = p1, ((2*fk+fd-4)*t*p1-(fk-1)*p0)/(fk+fd-3)
	}
	return p1
}

// GegenbauerAll writes P_d^0(t), ..., P_d^{len(dst)-1}(t) to dst (see
// Gegenbauer); d < 2 fills dst with NaN, as Gegenbauer returns NaN.
func GegenbauerAll(dst []float64, d int, t float64) {
	if d < 2 {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return
	}
	gegenbauerAll(dst, float64(d), t)
}

func gegenbauerAll(dst []float64, fd, t float64) {
	if len(dst) == 0 {
		return
	}
	dst[0] = 1
	if len(dst) == 1 {
		return
	}
	dst[1] = t
	for k := 2; k < len(dst); k++ {
		fk := float64(k)
		dst[k] = ((2*fk+fd-4)*t*dst[k-1] - (fk-1)*dst[k-2]) / (fk + fd - 3)
	}
}

// LogAlpha returns log alpha_{l,d}, where alpha_{0,d} = 1 and, for l >= 1,
//
//	alpha_{l,d} = (2l+d-2)/l * C(l+d-3, l-1),
//
// the dimension of the space of spherical harmonics of degree l on S^{d-1}
// (2 for every l >= 1 when d = 2; 2l+1 when d = 3). It is computed with
// log-gamma so that large l and d do not overflow.
func LogAlpha(l, d int) float64 {
	if l < 0 || d < 2 {
		return math.NaN()
	}
	if l == 0 {
		return 0
	}
	fl, fd := float64(l), float64(d)
	return math.Log(2*fl+fd-2) - math.Log(fl) + lgamma(fl+fd-2) - lgamma(fl) - lgamma(fd-1)
}

// Alpha returns alpha_{l,d} = exp(LogAlpha(l, d)) (+Inf when it overflows).
func Alpha(l, d int) float64 { return math.Exp(LogAlpha(l, d)) }

// MonomialCoeffs returns b_{n,0..n}, the expansion t^n = sum_l b_{n,l} P_d^l(t),
// where b_{n,l} = 0 unless n-l is even, and then
//
//	b_{n,l} = alpha_{l,d} n! Gamma(d/2) / (2^n ((n-l)/2)! Gamma((n+l+d)/2)),
//
// evaluated in log space. The b_{n,l} are non-negative and sum to 1 (t = 1).
// Errors: zonal.ErrParam unless n >= 0 and d >= 2.
func MonomialCoeffs(n, d int) ([]float64, error) {
	if n < 0 || d < 2 {
		return nil, fmt.Errorf("%w: MonomialCoeffs needs n >= 0 and d >= 2, got n=%d d=%d", zonal.ErrParam, n, d)
	}
	out := make([]float64, n+1)
	for l := n % 2; l <= n; l += 2 {
		out[l] = math.Exp(logMonomialCoeff(n, l, d))
	}
	return out, nil
}

func logMonomialCoeff(n, l, d int) float64 {
	fn, fl, fd := float64(n), float64(l), float64(d)
	return LogAlpha(l, d) + lgamma(fn+1) + lgamma(fd/2) - fn*math.Ln2 -
		lgamma((fn-fl)/2+1) - lgamma((fn+fl+fd)/2)
}

// GaussGegenbauer returns the n-point Gauss quadrature rule for the weight
// (1-t^2)^((d-3)/2) on [-1, 1]: nodes t_i (ascending) and weights w_i with
// sum_i w_i f(t_i) = int f(t) (1-t^2)^((d-3)/2) dt exactly for polynomials f of
// degree <= 2n-1. The nodes are the eigenvalues of the symmetric tridiagonal
// Jacobi matrix of the monic Gegenbauer recurrence (zero diagonal, off-diagonal
// b_k = sqrt(k (k+2mu-1) / (4 (k+mu)(k+mu-1))), mu = (d-2)/2, b_1 = 1/sqrt 2
// when d = 2), and w_i = m_0 v_{0i}^2 with v_i its unit eigenvectors and
// m_0 = sqrt(pi) Gamma((d-1)/2) / Gamma(d/2) the total mass (Golub-Welsch),
// computed with opt.Backend's SymEig (the n x n Jacobi matrix counts
// against opt.MemoryBudget).
//
// Errors: zonal.ErrParam unless 1 <= n <= 4096 and d >= 2, zonal.ErrTooLarge,
// zonal.ErrNoConvergence from the eigensolver.
func GaussGegenbauer(n, d int, opt Options) (nodes, weights []float64, err error) {
	if n < 1 || n > 4096 || d < 2 {
		return nil, nil, fmt.Errorf("%w: GaussGegenbauer needs 1 <= n <= 4096 and d >= 2, got n=%d d=%d", zonal.ErrParam, n, d)
	}
	if err := opt.check("the Gauss-Gegenbauer Jacobi matrix", budget.Floats(n, n)); err != nil {
		return nil, nil, err
	}
	mu := float64(d-2) / 2
	j := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for k := 1; k < n; k++ {
		fk := float64(k)
		var b2 float64
		if d == 2 {
			b2 = 0.25
			if k == 1 {
				b2 = 0.5
			}
		} else {
			b2 = fk * (fk + 2*mu - 1) / (4 * (fk + mu) * (fk + mu - 1))
		}
		bk := math.Sqrt(b2)
		j.Data[k*n+k-1] = bk
		j.Data[(k-1)*n+k] = bk
	}
	nodes = make([]float64, n)
	if err := opt.backend().SymEig(j, nodes, true); err != nil {
		return nil, nil, fmt.Errorf("kernels: Gauss-Gegenbauer eigensolver: %w", err)
	}
	m0 := math.Exp(0.5*math.Log(math.Pi) + lgamma(float64(d-1)/2) - lgamma(float64(d)/2))
	weights = make([]float64, n)
	for i := range weights {
		v := j.Data[i] // row 0, column i: first component of eigenvector i
		weights[i] = m0 * v * v
	}
	return nodes, weights, nil
}

// SeriesCoeffs returns the Gegenbauer coefficients c_0..c_q of a zonal
// function kappa on [-1, 1] in dimension d, kappa(t) = sum_l c_l P_d^l(t):
//
//	c_l = alpha_{l,d} int kappa(t) P_d^l(t) (1-t^2)^((d-3)/2) dt / m_0,
//
// (orthogonality: int P^l P^m (1-t^2)^((d-3)/2) dt = delta_lm m_0/alpha_{l,d}),
// the integral taken by an npts-point Gauss-Gegenbauer rule (exact when kappa
// is a polynomial of degree <= 2 npts - 1 - q; choose npts well above q for
// analytic kappa). The quadrature rule comes from GaussGegenbauer with opt.
//
// Errors: zonal.ErrParam (nil kappa, q < 0, npts <= q, or the parameters of
// GaussGegenbauer), zonal.ErrNonFinite when a kappa value is NaN or Inf, and
// those of GaussGegenbauer.
func SeriesCoeffs(kappa func(t float64) float64, d, q, npts int, opt Options) ([]float64, error) {
	if kappa == nil {
		return nil, fmt.Errorf("%w: SeriesCoeffs with a nil function", zonal.ErrParam)
	}
	if q < 0 || npts < q+1 {
		return nil, fmt.Errorf("%w: SeriesCoeffs needs q >= 0 and npts > q, got q=%d npts=%d", zonal.ErrParam, q, npts)
	}
	t, w, err := GaussGegenbauer(npts, d, opt)
	if err != nil {
		return nil, err
	}
	m0 := 0.0
	for _, wi := range w {
		m0 += wi
	}
	c := make([]float64, q+1)
	p := make([]float64, q+1)
	for i, ti := range t {
		f := kappa(ti)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: kappa(%g) = %g", zonal.ErrNonFinite, ti, f)
		}
		gegenbauerAll(p, float64(d), ti)
		for l := range c {
			c[l] += w[i] * f * p[l]
		}
	}
	for l := range c {
		c[l] *= Alpha(l, d) / m0
	}
	return c, nil
}

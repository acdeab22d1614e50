package solvers

import "math"

// The automatic iteration cap of CG (CGOptions.AutoCap).
//
// CG's coefficients are those of the Lanczos process on the (preconditioned)
// operator: after m steps with step lengths alpha_i and ratios beta_i, the
// symmetric tridiagonal T_m with diagonal 1/alpha_0, 1/alpha_i +
// beta_{i-1}/alpha_{i-1} and off-diagonal sqrt(beta_i)/alpha_i has as
// eigenvalues the Ritz values of the operator on the Krylov space. By
// Cauchy interlacing its extreme eigenvalues move outwards as m grows, so
// kappa_m = lambda_max(T_m) / lambda_min(T_m) is a nondecreasing estimate of
// the condition number kappa from below, which reaches kappa about as fast
// as CG converges (both follow the same Chebyshev rate). The classical bound
// ||e_m||_A <= 2 rho^m ||e_0||_A, rho = (sqrt(kappa)-1)/(sqrt(kappa)+1), and
// ||r|| <= sqrt(kappa) ||e||_A (relative, in the operator's units) give the
// iterations after which the relative residual is at most tol whatever the
// spectrum:
//
//	m(kappa, tol) = ln(2 sqrt(kappa) / tol) / ln(1/rho)  (~ sqrt(kappa)/2 ln(2 sqrt(kappa)/tol)).
//
// autoCap allows twice that for the current estimate plus 10 iterations:
// the factor 2 absorbs the estimate's shortfall while it is still rising,
// the 10 the first iterations, when T_m is too small to say anything. In
// exact arithmetic CG cannot fall behind its bound, so a run that reaches
// the cap unconverged has stalled at the residual that rounding allows (or
// kappa was grossly underestimated); either way more iterations would be
// wasted, and the result says Converged = false.

// lanczos holds one CG column's coefficients since its last (re)start and
// the largest condition estimate seen.
type lanczos struct {
	alpha, beta []float64
	kappa       float64
	last        int // len(alpha) at the last computation of the extremes
}

// restart forgets the coefficients (the recurrence starts again) and keeps
// kappa: the old Krylov space's Ritz values still bound the spectrum.
func (l *lanczos) restart() { l.alpha, l.beta, l.last = l.alpha[:0], l.beta[:0], 0 }

// estimate updates and returns kappa from the current coefficients. It
// recomputes the extremes (about 30 Sturm counts of O(m) each) only when m
// has grown by a sixteenth since the last time (every step up to m = 16),
// which keeps the total cost over m steps at O(m) Sturm counts.
func (l *lanczos) estimate() float64 {
	m := len(l.alpha)
	if m < 2 || m < l.last+max(1, l.last/16) {
		return math.Max(l.kappa, 1)
	}
	l.last = m
	d := make([]float64, m)
	e2 := make([]float64, m-1)
	for i := 0; i < m; i++ {
		d[i] = 1 / l.alpha[i]
		if i > 0 {
			d[i] += l.beta[i-1] / l.alpha[i-1]
		}
		if i < m-1 {
			e2[i] = l.beta[i] / (l.alpha[i] * l.alpha[i])
		}
	}
	lo, hi := tridiagExtremes(d, e2)
	if lo > 0 && hi > 0 {
		l.kappa = math.Max(l.kappa, hi/lo)
	}
	return math.Max(l.kappa, 1)
}

// tridiagExtremes returns the smallest and largest eigenvalue of the
// symmetric positive definite tridiagonal matrix with diagonal d and squared
// off-diagonal e2, each to a relative accuracy of 1e-3, by bisection on
// Sturm counts (O(len(d)) per count). The smallest is searched down to
// 1e-20 times the smallest diagonal entry (a condition number of 1e20 is
// far beyond any that CG in float64 could resolve).
func tridiagExtremes(d, e2 []float64) (lo, hi float64) {
	dmin, dmax, gmax := math.Inf(1), 0.0, 0.0
	for i, v := range d {
		dmin, dmax = math.Min(dmin, v), math.Max(dmax, v)
		g := v
		if i > 0 {
			g += math.Sqrt(e2[i-1])
		}
		if i < len(e2) {
			g += math.Sqrt(e2[i])
		}
		gmax = math.Max(gmax, g)
	}
	m := len(d)
	// lambda_max lies in [max d_i, Gershgorin bound], lambda_min in
	// (0, min d_i] (Rayleigh quotients of unit vectors).
	a, b := dmax, gmax
	for b > a*(1+1e-3) {
		c := math.Sqrt(a * b)
		if sturmBelow(d, e2, c) < m {
			a = c
		} else {
			b = c
		}
	}
	hi = b
	a, b = dmin*1e-20, dmin
	if sturmBelow(d, e2, a) > 0 {
		return a, hi
	}
	for b > a*(1+1e-3) {
		c := math.Sqrt(a * b)
		if sturmBelow(d, e2, c) > 0 {
			b = c
		} else {
			a = c
		}
	}
	return a, hi
}

// sturmBelow counts the eigenvalues below x of the symmetric tridiagonal
// (d, e2): the negative pivots of the LDL^T factorisation of T - x I.
func sturmBelow(d, e2 []float64, x float64) int {
	c := 0
	q := 0.0
	for i, v := range d {
		if i > 0 {
			if q == 0 {
				q = 1e-300 // a zero pivot: perturb it, as the usual Sturm count does
			}
			q = v - x - e2[i-1]/q
		} else {
			q = v - x
		}
		if q < 0 {
			c++
		}
	}
	return c
}

// cgPredict is m(kappa, tol) of the note above.
func cgPredict(kappa, tol float64) float64 {
	if kappa <= 1 {
		return 1
	}
	s := math.Sqrt(kappa)
	return math.Log(2*s/tol) / math.Log1p(2/(s-1))
}

// autoCap is the automatic iteration cap for the condition estimate kappa.
func autoCap(kappa, tol float64) int {
	c := 2*cgPredict(kappa, tol) + 10
	if c >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(math.Ceil(c))
}

package secular

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// eps is the unit roundoff of float64 (LAPACK's dlamch('Epsilon')).
const eps = 0x1p-53

// maxIter bounds the root iteration. Rational interpolation converges in a
// handful of steps (typically 2-5); the cap is only reached if the bracket
// safeguard has to halve the interval every step, and 200 halvings exhaust
// the float64 exponent range of any bracket.
const maxIter = 200

// Laed4 returns the i-th (0-based, ascending) root lambda of the secular
// equation
//
//	f(x) = 1/rho + sum_j z_j^2/(d_j - x) = 0
//
// for strictly increasing d, nonzero z and rho > 0, i.e. the i-th eigenvalue
// of diag(d) + rho z z^T, and writes delta_j = d_j - lambda to delta[:len(d)].
// The roots interlace the poles: d_i < lambda_i < d_{i+1} for i < n-1 and
// d_{n-1} < lambda_{n-1} <= d_{n-1} + rho |z|^2. z need not have unit norm.
//
// The root is computed as an offset tau from the nearer of its two poles (the
// pole d_K, K = i or i+1, for which f at the interval's midpoint has the
// appropriate sign; K = n-1 for the last root), so delta_j = (d_j - d_K) - tau
// carries full relative accuracy even when lambda is extremely close to d_K.
// Each step replaces f near the root by a rational model with the two nearest
// poles fitted to f and f' (fixed-weight scheme: the origin pole's weight
// z_K^2 is exact; middle-way scheme: each side's partial sum is modelled by
// one pole) and takes the model's root; the scheme is switched when |f| fails
// to drop by a factor 10. A bracket around the root shrinks at each step and a
// step that leaves it is replaced by halving towards the far end of the
// bracket. Iteration stops when |f| is below its rounding-error bound, or the
// bracket or the step is below the resolution of tau. n = 1 and n = 2 are
// solved in closed form.
//
// Laed4 has the RootFinder signature; errors wrap zonal.ErrShape for bad
// indices or lengths, rho <= 0 or non-increasing d, zonal.ErrNonFinite for
// non-finite input and zonal.ErrNoConvergence if the iteration limit is hit.
func Laed4(i int, d, z []float64, rho float64, delta []float64) (float64, error) {
	n := len(d)
	if n == 0 || i < 0 || i >= n || len(z) < n || len(delta) < n {
		return 0, fmt.Errorf("secular: Laed4: root %d of %d poles (len z %d, len delta %d): %w", i, n, len(z), len(delta), zonal.ErrShape)
	}
	if math.IsNaN(rho) || math.IsInf(rho, 0) {
		return 0, fmt.Errorf("secular: Laed4: rho = %g: %w", rho, zonal.ErrNonFinite)
	}
	if rho <= 0 {
		return 0, fmt.Errorf("secular: Laed4: rho = %g must be positive: %w", rho, zonal.ErrShape)
	}
	for j := 0; j < n; j++ {
		if math.IsNaN(d[j]) || math.IsInf(d[j], 0) || math.IsNaN(z[j]) || math.IsInf(z[j], 0) {
			return 0, fmt.Errorf("secular: Laed4: d or z holds a non-finite value at %d: %w", j, zonal.ErrNonFinite)
		}
		if j > 0 && !(d[j] > d[j-1]) {
			return 0, fmt.Errorf("secular: Laed4: d not strictly increasing at %d: %w", j, zonal.ErrShape)
		}
	}
	return laed4(i, d[:n], z[:n], rho, delta[:n])
}

// laed4 is Laed4 without the argument checks (Update guarantees them).
func laed4(i int, d, z []float64, rho float64, delta []float64) (float64, error) {
	n := len(d)
	zsq := 0.0
	for _, x := range z {
		zsq += x * x
	}
	switch n {
	case 1:
		t := rho * zsq
		delta[0] = -t
		return d[0] + t, nil
	case 2:
		return laed2x2(i, d, z, rho, delta), nil
	}
	return laedN(i, d, z, rho, zsq, delta)
}

// laed2x2 solves the 2 x 2 case in closed form, relative to the nearer pole.
func laed2x2(i int, d, z []float64, rho float64, delta []float64) float64 {
	del := d[1] - d[0]
	z0, z1 := rho*z[0]*z[0], rho*z[1]*z[1] // rho-weighted squares
	var k int
	var tau float64
	if i == 0 {
		// Sign of f at the midpoint decides the origin: f(mid) > 0 means
		// the root lies in the left half.
		if 1+2*(z1-z0)/del > 0 {
			// x = d0 + tau, tau in (0, del/2): tau^2 - B tau + z0 del = 0.
			k = 0
			b := del + z0 + z1
			c := z0 * del
			sc := 2 * math.Sqrt(c)
			tau = 2 * c / (b + math.Sqrt((b-sc)*(b+sc)))
		} else {
			// x = d1 - s, s in (0, del/2]: s^2 - (del - z0 - z1) s - z1 del = 0.
			k = 1
			b := del - z0 - z1
			c := z1 * del
			h := math.Hypot(b, 2*math.Sqrt(c))
			var s float64
			if b > 0 {
				s = (b + h) / 2
			} else {
				s = 2 * c / (h - b)
			}
			tau = -s
		}
	} else {
		// x = d1 + tau, tau > 0: tau^2 + (del - z0 - z1) tau - z1 del = 0.
		k = 1
		b := z0 + z1 - del
		c := z1 * del
		h := math.Hypot(b, 2*math.Sqrt(c))
		if b > 0 {
			tau = (b + h) / 2
		} else {
			tau = 2 * c / (h - b)
		}
	}
	for j := 0; j < 2; j++ {
		delta[j] = (d[j] - d[k]) - tau
	}
	return d[k] + tau
}

// secEval evaluates w = f(d_K + tau) with the pole offsets recomputed as
// (d_j - d_K) - tau. The sum is split at split: psi over j < split (poles
// left of the root), phi over j >= split. It returns w, the derivatives of
// the two parts and a bound errb with |fl(w) - w| <~ eps*errb (running
// partial sums for the summation error, the sizes of psi and phi for the
// rounding of each term, |tau| f' for the rounding of the offsets).
func secEval(d, z []float64, dK, tau, rhoinv float64, split int) (w, dpsi, dphi, errb float64) {
	n := len(d)
	var psi, phi float64
	for j := 0; j < split; j++ {
		t := z[j] / ((d[j] - dK) - tau)
		psi += z[j] * t
		dpsi += t * t
		errb += math.Abs(psi)
	}
	for j := n - 1; j >= split; j-- {
		t := z[j] / ((d[j] - dK) - tau)
		phi += z[j] * t
		dphi += t * t
		errb += math.Abs(phi)
	}
	w = rhoinv + psi + phi
	errb += 8*(math.Abs(psi)+math.Abs(phi)) + 2*rhoinv + math.Abs(tau)*(dpsi+dphi)
	return w, dpsi, dphi, errb
}

// modelRoot returns the root eta of c eta^2 - a eta + b = 0 lying strictly
// between the poles lo and hi of the rational model (hi = +Inf for the last
// root) and moving against the sign of w (f increases with x), and whether
// one was found. When the two model poles nearly coincide the quadratic has
// a spurious root next to them; the direction test rejects it.
func modelRoot(c, a, b, lo, hi, w float64) (float64, bool) {
	s := math.Max(math.Abs(c), math.Max(math.Abs(a), math.Abs(b)))
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, false
	}
	c, a, b = c/s, a/s, b/s
	in := func(x float64) bool { return x > lo && x < hi && x*w < 0 }
	if c == 0 {
		if a == 0 {
			return 0, false
		}
		r := b / a
		return r, in(r)
	}
	disc := a*a - 4*b*c
	if disc < 0 {
		disc = 0 // rounding: the model always has a real root between its poles
	}
	q := (a + math.Copysign(math.Sqrt(disc), a)) / 2
	if q == 0 {
		return 0, false
	}
	r1, r2 := q/c, b/q
	if in(r1) && in(r2) {
		// Only possible through rounding; take the smaller step.
		if math.Abs(r1) < math.Abs(r2) {
			return r1, true
		}
		return r2, true
	}
	if in(r1) {
		return r1, true
	}
	if in(r2) {
		return r2, true
	}
	return 0, false
}

// laedN is the iteration for n >= 3.
func laedN(i int, d, z []float64, rho, zsq float64, delta []float64) (float64, error) {
	n := len(d)
	rhoinv := 1 / rho
	last := i == n-1
	var l, r, split, k int
	var lb, ub, tau float64
	if last {
		// lambda - d_{n-1} lies in (0, rho |z|^2]; the upper end is
		// widened by a few ulps so that it is an open bound too.
		l, r, split, k = n-2, n-1, n-1, n-1
		hi := rho * zsq
		mid := hi / 2
		w, _, _, _ := secEval(d, z, d[k], mid, rhoinv, split)
		if w > 0 {
			lb, ub = 0, mid
		} else {
			lb, ub = mid, hi*(1+4*eps)
		}
		tau = mid
	} else {
		l, r, split = i, i+1, i+1
		mid := (d[r] - d[l]) / 2
		w, _, _, _ := secEval(d, z, d[l], mid, rhoinv, split)
		if w > 0 {
			// Root in the left half: origin d_i, tau in (0, mid).
			k, lb, ub, tau = l, 0, mid, mid
		} else {
			// Root in the right half: origin d_{i+1}, tau in [-mid, 0).
			k, lb, ub, tau = r, -mid, 0, -mid
		}
	}
	dK := d[k]
	fixed := !last // interior roots start with the fixed-weight scheme
	prevW := 0.0
	for iter := 0; iter < maxIter; iter++ {
		w, dpsi, dphi, errb := secEval(d, z, dK, tau, rhoinv, split)
		if math.Abs(w) <= eps*errb {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		if w < 0 {
			lb = tau // f increases with x: the root is to the right
		} else {
			ub = tau
		}
		if ub-lb <= 2*eps*math.Max(math.Abs(lb), math.Abs(ub)) {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		if iter > 0 && w*prevW > 0 && math.Abs(w) > math.Abs(prevW)/10 {
			fixed = !fixed
		}
		prevW = w
		dl := (d[l] - dK) - tau
		dr := (d[r] - dK) - tau
		fp := dpsi + dphi
		var c float64
		switch {
		case fixed && k == l:
			t := z[l] / dl
			c = w - dr*fp + t*t*(dr-dl)
		case fixed:
			t := z[r] / dr
			c = w - dl*fp + t*t*(dl-dr)
		default:
			c = w - dl*dpsi - dr*dphi
		}
		a := (dl+dr)*w - dl*dr*fp
		b := dl * dr * w
		hi := dr
		if last {
			// The last root lies beyond both model poles.
			dl, hi = dr, math.Inf(1)
		}
		eta, ok := modelRoot(c, a, b, dl, hi, w)
		if !ok || w*eta >= 0 {
			eta = -w / fp // Newton step, which moves against the sign of w
		}
		if t := tau + eta; !(t > lb && t < ub) {
			if w < 0 {
				eta = (ub - tau) / 2
			} else {
				eta = (lb - tau) / 2
			}
		}
		if tau+eta == tau {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		tau += eta
	}
	finish(d, dK, tau, delta)
	return dK + tau, fmt.Errorf("secular: Laed4: root %d of %d after %d iterations: %w", i, n, maxIter, zonal.ErrNoConvergence)
}

func finish(d []float64, dK, tau float64, delta []float64) float64 {
	for j := range d {
		delta[j] = (d[j] - dK) - tau
	}
	return dK + tau
}

// iterHook, when set (by tests only, never concurrently with other calls),
// receives the number of model steps each root of laedN took.
var iterHook func(int)

func noteIters(k int) {
	if iterHook != nil {
		iterHook(k)
	}
}

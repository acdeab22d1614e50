package secular

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// ArrowRoot returns the i-th (0-based, ascending) eigenvalue lambda of the
// symmetric arrowhead matrix
//
//	A = [ diag(d)  z     ]
//	    [ z^T      alpha ]
//
// (d strictly increasing, length K >= 1, every z_j nonzero), i = 0..K, and
// writes delta_j = d_j - lambda to delta[:K]. The eigenvalues are the K+1
// roots of the arrowhead secular equation
//
//	F(x) = x - alpha + sum_j z_j^2/(d_j - x) = 0
//
// (the Schur complement of diag(d) - x in A - x I, up to sign); F increases
// from -Inf to +Inf on each of (-Inf, d_0), (d_0, d_1), .., (d_{K-1}, +Inf),
// so the roots interlace d:
//
//	lambda_0 < d_0 < lambda_1 < .. < d_{K-1} < lambda_K,
//
// with min(d_0, alpha) - |z| <= lambda_0 and lambda_K <= max(d_{K-1}, alpha) + |z|
// (at x = max(d_{K-1}, alpha) + |z|, x - alpha >= |z| >= sum z_j^2/(x - d_j)).
//
// As in Laed4, an interior root is computed as an offset tau from the nearer
// of its two poles, chosen by the sign of F at the interval's midpoint, so
// delta_j = (d_j - d_origin) - tau is accurate even when lambda nearly equals
// a pole; each step takes the root of a rational model of F fitted to F and
// F' at the current point with the two neighbouring poles (fixed-weight and
// middle-way schemes, the linear part x - alpha lumped into the far pole's
// term), safeguarded by a shrinking bracket and bisection. The last root is
// an offset from d_{K-1}; its model keeps the pole d_{K-1} with its exact
// weight z_{K-1}^2 and replaces the rest of F by its tangent line (slope
// 1 + the derivative of the other terms), whose root is the positive root of
// a quadratic. The first root is the last root of -A (poles -d reversed).
//
// Errors wrap zonal.ErrShape (bad lengths or index, d not strictly
// increasing, a zero z_j), zonal.ErrNonFinite and zonal.ErrNoConvergence
// (iteration limit).
func ArrowRoot(i int, d, z []float64, alpha float64, delta []float64) (float64, error) {
	k := len(d)
	if k == 0 || i < 0 || i > k || len(z) < k || len(delta) < k {
		return 0, fmt.Errorf("secular: ArrowRoot: root %d of %d poles (len z %d, len delta %d): %w", i, k, len(z), len(delta), zonal.ErrShape)
	}
	if !finite(alpha) || !allFinite(d) || !allFinite(z[:k]) {
		return 0, fmt.Errorf("secular: ArrowRoot: non-finite input: %w", zonal.ErrNonFinite)
	}
	for j := 0; j < k; j++ {
		if z[j] == 0 || (j > 0 && !(d[j] > d[j-1])) {
			return 0, fmt.Errorf("secular: ArrowRoot: z_%d = 0 or d not strictly increasing at %d: %w", j, j, zonal.ErrShape)
		}
	}
	p := newArrowProblem(d, z[:k], alpha)
	return p.root(i, delta[:k])
}

// arrowProblem holds an arrowhead problem and its negation (for the first
// root), both with strictly increasing poles.
type arrowProblem struct {
	d, z      []float64
	alpha, zn float64
	nd, nz    []float64 // -d reversed, z reversed
}

func newArrowProblem(d, z []float64, alpha float64) *arrowProblem {
	k := len(d)
	p := &arrowProblem{d: d, z: z, alpha: alpha, zn: nrm2(z), nd: make([]float64, k), nz: make([]float64, k)}
	for j := 0; j < k; j++ {
		p.nd[j] = -d[k-1-j]
		p.nz[j] = z[k-1-j]
	}
	return p
}

// root is ArrowRoot without the checks; delta has length K.
func (p *arrowProblem) root(i int, delta []float64) (float64, error) {
	k := len(p.d)
	if i == 0 {
		// lambda_0(A) = -lambda_K(-A); d_j - lambda_0 = -(nd_{K-1-j} - mu).
		tmp := make([]float64, k)
		mu, err := arrowLast(p.nd, p.nz, -p.alpha, p.zn, tmp)
		for j := 0; j < k; j++ {
			delta[j] = -tmp[k-1-j]
		}
		return -mu, err
	}
	if i == k {
		return arrowLast(p.d, p.z, p.alpha, p.zn, delta)
	}
	return arrowInner(i, p.d, p.z, p.alpha, delta)
}

// arrowEval evaluates w = F(dK + tau) with the offsets recomputed as
// (d_j - dK) - tau, split into the terms of the poles left of split (psi)
// and the others (phi); lin is dK - alpha. It returns w, the derivatives of
// the two sums (the derivative of F is 1 + dpsi + dphi) and a bound errb
// with |fl(w) - w| <~ eps*errb.
func arrowEval(d, z []float64, dK, tau, lin float64, split int) (w, dpsi, dphi, errb float64) {
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
	w = lin + tau + psi + phi
	errb += 8*(math.Abs(psi)+math.Abs(phi)) + 2*(math.Abs(lin)+math.Abs(tau)) + math.Abs(tau)*(dpsi+dphi)
	return w, dpsi, dphi, errb
}

// arrowLast finds the largest root, in (d_{K-1}, max(d_{K-1}, alpha) + |z|],
// as tau > 0 from d_{K-1}.
func arrowLast(d, z []float64, alpha, zn float64, delta []float64) (float64, error) {
	k := len(d)
	r := k - 1
	dK := d[r]
	lin := dK - alpha
	hi := (math.Max(-lin, 0) + zn) * (1 + 8*eps)
	lb, ub := 0.0, hi
	tau := hi / 2
	if w, _, _, _ := arrowEval(d, z, dK, tau, lin, r); w > 0 {
		ub = tau
		tau /= 2
	} else {
		lb = tau
	}
	zr2 := z[r] * z[r]
	for iter := 0; iter < maxIter; iter++ {
		w, dpsi, _, errb := arrowEval(d, z, dK, tau, lin, r)
		if math.Abs(w) <= eps*errb {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		if w < 0 {
			lb = tau
		} else {
			ub = tau
		}
		if ub-lb <= 2*eps*ub {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		// Model: (c + b eta) + zr2/(dr - eta) with dr = -tau, matching F
		// and F' at eta = 0 (b = 1 + dpsi, c = w + zr2/tau... minus the pole
		// term at 0). Its root beyond the pole is tau_new = y > 0 with
		// b y^2 + (c - b tau) y - zr2 = 0.
		b := 1 + dpsi
		c := w - zr2/(-tau)
		q := c - b*tau
		disc := math.Sqrt(q*q + 4*b*zr2)
		var y float64
		if q >= 0 {
			y = 2 * zr2 / (q + disc)
		} else {
			y = (disc - q) / (2 * b)
		}
		if !(y > lb && y < ub) || !finite(y) {
			y = (lb + ub) / 2
		}
		if y == tau {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		tau = y
	}
	finish(d, dK, tau, delta)
	return dK + tau, fmt.Errorf("secular: arrowhead: last root of %d after %d iterations: %w", k, maxIter, zonal.ErrNoConvergence)
}

// arrowInner finds the root in (d_{i-1}, d_i), 0 < i < K.
func arrowInner(i int, d, z []float64, alpha float64, delta []float64) (float64, error) {
	l, r, split := i-1, i, i
	mid := (d[r] - d[l]) / 2
	var k int
	var lb, ub, tau float64
	if w, _, _, _ := arrowEval(d, z, d[l], mid, d[l]-alpha, split); w > 0 {
		k, lb, ub, tau = l, 0, mid, mid/2
	} else {
		k, lb, ub, tau = r, -mid, 0, -mid/2
	}
	dK := d[k]
	lin := dK - alpha
	fixed := true
	prevW := 0.0
	for iter := 0; iter < maxIter; iter++ {
		w, dpsi, dphi, errb := arrowEval(d, z, dK, tau, lin, split)
		if math.Abs(w) <= eps*errb {
			noteIters(iter)
			return finish(d, dK, tau, delta), nil
		}
		if w < 0 {
			lb = tau
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
		// The linear part's slope 1 goes with the far pole's side.
		if k == l {
			dphi++
		} else {
			dpsi++
		}
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
		eta, ok := modelRoot(c, a, b, dl, dr, w)
		if !ok || w*eta >= 0 {
			eta = -w / fp
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
	return dK + tau, fmt.Errorf("secular: arrowhead: root %d of %d after %d iterations: %w", i, len(d)+1, maxIter, zonal.ErrNoConvergence)
}

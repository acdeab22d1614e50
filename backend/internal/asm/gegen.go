package asm

import "math"

// GegenbauerRecurrence evaluates the Gegenbauer polynomials P_d^0..P_d^q,
// normalised so that P_d^l(1) = 1, at every point of t:
//
//	out[l*len(t)+i] = P_d^l(t[i]),  l = 0..q,
//
// by the three-term recurrence P^0 = 1, P^1 = t and, for l >= 2,
//
//	P^l = [(2l+d-4) t P^{l-1} - (l-1) P^{l-2}] / (l+d-3),
//
// vectorised over the points. out must hold (q+1)*len(t) values; d >= 2
// (d = 2 gives the Chebyshev polynomials T_l, d = 3 the Legendre polynomials).
// The arguments are validated by the caller.
func GegenbauerRecurrence(out, t []float64, q, d int) {
	n := len(t)
	p0 := out[:n]
	for i := range p0 {
		p0[i] = 1
	}
	if q == 0 {
		return
	}
	copy(out[n:2*n], t)
	k := cur().gegen
	for l := 2; l <= q; l++ {
		a, b := gegenCoef(l, d)
		k(out[l*n:(l+1)*n], t, out[(l-1)*n:l*n], out[(l-2)*n:(l-1)*n], a, b)
	}
}

// gegenCoef returns a = (2l+d-4)/(l+d-3) and b = (l-1)/(l+d-3), so that
// P^l = a t P^{l-1} - b P^{l-2}.
func gegenCoef(l, d int) (a, b float64) {
	den := float64(l + d - 3)
	return float64(2*l+d-4) / den, float64(l-1) / den
}

// gegenGeneric computes dst[i] = fma(a*t[i], p1[i], -(b*p2[i])), the same
// roundings as the vector kernel, so both paths agree bit for bit.
func gegenGeneric(dst, t, p1, p2 []float64, a, b float64) {
	t = t[:len(dst)]
	p1 = p1[:len(dst)]
	p2 = p2[:len(dst)]
	for i := range dst {
		dst[i] = math.FMA(a*t[i], p1[i], -(b * p2[i]))
	}
}

package asm

import "math"

// Exp sets dst[i] = e^src[i] for i < len(src) (dst must be at least as long;
// dst and src may be the same slice; the lengths are validated by the caller).
//
// Every path (vector or pure Go) runs the same algorithm: n = round(x/ln2),
// r = x - n*ln2 with a two-part ln2 (Cody-Waite) by FMAs, e^r by a degree-11
// polynomial (approximation error < 8e-18, see expPoly), and the scaling by 2^n as two
// multiplications by exact powers of two built from exponent bits, so that
// subnormal results are rounded once and overflow happens only past
// ln(MaxFloat64). The error is below 2 ulp of the exact e^x over the whole
// float64 range (verified against a double-double reference), with exact
// special cases: Exp(NaN) = NaN, Exp(+Inf) = +Inf, Exp(-Inf) = 0, +Inf for
// x > 709.782712893384 and 0 below the smallest subnormal.
//
// (The standard library's math.Exp on amd64 is not a safe reference near the
// top of the range: it returns +Inf for x between about 709.44 and 709.78.)
func Exp(dst, src []float64) {
	cur().exp(dst[:len(src)], src)
}

// Constants of the exp algorithm, shared with the generator in _gen/vexp.
const (
	expHi      = 710.0
	expLo      = -746.0
	expShifter = 6755399441055744.0 // 1.5*2^52: x + shifter rounds x to an integer
	expLn2Hi   = 6.93147180369123816490e-01
	expLn2Lo   = 1.90821492927058770002e-10
	expBias    = expShifter + 1023
)

// expPoly holds the coefficients of the degree-11 polynomial for e^r on
// |r| <= 0.35: the degree-13 Taylor polynomial (truncation error < 4e-18)
// economized to degree 11 by subtracting its T13 and T12 Chebyshev
// components (added error < 3.5e-18), computed in exact rational arithmetic
// and rounded to float64. The same values are in _gen/vexp.
var expPoly = [12]float64{
	1.0,
	1.0,
	0.500000000000002,
	0.16666666666666707,
	0.041666666666473846,
	0.008333333333307623,
	0.0013888888956048683,
	0.00019841269913226762,
	2.4801481568968142e-05,
	2.7557221323412594e-06,
	2.7634041305916304e-07,
	2.5116043453717065e-08,
}

// expScalar is the scalar form of the vector kernel, operation for
// operation (math.FMA is a single rounding like the vector FMAs), so both
// give identical bits.
func expScalar(x float64) float64 {
	if x > expHi {
		x = expHi
	}
	if x < expLo {
		x = expLo
	}
	t := math.FMA(x, math.Log2E, expShifter)
	n := t - expShifter
	r := math.FMA(-n, expLn2Hi, x)
	r = math.FMA(-n, expLn2Lo, r)
	p := expPoly[11]
	for k := 10; k >= 0; k-- {
		p = math.FMA(p, r, expPoly[k])
	}
	n1 := math.Floor(n * 0.5)
	n2 := n - n1
	s1 := math.Float64frombits(math.Float64bits(n1+expBias) << 52)
	s2 := math.Float64frombits(math.Float64bits(n2+expBias) << 52)
	return p * s1 * s2
}

func expGeneric(dst, src []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = expScalar(v)
	}
}

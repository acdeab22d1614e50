package asm

import "math"

// Exp sets dst[i] = e^src[i] for i < len(src) (dst must be at least as long;
// dst and src may be the same slice).
//
// Every path (vector or pure Go) runs the same algorithm: n = round(x/ln2),
// r = x - n*ln2 with a two-part ln2 (Cody-Waite) by FMAs, e^r by its degree-13
// Taylor polynomial (truncation error < 4e-18), and the scaling by 2^n as two
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
	if len(dst) < len(src) {
		panic("asm: Exp: len(dst) < len(src)")
	}
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

// expTaylor[k] = 1/k!.
var expTaylor = func() (c [14]float64) {
	f := 1.0
	for k := range c {
		if k > 0 {
			f *= float64(k)
		}
		c[k] = 1 / f
	}
	return c
}()

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
	p := expTaylor[13]
	for k := 12; k >= 0; k-- {
		p = math.FMA(p, r, expTaylor[k])
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

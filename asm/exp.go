package asm

import "math"

// Exp sets dst[i] = e^src[i] for i < len(src) (dst must be at least as long).
// The vector kernels are accurate to 2 ulp over the whole float64 range with
// exact special cases: Exp(NaN) = NaN, Exp(+Inf) = +Inf, Exp(-Inf) = 0,
// overflow (x > 709.78...) to +Inf, underflow to 0 through the subnormals.
func Exp(dst, src []float64) {
	if len(dst) < len(src) {
		panic("asm: Exp: len(dst) < len(src)")
	}
	cur().exp(dst[:len(src)], src)
}

func expGeneric(dst, src []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = math.Exp(v)
	}
}

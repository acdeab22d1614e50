// Command vexp generates the AVX2+FMA vector exponential of package asm and
// the fused Gaussian-kernel epilogue built on it.
//
// exp(x), four lanes at a time:
//
//  1. clamp x to [-746, 710] (NaN passes through: the clamps return their
//     register operand when it is NaN); beyond these bounds the result is
//     already 0 or +Inf, and the clamp keeps n below in range;
//  2. n = round(x/ln2) by the shifter trick t = fma(x, log2(e), 1.5*2^52),
//     n = t - 1.5*2^52 (round to nearest even);
//  3. r = x - n*ln2 with ln2 in two parts (Cody-Waite): ln2hi has 32
//     significant bits so n*ln2hi is exact, and both steps are FMAs;
//     |r| <= ln2/2 (plus rounding);
//  4. e^r by a polynomial of degree 11 in Horner form with FMAs: the
//     degree-13 Taylor polynomial (truncation error < 4e-18) economized by
//     Chebyshev to degree 11 (added error < 3.5e-18), far below half an ulp;
//  5. 2^n as the product of two powers of two 2^n1 * 2^n2 with
//     n1 = floor(n/2), n2 = n - n1, each built from exponent bits
//     ((n_i + 1023) << 52, again by adding a shifter), so that results in the
//     subnormal range (n down to -1076) and n = 1024 (x up to 710) are formed
//     by ordinary, correctly rounded multiplications: overflow gives +Inf and
//     underflow goes gradually through the subnormals to 0.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"

	"github.com/zonal-ml/zonal/backend/internal/asm/_gen/internal/vexpgen"
)

const shifter = 6755399441055744.0 // 1.5 * 2^52

// Constant table, each value replicated in four lanes (32 bytes).
var consts = []struct {
	name string
	v    float64
}{
	{"hi", 710},
	{"lo", -746},
	{"log2e", math.Log2E},
	{"shift", shifter},
	{"ln2hi", 6.93147180369123816490e-01},
	{"ln2lo", 1.90821492927058770002e-10},
	{"half", 0.5},
	{"bias", shifter + 1023},
	{"zero", 0},
}

// polyCoef: e^r on |r| <= 0.35, the degree-13 Taylor polynomial economized to
// degree 11 (T13 and T12 Chebyshev components removed, exact rational
// arithmetic); the same values as expPoly in package asm.
var polyCoef = []float64{
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

func main() {
	ConstraintExpr("!noasm")
	var names []string
	var bits []uint64
	for _, c := range consts {
		names = append(names, c.name)
		bits = append(bits, math.Float64bits(c.v))
	}
	for _, v := range polyCoef {
		bits = append(bits, math.Float64bits(v))
	}
	p := vexpgen.Float64()
	p.Table("expconst", names, bits)
	p.ExpKernel("expAVX2", false)
	p.GaussKernel("gaussAVX2", false)
	p.ExpKernel("expAVX512", true)
	p.GaussKernel("gaussAVX512", true)
	Generate()
}

// Command vexp32 generates the single-precision vector exponential of
// package asm (AVX2+FMA, eight lanes, and AVX-512, sixteen lanes) and the
// float32 Gaussian-kernel epilogue built on it.
//
// exp(x), per lane, all in float32:
//
//  1. clamp x to [-104, 89] (NaN passes through: the clamps return their
//     register operand when it is NaN); e^89 overflows and e^-104 is below
//     half the smallest subnormal, so the results there are already +Inf and
//     0, and the clamp keeps n below in [-150, 128];
//  2. n = round(x/ln2) by the shifter trick t = fma(x, log2(e), 1.5*2^23),
//     n = t - 1.5*2^23 (round to nearest even);
//  3. r = x - n*ln2 with ln2 in two parts (Cody-Waite): ln2hi has 16
//     significant bits, so x - n*ln2hi is exact; both steps are FMAs and
//     |r| <= ln2/2 (plus rounding);
//  4. e^r by a polynomial of degree 7 in Horner form with FMAs: the
//     degree-10 Taylor polynomial economized by Chebyshev to degree 7 (error
//     below 2.2e-9 relative with the float32 coefficients);
//  5. 2^n as the product of two powers of two 2^n1 * 2^n2 with
//     n1 = floor(n/2), n2 = n - n1, each built from exponent bits
//     ((n_i + 127) << 23, by adding a shifter), so that the first product is
//     exact and the second rounds once: subnormal results are correctly
//     rounded from the approximation and overflow gives +Inf. The AVX-512
//     form uses VSCALEFPS, which rounds p*2^n once in the same way, so the
//     two forms are bit-identical.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"

	"github.com/zonal-ml/zonal/backend/internal/asm/_gen/internal/vexpgen"
)

const shifter = 12582912.0 // 1.5 * 2^23

// Constant table, each value replicated in eight lanes (32 bytes); the
// AVX-512 kernels broadcast the first lane.
var consts = []struct {
	name string
	v    float32
}{
	{"hi", 89},
	{"lo", -104},
	{"log2e", math.Log2E},
	{"shift", shifter},
	{"ln2hi", 0.693145751953125},
	{"ln2lo", math.Ln2 - 0.693145751953125},
	{"half", 0.5},
	{"bias", shifter + 127},
	{"zero", 0},
}

// polyCoef: e^r on |r| <= 0.35, the degree-10 Taylor polynomial economized
// to degree 7, rounded to float32; the same values as exp32Poly in package
// asm.
var polyCoef = []float32{
	1,
	1,
	0.5,
	0.16666667,
	0.0416662,
	0.008333264,
	0.0013949769,
	0.00019917225,
}

func main() {
	ConstraintExpr("!noasm")
	var names []string
	var bits []uint64
	for _, c := range consts {
		names = append(names, c.name)
		bits = append(bits, uint64(math.Float32bits(c.v)))
	}
	for _, v := range polyCoef {
		bits = append(bits, uint64(math.Float32bits(v)))
	}
	p := vexpgen.Float32()
	p.Table("exp32const", names, bits)
	p.ExpKernel("exp32AVX2", false)
	p.GaussKernel("gauss32AVX2", false)
	p.ExpKernel("exp32AVX512", true)
	p.GaussKernel("gauss32AVX512", true)
	Generate()
}

package asm

import "math"

// Exp32 sets dst[i] = e^src[i] for i < len(src) in single precision (dst must
// be at least as long; dst and src may be the same slice; the lengths are
// validated by the caller).
//
// Every path (AVX-512, AVX2+FMA or pure Go) runs the same float32 algorithm
// and gives the same bits: x is clamped to [-104, 89], n = round(x/ln2) by a
// shifter, r = x - n*ln2 with a two-part ln2 (Cody-Waite; the first product
// and difference are exact), e^r by a degree-7 polynomial in Horner form with
// FMAs (approximation error below 2.2e-9 relative, see exp32Poly), and the
// scaling by 2^n as two multiplications by exact powers of two, so that
// subnormal results are rounded once. The error is below 1 ulp of the exact
// e^x over the whole float32 range: at most 0.894 ulp, measured against
// float64 math.Exp on all 2^32 arguments (TestExp32Exhaustive; the estimate
// from the steps above is 0.5 for the last rounding, under 0.2 for the
// rounding of r and under 0.2 for the rest of the polynomial). The special
// cases are exact:
//
//   - Exp32(NaN) = NaN, Exp32(+Inf) = +Inf, Exp32(-Inf) = 0;
//   - +Inf for x >= 88.72283935546875 (the float32 just above
//     ln(MaxFloat32) = 88.7228391), finite below;
//   - results below 2^-126 are subnormal, correctly rounded from the
//     approximation, and 0 for x <= -103.97208404541016 (e^x < 2^-150).
func Exp32(dst, src []float32) {
	k32().exp(dst[:len(src)], src)
}

// Constants of the float32 exp algorithm, shared with the generator in
// _gen/vexp32.
const (
	exp32Hi      float32 = 89       // e^89 overflows; keeps n <= 128
	exp32Lo      float32 = -104     // e^-104 < 2^-150 rounds to 0; keeps n >= -150
	exp32Shifter float32 = 12582912 // 1.5*2^23: x + shifter rounds x to an integer
	exp32Log2E   float32 = math.Log2E
	// exp32Ln2Hi has 16 significant bits, so n*exp32Ln2Hi (|n| <= 150) and
	// x - n*exp32Ln2Hi are exact in float32.
	exp32Ln2Hi float32 = 0.693145751953125
	exp32Ln2Lo float32 = math.Ln2 - 0.693145751953125
	exp32Bias  float32 = exp32Shifter + 127
)

// exp32Poly holds the coefficients of the degree-7 polynomial for e^r on
// |r| <= 0.35: the degree-10 Taylor polynomial economized to degree 7 by
// removing its T10, T9 and T8 Chebyshev components (exact rational
// arithmetic), rounded to float32; with the rounded coefficients the
// relative error is below 2.2e-9 (0.04 units of 2^-24) on the interval. The
// same values are in _gen/vexp32.
var exp32Poly = [8]float32{
	1,
	1,
	0.5,
	0.16666667,
	0.0416662,
	0.008333264,
	0.0013949769,
	0.00019917225,
}

// fma32 returns a*b + c rounded once to float32, as the vector FMAs do. The
// product is exact in float64 (24+24 bits); the sum is rounded to float64 by
// round-to-odd (nearest, then the odd neighbour when inexact), which with
// 53 >= 24+2 bits makes the final rounding to float32 correct.
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	q := float64(c)
	s := p + q
	// Exact error of the sum (Knuth's TwoSum).
	bb := s - p
	e := (p - (s - bb)) + (q - bb)
	if e != 0 {
		if bits := math.Float64bits(s); bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// exp32Scalar is the scalar form of the vector kernels, operation for
// operation, so all paths give identical bits.
func exp32Scalar(x float32) float32 {
	if x != x {
		return x
	}
	x = min(x, exp32Hi)
	x = max(x, exp32Lo)
	t := fma32(x, exp32Log2E, exp32Shifter)
	n := t - exp32Shifter
	r := fma32(-n, exp32Ln2Hi, x)
	r = fma32(-n, exp32Ln2Lo, r)
	p := exp32Poly[7]
	for k := 6; k >= 0; k-- {
		p = fma32(p, r, exp32Poly[k])
	}
	n1 := float32(math.Floor(float64(n * 0.5)))
	n2 := n - n1
	s1 := math.Float32frombits(math.Float32bits(n1+exp32Bias) << 23)
	s2 := math.Float32frombits(math.Float32bits(n2+exp32Bias) << 23)
	return p * s1 * s2
}

func exp32Generic(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = exp32Scalar(v)
	}
}

// kernels32 is the single-precision element-wise set of one code path. It is
// kept apart from impl (chosen by the same path name) so that the float32
// kernels do not change the float64 dispatch.
type kernels32 struct {
	exp   func(dst, src []float32)
	gauss func(c []float32, rows, cols, ldc int, xn, yn []float32, gamma float32)
	// The mixed-precision row kernels of rows32.go.
	dotRow   func(x []float32, y []float64) float64
	axpy4Row func(y []float64, k []float32, ldk int, t *[4]float64)
	axpyRow  func(alpha float64, x []float32, y []float64)
}

var generic32 = kernels32{exp: exp32Generic, gauss: gauss32Generic,
	dotRow: dotRow32Generic, axpy4Row: axpy4Rows32Generic, axpyRow: axpyRow32Generic}

// k32 returns the float32 kernels of the active code path.
func k32() *kernels32 {
	if k := cpuKernels32(cur().path); k != nil {
		return k
	}
	return &generic32
}

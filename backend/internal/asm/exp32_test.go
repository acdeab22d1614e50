package asm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
)

// The float32 exponential is measured against float64 math.Exp, whose error
// (below 1 ulp of float64, 2^-29 of a float32 ulp) is negligible here.

// exp32Bound is the stated accuracy of Exp32, in float32 ulps of the exact
// result (all 2^32 arguments measured at most 0.894 ulp).
const exp32Bound = 1.0

// ulp32 returns the spacing of float32 numbers at |w| (2^-149 in the
// subnormal range).
func ulp32(w float64) float64 {
	w = math.Abs(w)
	if w < 0x1p-126 {
		return 0x1p-149
	}
	_, e := math.Frexp(w) // w = f * 2^e, f in [0.5, 1)
	return math.Ldexp(1, e-24)
}

// exp32ErrULP returns the error of got = Exp32(x) in ulps of the exact
// e^x; a wrong overflow, a wrong underflow to 0 or a wrong NaN gives +Inf.
func exp32ErrULP(x, got float32) float64 {
	want := math.Exp(float64(x))
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		if math.IsNaN(want) && math.IsNaN(g) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(float32(want)), 1) || math.IsInf(g, 1):
		// e^x rounds to +Inf in float32 exactly when it is at least
		// MaxFloat32 + half an ulp; the result must be +Inf then and only then.
		if math.IsInf(float64(float32(want)), 1) && math.IsInf(g, 1) {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(g-want) / ulp32(want)
}

// exp32Edges are the special and boundary arguments.
var exp32Edges = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 1e-30, -1e-30, 0x1p-149, -0x1p-149,
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32,
	88.72283172607422, 88.72283935546875, 88.7, 88.8, 89, 89.5, 100, 1e10,
	-87.33654, -87.33655, -87.5, -100, -103.27892, -103.27893, -103.28,
	-103.9720687866211, -103.97207641601562, -103.97208404541016, -103.98, -104, -104.5, -1000, -1e10,
	math.Ln2 / 2, -math.Ln2 / 2, math.Ln2, 127 * math.Ln2, 128 * math.Ln2, -126 * math.Ln2, -149 * math.Ln2,
}

// TestExp32Edges checks, on every path, the special cases stated in Exp32's
// doc (NaN, +-Inf, the overflow and underflow thresholds) and the ulp bound
// on the boundary arguments.
func TestExp32Edges(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		got := make([]float32, len(exp32Edges))
		Exp32(got, exp32Edges)
		for i, x := range exp32Edges {
			g := got[i]
			switch {
			case x != x:
				if g == g {
					t.Errorf("Exp32(NaN) = %v", g)
				}
			case x >= 88.72283935546875:
				if !math.IsInf(float64(g), 1) {
					t.Errorf("Exp32(%v) = %v, want +Inf", x, g)
				}
			case x <= -103.97208404541016:
				if g != 0 || math.Signbit(float64(g)) {
					t.Errorf("Exp32(%v) = %v, want +0", x, g)
				}
			default:
				if math.IsInf(float64(g), 0) || g <= 0 {
					t.Errorf("Exp32(%v) = %v, want finite and positive", x, g)
				}
			}
			if x == 0 && g != 1 {
				t.Errorf("Exp32(%v) = %v, want exactly 1", x, g)
			}
			if e := exp32ErrULP(x, g); e > exp32Bound {
				t.Errorf("Exp32(%v) = %v: error %v ulp", x, g, e)
			}
		}
	})
}

// TestExp32 checks the ulp bound on random arguments (the default path; the
// paths are bit-identical, see TestExp32PathsAgree): uniform over the range
// where the result is finite and non-zero, uniform on [-1, 1], and random
// bit patterns covering every magnitude. 1e7 arguments (1e5 under -short).
func TestExp32(t *testing.T) {
	total := 10_000_000
	if testing.Short() {
		total = 100_000
	}
	const chunk = 1 << 16
	rng := rand.New(rand.NewPCG(61, 62))
	src := make([]float32, chunk)
	dst := make([]float32, chunk+1)
	worst, worstX := 0.0, float32(0)
	for done := 0; done < total; done += chunk {
		for i := range src {
			switch i % 3 {
			case 0:
				src[i] = float32(-104 + rng.Float64()*(89+104))
			case 1:
				src[i] = float32(rng.Float64()*2 - 1)
			default:
				src[i] = math.Float32frombits(rng.Uint32())
			}
		}
		n := min(chunk, total-done)
		// Odd offset: unaligned destination and a tail.
		Exp32(dst[1:n+1], src[:n])
		for i := 0; i < n; i++ {
			if e := exp32ErrULP(src[i], dst[1+i]); e > worst {
				worst, worstX = e, src[i]
			}
		}
	}
	t.Logf("path %s: max error %.3f ulp at x = %v over %d arguments", Path(), worst, worstX, total)
	if worst > exp32Bound {
		t.Fatalf("max error %.3f ulp at x = %v exceeds %v ulp", worst, worstX, exp32Bound)
	}
}

// TestExp32Exhaustive runs every float32 bit pattern through the default
// path, checking the bound, and through the other vector paths, checking
// that they give the same bits (a few minutes of one core), when
// ZONAL_EXP32_EXHAUSTIVE=1. (The Go fallback's agreement is checked on
// random arguments by TestExp32PathsAgree; it is too slow for all 2^32.)
func TestExp32Exhaustive(t *testing.T) {
	if os.Getenv("ZONAL_EXP32_EXHAUSTIVE") != "1" {
		t.Skip("set ZONAL_EXP32_EXHAUSTIVE=1 to check all 2^32 arguments")
	}
	const chunk = 1 << 20
	src := make([]float32, chunk)
	dst := make([]float32, chunk)
	other := make([]float32, chunk)
	def := Path()
	defer SetPath(def)
	worst, worstX := 0.0, float32(0)
	for base := uint64(0); base < 1<<32; base += chunk {
		for i := range src {
			src[i] = math.Float32frombits(uint32(base + uint64(i)))
		}
		SetPath(def)
		Exp32(dst, src)
		for i, x := range src {
			if e := exp32ErrULP(x, dst[i]); e > worst {
				worst, worstX = e, x
			}
		}
		for _, p := range Paths() {
			if p == def || p == "generic" {
				continue
			}
			SetPath(p)
			Exp32(other, src)
			for i := range other {
				if math.Float32bits(other[i]) != math.Float32bits(dst[i]) && !(dst[i] != dst[i] && other[i] != other[i]) {
					t.Fatalf("x = %v: path %s gives %v, %s %v", src[i], p, other[i], def, dst[i])
				}
			}
		}
	}
	t.Logf("path %s: max error %.4f ulp at x = %v over all float32", def, worst, worstX)
	if worst > exp32Bound {
		t.Fatalf("max error %.4f ulp at x = %v", worst, worstX)
	}
}

// TestExp32PathsAgree: every path runs the same operations, so the results
// are identical bit for bit with the scalar form.
func TestExp32PathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	src := make([]float32, 100_003)
	for i := range src {
		if i%2 == 0 {
			src[i] = float32(-110 + rng.Float64()*205)
		} else {
			src[i] = math.Float32frombits(rng.Uint32())
		}
	}
	copy(src, exp32Edges)
	want := make([]float32, len(src))
	for i, x := range src {
		want[i] = exp32Scalar(x)
	}
	forEachPath(t, func(t *testing.T) {
		got := make([]float32, len(src))
		Exp32(got, src)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("x = %v: %v, scalar form gives %v", src[i], got[i], want[i])
			}
		}
	})
}

// guarded32 is guarded for float32: a slice of length n between NaN
// sentinels, starting one element past a 64-byte boundary about half the
// time.
func guarded32(rng *rand.Rand, n int) (s []float32, check func(t *testing.T)) {
	const g = 33
	const sentinel = 0x7fc0beef
	off := rng.IntN(2)
	buf := make([]float32, n+2*g+off)
	for i := range buf {
		buf[i] = math.Float32frombits(sentinel)
	}
	s = buf[g+off : g+off+n : g+off+n]
	return s, func(t *testing.T) {
		t.Helper()
		for i := 0; i < g+off; i++ {
			if math.Float32bits(buf[i]) != sentinel {
				t.Fatalf("write before the output at offset %d", i-g-off)
			}
		}
		for i := g + off + n; i < len(buf); i++ {
			if math.Float32bits(buf[i]) != sentinel {
				t.Fatalf("write after the output at offset %d", i-g-off-n)
			}
		}
	}
}

// exp32Args returns n arguments mixing the whole range with the edge cases.
func exp32Args(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		if rng.IntN(8) == 0 {
			s[i] = exp32Edges[rng.IntN(len(exp32Edges))]
		} else {
			s[i] = float32(-110 + rng.Float64()*205)
		}
	}
	return s
}

// TestExp32TailsAndGuards: every length 0..64 and a few long ones, at
// unaligned starts, against the Go fallback bit for bit, with no write
// outside dst[:len(src)], in place too.
func TestExp32TailsAndGuards(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(65, 66))
		lengths := []int{95, 96, 97, 127, 1000, 4099}
		for n := 0; n <= 64; n++ {
			lengths = append(lengths, n)
		}
		for _, n := range lengths {
			src := exp32Args(rng, n)
			// Unaligned source as well.
			srcOff := make([]float32, n+1)
			copy(srcOff[1:], src)
			src = srcOff[1:]
			dst, check := guarded32(rng, n)
			Exp32(dst, src)
			check(t)
			for i, x := range src {
				if want := exp32Scalar(x); math.Float32bits(dst[i]) != math.Float32bits(want) && !(want != want && dst[i] != dst[i]) {
					t.Fatalf("n=%d: Exp32(%v) = %v at %d, Go fallback %v", n, x, dst[i], i, want)
				}
			}
			// A longer dst: only the first len(src) elements are written.
			long, checkLong := guarded32(rng, n+5)
			for i := range long {
				long[i] = -7
			}
			Exp32(long, src)
			checkLong(t)
			for i := n; i < n+5; i++ {
				if long[i] != -7 {
					t.Fatalf("n=%d: dst[%d] written past len(src)", n, i)
				}
			}
			// In place.
			Exp32(src, src)
			for i := range src {
				if math.Float32bits(src[i]) != math.Float32bits(dst[i]) {
					t.Fatalf("n=%d: in-place result differs at %d", n, i)
				}
			}
		}
	})
}

// TestFMA32 checks the scalar fallback's fused multiply-add against the
// exactly computed a*b+c rounded to float32, on random operands chosen so
// that the sum is often inexact in float64 (c far smaller than a*b), which
// is where rounding twice would go wrong.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(67, 68))
	r32 := func(scale int) float32 {
		f := float32(1+rng.Float64()) * float32(math.Ldexp(1, scale))
		if rng.IntN(2) == 0 {
			f = -f
		}
		return f
	}
	for i := 0; i < 200_000; i++ {
		a, b := r32(rng.IntN(20)-10), r32(rng.IntN(20)-10)
		c := r32(rng.IntN(80) - 60)
		if i%4 == 0 {
			// a*b close to -c: cancellation.
			c = -float32(float64(a) * float64(b))
		}
		if i%4 == 1 {
			// Half-ulp cases: a*b is a float32 midpoint, c tips it.
			a = r32(0)
			a = math.Float32frombits(math.Float32bits(a) | 1)
			b = 1.5
			c = r32(-80)
		}
		exact := new(big.Float).SetPrec(1000).SetFloat64(float64(a))
		exact.Mul(exact, new(big.Float).SetFloat64(float64(b)))
		exact.Add(exact, new(big.Float).SetFloat64(float64(c)))
		want, _ := exact.Float32()
		if got := fma32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
		}
	}
}

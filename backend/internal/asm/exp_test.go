package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns |got - want| in units of the spacing of float64 at want
// (2^-1074 in the subnormal range).
func ulps(got, want float64) float64 {
	if got == want || math.IsNaN(got) && math.IsNaN(want) {
		return 0
	}
	w := math.Abs(want)
	return math.Abs(got-want) / (math.Nextafter(w, math.Inf(1)) - w)
}

// expEdges are the special and boundary arguments.
var expEdges = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1e-300, -1e-300, 5e-324, -5e-324,
	math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64,
	709.782712893384, 709.7827128933840, math.Nextafter(709.782712893384, 0),
	math.Nextafter(709.782712893384, 1000), 709.79, 710, 710.5, 1000, 1e10,
	-708.3964185322641, -708.4, -709.08956571282, -744.44007192138, -745.1332191019411,
	-745.1332191019412, -745.14, -746, -1000, -1e10,
	math.Ln2 / 2, -math.Ln2 / 2, math.Ln2, 1023 * math.Ln2, -1022 * math.Ln2, -1074 * math.Ln2,
}

// TestExp checks the 2 ulp bound against the double-double reference on the
// edge cases (every path) and on random arguments (the default path; the
// paths are bit-identical, see TestExpPathsAgree): uniform over the
// finite-result range, uniform on [-1, 1], and random bit patterns covering
// every magnitude. 1e7 random arguments (1e5 under -short).
func TestExp(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, x := range expEdges {
			got := make([]float64, 1)
			Exp(got, []float64{x})
			if x > 709.782712893384 && !math.IsInf(got[0], 1) {
				t.Errorf("Exp(%v) = %v, want +Inf", x, got[0])
			}
			if x <= 709.782712893384 && math.IsInf(got[0], 0) {
				t.Errorf("Exp(%v) = %v, want finite", x, got[0])
			}
			if x < -745.14 && got[0] != 0 {
				t.Errorf("Exp(%v) = %v, want 0", x, got[0])
			}
			if e := expErrULP(x, got[0]); e > 2 {
				t.Errorf("Exp(%v) = %v: error %v ulp", x, got[0], e)
			}
		}
	})
	total := 10_000_000
	if testing.Short() {
		total = 100_000
	}
	const chunk = 1 << 16
	rng := rand.New(rand.NewPCG(31, 32))
	src := make([]float64, chunk)
	dst := make([]float64, chunk+1)
	worst, worstX := 0.0, 0.0
	for done := 0; done < total; done += chunk {
		for i := range src {
			switch i % 3 {
			case 0:
				src[i] = -745.2 + rng.Float64()*(709.8+745.2)
			case 1:
				src[i] = rng.Float64()*2 - 1
			default:
				src[i] = math.Float64frombits(rng.Uint64())
			}
		}
		n := min(chunk, total-done)
		// Odd offset: unaligned destination and a 1..3 element tail.
		Exp(dst[1:n+1], src[:n])
		for i := 0; i < n; i++ {
			if e := expErrULP(src[i], dst[1+i]); e > worst {
				worst, worstX = e, src[i]
			}
		}
	}
	t.Logf("path %s: max error %.3f ulp at x = %v over %d arguments", Path(), worst, worstX, total)
	if worst > 2 {
		t.Fatalf("max error %.3f ulp at x = %v exceeds 2 ulp", worst, worstX)
	}
}

func TestExpTailsAndGuards(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(33, 34))
		for n := 0; n <= 64; n++ {
			src := randSlice(rng, n)
			dst, check := guarded(rng, n)
			Exp(dst, src)
			check(t)
			for i := range src {
				if expErrULP(src[i], dst[i]) > 2 {
					t.Fatalf("n=%d: Exp[%d]", n, i)
				}
			}
			// In place.
			Exp(src, src)
			for i := range src {
				if src[i] != dst[i] {
					t.Fatalf("n=%d: in-place result differs at %d", n, i)
				}
			}
		}
	})
}

func BenchmarkExp(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 1))
	src := make([]float64, n)
	for i := range src {
		src[i] = rng.Float64()*100 - 50
	}
	dst := make([]float64, n)
	b.Run("math.Exp", func(b *testing.B) {
		b.SetBytes(8 * n)
		for i := 0; i < b.N; i++ {
			for j, v := range src {
				dst[j] = math.Exp(v)
			}
		}
	})
	for _, p := range Paths() {
		b.Run(p, func(b *testing.B) {
			prev, _ := SetPath(p)
			defer SetPath(prev)
			b.SetBytes(8 * n)
			for i := 0; i < b.N; i++ {
				Exp(dst, src)
			}
		})
	}
}

// TestExpPathsAgree: every path runs the same operations, so the results are
// identical bit for bit (this is what makes the generic path a faithful
// fallback).
func TestExpPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	src := make([]float64, 100_003)
	for i := range src {
		src[i] = -750 + rng.Float64()*1465
	}
	copy(src, expEdges)
	want := make([]float64, len(src))
	for i, x := range src {
		want[i] = expScalar(x)
	}
	forEachPath(t, func(t *testing.T) {
		got := make([]float64, len(src))
		Exp(got, src)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("x = %v: %v, scalar form gives %v", src[i], got[i], want[i])
			}
		}
	})
}

// TestExpReference checks the double-double reference itself against
// known values and math.Exp in the middle of the range.
func TestExpReference(t *testing.T) {
	for _, x := range []float64{0, 1, -1, 0.1, 10, -10, 100, -100} {
		n, v := refExpScaled(x)
		got := math.Ldexp(v.hi, n)
		if ulps(got, math.Exp(x)) > 1 {
			t.Fatalf("reference e^%v = %v, math.Exp %v", x, got, math.Exp(x))
		}
	}
	// e^1 to double-double precision: e = 2.718281828459045 + 1.4456468917292502e-16.
	_, v := refExpScaled(1)
	if n, _ := refExpScaled(1); n != 1 {
		t.Fatalf("n = %d", n)
	}
	e := ddMul(v, dd{2, 0})
	// The reference is good to about 1e-24 relative (see refExpScaled).
	if e.hi != 2.718281828459045 || math.Abs(e.lo-1.4456468917292502e-16) > 1e-24 {
		t.Fatalf("reference e = %v + %v", e.hi, e.lo)
	}
}

package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// pointsInBall returns n points of R^d with norms spread over [0, radius].
func pointsInBall(seed uint64, n, d int, radius float64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	out := make([][]float64, n)
	for i := range out {
		v := make([]float64, d)
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		normalize(v)
		r := radius * float64(i) / float64(n-1)
		for j := range v {
			v[j] *= r
		}
		out[i] = v
	}
	return out
}

func TestGZKReproducesGaussian(t *testing.T) {
	b := backend.Default()
	for _, d := range []int{2, 3, 5, 16} {
		for _, sigma := range []float64{0.8, 2} {
			k := Gaussian{sigma}
			radius := 2.5
			pts := pointsInBall(uint64(d), 24, d, radius)
			// Generous truncation: reproduces the kernel to round-off.
			g := mustGZK(t, k, d, 60, 30)
			bd, err := TruncationBound(k, d, radius, 60, 30, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			if bd > 1e-15 {
				t.Fatalf("d=%d: bound at q=60 s=30 is %g", d, bd)
			}
			for _, tol := range []float64{1e-2, 1e-5, 1e-9} {
				tr, err := ChooseTruncation(k, d, radius, tol, 80, 40, Options{Backend: b})
				if err != nil {
					t.Fatal(err)
				}
				if tr.Bound > tol {
					t.Fatalf("d=%d sigma=%g: no truncation reaches %g", d, sigma, tol)
				}
				gt := mustGZK(t, k, d, tr.Q, tr.S)
				worst := 0.0
				for _, x := range pts {
					for _, y := range pts {
						e := k.Eval(x, y)
						// the full expansion agrees to round-off (1e-13);
						// the truncation to its bound (+ round-off).
						if diff := math.Abs(g.Eval(x, y) - e); diff > 1e-13 {
							t.Fatalf("d=%d sigma=%g: GZK(60,30) off by %g", d, sigma, diff)
						}
						diff := math.Abs(gt.Eval(x, y) - e)
						if diff > tr.Bound+1e-13 {
							t.Fatalf("d=%d sigma=%g q=%d s=%d: error %g above bound %g", d, sigma, tr.Q, tr.S, diff, tr.Bound)
						}
						worst = math.Max(worst, diff)
					}
				}
				// The bound is not vacuous: it is within a few orders of the
				// worst error actually seen (P^l(t) < 1 away from t = 1 makes
				// the true error smaller).
				if tr.Bound > 0 && worst < tr.Bound*1e-6 && worst > 0 {
					t.Logf("d=%d tol=%g: bound %g vs worst seen %g", d, tol, tr.Bound, worst)
				}
			}
		}
	}
}

func TestGZKReproducesDotProduct(t *testing.T) {
	b := backend.Default()
	poly, _ := NewPolynomial(5, 0.7, 1.3)
	ed, _ := NewExpDot(1.5)
	dp, _ := NewDotProduct([]float64{0.5, 1, 0, 0.3})
	for _, d := range []int{2, 4, 9} {
		pts := pointsInBall(uint64(d)+10, 16, d, 1.8)
		// Polynomials are exact GZKs with q = p, s = floor(p/2)+1.
		for _, k := range []Kernel{poly, dp} {
			p := k.(taylorKernel).maxDegree()
			g := mustGZK(t, k, d, p, p/2+1)
			for _, x := range pts {
				for _, y := range pts {
					e := k.Eval(x, y)
					if diff := math.Abs(g.Eval(x, y) - e); diff > 1e-12*math.Max(1, math.Abs(e)) {
						t.Fatalf("%v d=%d: GZK %g vs %g", k, d, g.Eval(x, y), e)
					}
				}
			}
			if bd, _ := TruncationBound(k, d, 1.8, p, p/2+1, Options{Backend: b}); bd != 0 {
				t.Fatalf("%v: exact truncation has bound %g", k, bd)
			}
		}
		for _, tol := range []float64{1e-3, 1e-8} {
			tr, err := ChooseTruncation(ed, d, 1.8, tol, 60, 30, Options{Backend: b})
			if err != nil || tr.Bound > tol {
				t.Fatalf("expdot: %v %+v", err, tr)
			}
			g := mustGZK(t, ed, d, tr.Q, tr.S)
			for _, x := range pts {
				for _, y := range pts {
					// round-off relative to kernel values up to e^{1.44}.
					if diff := math.Abs(g.Eval(x, y) - ed.Eval(x, y)); diff > tr.Bound+1e-13 {
						t.Fatalf("expdot d=%d: error %g above bound %g", d, diff, tr.Bound)
					}
				}
			}
		}
	}
}

func TestGZKReproducesNTKAndArcCosine(t *testing.T) {
	b := backend.Default()
	ntk, _ := NewNTK(2)
	a0, _ := NewArcCosine(0)
	a1, _ := NewArcCosine(1)
	d := 4
	pts := pointsInBall(3, 12, d, 1.5)
	for _, k := range []Kernel{ntk, a0, a1} {
		tr, err := ChooseTruncation(k, d, 1.5, 0.2, 30, 4, Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		if tr.S != 1 || tr.Bound > 0.2 {
			t.Fatalf("%v: %+v", k, tr)
		}
		g := mustGZK(t, k, d, tr.Q, 1)
		for _, x := range pts[1:] { // x = 0 excluded: arc-cosine 0 is discontinuous there
			for _, y := range pts[1:] {
				// quadrature error of the coefficients is below 1e-9 per
				// coefficient (see zonalCoeffs) and the singular kappa makes the
				// quadrature converge slowly: allow 1e-6 over the bound.
				if diff := math.Abs(g.Eval(x, y) - k.Eval(x, y)); diff > tr.Bound+1e-6 {
					t.Fatalf("%v q=%d: error %g above bound %g", k, tr.Q, diff, tr.Bound)
				}
			}
		}
	}
}

func TestUserGZK(t *testing.T) {
	// A user GZK with h_l(r) = (r^l/l!, 0.5 r^l) reproduces its own formula.
	d := 3
	g, err := NewGZK(d, 3, 2, func(l int, r float64, dst []float64) {
		dst[0] = ipow(r, l) / math.Gamma(float64(l+1))
		dst[1] = 0.5 * ipow(r, l)
	})
	if err != nil {
		t.Fatal(err)
	}
	x, y := []float64{1, 0, 0.5}, []float64{0.2, -0.4, 1}
	rx, ry := math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y))
	want := 0.0
	for l := 0; l <= 3; l++ {
		f := math.Gamma(float64(l + 1))
		want += (ipow(rx*ry, l)/(f*f) + 0.25*ipow(rx*ry, l)) * Gegenbauer(l, d, dot(x, y)/(rx*ry))
	}
	if got := g.Eval(x, y); math.Abs(got-want) > 1e-14 {
		t.Fatalf("user GZK %g, want %g", got, want)
	}
	if _, err := g.MarshalBinary(); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("user GZK marshal: %v", err)
	}
	for _, err := range []error{
		func() error { _, e := NewGZK(1, 3, 2, func(int, float64, []float64) {}); return e }(),
		func() error { _, e := NewGZK(3, -1, 2, func(int, float64, []float64) {}); return e }(),
		func() error { _, e := NewGZK(3, 3, 0, func(int, float64, []float64) {}); return e }(),
		func() error { _, e := NewGZK(3, 3, 1, nil); return e }(),
		func() error { _, e := NewGZKFor(Laplacian{1}, 3, 3, 1, Options{}); return e }(),
		func() error { _, e := NewGZKFor(NTK{2}, 3, 3, 2, Options{}); return e }(),
		func() error { _, e := TruncationBound(g, 3, 1, 3, 2, Options{}); return e }(),
		func() error { _, e := ChooseTruncation(Gaussian{1}, 3, 1, 0, 3, 2, Options{}); return e }(),
		func() error {
			_, e := ChooseTruncation(Gaussian{1}, 3, math.NaN(), 1e-3, 3, 2, Options{})
			return e
		}(),
	} {
		if !errors.Is(err, zonal.ErrParam) {
			t.Errorf("got %v, want zonal.ErrParam", err)
		}
	}
}

func TestChooseTruncationMonotone(t *testing.T) {
	// A larger radius never needs a smaller truncation, and the bound
	// decreases in q and s.
	b := backend.Default()
	k := Gaussian{1}
	prev := Truncation{}
	for _, r := range []float64{0.5, 1, 2, 3} {
		tr, err := ChooseTruncation(k, 6, r, 1e-4, 80, 40, Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Q+tr.S < prev.Q+prev.S {
			t.Fatalf("radius %g: %+v smaller than %+v", r, tr, prev)
		}
		prev = tr
	}
	last := math.Inf(1)
	for q := 0; q < 20; q++ {
		bd, _ := TruncationBound(k, 6, 2, q, 4, Options{Backend: b})
		if bd > last {
			t.Fatalf("bound increases with q: %g > %g", bd, last)
		}
		last = bd
	}
}

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal/backend"
)

// eachBackend runs f on every compiled-in backend.
func eachBackend(t *testing.T, f func(t *testing.T, b backend.Backend)) {
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { f(t, b) })
	}
}

func TestGegenbauerChebyshev(t *testing.T) {
	// d = 2: P^l(cos theta) = cos(l theta). The recurrence's error grows at most
	// linearly in l; 1e-13 leaves a margin of ~20 over l * eps for l <= 60.
	for l := 0; l <= 60; l++ {
		for _, th := range []float64{0, 0.1, 0.7, 1.3, math.Pi / 2, 2.2, 3.0, math.Pi} {
			got, want := Gegenbauer(l, 2, math.Cos(th)), math.Cos(float64(l)*th)
			if math.Abs(got-want) > 1e-13 {
				t.Fatalf("P_2^%d(cos %g) = %.17g, want %.17g", l, th, got, want)
			}
		}
	}
}

func legendreClosed(n int, t float64) float64 {
	// P_n(t) = 2^-n sum_k C(n,k)^2 (t-1)^(n-k) (t+1)^k.
	s := 0.0
	for k := 0; k <= n; k++ {
		c := math.Exp(lchoose(n, k))
		s += c * c * ipow(t-1, n-k) * ipow(t+1, k)
	}
	return s / math.Pow(2, float64(n))
}

func TestGegenbauerLegendre(t *testing.T) {
	// The closed form sums terms up to C(n,n/2)^2 2^n / 2^n ~ 1e10 for n = 20
	// with cancellation, so it is only good to ~1e10 * eps ~ 1e-6 there; the
	// tolerance scales with its largest term.
	for n := 0; n <= 20; n++ {
		c := math.Exp(lchoose(n, n/2))
		tol := 1e-14 * (1 + c*c)
		for _, x := range []float64{-1, -0.93, -0.5, -0.1, 0, 0.3, 0.77, 1} {
			got, want := Gegenbauer(n, 3, x), legendreClosed(n, x)
			if math.Abs(got-want) > tol {
				t.Fatalf("P_3^%d(%g) = %.17g, Legendre %.17g", n, x, got, want)
			}
		}
	}
}

func TestGegenbauerExplicitFormula(t *testing.T) {
	// P_d^l(t) = sum_j c_j t^(l-2j) (1-t^2)^j, c_0 = 1,
	// c_{j+1} = -(l-2j)(l-2j-1) / (2(j+1)(d-1+2j)) c_j  (Han et al., eq. 2).
	// Terms are bounded by sum |c_j| <= 2^l; 1e-13 covers l <= 14.
	for d := 2; d <= 12; d++ {
		for l := 0; l <= 14; l++ {
			for _, x := range []float64{-1, -0.6, -0.2, 0, 0.25, 0.5, 0.9, 1} {
				c, s := 1.0, 0.0
				for j := 0; j <= l/2; j++ {
					s += c * ipow(x, l-2*j) * ipow(1-x*x, j)
					c *= -float64((l-2*j)*(l-2*j-1)) / float64(2*(j+1)*(d-1+2*j))
				}
				if got := Gegenbauer(l, d, x); math.Abs(got-s) > 1e-13 {
					t.Fatalf("d=%d l=%d t=%g: recurrence %.17g, explicit %.17g", d, l, x, got, s)
				}
			}
		}
	}
}

func TestGegenbauerAllMatchesSingle(t *testing.T) {
	p := make([]float64, 30)
	for _, d := range []int{2, 3, 7, 50} {
		GegenbauerAll(p, d, 0.37)
		for l := range p {
			if p[l] != Gegenbauer(l, d, 0.37) {
				t.Fatalf("d=%d l=%d: GegenbauerAll %g, Gegenbauer %g", d, l, p[l], Gegenbauer(l, d, 0.37))
			}
		}
		if p[29] > 1 || p[29] < -1 || Gegenbauer(29, d, 1) != 1 {
			t.Fatalf("d=%d: |P| <= 1 and P(1) = 1 violated", d)
		}
	}
	if !math.IsNaN(Gegenbauer(2, 1, 0.5)) || !math.IsNaN(Gegenbauer(-1, 3, 0.5)) {
		t.Fatal("invalid d or l must give NaN")
	}
}

func TestAlphaCountsHarmonics(t *testing.T) {
	// alpha_{l,d} = dim of degree-l harmonic polynomials in d variables
	// = C(l+d-1, d-1) - C(l+d-3, d-1) (homogeneous polynomials of degree l
	// minus those of degree l-2). Both are integers; compare to 1e-12 relative.
	binom := func(n, k int) float64 {
		if k < 0 || n < k {
			return 0
		}
		return math.Round(math.Exp(lchoose(n, k)))
	}
	for d := 2; d <= 12; d++ {
		for l := 0; l <= 12; l++ {
			want := binom(l+d-1, d-1) - binom(l+d-3, d-1)
			if got := Alpha(l, d); math.Abs(got-want) > 1e-12*want {
				t.Fatalf("alpha_{%d,%d} = %.15g, harmonic count %g", l, d, got, want)
			}
		}
	}
	// log space: finite where the value itself would overflow.
	if la := LogAlpha(2000, 900); math.IsInf(la, 0) || math.IsNaN(la) || la < 700 {
		t.Fatalf("LogAlpha(2000, 900) = %g", la)
	}
}

func TestGaussGegenbauerOrthogonality(t *testing.T) {
	// int P^l P^m (1-t^2)^((d-3)/2) dt = delta_lm m_0/alpha_l, exact for a
	// 40-point rule up to degree 79: compare to 1e-12 (round-off of the
	// eigensolver's weights).
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		for _, d := range []int{2, 3, 4, 7, 16} {
			x, w, err := GaussGegenbauer(40, d, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			m0 := math.Sqrt(math.Pi) * math.Exp(lgamma(float64(d-1)/2)-lgamma(float64(d)/2))
			for l := 0; l <= 20; l++ {
				for m := 0; m <= 20; m++ {
					s := 0.0
					for i := range x {
						s += w[i] * Gegenbauer(l, d, x[i]) * Gegenbauer(m, d, x[i])
					}
					want := 0.0
					if l == m {
						want = m0 / Alpha(l, d)
					}
					if math.Abs(s-want) > 1e-12*m0 {
						t.Fatalf("d=%d <P^%d,P^%d> = %.15g, want %.15g", d, l, m, s, want)
					}
				}
			}
		}
	})
}

func TestMonomialCoeffs(t *testing.T) {
	// t^n = sum_l b_{n,l} P^l(t) with b >= 0 summing to 1; 1e-13 is ~ n eps.
	for d := 2; d <= 16; d++ {
		for n := 0; n <= 24; n++ {
			b, err := MonomialCoeffs(n, d)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, v := range b {
				if v < 0 {
					t.Fatalf("negative b_{%d,l}", n)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-13 {
				t.Fatalf("d=%d n=%d: sum b = %.17g", d, n, sum)
			}
			for _, x := range []float64{-0.9, -0.3, 0.2, 0.65, 0.99} {
				s := 0.0
				for l, v := range b {
					s += v * Gegenbauer(l, d, x)
				}
				if math.Abs(s-ipow(x, n)) > 1e-13 {
					t.Fatalf("d=%d n=%d t=%g: expansion %.17g, t^n %.17g", d, n, x, s, ipow(x, n))
				}
			}
		}
	}
	if _, err := MonomialCoeffs(3, 1); err == nil {
		t.Fatal("d=1 accepted")
	}
}

func TestSeriesCoeffsQuadrature(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		// Polynomials are integrated exactly: t^7 must give MonomialCoeffs.
		for _, d := range []int{2, 5, 10} {
			c, err := SeriesCoeffs(func(x float64) float64 { return ipow(x, 7) }, d, 9, 20, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := MonomialCoeffs(7, d)
			for l := range c {
				w := 0.0
				if l < len(want) {
					w = want[l]
				}
				if math.Abs(c[l]-w) > 1e-13 {
					t.Fatalf("d=%d: c_%d = %.17g, want %.17g", d, l, c[l], w)
				}
			}
			// exp(t): the exact coefficients are c_l = sum_{n>=l, n-l even} b_{n,l}/n!
			// (Taylor series regrouped). The quadrature sum has absolute
			// round-off ~ 64 eps m_0, which the factor alpha_l/m_0 amplifies:
			// tolerance 1e-13 alpha_l.
			c, err = SeriesCoeffs(math.Exp, d, 30, 64, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			for l := range c {
				exact := 0.0
				for n := l; n <= l+60; n += 2 {
					exact += math.Exp(logMonomialCoeff(n, l, d) - lgamma(float64(n+1)))
				}
				if math.Abs(c[l]-exact) > 1e-13*Alpha(l, d) {
					t.Fatalf("d=%d: exp coefficient %d = %.17g, exact %.17g", d, l, c[l], exact)
				}
			}
		}
		if _, err := SeriesCoeffs(func(float64) float64 { return math.NaN() }, 3, 2, 8, Options{Backend: b}); err == nil {
			t.Fatal("NaN kappa accepted")
		}
	})
}

func TestReproducingPropertyMonteCarlo(t *testing.T) {
	// E_w[P^l(<a,w>) P^m(<c,w>)] = delta_lm P^l(<a,c>)/alpha_{l,d} for w uniform
	// on S^{d-1}. Each sample lies in [-1, 1], so by Hoeffding the mean of N
	// samples is within eps = sqrt(2 ln(2/delta)/N) of its expectation with
	// probability 1 - delta. With delta = 1e-9 per (l, m) pair (50 pairs:
	// overall failure probability 5e-8) and N = 100000 (20000 with -short),
	// eps = 0.0207 (0.0462). The seed is fixed, so the test is deterministic.
	N := 100000
	if testing.Short() {
		N = 20000
	}
	eps := math.Sqrt(2 * math.Log(2/1e-9) / float64(N))
	for _, d := range []int{3, 5} {
		rng := rand.New(rand.NewPCG(7, uint64(d)))
		a := make([]float64, d)
		c := make([]float64, d)
		a[0] = 1
		c[0], c[1] = 0.6, 0.8
		ac := dot(a, c)
		const L = 4
		sum := make([]float64, (L+1)*(L+1))
		pa := make([]float64, L+1)
		pc := make([]float64, L+1)
		w := make([]float64, d)
		for it := 0; it < N; it++ {
			for i := range w {
				w[i] = rng.NormFloat64()
			}
			normalize(w)
			GegenbauerAll(pa, d, dot(a, w))
			GegenbauerAll(pc, d, dot(c, w))
			for l := 0; l <= L; l++ {
				for m := 0; m <= L; m++ {
					sum[l*(L+1)+m] += pa[l] * pc[m]
				}
			}
		}
		for l := 0; l <= L; l++ {
			for m := 0; m <= L; m++ {
				got := sum[l*(L+1)+m] / float64(N)
				want := 0.0
				if l == m {
					want = Gegenbauer(l, d, ac) / Alpha(l, d)
				}
				if math.Abs(got-want) > eps {
					t.Errorf("d=%d E[P^%d P^%d] = %.4f, want %.4f (Hoeffding eps %.4f)", d, l, m, got, want, eps)
				}
			}
		}
	}
}

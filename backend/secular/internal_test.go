package secular

import (
	"math"
	"testing"
)

// TestModelRoot checks the quadratic model solver: it returns the root of
// c eta^2 - a eta + b between the poles that moves against the sign of w,
// and rejects the spurious root of a model whose poles nearly coincide.
func TestModelRoot(t *testing.T) {
	// Model C + A1/(p1 - eta) + A2/(p2 - eta) with known coefficients; the
	// quadratic is C (p1-eta)(p2-eta) + A1 (p2-eta) + A2 (p1-eta) = 0, whose
	// coefficients in the form c eta^2 - a eta + b are below.
	model := func(C, A1, p1, A2, p2 float64) (c, a, b, w float64) {
		c = C
		a = C*(p1+p2) + A1 + A2
		b = C*p1*p2 + A1*p2 + A2*p1
		w = C + A1/p1 + A2/p2
		return
	}
	g := func(C, A1, p1, A2, p2, x float64) float64 { return C + A1/(p1-x) + A2/(p2-x) }
	for _, tc := range []struct{ C, A1, p1, A2, p2 float64 }{
		{1, 0.5, -1, 0.25, 2},
		{-3, 0.5, -0.1, 2, 0.5},
		{0.5, 1e-6, -1e-3, 1, 1},
		{0, 1, -1, 2, 1}, // linear model
	} {
		c, a, b, w := model(tc.C, tc.A1, tc.p1, tc.A2, tc.p2)
		eta, ok := modelRoot(c, a, b, tc.p1, tc.p2, w)
		if !ok {
			t.Errorf("%+v: no root", tc)
			continue
		}
		if !(eta > tc.p1 && eta < tc.p2) || eta*w >= 0 {
			t.Errorf("%+v: eta = %g outside (%g, %g) or wrong direction (w = %g)", tc, eta, tc.p1, tc.p2, w)
		}
		if r := g(tc.C, tc.A1, tc.p1, tc.A2, tc.p2, eta); math.Abs(r) > 1e-12*(math.Abs(tc.C)+tc.A1/math.Abs(tc.p1-eta)+tc.A2/math.Abs(tc.p2-eta)) {
			t.Errorf("%+v: model residual %g at eta = %g", tc, r, eta)
		}
	}
	// Nearly coincident poles to the left of the last root: the model is
	// about 1 - 1/(3 + eta), so the root beyond them is eta = -2; the
	// quadratic's other root sits next to the poles and must be rejected.
	c, a, b, w := model(1, 0.5, -3, 0.5, -3+1e-12)
	eta, ok := modelRoot(c, a, b, -3+1e-12, math.Inf(1), w)
	if !ok || math.Abs(eta+2) > 1e-9 {
		t.Errorf("coincident poles: eta = %g (want -2), ok = %v", eta, ok)
	}
	if _, ok := modelRoot(0, 0, 0, -1, 1, 1); ok {
		t.Error("all-zero model: want no root")
	}
	if _, ok := modelRoot(math.NaN(), 1, 1, -1, 1, 1); ok {
		t.Error("NaN model: want no root")
	}
}

// TestSecEvalBound checks that secEval's rounding-error bound dominates the
// actual error of w (against a compensated re-evaluation).
func TestSecEvalBound(t *testing.T) {
	d := []float64{-2, -1, 0, 1e-8, 3, 7}
	z := []float64{0.3, 0.5, 0.4, 0.2, 0.6, 0.3}
	for _, tau := range []float64{1e-9, 5e-9, 0.5, 2} {
		w, dpsi, dphi, errb := secEval(d, z, 0, tau, 1, 3)
		// Exact value by Neumaier summation of the same terms.
		var s, comp float64
		add := func(x float64) {
			t := s + x
			if math.Abs(s) >= math.Abs(x) {
				comp += (s - t) + x
			} else {
				comp += (x - t) + s
			}
			s = t
		}
		add(1)
		for j := range d {
			add(z[j] * z[j] / (d[j] - tau))
		}
		exact := s + comp
		if math.Abs(w-exact) > eps*errb {
			t.Errorf("tau %g: |w - exact| = %g > eps*errb = %g", tau, math.Abs(w-exact), eps*errb)
		}
		if !(dpsi > 0 && dphi > 0) {
			t.Errorf("tau %g: derivatives %g %g must be positive", tau, dpsi, dphi)
		}
	}
}

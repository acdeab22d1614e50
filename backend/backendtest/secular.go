package backendtest

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

// r1Case is one rank-one update problem: U (n x m, orthonormal columns),
// d ascending, rho, v.
type r1Case struct {
	name string
	u    [][]float64
	d    []float64
	rho  float64
	v    []float64
}

func identity(n int) [][]float64 {
	u := make([][]float64, n)
	for i := range u {
		u[i] = make([]float64, n)
		u[i][i] = 1
	}
	return u
}

// r1Cases returns the update problems: random (square and tall U), both
// signs of rho, and the deflation cases: exact and tiny z_i, repeated and
// nearly equal d_i, all d equal, zero eigenvalues, v = 0, tiny and huge rho,
// m = 0, 1, 2.
func r1Cases(rng *rand.Rand) []r1Case {
	var cs []r1Case
	randVec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	sortedRand := func(m int) []float64 {
		d := make([]float64, m)
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		sortFloats(d)
		return d
	}
	tall := func(n, m int) [][]float64 {
		q := randOrthogonal(rng, n)
		for i := range q {
			q[i] = q[i][:m]
		}
		return q
	}
	for _, rho := range []float64{1.3, -0.7} {
		for _, m := range []int{0, 1, 2, 3, 10, 57} {
			cs = append(cs, r1Case{caseName("random m=%d rho=%v", m, rho), randOrthogonal(rng, m), sortedRand(m), rho, randVec(m)})
		}
		cs = append(cs, r1Case{caseName("tall n=40 m=15 rho=%v", rho), tall(40, 15), sortedRand(15), rho, randVec(40)})

		// With U = I, z = v exactly, so zeros are exact.
		m := 12
		v := randVec(m)
		v[0], v[5], v[11] = 0, 0, 0
		cs = append(cs, r1Case{caseName("z exact zeros rho=%v", rho), identity(m), sortedRand(m), rho, v})
		v = randVec(m)
		v[3], v[7] = 1e-18, -1e-17
		cs = append(cs, r1Case{caseName("z tiny rho=%v", rho), identity(m), sortedRand(m), rho, v})
		d := []float64{-2, -1, -1, -1, 0, 0, 1, 1 + 1e-15, 1 + 2e-15, 3, 3, 5}
		cs = append(cs, r1Case{caseName("repeated d rho=%v", rho), identity(m), d, rho, randVec(m)})
		d = make([]float64, m)
		for i := range d {
			d[i] = 2
		}
		cs = append(cs, r1Case{caseName("all d equal rho=%v", rho), randOrthogonal(rng, m), d, rho, randVec(m)})
		d = make([]float64, m)
		for i := m / 2; i < m; i++ {
			d[i] = float64(i)
		}
		cs = append(cs, r1Case{caseName("zero eigenvalues rho=%v", rho), randOrthogonal(rng, m), d, rho, randVec(m)})
		cs = append(cs, r1Case{caseName("v zero rho=%v", rho), randOrthogonal(rng, m), sortedRand(m), rho, make([]float64, m)})
		cs = append(cs, r1Case{caseName("tiny rho=%v", rho*1e-20), randOrthogonal(rng, m), sortedRand(m), rho * 1e-20, randVec(m)})
		cs = append(cs, r1Case{caseName("huge rho=%v", rho*1e10), randOrthogonal(rng, m), sortedRand(m), rho * 1e10, randVec(m)})
		// Graded spectrum with tiny eigenvalues (the case plain bisection loses).
		d = make([]float64, m)
		for i := range d {
			d[i] = math.Pow(10, -14+float64(i))
		}
		cs = append(cs, r1Case{caseName("graded tiny d rho=%v", rho), randOrthogonal(rng, m), d, rho * 1e-3, randVec(m)})
	}
	return cs
}

func sortFloats(d []float64) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

func generalOf(m [][]float64, cols int) blas64.General {
	g := blas64.General{Rows: len(m), Cols: cols, Stride: max(cols, 1), Data: make([]float64, len(m)*max(cols, 1))}
	for i, r := range m {
		copy(g.Data[i*g.Stride:], r[:cols])
	}
	return g
}

// r1Result runs the case on b and returns dOut, uOut (views with NaN padding,
// guard-checked).
func r1Run(t *testing.T, b backend.Backend, c r1Case) ([]float64, *view, error) {
	t.Helper()
	n := len(c.v)
	m := len(c.d)
	u := newView(n, m, 1, func(i, j int) float64 { return c.u[i][j] })
	uOut := newView(n, m, 2, func(int, int) float64 { return math.NaN() })
	dOut := make([]float64, m)
	d := append([]float64(nil), c.d...)
	v := append([]float64(nil), c.v...)
	err := b.RankOneUpdate(d, u.g, c.rho, v, dOut, uOut.g)
	u.checkUnchanged(t, c.name+" U")
	uOut.checkGuard(t, c.name+" uOut")
	for i := range d {
		if d[i] != c.d[i] {
			t.Errorf("%s: d modified", c.name)
			break
		}
	}
	return dOut, uOut, err
}

// r1Scale is ||diag(d) + rho z z^T|| bounded by max|d| + |rho| ||z||^2, the
// scale of every tolerance on the update.
func r1Scale(c r1Case) (z []float64, scale float64) {
	n, m := len(c.v), len(c.d)
	z = make([]float64, m)
	var zz float64
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			z[j] += c.u[i][j] * c.v[i]
		}
		zz += z[j] * z[j]
	}
	for _, x := range c.d {
		scale = math.Max(scale, math.Abs(x))
	}
	return z, scale + math.Abs(c.rho)*zz
}

func testRankOneUpdate(t *testing.T, b backend.Backend) {
	rng := newRand(9)
	for _, c := range r1Cases(rng) {
		dOut, uOut, err := r1Run(t, b, c)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		n, m := len(c.v), len(c.d)
		z, scale := r1Scale(c)
		// Backward stability of the update (dlaed4 roots, deflation,
		// Gu-Eisenstat vectors): the result is the exact eigensystem of
		// diag(d) + rho z z^T + E with ||E|| <= p(m) u scale, p(m) = 20(m+1).
		// Forming z = U^T v and the reference below adds n u scale.
		tol := 20 * float64(m+n+1) * eps * scale
		var sumd, zz, sumOut float64
		for i := 0; i < m; i++ {
			zz += z[i] * z[i]
		}
		for i := 0; i < m; i++ {
			sumd += c.d[i]
			sumOut += dOut[i]
			if i > 0 && dOut[i] < dOut[i-1] {
				t.Errorf("%s: dOut not ascending at %d: %v < %v", c.name, i, dOut[i], dOut[i-1])
			}
			// Interlacing (Cauchy): rho > 0 moves eigenvalues up within
			// [d_i, d_(i+1)] (the last within [d_m, d_m + rho ||z||^2]);
			// rho < 0 moves them down symmetrically.
			lo, hi := c.d[i], c.d[i]
			if c.rho > 0 {
				hi = c.d[m-1] + c.rho*zz
				if i+1 < m {
					hi = c.d[i+1]
				}
			} else {
				lo = c.d[0] + c.rho*zz
				if i > 0 {
					lo = c.d[i-1]
				}
			}
			if dOut[i] < lo-tol || dOut[i] > hi+tol {
				t.Errorf("%s: dOut[%d] = %v outside the interlacing interval [%v, %v]", c.name, i, dOut[i], lo, hi)
			}
		}
		// Trace identity: sum dOut = sum d + rho ||z||^2.
		if math.Abs(sumOut-(sumd+c.rho*zz)) > float64(m+1)*tol {
			t.Errorf("%s: trace %v, want %v", c.name, sumOut, sumd+c.rho*zz)
		}
		// Eigenvalues against a dense eigensolver on diag(d) + rho z z^T.
		if m > 0 {
			dense := newView(m, m, 0, func(i, j int) float64 {
				x := c.rho * z[i] * z[j]
				if i == j {
					x += c.d[i]
				}
				return x
			})
			w := make([]float64, m)
			if err := b.SymEig(dense.g, w, false); err != nil {
				t.Fatalf("%s: reference SymEig: %v", c.name, err)
			}
			for i := range w {
				if math.Abs(w[i]-dOut[i]) > 2*tol {
					t.Errorf("%s: dOut[%d] = %v, dense eigensolver %v (tol %g)", c.name, i, dOut[i], w[i], 2*tol)
					break
				}
			}
		}
		// Orthonormal columns and reconstruction of U (diag(d) + rho z z^T) U^T.
		if e := orthoErr(uOut.g); e > 20*float64(m+n+1)*eps {
			t.Errorf("%s: ||U'^T U' - I||_max = %g", c.name, e)
		}
		if e := reconErr(c.u, c.d, c.rho, z, uOut, dOut); e > tol {
			t.Errorf("%s: reconstruction error %g exceeds %g", c.name, e, tol)
		}
	}

	// Shape errors are errors, not panics.
	u := generalOf(identity(3), 3)
	if err := b.RankOneUpdate([]float64{1, 2}, u, 1, []float64{1, 2, 3}, make([]float64, 3), generalOf(identity(3), 3)); err == nil {
		t.Errorf("RankOneUpdate with len(d) != m: no error")
	}
}

// reconErr returns ||U' diag(d') U'^T - U (diag(d) + rho z z^T) U^T||_max.
func reconErr(u [][]float64, d []float64, rho float64, z []float64, uOut *view, dOut []float64) float64 {
	n, m := len(u), len(d)
	// w = U z, the projection of v onto span U.
	w := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			w[i] += u[i][j] * z[j]
		}
	}
	var e float64
	for i := 0; i < n; i++ {
		for k := 0; k <= i; k++ {
			var got, want float64
			for j := 0; j < m; j++ {
				got += uOut.at(i, j) * dOut[j] * uOut.at(k, j)
				want += u[i][j] * d[j] * u[k][j]
			}
			want += rho * w[i] * w[k]
			e = math.Max(e, math.Abs(got-want))
		}
	}
	return e
}

// testUpdateSequence applies 1000 successive rank-one updates of random sign
// to a 20 x 20 eigendecomposition and tracks the dense matrix alongside.
//
// Each update is backward stable with error <= p(m) u ||A|| (see
// testRankOneUpdate), and errors add up at most linearly over the sequence:
// after N updates, ||U^T U - I||_max <= N * 20 (m+1) u and
// ||U diag(d) U^T - A||_max <= N * 20 (m+1) u max_k ||A_k||. With N = 1000,
// m = 20 these are 4.7e-11 and 4.7e-11 max||A_k||; the observed errors are
// far smaller (random-walk growth).
func testUpdateSequence(t *testing.T, b backend.Backend) {
	const m, steps = 20, 1000
	rng := newRand(10)
	d := make([]float64, m)
	for i := range d {
		d[i] = float64(i)
	}
	a := make([][]float64, m) // the dense matrix, updated exactly as rho v v^T is added
	for i := range a {
		a[i] = make([]float64, m)
		a[i][i] = d[i]
	}
	u := generalOf(identity(m), m)
	uOut := generalOf(identity(m), m)
	dOut := make([]float64, m)
	v := make([]float64, m)
	norm := float64(m)
	for s := 0; s < steps; s++ {
		var nv float64
		for i := range v {
			v[i] = rng.NormFloat64()
			nv += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(nv)
		}
		// Alternate signs with random magnitude in [0.1, 2): the spectrum
		// stays of order m and moves through clusters and sign changes.
		rho := 0.1 + 1.9*rng.Float64()
		if rng.IntN(2) == 0 {
			rho = -rho
		}
		if err := b.RankOneUpdate(d, u, rho, v, dOut, uOut); err != nil {
			t.Fatalf("update %d: %v", s, err)
		}
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				a[i][j] += rho * v[i] * v[j]
			}
		}
		for _, x := range dOut {
			norm = math.Max(norm, math.Abs(x))
		}
		d, dOut = dOut, d
		u, uOut = uOut, u
	}
	bound := steps * 20 * float64(m+1) * eps
	orth := orthoErr(u)
	var rec float64
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for k := 0; k < m; k++ {
				s += u.Data[i*m+k] * d[k] * u.Data[j*m+k]
			}
			rec = math.Max(rec, math.Abs(s-a[i][j]))
		}
	}
	t.Logf("%d updates, m=%d: ||U^T U - I||_max = %.3g (bound %.3g), ||U D U^T - A||_max = %.3g (bound %.3g)", steps, m, orth, bound, rec, bound*norm)
	if orth > bound {
		t.Errorf("after %d updates ||U^T U - I||_max = %g exceeds %g", steps, orth, bound)
	}
	if rec > bound*norm {
		t.Errorf("after %d updates reconstruction error %g exceeds %g", steps, rec, bound*norm)
	}
}

// testBorderedUpdate runs backend.BorderedUpdate on the rank-one cases read
// as bordering problems (U, d, v; alpha = rho; with w = e_{n+1}, and for
// tall U also a unit w orthogonal to [U; 0]) and checks ascending values,
// orthonormal columns (<= 20 (m+n+2) eps) and the reconstruction of
// B [diag(d) z; z^T alpha] B^T, B = [[U; 0] w], to 20 (m+n+2) eps S with
// S = max|d| + |alpha| + 2|z| (backward stability of the arrowhead solve;
// forming z and the reference adds n eps S).
func testBorderedUpdate(t *testing.T, b backend.Backend) {
	rng := newRand(10)
	for _, c := range r1Cases(rng) {
		n, m := len(c.v), len(c.d)
		var ws [][]float64
		ws = append(ws, nil)
		if n > m {
			w := make([]float64, n+1)
			for i := range w {
				w[i] = rng.NormFloat64()
			}
			for pass := 0; pass < 2; pass++ {
				for j := 0; j < m; j++ {
					s := 0.0
					for i := 0; i < n; i++ {
						s += c.u[i][j] * w[i]
					}
					for i := 0; i < n; i++ {
						w[i] -= s * c.u[i][j]
					}
				}
			}
			s := math.Sqrt(dot(w, w))
			for i := range w {
				w[i] /= s
			}
			ws = append(ws, w)
		}
		for _, w := range ws {
			u := newView(n, m, 1, func(i, j int) float64 { return c.u[i][j] })
			uOut := newView(n+1, m+1, 2, func(int, int) float64 { return math.NaN() })
			dOut := make([]float64, m+1)
			if err := backend.BorderedUpdate(b, c.d, u.g, c.v, c.rho, w, dOut, uOut.g); err != nil {
				t.Errorf("%s: BorderedUpdate: %v", c.name, err)
				continue
			}
			u.checkUnchanged(t, c.name+" U")
			uOut.checkGuard(t, c.name+" uOut")
			z, _ := r1Scale(c)
			s := math.Abs(c.rho) + 2*math.Sqrt(dot(z, z))
			for _, x := range c.d {
				s = math.Max(s, math.Abs(x)+math.Abs(c.rho)+2*math.Sqrt(dot(z, z)))
			}
			tol := 20 * float64(m+n+2) * eps
			for i := 1; i <= m; i++ {
				if dOut[i] < dOut[i-1] {
					t.Errorf("%s: dOut not ascending at %d", c.name, i)
				}
			}
			if e := orthoErr(uOut.g); e > tol {
				t.Errorf("%s (w %v): ||U'^T U' - I||_max = %g", c.name, w != nil, e)
			}
			// Reference: B [D z; z^T alpha] B^T entry by entry.
			bcol := func(i, k int) float64 {
				if k < m {
					if i < n {
						return c.u[i][k]
					}
					return 0
				}
				if w != nil {
					return w[i]
				}
				if i == n {
					return 1
				}
				return 0
			}
			inner := func(k, l int) float64 {
				switch {
				case k < m && l < m:
					if k == l {
						return c.d[k]
					}
					return 0
				case k < m:
					return z[k]
				case l < m:
					return z[l]
				}
				return c.rho
			}
			worst := 0.0
			for i := 0; i <= n; i++ {
				for j := 0; j <= n; j++ {
					ref := 0.0
					for k := 0; k <= m; k++ {
						bik := bcol(i, k)
						if bik == 0 {
							continue
						}
						for l := 0; l <= m; l++ {
							ref += bik * inner(k, l) * bcol(j, l)
						}
					}
					got := 0.0
					for k := 0; k <= m; k++ {
						got += uOut.at(i, k) * dOut[k] * uOut.at(j, k)
					}
					worst = math.Max(worst, math.Abs(got-ref))
				}
			}
			if worst > tol*s {
				t.Errorf("%s (w %v): reconstruction error %g exceeds %g", c.name, w != nil, worst, tol*s)
			}
		}
	}
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

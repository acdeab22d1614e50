package backendtest

import (
	"errors"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// checkCholFactor checks that the view c holds L (lower, positive diagonal,
// strict upper zero) with |L L^T - A| <= 2*gamma_(n+1) |L||L^T| elementwise
// (backward error of Cholesky, Higham Thm 10.3; doubled for the reference
// product's own rounding).
func checkCholFactor(t *testing.T, name string, a [][]float64, c *view) {
	t.Helper()
	n := len(a)
	l := c.dense()
	for i := 0; i < n; i++ {
		if !(l[i][i] > 0) {
			t.Errorf("%s: L[%d,%d] = %v, want > 0", name, i, i, l[i][i])
			return
		}
		for j := i + 1; j < n; j++ {
			if l[i][j] != 0 {
				t.Errorf("%s: strict upper L[%d,%d] = %v, want 0", name, i, j, l[i][j])
				return
			}
		}
	}
	g := 2 * gamma(n+1)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s, sa float64
			for k := 0; k <= j; k++ {
				s += l[i][k] * l[j][k]
				sa += math.Abs(l[i][k] * l[j][k])
			}
			if math.Abs(s-a[i][j]) > g*sa {
				t.Errorf("%s: (L L^T - A)[%d,%d] = %g exceeds %g", name, i, j, s-a[i][j], g*sa)
				return
			}
		}
	}
}

func symView(a [][]float64, pad int, upper float64) *view {
	return newView(len(a), len(a), pad, func(i, j int) float64 {
		if j > i {
			return upper
		}
		return a[i][j]
	})
}

func testCholesky(t *testing.T, b backend.Backend) {
	rng := newRand(5)
	sizes := []int{0, 1, 2, 5, 31, 64, 97, 130, shortOr(150, 300)}
	for _, n := range sizes {
		a := spd(rng, n)
		// The strict upper triangle is NaN: it must not be read.
		c := symView(a, n%3, math.NaN())
		name := caseName("Cholesky SPD n=%d", n)
		if err := b.Cholesky(c.g); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c.checkGuard(t, name)
		checkCholFactor(t, name, a, c)
	}

	// Ill-conditioned SPD: A = Q diag(logspace(0, -10)) Q^T, condition 1e10.
	// Cholesky succeeds whenever cond(A) < 1/(c n u) (Higham Thm 10.7) and
	// the backward error bound still holds.
	for _, n := range []int{40, 120} {
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = math.Pow(10, -10*float64(i)/float64(n-1))
		}
		a := symFromSpectrum(randOrthogonal(rng, n), lam)
		c := symView(a, 1, 0)
		name := caseName("Cholesky ill-conditioned n=%d", n)
		if err := b.Cholesky(c.g); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkCholFactor(t, name, a, c)
	}

	// Indefinite: A = L L^T with A[p,p] lowered by L[p,p]^2 + 1/2, so the
	// leading minors up to p-1 are unchanged and pivot p is exactly -1/2 in
	// exact arithmetic (computed as A[p,p] - sum_k L[p,k]^2, rounding error
	// below gamma_n * A[p,p]).
	for _, tc := range [][2]int{{1, 0}, {5, 0}, {5, 4}, {40, 17}, {200, 0}, {200, 97}, {200, 150}, {200, 199}} {
		n, p := tc[0], tc[1]
		l := make([][]float64, n)
		for i := range l {
			l[i] = make([]float64, n)
			for j := 0; j < i; j++ {
				l[i][j] = (2*rng.Float64() - 1) / math.Sqrt(float64(n))
			}
			l[i][i] = 1 + rng.Float64()
		}
		a := make([][]float64, n)
		for i := range a {
			a[i] = make([]float64, n)
			for j := 0; j <= i; j++ {
				for k := 0; k <= j; k++ {
					a[i][j] += l[i][k] * l[j][k]
				}
				a[j][i] = a[i][j]
			}
		}
		a[p][p] -= l[p][p]*l[p][p] + 0.5
		c := symView(a, 2, 0)
		name := caseName("Cholesky indefinite n=%d pivot=%d", n, p)
		err := b.Cholesky(c.g)
		var npd *backend.NotPositiveDefiniteError
		if !errors.Is(err, zonal.ErrNotPositiveDefinite) || !errors.As(err, &npd) {
			t.Errorf("%s: err = %v, want *NotPositiveDefiniteError", name, err)
			continue
		}
		if npd.Pivot != p || math.Abs(npd.Value+0.5) > 1e-12*math.Max(1, math.Abs(a[p][p])) {
			t.Errorf("%s: pivot %d value %v, want pivot %d value -0.5", name, npd.Pivot, npd.Value, p)
		}
		c.checkGuard(t, name)
	}

	// Singular: [[1 1] [1 1]] fails at pivot 1 with the exact value 0.
	c := newView(2, 2, 0, func(int, int) float64 { return 1 })
	var npd *backend.NotPositiveDefiniteError
	if err := b.Cholesky(c.g); !errors.As(err, &npd) || npd.Pivot != 1 || npd.Value != 0 {
		t.Errorf("Cholesky singular: err = %v, want pivot 1 value 0", err)
	}
	// Negative first pivot.
	c = newView(1, 1, 0, func(int, int) float64 { return -3 })
	if err := b.Cholesky(c.g); !errors.As(err, &npd) || npd.Pivot != 0 || npd.Value != -3 {
		t.Errorf("Cholesky [-3]: err = %v, want pivot 0 value -3", err)
	}
	// NaN in the lower triangle at row r fails at pivot r (rows before it
	// are unaffected) with a NaN value.
	for _, tc := range [][3]int{{10, 5, 2}, {10, 3, 3}, {200, 150, 10}} {
		n, r, col := tc[0], tc[1], tc[2]
		a := spd(rng, n)
		a[r][col] = math.NaN()
		c := symView(a, 0, 0)
		err := b.Cholesky(c.g)
		if !errors.As(err, &npd) || npd.Pivot != r || !math.IsNaN(npd.Value) {
			t.Errorf("Cholesky NaN at [%d,%d] n=%d: err = %v, want pivot %d value NaN", r, col, n, err, r)
		}
	}
}

// lowerTri returns a random well-conditioned lower triangular matrix: unit
// order diagonal in [1, 2], off-diagonal entries of size 1/n.
func lowerTri(n int, seed uint64) [][]float64 {
	rng := newRand(seed)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
		for j := 0; j < i; j++ {
			l[i][j] = (2*rng.Float64() - 1) / float64(n)
		}
		l[i][i] = 1 + rng.Float64()
	}
	return l
}

func testTriSolve(t *testing.T, b backend.Backend) {
	rng := newRand(6)
	for _, n := range []int{0, 1, 2, 7, 33, 100, shortOr(130, 260)} {
		for _, nrhs := range []int{0, 1, 3, 50} {
			l := lowerTri(n, uint64(n*100+nrhs))
			for _, tr := range transposes {
				// The strict upper part of L is NaN: it must not be read.
				lv := symView(l, 1, math.NaN())
				bv := randView(rng, n, nrhs, 2)
				b0 := bv.dense()
				b.TriSolve(tr, lv.g, bv.g)
				name := caseName("TriSolve %s n=%d nrhs=%d", tname(tr), n, nrhs)
				lv.checkUnchanged(t, name+" L")
				bv.checkGuard(t, name+" B")
				checkTriResidual(t, name, tr, l, bv.dense(), b0)
			}
		}
	}
}

func testCholSolve(t *testing.T, b backend.Backend) {
	rng := newRand(7)
	for _, n := range []int{0, 1, 2, 9, 64, shortOr(100, 200)} {
		for _, nrhs := range []int{0, 1, 7, 40} {
			a := spd(rng, n)
			lv := symView(a, 1, math.NaN())
			if err := b.Cholesky(lv.g); err != nil {
				t.Fatalf("CholSolve setup n=%d: %v", n, err)
			}
			lv.snapshot()
			l := lv.dense()
			bv := randView(rng, n, nrhs, 1)
			b0 := bv.dense()
			b.CholSolve(lv.g, bv.g)
			name := caseName("CholSolve n=%d nrhs=%d", n, nrhs)
			lv.checkUnchanged(t, name+" L")
			bv.checkGuard(t, name+" B")
			// Two backward-stable triangular solves: |L L^T X - B| <=
			// 2*gamma_(2n+2) |L||L^T||X|; we form |L||L^T||X| explicitly.
			x := bv.dense()
			y, ys := refGemm(blas.Trans, blas.NoTrans, n, nrhs, n, 1, l, x, 0, nil)
			r, _ := refGemm(blas.NoTrans, blas.NoTrans, n, nrhs, n, 1, l, y, 0, nil)
			_, s := refGemm(blas.NoTrans, blas.NoTrans, n, nrhs, n, 1, l, ys, 0, nil)
			g := 2 * gamma(2*n+2)
		rows:
			for i := 0; i < n; i++ {
				for j := 0; j < nrhs; j++ {
					if math.Abs(r[i][j]-b0[i][j]) > g*s[i][j] {
						t.Errorf("%s: residual[%d,%d] = %g exceeds %g", name, i, j, r[i][j]-b0[i][j], g*s[i][j])
						break rows
					}
				}
			}
		}
	}
}

// spectra returns named test spectra of order n (ascending after sorting):
// distinct, clustered (exact repeats and 1e-12 splits), with zeros and mixed
// signs, and graded over 12 orders of magnitude.
func spectra(n int) map[string][]float64 {
	s := map[string][]float64{}
	mk := func(name string, f func(i int) float64) {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		s[name] = v
	}
	mk("distinct", func(i int) float64 { return float64(i) - float64(n)/3 })
	mk("cluster", func(i int) float64 {
		switch {
		case i < n/3:
			return 1
		case i < 2*n/3:
			return 2 + 1e-12*float64(i)
		}
		return float64(i)
	})
	mk("zeros", func(i int) float64 {
		if i%2 == 0 {
			return 0
		}
		return -float64(i)
	})
	mk("graded", func(i int) float64 { return math.Pow(10, -12*float64(i)/float64(max(n-1, 1))) })
	mk("identity", func(int) float64 { return 1 })
	// Extreme scales: LAPACK-style solvers rescale such matrices internally
	// (gonum v0.17's eigenvalue-only path used to panic there).
	mk("tiny", func(i int) float64 { return 1e-300 * (float64(i) + 1) })
	mk("huge", func(i int) float64 { return 1e300 * (float64(i) + 1) / float64(n) })
	return s
}

func testSymEig(t *testing.T, b backend.Backend) {
	rng := newRand(8)
	for _, n := range []int{0, 1, 2, 3, 10, 64, shortOr(80, 129)} {
		q := randOrthogonal(rng, n)
		names := make([]string, 0)
		sp := spectra(n)
		for k := range sp {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, sname := range names {
			lam := sp[sname]
			a := symFromSpectrum(q, lam)
			want := append([]float64(nil), lam...)
			sort.Float64s(want)
			norm := 0.0
			for _, x := range lam {
				norm = math.Max(norm, math.Abs(x))
			}
			// Weyl: |w_i - lambda_i| <= ||E||_2 <= 20 n u ||A||_2, plus the
			// rounding of forming Q diag(lambda) Q^T (n u ||A||).
			tol := 21 * float64(n+1) * eps * norm
			for _, vectors := range []bool{false, true} {
				v := symView(a, 2, math.NaN())
				w := make([]float64, n)
				name := caseName("SymEig %s n=%d vectors=%v", sname, n, vectors)
				if err := b.SymEig(v.g, w, vectors); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				v.checkGuard(t, name)
				for i := range w {
					if i > 0 && w[i] < w[i-1] {
						t.Errorf("%s: eigenvalues not ascending at %d", name, i)
						break
					}
					if math.Abs(w[i]-want[i]) > tol {
						t.Errorf("%s: w[%d] = %v, want %v (tol %g)", name, i, w[i], want[i], tol)
						break
					}
				}
				if !vectors {
					continue
				}
				// Orthogonality ||V^T V - I||_max <= 20 n u and residual
				// ||A V - V diag(w)||_max <= 20 n u ||A||.
				if e := orthoErr(v.g); e > 20*float64(n+1)*eps {
					t.Errorf("%s: ||V^T V - I||_max = %g", name, e)
				}
				vd := v.dense()
				av, _ := refGemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, vd, 0, nil)
				var r float64
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						r = math.Max(r, math.Abs(av[i][j]-vd[i][j]*w[j]))
					}
				}
				if r > 20*float64(n+1)*eps*math.Max(norm, math.SmallestNonzeroFloat64) {
					t.Errorf("%s: ||A V - V diag(w)||_max = %g", name, r)
				}
			}
		}
	}
	// NaN and Inf input are errors, not panics or garbage.
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		a := spd(rng, 4)
		a[2][1] = bad
		v := symView(a, 0, 0)
		if err := b.SymEig(v.g, make([]float64, 4), true); !errors.Is(err, zonal.ErrNonFinite) {
			t.Errorf("SymEig with %v: err = %v, want zonal.ErrNonFinite", bad, err)
		}
	}
}

// testCholeskyLower checks backend.CholeskyLower: the lower triangle is
// factored as by Cholesky (same backward-error bound), the strict upper
// triangle, filled with values that would spoil the factor if read, is left
// bit for bit as it was, on success and on failure (indefinite input).
func testCholeskyLower(t *testing.T, b backend.Backend) {
	rng := newRand(15)
	for _, n := range []int{0, 1, 2, 5, 31, 97, 130, shortOr(150, 300)} {
		a := spd(rng, n)
		c := symView(a, n%3, 0)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				c.g.Data[i*c.g.Stride+j] = float64(i*n+j) + 0.5 // distinct, and not A
			}
		}
		if n > 3 {
			c.g.Data[1*c.g.Stride+3] = math.NaN()
		}
		c.snapshot()
		name := caseName("CholeskyLower SPD n=%d", n)
		if err := backend.CholeskyLower(b, c.g); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		c.checkGuard(t, name)
		checkUpperKept(t, name, c)
		// Compare the lower triangle with a factor of A by Cholesky.
		l := c.dense()
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				l[i][j] = 0
			}
		}
		checkCholFactor(t, name, a, newView(n, n, 0, func(i, j int) float64 { return l[i][j] }))
	}
	// Indefinite: fails with a *NotPositiveDefiniteError and the strict upper
	// triangle intact.
	n := 40
	a := spd(rng, n)
	a[20][20] = -1
	c := symView(a, 1, 7)
	var npd *backend.NotPositiveDefiniteError
	if err := backend.CholeskyLower(b, c.g); !errors.As(err, &npd) || npd.Pivot > 20 {
		t.Errorf("CholeskyLower indefinite: err = %v, want *NotPositiveDefiniteError at pivot <= 20", err)
	}
	checkUpperKept(t, "CholeskyLower indefinite", c)
}

// checkUpperKept checks that the strict upper triangle of the square view c
// equals its snapshot bit for bit (NaN included).
func checkUpperKept(t *testing.T, name string, c *view) {
	t.Helper()
	n, s := c.g.Rows, c.g.Stride
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if got, want := c.g.Data[i*s+j], c.snap[i*s+j]; math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%s: strict upper [%d,%d] = %v, was %v", name, i, j, got, want)
				return
			}
		}
	}
}

// testTriSolveUpper checks backend.TriSolveUpper with the bound of
// testTriSolve (U = L^T of a random well-conditioned lower triangle); the
// strict lower triangle of U is NaN and must not be read.
func testTriSolveUpper(t *testing.T, b backend.Backend) {
	rng := newRand(16)
	for _, n := range []int{0, 1, 2, 7, 33, 100, shortOr(130, 260)} {
		for _, nrhs := range []int{0, 1, 3, 50} {
			l := lowerTri(n, uint64(n*100+nrhs+7))
			u := make([][]float64, n)
			for i := range u {
				u[i] = make([]float64, n)
				for j := i; j < n; j++ {
					u[i][j] = l[j][i]
				}
			}
			for _, tr := range transposes {
				uv := newView(n, n, 1, func(i, j int) float64 {
					if j < i {
						return math.NaN()
					}
					return u[i][j]
				})
				bv := randView(rng, n, nrhs, 2)
				b0 := bv.dense()
				backend.TriSolveUpper(b, tr, uv.g, bv.g)
				name := caseName("TriSolveUpper %s n=%d nrhs=%d", tname(tr), n, nrhs)
				uv.checkUnchanged(t, name+" U")
				bv.checkGuard(t, name+" B")
				checkTriResidual(t, name, tr, u, bv.dense(), b0)
			}
		}
	}
}

// checkTriResidual checks the solution x of op(T) x = b0 (T triangular, as
// a full n x n array with zeros off its triangle): residual |op(T) X - B| <=
// gamma_n |op(T)||X| (+ the residual's own rounding: gamma_(n+1) doubled).
func checkTriResidual(t *testing.T, name string, tr blas.Transpose, tri, x, b0 [][]float64) {
	t.Helper()
	n := len(tri)
	if n == 0 || len(x[0]) == 0 {
		return
	}
	nrhs := len(x[0])
	res, scale := refGemm(tr, blas.NoTrans, n, nrhs, n, 1, tri, x, 0, nil)
	g := 2 * gamma(n+2)
	for i := 0; i < n; i++ {
		for j := 0; j < nrhs; j++ {
			if math.Abs(res[i][j]-b0[i][j]) > g*scale[i][j] {
				t.Errorf("%s: residual[%d,%d] = %g exceeds %g", name, i, j, res[i][j]-b0[i][j], g*scale[i][j])
				return
			}
		}
	}
}

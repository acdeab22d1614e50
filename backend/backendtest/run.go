package backendtest

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal/backend"
)

// Run checks every method of b against reference computations and the
// identities stated in the package documentation.
func Run(t *testing.T, b backend.Backend) {
	t.Run("Shapes", func(t *testing.T) { testShapes(t, b) })
	t.Run("Gemm", func(t *testing.T) { testGemm(t, b) })
	t.Run("Syrk", func(t *testing.T) { testSyrk(t, b) })
	t.Run("Gemv", func(t *testing.T) { testGemv(t, b) })
	t.Run("Level1", func(t *testing.T) { testLevel1(t, b) })
	t.Run("Cholesky", func(t *testing.T) { testCholesky(t, b) })
	t.Run("TriSolve", func(t *testing.T) { testTriSolve(t, b) })
	t.Run("CholSolve", func(t *testing.T) { testCholSolve(t, b) })
	RunTriangles(t, b)
	t.Run("SymEig", func(t *testing.T) { testSymEig(t, b) })
	t.Run("RankOneUpdate", func(t *testing.T) { testRankOneUpdate(t, b) })
	t.Run("UpdateSequence", func(t *testing.T) { testUpdateSequence(t, b) })
	t.Run("BorderedUpdate", func(t *testing.T) { testBorderedUpdate(t, b) })
}

// RunTriangles runs the checks of backend.CholeskyLower and
// backend.TriSolveUpper (part of Run); the backend package also runs them on
// backends stripped of their optional interfaces, for the generic path.
func RunTriangles(t *testing.T, b backend.Backend) {
	t.Run("CholeskyLower", func(t *testing.T) { testCholeskyLower(t, b) })
	t.Run("TriSolveUpper", func(t *testing.T) { testTriSolveUpper(t, b) })
}

// Parity runs the same random cases on a and b and checks that the results
// agree within the sum of the two backends' error bounds (products, values)
// or the forward-error bounds of well-conditioned problems (factors,
// solutions, eigenvectors), as stated at each check.
func Parity(t *testing.T, a, b backend.Backend) {
	t.Run("Gemm", func(t *testing.T) {
		for _, sh := range [][3]int{{1, 1, 1}, {7, 17, 2}, {65, 33, 129}, {shortOr(100, 300), shortOr(90, 200), shortOr(110, 250)}} {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tA := range transposes {
				for _, tB := range transposes {
					rng := newRand(uint64(m*n + k))
					ar, ac, br, bc := m, k, k, n
					if tA == blas.Trans {
						ar, ac = k, m
					}
					if tB == blas.Trans {
						br, bc = n, k
					}
					av, bv := randView(rng, ar, ac, 1), randView(rng, br, bc, 0)
					c0 := randView(rng, m, n, 2)
					ca, cb := newView(m, n, 2, func(i, j int) float64 { return c0.at(i, j) }), newView(m, n, 1, func(i, j int) float64 { return c0.at(i, j) })
					a.Gemm(tA, tB, 1.5, av.g, bv.g, -0.5, ca.g)
					b.Gemm(tA, tB, 1.5, av.g, bv.g, -0.5, cb.g)
					_, scale := refGemm(tA, tB, m, n, k, 1.5, av.dense(), bv.dense(), -0.5, c0.dense())
					// Each is within gamma_k*scale of the exact product.
					compare(t, fmt.Sprintf("Gemm %s%s %dx%dx%d", tname(tA), tname(tB), m, n, k), ca, cb, func(i, j int) float64 { return 2 * gamma(k+2) * scale[i][j] })
				}
			}
		}
	})
	t.Run("Syrk", func(t *testing.T) {
		for _, sh := range [][2]int{{1, 1}, {33, 7}, {shortOr(90, 200), shortOr(120, 300)}} {
			n, k := sh[0], sh[1]
			for _, tr := range transposes {
				rng := newRand(uint64(n + k))
				ar, ac := n, k
				if tr == blas.Trans {
					ar, ac = k, n
				}
				av := randView(rng, ar, ac, 1)
				ca, cb := newView(n, n, 0, func(int, int) float64 { return math.NaN() }), newView(n, n, 1, func(int, int) float64 { return math.NaN() })
				a.Syrk(tr, 1, av.g, 0, ca.g)
				b.Syrk(tr, 1, av.g, 0, cb.g)
				tB := blas.Trans
				if tr == blas.Trans {
					tB = blas.NoTrans
				}
				ad := av.dense()
				_, scale := refGemm(tr, tB, n, n, k, 1, ad, ad, 0, nil)
				compare(t, fmt.Sprintf("Syrk %s n=%d k=%d", tname(tr), n, k), ca, cb, func(i, j int) float64 { return 2 * gamma(k+2) * scale[i][j] })
			}
		}
	})
	t.Run("Gemv+Dot", func(t *testing.T) {
		rng := newRand(11)
		m, n := 130, 77
		av := randView(rng, m, n, 3)
		x := newVec(n, 2, func(int) float64 { return 2*rng.Float64() - 1 })
		ya := newVec(m, -1, func(int) float64 { return 1 })
		yb := newVec(m, 1, func(int) float64 { return 1 })
		a.Gemv(blas.NoTrans, 2, av.g, x.v, 0.5, ya.v)
		b.Gemv(blas.NoTrans, 2, av.g, x.v, 0.5, yb.v)
		// |y_i| scale <= 2 n + 0.5 (entries in [-1, 1]).
		for i := 0; i < m; i++ {
			if math.Abs(ya.at(i)-yb.at(i)) > 4*gamma(n+2)*(2*float64(n)+0.5) {
				t.Errorf("Gemv parity: y[%d] %v vs %v", i, ya.at(i), yb.at(i))
				break
			}
		}
		if da, db := a.Dot(ya.v, yb.v), b.Dot(ya.v, yb.v); math.Abs(da-db) > 4*gamma(m+1)*math.Abs(da)+1e-300 {
			// ya == yb (to rounding), so the sum of |products| equals |dot|.
			t.Errorf("Dot parity: %v vs %v", da, db)
		}
	})
	t.Run("Cholesky", func(t *testing.T) {
		rng := newRand(12)
		n := shortOr(100, 250)
		sa := spd(rng, n)
		la, lb := symView(sa, 0, 0), symView(sa, 3, 0)
		if err := a.Cholesky(la.g); err != nil {
			t.Fatal(err)
		}
		if err := b.Cholesky(lb.g); err != nil {
			t.Fatal(err)
		}
		// cond(A) < 5 and each backward error ||dA||_2 <= n gamma_(n+1)
		// max a_ii (max a_ii <= 5 here): the factors differ by at most
		// 2 * cond * n * gamma_(n+1) * 5 * max|L| (first-order perturbation
		// of the Cholesky factor).
		tol := 2 * 5 * float64(n) * gamma(n+1) * 5 * maxAbs(la.dense())
		compare(t, "Cholesky", la, lb, func(int, int) float64 { return tol })

		// Solves with the same factor: forward error <= cond(A) times the
		// backward error, cond < 5; both solutions within 2*5*n*gamma_(2n+2)*max|X|.
		bv := randView(rng, n, 13, 0)
		xa, xb := newView(n, 13, 1, bv.at), newView(n, 13, 0, bv.at)
		a.CholSolve(la.g, xa.g)
		b.CholSolve(la.g, xb.g)
		compare(t, "CholSolve", xa, xb, func(int, int) float64 { return 2 * 5 * float64(n) * gamma(2*n+2) * 5 * maxAbs(xa.dense()) })
		for _, tr := range transposes {
			ta, tb := newView(n, 13, 1, bv.at), newView(n, 13, 0, bv.at)
			a.TriSolve(tr, la.g, ta.g)
			b.TriSolve(tr, la.g, tb.g)
			// cond(L) = sqrt(cond(A)) < 3.
			compare(t, "TriSolve "+tname(tr), ta, tb, func(int, int) float64 { return 2 * 3 * float64(n) * gamma(n+1) * maxAbs(ta.dense()) })
		}

		// The same failing pivot and value.
		sa[n/2][n/2] = -1
		fa, fb := symView(sa, 0, 0), symView(sa, 0, 0)
		ea, eb := a.Cholesky(fa.g), b.Cholesky(fb.g)
		pa, oka := ea.(*backend.NotPositiveDefiniteError)
		pb, okb := eb.(*backend.NotPositiveDefiniteError)
		if !oka || !okb || pa.Pivot != pb.Pivot || math.Abs(pa.Value-pb.Value) > 1e-12*(1+math.Abs(pa.Value)) {
			t.Errorf("Cholesky failure parity: %v vs %v", ea, eb)
		}
	})
	t.Run("SymEig", func(t *testing.T) {
		rng := newRand(13)
		n := shortOr(60, 120)
		q := randOrthogonal(rng, n)
		for name, lam := range spectra(n) {
			s := symFromSpectrum(q, lam)
			va, vb := symView(s, 0, 0), symView(s, 1, 0)
			wa, wb := make([]float64, n), make([]float64, n)
			if err := a.SymEig(va.g, wa, true); err != nil {
				t.Fatal(err)
			}
			if err := b.SymEig(vb.g, wb, true); err != nil {
				t.Fatal(err)
			}
			norm := math.Max(maxAbs([][]float64{lam}), math.SmallestNonzeroFloat64)
			tol := 2 * 21 * float64(n+1) * eps * norm
			for i := range wa {
				if math.Abs(wa[i]-wb[i]) > tol {
					t.Errorf("SymEig %s parity: w[%d] %v vs %v", name, i, wa[i], wb[i])
					break
				}
			}
			if name == "distinct" {
				// Gap 1 between eigenvalues: each eigenvector is determined up
				// to sign with angle error <= ||E||_2/gap (Davis-Kahan).
				compareColumns(t, "SymEig distinct", va, vb, 2*tol)
			}
		}
	})
	t.Run("RankOneUpdate", func(t *testing.T) {
		rng := newRand(14)
		for _, c := range r1Cases(rng) {
			da, ua, ea := r1Run(t, a, c)
			db, ub, eb := r1Run(t, b, c)
			if ea != nil || eb != nil {
				t.Errorf("%s: errors %v, %v", c.name, ea, eb)
				continue
			}
			_, scale := r1Scale(c)
			m, n := len(c.d), len(c.v)
			tol := 2 * 20 * float64(m+n+1) * eps * scale
			minGap := math.Inf(1)
			for i := range da {
				if math.Abs(da[i]-db[i]) > tol {
					t.Errorf("%s: dOut[%d] %v vs %v (tol %g)", c.name, i, da[i], db[i], tol)
					break
				}
				if i > 0 {
					minGap = math.Min(minGap, da[i]-da[i-1])
				}
			}
			// Vectors are unique up to sign only for well-separated values;
			// compare them when every gap exceeds 1e-3 scale (Davis-Kahan:
			// angle <= tol/gap).
			if m > 1 && minGap > 1e-3*scale {
				compareColumns(t, c.name, ua, ub, tol/minGap)
			}
		}
	})
}

// compare checks |x_ij - y_ij| <= tol(i, j) over the views.
func compare(t *testing.T, name string, x, y *view, tol func(i, j int) float64) {
	t.Helper()
	for i := 0; i < x.g.Rows; i++ {
		for j := 0; j < x.g.Cols; j++ {
			if d := math.Abs(x.at(i, j) - y.at(i, j)); !(d <= tol(i, j)) {
				t.Errorf("%s parity: [%d,%d] %v vs %v (diff %g, tol %g)", name, i, j, x.at(i, j), y.at(i, j), d, tol(i, j))
				return
			}
		}
	}
}

// compareColumns checks that the columns of x and y agree up to sign within tol.
func compareColumns(t *testing.T, name string, x, y *view, tol float64) {
	t.Helper()
	for j := 0; j < x.g.Cols; j++ {
		var dp float64
		for i := 0; i < x.g.Rows; i++ {
			dp += x.at(i, j) * y.at(i, j)
		}
		s := math.Copysign(1, dp)
		for i := 0; i < x.g.Rows; i++ {
			if d := math.Abs(x.at(i, j) - s*y.at(i, j)); d > tol {
				t.Errorf("%s: eigenvector %d differs at %d by %g (tol %g)", name, j, i, d, tol)
				return
			}
		}
	}
}

// Concurrent calls b from many goroutines at once (Gemm, Syrk, Cholesky,
// CholSolve, SymEig, RankOneUpdate on private operands) and checks every
// result against the one computed serially: a stateless backend returns
// bit-identical results. Run it under -race.
func Concurrent(t *testing.T, b backend.Backend) {
	workers := shortOr(4, 8)
	n := shortOr(32, 96)
	type result struct{ gemm, syrk, chol, sol, w, d []float64 }
	work := func(seed uint64) result {
		rng := newRand(seed)
		x := randView(rng, n, n, 1)
		y := randView(rng, n, n, 0)
		c := newView(n, n, 0, func(int, int) float64 { return 0 })
		b.Gemm(blas.NoTrans, blas.Trans, 1, x.g, y.g, 0, c.g)
		s := newView(n, n, 0, func(int, int) float64 { return 0 })
		b.Syrk(blas.Trans, 1, x.g, 0, s.g)
		spdm := spd(rng, n)
		l := symView(spdm, 0, 0)
		if err := b.Cholesky(l.g); err != nil {
			t.Error(err)
		}
		rhs := randView(rng, n, 3, 0)
		b.CholSolve(l.g, rhs.g)
		e := symView(spdm, 0, 0)
		w := make([]float64, n)
		if err := b.SymEig(e.g, w, true); err != nil {
			t.Error(err)
		}
		c1 := r1Cases(rng)[4]
		d := make([]float64, len(c1.d))
		uOut := generalOf(identity(len(c1.v)), len(c1.d))
		if err := b.RankOneUpdate(c1.d, generalOf(c1.u, len(c1.d)), c1.rho, c1.v, d, uOut); err != nil {
			t.Error(err)
		}
		return result{c.g.Data, s.g.Data, l.g.Data, rhs.g.Data, append(w, e.g.Data...), append(d, uOut.Data...)}
	}
	want := make([]result, workers)
	for i := range want {
		want[i] = work(uint64(100 + i))
	}
	got := make([]result, workers)
	var wg sync.WaitGroup
	for rep := 0; rep < 2; rep++ {
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = work(uint64(100 + i))
			}()
		}
		wg.Wait()
		for i := range got {
			for k, pair := range [][2][]float64{{got[i].gemm, want[i].gemm}, {got[i].syrk, want[i].syrk}, {got[i].chol, want[i].chol}, {got[i].sol, want[i].sol}, {got[i].w, want[i].w}, {got[i].d, want[i].d}} {
				for p := range pair[0] {
					if math.Float64bits(pair[0][p]) != math.Float64bits(pair[1][p]) {
						t.Errorf("worker %d result %d differs from the serial run at %d", i, k, p)
						break
					}
				}
			}
		}
	}
}

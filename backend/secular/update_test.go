package secular_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/secular"
)

// update runs secular.Update with fresh outputs.
func update(t testing.TB, find secular.RootFinder, d []float64, u blas64.General, rho float64, v []float64) ([]float64, blas64.General) {
	t.Helper()
	dOut := make([]float64, len(d))
	uOut := general(u.Rows, u.Cols)
	if err := secular.Update(find, nil, d, u, rho, v, dOut, uOut); err != nil {
		t.Fatalf("Update: %v", err)
	}
	return dOut, uOut
}

// checkUpdate verifies one update against a dense solve of the same matrix:
// ascending output, ||Uout^T Uout - I||_max <= c m eps with c = 20, the
// reconstruction ||Uout diag(dOut) Uout^T - P||_F <= c m eps scale with
// P = U(D + rho zz^T)U^T and scale = ||D||_F + |rho| |z|^2 (the size of the
// two summands, so cancellation in P does not inflate the bound), and, when
// U is square, every eigenvalue within c m eps scale of gonum's Dsyev.
// Backward stability of both algorithms gives errors of order m eps scale;
// c = 20 leaves room for the orthogonality of the input U (itself ~m eps).
func checkUpdate(t *testing.T, name string, d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) {
	t.Helper()
	m := u.Cols
	const c = 20
	tolM := c * float64(max(m, 1)) * eps
	if !isAscending(dOut) {
		t.Errorf("%s: eigenvalues not ascending: %v", name, dOut)
	}
	if e := orthErr(uOut); e > tolM {
		t.Errorf("%s: ||U^T U - I||_max = %.3g > %.3g", name, e, tolM)
	}
	z := make([]float64, m)
	for i := 0; i < u.Rows; i++ {
		for j := 0; j < m; j++ {
			z[j] += u.Data[i*u.Stride+j] * v[i]
		}
	}
	scale := 0.0
	for _, x := range d {
		scale += x * x
	}
	scale = math.Sqrt(scale)
	for _, x := range z {
		scale += math.Abs(rho) * x * x
	}
	p := projected(u, d, rho, v)
	b := compose(uOut, dOut, 0, nil)
	diff := 0.0
	for i := 0; i < p.Rows; i++ {
		for j := 0; j < p.Cols; j++ {
			x := b.Data[i*b.Stride+j] - p.Data[i*p.Stride+j]
			diff += x * x
		}
	}
	if diff = math.Sqrt(diff); diff > tolM*scale {
		t.Errorf("%s: reconstruction error %.3g > %.3g (scale %.3g)", name, diff, tolM*scale, scale)
	}
	// Interlacing (Weyl): with ds = sorted d, rho > 0 gives
	// ds_i <= lambda_i <= ds_{i+1} and lambda_last <= ds_last + rho|z|^2;
	// rho < 0 mirrors it. Tolerance as above.
	ds := append([]float64(nil), d...)
	sort.Float64s(ds)
	zsq := 0.0
	for _, x := range z {
		zsq += x * x
	}
	for i := range ds {
		lo, hi := ds[i], ds[i]
		if rho > 0 {
			if i+1 < m {
				hi = ds[i+1]
			} else {
				hi = ds[i] + rho*zsq
			}
		} else if rho < 0 {
			if i > 0 {
				lo = ds[i-1]
			} else {
				lo = ds[0] + rho*zsq
			}
		}
		if dOut[i] < lo-tolM*scale || dOut[i] > hi+tolM*scale {
			t.Errorf("%s: eigenvalue %d = %.17g outside the interlacing interval [%.17g, %.17g]", name, i, dOut[i], lo, hi)
		}
	}
	if u.Rows == m {
		ref, _ := symEig(t, p, false)
		for i := range ref {
			if e := math.Abs(ref[i] - dOut[i]); e > tolM*scale {
				t.Errorf("%s: eigenvalue %d = %.17g, dense %.17g, diff %.3g > %.3g", name, i, dOut[i], ref[i], e, tolM*scale)
			}
		}
	}
}

func TestUpdateRandom(t *testing.T) {
	rng := newRand(10)
	// 130 and 300 have two or more ranges of >= 64 roots each, so the
	// root finding and Gu-Eisenstat products run on several goroutines
	// (when GOMAXPROCS > 1; see TestUpdateParallelSplit).
	sizes := []int{0, 1, 2, 3, 4, 10, 60, 130, 300}
	if testing.Short() {
		sizes = sizes[:len(sizes)-1] // the dense references dominate under -race
	}
	for _, m := range sizes {
		for _, extra := range []int{0, 5} {
			n := m + extra
			for _, rho := range []float64{-1e8, -2, -0.01, 0, 1e-8, 0.5, 3, 1e8} {
				d := randVec(rng, m)
				sort.Float64s(d)
				u := randOrtho(t, rng, n, m)
				v := randVec(rng, n)
				dOut, uOut := update(t, nil, d, u, rho, v)
				checkUpdate(t, fmt.Sprintf("m=%d n=%d rho=%g", m, n, rho), d, u, rho, v, dOut, uOut)
			}
		}
	}
}

// TestUpdateDeflation covers every deflation path and the degenerate
// spectra incremental KPCA produces.
func TestUpdateDeflation(t *testing.T) {
	rng := newRand(11)
	const m = 12
	graded := make([]float64, m)
	for j := range graded {
		graded[j] = math.Pow(10, -18+18*float64(j)/float64(m-1))
	}
	wide := make([]float64, m)
	for j := range wide {
		wide[j] = math.Pow(10, -300+600*float64(j)/float64(m-1))
	}
	cases := []struct {
		name string
		d    []float64
		z    []float64 // z = U^T v; nil means random
		rho  float64
		// wantK is the number of roots left after deflation when it is
		// known exactly (0: not checked); the root finder sees K >= 3 only.
		wantK int
	}{
		{"zero z entries", seq(m, 0, 1), []float64{1, 0, 2, 0, 0, 3, -1, 0, 1, 1, 0, 2}, 1, 7},
		{"z = e_5", seq(m, 0, 1), unit(m, 5), 2, 0},
		{"z = e_0 negative rho", seq(m, 0, 1), unit(m, 0), -2, 0},
		{"exact duplicates", []float64{1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 5, 6}, nil, 1, 6},
		{"exact duplicates negative rho", []float64{1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 5, 6}, nil, -1, 6},
		{"all equal", seq(m, 3, 0), nil, 0.7, 0},
		{"cluster 1e-15 apart", seq(m, 1, 1e-15), nil, 1, 0},
		{"cluster 1e-14 apart plus outliers", append(append([]float64{-5}, seq(m-2, 1, 1e-14)...), 9), nil, 1, 0},
		{"zero eigenvalues", append(seq(8, 0, 0), 1, 2, 3, 4), nil, 1, 5},
		{"zero eigenvalues negative rho", append(seq(8, 0, 0), 1, 2, 3, 4), nil, -0.5, 5},
		{"graded 1e-18..1", graded, nil, 1, 0},
		{"graded 1e-18..1 tiny rho", graded, nil, 1e-17, 0},
		{"graded 1e-18..1 negative rho", graded, nil, -1e-3, 0},
		{"graded 1e-300..1e300", wide, nil, 1, 0},
		{"graded 1e-300..1e300 huge negative rho", wide, nil, -1e250, 0},
		{"subnormal", scaleVec(seq(m, 1, 1), 1e-310), nil, 1e-310, 0},
		{"huge rho", seq(m, 0, 1), nil, 1e15, 0},
		{"tiny rho", seq(m, 0, 1), nil, 1e-15, 0},
		{"tiny z", seq(m, 0, 1), scaleVec(randVec(rng, m), 1e-12), 1, 0},
		{"unsorted d", []float64{3, 1, 2, 0, 5, 4, 9, 8, 7, 6, 11, 10}, nil, 1, 0},
		{"unsorted d negative rho", []float64{3, 1, 2, 0, 5, 4, 9, 8, 7, 6, 11, 10}, nil, -1, 0},
		{"zero v", seq(m, 0, 1), make([]float64, m), 1, 0},
		{"zero rho unsorted", []float64{3, 1, 2, 0, 5, 4, 9, 8, 7, 6, 11, 10}, nil, 0, 0},
	}
	for _, c := range cases {
		for _, n := range []int{m, m + 3} {
			u := randOrtho(t, rng, n, m)
			z := c.z
			if z == nil {
				z = randVec(rng, m)
			}
			// v = U z (plus, for n > m, a component outside span(U) that the
			// update must ignore).
			v := make([]float64, n)
			for i := 0; i < n; i++ {
				for j := 0; j < m; j++ {
					v[i] += u.Data[i*u.Stride+j] * z[j]
				}
			}
			if n > m {
				perp := randVec(rng, n)
				for j := 0; j < m; j++ {
					dot := 0.0
					for i := 0; i < n; i++ {
						dot += u.Data[i*u.Stride+j] * perp[i]
					}
					for i := 0; i < n; i++ {
						perp[i] -= dot * u.Data[i*u.Stride+j]
					}
				}
				for i := range v {
					v[i] += perp[i]
				}
			}
			calls := 0
			count := func(i int, d, z []float64, rho float64, delta []float64) (float64, error) {
				calls++
				return secular.Laed4(i, d, z, rho, delta)
			}
			dOut, uOut := update(t, count, c.d, u, c.rho, v)
			name := fmt.Sprintf("%s n=%d", c.name, n)
			checkUpdate(t, name, c.d, u, c.rho, v, dOut, uOut)
			if c.wantK > 0 && calls != c.wantK {
				t.Errorf("%s: %d roots after deflation, want %d", name, calls, c.wantK)
			}
		}
	}
}

func seq(n int, start, step float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = start + float64(i)*step
	}
	return x
}

func unit(n, k int) []float64 {
	x := make([]float64, n)
	x[k] = 1
	return x
}

func scaleVec(x []float64, s float64) []float64 {
	for i := range x {
		x[i] *= s
	}
	return x
}

// TestUpdateRootFinderHook checks that a supplied RootFinder does the root
// finding (the netlib backend passes dlaed4 this way), is only called with
// at least 3 poles and normalised z, that Gemm goes through the caller, and
// that a failing RootFinder is backed up by the Go iteration.
func TestUpdateRootFinderHook(t *testing.T) {
	const m = 30
	d, u, v := randProblem(t, newRand(12), m)
	calls := 0
	find := func(i int, d, z []float64, rho float64, delta []float64) (float64, error) {
		calls++
		if len(d) < 3 {
			t.Errorf("root finder called with %d poles", len(d))
		}
		if zz := blas64.Nrm2(blas64.Vector{N: len(z), Inc: 1, Data: z}); zz > 1+1e-14 {
			t.Errorf("root finder called with ||z|| = %v", zz)
		}
		return secular.Laed4(i, d, z, rho, delta)
	}
	gemms := 0
	gemm := func(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
		gemms++
		blas64.Gemm(tA, tB, alpha, a, b, beta, c)
	}
	dOut := make([]float64, m)
	uOut := general(m, m)
	if err := secular.Update(find, gemm, d, u, 1.5, v, dOut, uOut); err != nil {
		t.Fatal(err)
	}
	if calls != m || gemms != 1 {
		t.Errorf("root finder called %d times (want %d), gemm %d times (want 1: U*Utilde)", calls, m, gemms)
	}
	checkUpdate(t, "hooked", d, u, 1.5, v, dOut, uOut)

	// A failing root finder (an error or a NaN root) falls back to the Go
	// iteration: the update still succeeds and is correct.
	bad := func(int, []float64, []float64, float64, []float64) (float64, error) {
		return 0, errors.New("boom")
	}
	nan := func(int, []float64, []float64, float64, []float64) (float64, error) { return math.NaN(), nil }
	for name, f := range map[string]secular.RootFinder{"error": bad, "NaN": nan} {
		if err := secular.Update(f, nil, d, u, 1.5, v, dOut, uOut); err != nil {
			t.Errorf("failing root finder (%s): err = %v, want the Go fallback", name, err)
			continue
		}
		checkUpdate(t, "fallback "+name, d, u, 1.5, v, dOut, uOut)
	}
}

func TestUpdateErrors(t *testing.T) {
	rng := newRand(13)
	const m = 4
	d := []float64{1, 2, 3, 4}
	u := randOrtho(t, rng, m, m)
	v := randVec(rng, m)
	ok := func() ([]float64, blas64.General) { return make([]float64, m), general(m, m) }
	withNaN := func(x []float64, i int, val float64) []float64 {
		y := append([]float64(nil), x...)
		y[i] = val
		return y
	}
	uNaN := general(m, m)
	copy(uNaN.Data, u.Data)
	uNaN.Data[5] = math.Inf(-1)
	dOut, uOut := ok()
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"NaN d", func() error { return secular.Update(nil, nil, withNaN(d, 2, math.NaN()), u, 1, v, dOut, uOut) }, zonal.ErrNonFinite},
		{"Inf v", func() error { return secular.Update(nil, nil, d, u, 1, withNaN(v, 0, math.Inf(1)), dOut, uOut) }, zonal.ErrNonFinite},
		{"NaN rho", func() error { return secular.Update(nil, nil, d, u, math.NaN(), v, dOut, uOut) }, zonal.ErrNonFinite},
		{"Inf rho", func() error { return secular.Update(nil, nil, d, u, math.Inf(1), v, dOut, uOut) }, zonal.ErrNonFinite},
		{"Inf in U", func() error { return secular.Update(nil, nil, d, uNaN, 1, v, dOut, uOut) }, zonal.ErrNonFinite},
		// Row 1 of uNaN holds the Inf: with v_1 = 0 it does not reach z.
		{"Inf in U where v is 0", func() error { return secular.Update(nil, nil, d, uNaN, 1, withNaN(v, 1, 0), dOut, uOut) }, zonal.ErrNonFinite},
		{"NaN in U", func() error {
			b := general(m, m)
			copy(b.Data, u.Data)
			b.Data[m*m-1] = math.NaN()
			return secular.Update(nil, nil, d, b, 1, v, dOut, uOut)
		}, zonal.ErrNonFinite},
		{"overflowing rho|z|^2", func() error {
			return secular.Update(nil, nil, d, u, 1e300, scaleVec(randVec(rng, m), 1e10), dOut, uOut)
		}, zonal.ErrNonFinite},
		{"short d", func() error { return secular.Update(nil, nil, d[:3], u, 1, v, dOut, uOut) }, zonal.ErrShape},
		{"short v", func() error { return secular.Update(nil, nil, d, u, 1, v[:3], dOut, uOut) }, zonal.ErrShape},
		{"short dOut", func() error { return secular.Update(nil, nil, d, u, 1, v, dOut[:2], uOut) }, zonal.ErrShape},
		{"uOut rows", func() error { return secular.Update(nil, nil, d, u, 1, v, dOut, general(m+1, m)) }, zonal.ErrShape},
		{"bad stride", func() error {
			b := u
			b.Stride = m - 1
			return secular.Update(nil, nil, d, b, 1, v, dOut, uOut)
		}, zonal.ErrShape},
		{"short data", func() error {
			b := uOut
			b.Data = b.Data[:len(b.Data)-1]
			return secular.Update(nil, nil, d, u, 1, v, dOut, b)
		}, zonal.ErrShape},
		{"negative shape", func() error {
			return secular.Update(nil, nil, nil, blas64.General{Rows: -1}, 1, nil, nil, blas64.General{Rows: -1})
		}, zonal.ErrShape},
	}
	for _, c := range cases {
		if err := c.run(); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestUpdateStrided runs on views with stride > cols and checks inputs are
// left untouched.
func TestUpdateStrided(t *testing.T) {
	rng := newRand(14)
	const n, m = 9, 7
	u0 := randOrtho(t, rng, n, m)
	u := blas64.General{Rows: n, Cols: m, Stride: m + 3, Data: make([]float64, n*(m+3))}
	for i := 0; i < n; i++ {
		copy(u.Data[i*u.Stride:], u0.Data[i*m:(i+1)*m])
	}
	uCopy := append([]float64(nil), u.Data...)
	d := randVec(rng, m)
	sort.Float64s(d)
	dCopy := append([]float64(nil), d...)
	v := randVec(rng, n)
	uOut := blas64.General{Rows: n, Cols: m, Stride: m + 2, Data: make([]float64, n*(m+2))}
	dOut := make([]float64, m)
	if err := secular.Update(nil, nil, d, u, -0.8, v, dOut, uOut); err != nil {
		t.Fatal(err)
	}
	for i := range uCopy {
		if uCopy[i] != u.Data[i] {
			t.Fatal("Update modified U")
		}
	}
	for i := range d {
		if d[i] != dCopy[i] {
			t.Fatal("Update modified d")
		}
	}
	compact := general(n, m)
	for i := 0; i < n; i++ {
		copy(compact.Data[i*m:(i+1)*m], uOut.Data[i*uOut.Stride:])
	}
	checkUpdate(t, "strided", d, u0, -0.8, v, dOut, compact)
}

// TestUpdateSuccessive applies 1000 random rank-one updates (both signs) to
// a 80 x 80 eigensystem, each starting from the previous output, and tracks
// the exact matrix alongside. Measured drift after 1000 updates: about
// 1.6e-14 in orthogonality and 2.6e-14 relative reconstruction; each update adds
// O(m eps) and the errors behave like a random walk. Bounds: orthogonality
// <= 4 sqrt(steps) m eps, reconstruction <= 4 sqrt(steps) m eps relative
// to ||A||_F (both ~1.1e-12 for 1000 steps: about 40x the measurement).
func TestUpdateSuccessive(t *testing.T) {
	m, steps := 80, 1000
	if testing.Short() {
		m, steps = 40, 200
	}
	rng := newRand(15)
	d := randVec(rng, m)
	sort.Float64s(d)
	u := randOrtho(t, rng, m, m)
	a := compose(u, d, 0, nil)
	dOut := make([]float64, m)
	uOut := general(m, m)
	for s := 0; s < steps; s++ {
		v := randVec(rng, m)
		rho := (rng.Float64()*2 - 1) / float64(m)
		if err := secular.Update(nil, nil, d, u, rho, v, dOut, uOut); err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		for i := range v {
			for j := range v {
				a.Data[i*m+j] += rho * v[i] * v[j]
			}
		}
		d, dOut = dOut, d
		u, uOut = uOut, u
	}
	bound := 4 * math.Sqrt(float64(steps)) * float64(m) * eps
	orth, rec := orthErr(u), reconErr(u, d, a)
	t.Logf("after %d updates of size %d: orthogonality %.3g, relative reconstruction %.3g (bound %.3g)", steps, m, orth, rec, bound)
	if orth > bound || rec > bound {
		t.Errorf("drift too large: orthogonality %.3g, reconstruction %.3g, bound %.3g", orth, rec, bound)
	}
	ref, _ := symEig(t, a, false)
	for i := range ref {
		if e := math.Abs(ref[i] - d[i]); e > bound*frob(a) {
			t.Errorf("eigenvalue %d: %.17g vs dense %.17g", i, d[i], ref[i])
		}
	}
}

// gaussK is exp(-|x-y|^2 / (2 sigma^2)).
func gaussK(x, y []float64, sigma float64) float64 {
	s := 0.0
	for i := range x {
		t := x[i] - y[i]
		s += t * t
	}
	return math.Exp(-s / (2 * sigma * sigma))
}

// TestUpdateGrowingKernel is the incremental kernel PCA scenario (Hallgren
// and Northrop): the Gaussian kernel matrix grows by one row and column per
// point. With a = K(X, x_new) and k = K(x_new, x_new),
//
//	[[K, a], [a^T, k]] = [[K, 0], [0, k/4]] + (4/k) p p^T - (4/k) q q^T,
//
// p = (a, k/2), q = (a, k/4): the eigensystem is expanded by (k/4, e_new)
// and updated twice. The points include exact duplicates (zero eigenvalues,
// exactly equal d), near-duplicates, and far-away points whose kernel rows
// are ~1e-14 or underflow to 0 (tiny or decoupled eigenvalues). Every point
// is incorporated, and after every step (every 20th beyond 60 points, to keep
// the test fast) the eigenvalues match a batch
// eigendecomposition to 1e-10 relative to the largest; the measured
// agreement is ~2e-14.
func TestUpdateGrowingKernel(t *testing.T) {
	npts := 300
	if testing.Short() {
		npts = 60
	}
	rng := newRand(16)
	var pts [][]float64
	for len(pts) < npts {
		switch k := len(pts); {
		case k > 3 && k%7 == 0: // exact duplicate of an earlier point
			pts = append(pts, append([]float64(nil), pts[rng.IntN(k)]...))
		case k > 3 && k%11 == 0: // near duplicate
			p := append([]float64(nil), pts[rng.IntN(k)]...)
			p[0] += 1e-9
			pts = append(pts, p)
		case k%13 == 5: // far away: kernel values ~1e-14 to the cloud
			pts = append(pts, []float64{8 + rng.Float64(), 0})
		case k%17 == 9: // very far: kernel values underflow to 0
			pts = append(pts, []float64{100 * float64(k), -50})
		default:
			pts = append(pts, []float64{rng.NormFloat64(), rng.NormFloat64()})
		}
	}
	const sigma = 1.0
	d := []float64{gaussK(pts[0], pts[0], sigma)}
	u := blas64.General{Rows: 1, Cols: 1, Stride: 1, Data: []float64{1}}
	worst := 0.0
	for m := 1; m < npts; m++ {
		x := pts[m]
		a := make([]float64, m)
		for i := 0; i < m; i++ {
			a[i] = gaussK(pts[i], x, sigma)
		}
		k := gaussK(x, x, sigma)
		// Expand: U' = blockdiag(U, 1), d' = (d, k/4) (unsorted: Update sorts).
		ue := general(m+1, m+1)
		for i := 0; i < m; i++ {
			copy(ue.Data[i*(m+1):i*(m+1)+m], u.Data[i*u.Stride:i*u.Stride+m])
		}
		ue.Data[m*(m+1)+m] = 1
		de := append(append([]float64(nil), d...), k/4)
		p := append(append([]float64(nil), a...), k/2)
		q := append(append([]float64(nil), a...), k/4)
		d1 := make([]float64, m+1)
		u1 := general(m+1, m+1)
		if err := secular.Update(nil, nil, de, ue, 4/k, p, d1, u1); err != nil {
			t.Fatalf("point %d, first update: %v", m, err)
		}
		d2 := make([]float64, m+1)
		u2 := general(m+1, m+1)
		if err := secular.Update(nil, nil, d1, u1, -4/k, q, d2, u2); err != nil {
			t.Fatalf("point %d, second update: %v", m, err)
		}
		d, u = d2, u2
		if m >= 60 && m%20 != 0 && m != npts-1 {
			continue // batch reference at every point up to 60, then every 20
		}
		// Batch reference.
		kb := general(m+1, m+1)
		for i := 0; i <= m; i++ {
			for j := 0; j <= m; j++ {
				kb.Data[i*(m+1)+j] = gaussK(pts[i], pts[j], sigma)
			}
		}
		ref, _ := symEig(t, kb, false)
		top := math.Max(math.Abs(ref[0]), math.Abs(ref[m]))
		for i := range ref {
			e := math.Abs(ref[i]-d[i]) / top
			worst = math.Max(worst, e)
			if e > 1e-10 {
				t.Fatalf("point %d: eigenvalue %d = %.17g, batch %.17g (rel %.3g)", m, i, d[i], ref[i], e)
			}
		}
		if m == npts-1 {
			orth, rec := orthErr(u), reconErr(u, d, kb)
			t.Logf("%d points: max eigenvalue error %.3g relative to the largest; orthogonality %.3g; reconstruction %.3g", npts, worst, orth, rec)
			// Two updates per point, each O(m eps): 1e-12 is ~50x the measurement
			// (1.5e-14 and 1.9e-14 at 120 points).
			if orth > 1e-12 || rec > 1e-12 {
				t.Errorf("final orthogonality %.3g, reconstruction %.3g > 1e-12", orth, rec)
			}
		}
	}
}

func ExampleUpdate() {
	// A = diag(1, 3) plus v v^T with v = (1, 1): [[2, 1], [1, 4]],
	// eigenvalues 3 -+ sqrt(2).
	d := []float64{1, 3}
	u := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, 0, 0, 1}}
	dOut := make([]float64, 2)
	uOut := blas64.General{Rows: 2, Cols: 2, Stride: 2, Data: make([]float64, 4)}
	if err := secular.Update(nil, nil, d, u, 1, []float64{1, 1}, dOut, uOut); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.6f %.6f\n", dOut[0], dOut[1])
	fmt.Printf("%.6f %.6f\n", 3-math.Sqrt2, 3+math.Sqrt2)
	// Output:
	// 1.585786 4.414214
	// 1.585786 4.414214
}

func ExampleLaed4() {
	// The roots of 1 + sum_j z_j^2/(d_j - x) interlace the poles d.
	d := []float64{0, 1, 2}
	z := []float64{0.5, 0.5, 0.5}
	delta := make([]float64, 3)
	for i := range d {
		lam, _ := secular.Laed4(i, d, z, 1, delta)
		fmt.Printf("root %d: %.6f\n", i, lam)
	}
	// Output:
	// root 0: 0.173679
	// root 1: 1.223669
	// root 2: 2.352652
}

// TestUpdateLargeClustered runs one update of size m = 300 (100 with -short)
// on a kernel-like spectrum: a third decaying geometrically from 1 to 1e-16,
// a third in tight clusters (spread 1e-13) and a third uniform, with rho of
// both signs. Checks as in checkUpdate (c = 20, bounds c m eps).
func TestUpdateLargeClustered(t *testing.T) {
	m := 300
	if testing.Short() {
		m = 100
	}
	rng := newRand(17)
	d := make([]float64, m)
	for j := range d {
		switch j % 3 {
		case 0:
			d[j] = math.Pow(10, -16*rng.Float64())
		case 1:
			d[j] = 1e-3*float64(1+j%5) + 1e-13*rng.Float64()
		default:
			d[j] = rng.Float64()
		}
	}
	sort.Float64s(d)
	u := randOrtho(t, rng, m, m)
	for _, rho := range []float64{0.3, -0.3} {
		v := randVec(rng, m)
		dOut, uOut := update(t, nil, d, u, rho, v)
		checkUpdate(t, fmt.Sprintf("clustered m=%d rho=%g", m, rho), d, u, rho, v, dOut, uOut)
		t.Logf("m=%d rho=%g: ||U^T U - I||_max = %.3g (bound %.3g)", m, rho, orthErr(uOut), 20*float64(m)*eps)
	}
}

// TestUpdateParallelSplit: with GOMAXPROCS = 4 a 300-root problem is split
// in four ranges; the result is the same to the last bit as with one
// goroutine, except for the order of the Gu-Eisenstat partial products,
// which changes zhat by a few ulps: eigenvalues must agree exactly (the
// roots do not depend on the split) and vectors to 1e-13.
func TestUpdateParallelSplit(t *testing.T) {
	const m = 300
	d, u, v := randProblem(t, newRand(12), m)
	prev := runtime.GOMAXPROCS(1)
	d1, u1 := update(t, nil, d, u, 0.7, v)
	runtime.GOMAXPROCS(4)
	d4, u4 := update(t, nil, d, u, 0.7, v)
	runtime.GOMAXPROCS(prev)
	for i := range d1 {
		if d1[i] != d4[i] {
			t.Fatalf("eigenvalue %d: %.17g with one goroutine, %.17g with four", i, d1[i], d4[i])
		}
	}
	for i := range u1.Data {
		if e := math.Abs(u1.Data[i] - u4.Data[i]); e > 1e-13 {
			t.Fatalf("entry %d: %.17g vs %.17g", i, u1.Data[i], u4.Data[i])
		}
	}
	checkUpdate(t, "split in four", d, u, 0.7, v, d4, u4)
}

// randProblem returns sorted random d, a random m x m orthogonal U and a
// random v.
func randProblem(t *testing.T, rng *rand.Rand, m int) ([]float64, blas64.General, []float64) {
	d := randVec(rng, m)
	sort.Float64s(d)
	return d, randOrtho(t, rng, m, m), randVec(rng, m)
}

package secular_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/secular"
)

// arrowMatrix returns the dense arrowhead [diag(d) z; z^T alpha].
func arrowMatrix(d, z []float64, alpha float64) blas64.General {
	k := len(d)
	a := general(k+1, k+1)
	for i := 0; i < k; i++ {
		a.Data[i*a.Stride+i] = d[i]
		a.Data[i*a.Stride+k] = z[i]
		a.Data[k*a.Stride+i] = z[i]
	}
	a.Data[k*a.Stride+k] = alpha
	return a
}

// arrowCase is an arrowhead root problem.
type arrowCase struct {
	name  string
	d, z  []float64
	alpha float64
}

func arrowCases(rng *rand.Rand) []arrowCase {
	var cs []arrowCase
	sorted := func(k int, f func(i int) float64) []float64 {
		d := make([]float64, k)
		for i := range d {
			d[i] = f(i)
		}
		sort.Float64s(d)
		return d
	}
	for _, k := range []int{1, 2, 3, 10, 100} {
		cs = append(cs, arrowCase{fmt.Sprintf("random k=%d", k), sorted(k, func(int) float64 { return rng.NormFloat64() }), randVec(rng, k), rng.NormFloat64()})
	}
	// Clustered poles: gaps of 1e-12 relative; roots squeezed between them.
	cs = append(cs, arrowCase{"clustered", sorted(20, func(i int) float64 { return 1 + float64(i)*1e-12 }), randVec(rng, 20), 1})
	cs = append(cs, arrowCase{"two clusters", sorted(20, func(i int) float64 { return float64(i%2) + float64(i)*1e-10 }), randVec(rng, 20), 0.5})
	// Tiny border components (not deflated here: ArrowRoot takes them as given).
	z := randVec(rng, 15)
	z[2], z[7], z[11] = 1e-14, -1e-12, 1e-15
	cs = append(cs, arrowCase{"tiny z", sorted(15, func(int) float64 { return rng.NormFloat64() }), z, 0.3})
	// A huge or hugely negative corner: one root near alpha, the others
	// pinned just next to the poles.
	cs = append(cs, arrowCase{"huge alpha", sorted(12, func(int) float64 { return rng.NormFloat64() }), randVec(rng, 12), 1e12})
	cs = append(cs, arrowCase{"huge negative alpha", sorted(12, func(int) float64 { return rng.NormFloat64() }), randVec(rng, 12), -1e12})
	// Huge border against small poles, and a graded spectrum.
	cs = append(cs, arrowCase{"huge z", sorted(12, func(int) float64 { return rng.NormFloat64() }), scaleVec(randVec(rng, 12), 1e8), 0})
	cs = append(cs, arrowCase{"graded", sorted(14, func(i int) float64 { return math.Pow(10, -13+float64(i)) }), scaleVec(randVec(rng, 14), 1e-7), 1e-3})
	return cs
}

// TestArrowRootDense checks every root of every case against gonum's dense
// Dsyev of the arrowhead matrix: |lambda_j - lambda_j^dense| <= 20 (K+1) eps
// S with S = max|d| + |alpha| + 2|z| (a bound on the matrix norm; both
// solvers are backward stable), strict interlacing lambda_{j} < d_j <
// lambda_{j+1} as computed through delta (delta_j > 0 for poles above the
// root), and delta_i = d_i - lambda_j up to 4 eps |d_i| + the root error.
func TestArrowRootDense(t *testing.T) {
	rng := newRand(31)
	for _, c := range arrowCases(rng) {
		k := len(c.d)
		ref, _ := symEig(t, arrowMatrix(c.d, c.z, c.alpha), false)
		s := maxAbs(c.d) + math.Abs(c.alpha) + 2*nrm(c.z)
		tol := 20 * float64(k+1) * eps * s
		delta := make([]float64, k)
		for j := 0; j <= k; j++ {
			l, err := secular.ArrowRoot(j, c.d, c.z, c.alpha, delta)
			if err != nil {
				t.Fatalf("%s: root %d: %v", c.name, j, err)
			}
			if e := math.Abs(l - ref[j]); e > tol {
				t.Errorf("%s: root %d = %.17g, dense %.17g, diff %.3g > %.3g", c.name, j, l, ref[j], e, tol)
			}
			for i := 0; i < k; i++ {
				if (i < j && !(delta[i] < 0)) || (i >= j && !(delta[i] > 0)) {
					t.Errorf("%s: root %d: delta_%d = %g breaks interlacing", c.name, j, i, delta[i])
				}
				if e := math.Abs(delta[i] - (c.d[i] - l)); e > 4*eps*math.Abs(c.d[i])+tol {
					t.Errorf("%s: root %d: delta_%d = %g, d_i - lambda = %g", c.name, j, i, delta[i], c.d[i]-l)
				}
			}
		}
	}
}

// TestArrowRootErrors: bad index, non-increasing d, zero z, NaN.
func TestArrowRootErrors(t *testing.T) {
	delta := make([]float64, 3)
	for _, c := range []struct {
		name  string
		i     int
		d, z  []float64
		alpha float64
		want  error
	}{
		{"index", 4, []float64{1, 2, 3}, []float64{1, 1, 1}, 0, zonal.ErrShape},
		{"empty", 0, nil, nil, 0, zonal.ErrShape},
		{"not increasing", 1, []float64{1, 1, 3}, []float64{1, 1, 1}, 0, zonal.ErrShape},
		{"zero z", 1, []float64{1, 2, 3}, []float64{1, 0, 1}, 0, zonal.ErrShape},
		{"nan", 1, []float64{1, 2, 3}, []float64{1, 1, 1}, math.NaN(), zonal.ErrNonFinite},
	} {
		if _, err := secular.ArrowRoot(c.i, c.d, c.z, c.alpha, delta); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
}

func nrm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// borderedDense returns B [diag(d) z; z^T alpha] B^T with B = [[U; 0] w]
// (w nil: e_{n+1}) and z = U^T v, and z.
func borderedDense(u blas64.General, d, v []float64, alpha float64, w []float64) (blas64.General, []float64) {
	n, m := u.Rows, u.Cols
	z := make([]float64, m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			z[j] += u.Data[i*u.Stride+j] * v[i]
		}
	}
	b := general(n+1, m+1)
	for i := 0; i < n; i++ {
		copy(b.Data[i*b.Stride:i*b.Stride+m], u.Data[i*u.Stride:i*u.Stride+m])
	}
	for i := 0; i <= n; i++ {
		switch {
		case w != nil:
			b.Data[i*b.Stride+m] = w[i]
		case i == n:
			b.Data[i*b.Stride+m] = 1
		}
	}
	inner := arrowMatrix(d, z, alpha)
	// inner is in ascending-d order only if d is; the product does not care.
	out := general(n+1, n+1)
	tmp := general(n+1, m+1)
	for i := 0; i <= n; i++ {
		for j := 0; j <= m; j++ {
			s := 0.0
			for k := 0; k <= m; k++ {
				s += b.Data[i*b.Stride+k] * inner.Data[k*inner.Stride+j]
			}
			tmp.Data[i*tmp.Stride+j] = s
		}
	}
	for i := 0; i <= n; i++ {
		for j := 0; j <= n; j++ {
			s := 0.0
			for k := 0; k <= m; k++ {
				s += tmp.Data[i*tmp.Stride+k] * b.Data[j*b.Stride+k]
			}
			out.Data[i*out.Stride+j] = s
		}
	}
	return out, z
}

// checkBordered runs Bordered and checks: ascending values,
// ||Uout^T Uout - I||_max <= 20 (m+1) eps, reconstruction
// ||Uout diag(dOut) Uout^T - A||_F <= 20 (m+1) eps S with
// S = ||d||_2 + |alpha| + 2|z| and A the dense bordered matrix, and, when
// U is square, every eigenvalue within 20 (m+1) eps S of Dsyev's.
func checkBordered(t *testing.T, name string, d []float64, u blas64.General, v []float64, alpha float64, w []float64) ([]float64, blas64.General) {
	t.Helper()
	n, m := u.Rows, u.Cols
	dOut := make([]float64, m+1)
	uOut := general(n+1, m+1)
	if err := secular.Bordered(nil, d, u, v, alpha, w, dOut, uOut); err != nil {
		t.Fatalf("%s: Bordered: %v", name, err)
	}
	a, z := borderedDense(u, d, v, alpha, w)
	s := nrm(d) + math.Abs(alpha) + 2*nrm(z)
	tol := 20 * float64(m+1) * eps
	if !isAscending(dOut) {
		t.Errorf("%s: eigenvalues not ascending: %v", name, dOut)
	}
	if e := orthErr(uOut); e > tol {
		t.Errorf("%s: ||U^T U - I||_max = %.3g > %.3g", name, e, tol)
	}
	b := compose(uOut, dOut, 0, nil)
	diff := 0.0
	for i := 0; i <= n; i++ {
		for j := 0; j <= n; j++ {
			x := b.Data[i*b.Stride+j] - a.Data[i*a.Stride+j]
			diff += x * x
		}
	}
	if diff = math.Sqrt(diff); diff > tol*math.Max(s, 1e-300) {
		t.Errorf("%s: reconstruction error %.3g > %.3g", name, diff, tol*s)
	}
	if n == m {
		ref, _ := symEig(t, a, false)
		for i := range ref {
			if e := math.Abs(ref[i] - dOut[i]); e > tol*s {
				t.Errorf("%s: eigenvalue %d = %.17g, dense %.17g, diff %.3g > %.3g", name, i, dOut[i], ref[i], e, tol*s)
			}
		}
	}
	return dOut, uOut
}

// unitOrthTo returns a random unit vector of length n+1 orthogonal to the
// columns of [U; 0].
func unitOrthTo(rng *rand.Rand, u blas64.General) []float64 {
	n, m := u.Rows, u.Cols
	w := randVec(rng, n+1)
	for pass := 0; pass < 2; pass++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += u.Data[i*u.Stride+j] * w[i]
			}
			for i := 0; i < n; i++ {
				w[i] -= s * u.Data[i*u.Stride+j]
			}
		}
	}
	s := nrm(w)
	for i := range w {
		w[i] /= s
	}
	return w
}

func TestBorderedRandom(t *testing.T) {
	rng := newRand(5)
	for _, m := range []int{0, 1, 2, 3, 10, 57, 200} {
		d := randVec(rng, m)
		sort.Float64s(d)
		u := randOrtho(t, rng, m, m)
		checkBordered(t, fmt.Sprintf("square m=%d", m), d, u, randVec(rng, m), rng.NormFloat64(), nil)
	}
	// Tall U with a border direction w (the mean-adjusted and truncated
	// uses), unsorted d.
	for _, sh := range [][2]int{{1, 0}, {5, 2}, {40, 15}, {80, 79}} {
		n, m := sh[0], sh[1]
		u := randOrtho(t, rng, n, m)
		d := randVec(rng, m)
		checkBordered(t, fmt.Sprintf("tall n=%d m=%d with w", n, m), d, u, randVec(rng, n), rng.NormFloat64(), unitOrthTo(rng, u))
	}
}

// TestBorderedDeflation: exact and tiny z, repeated and clustered d, all d
// equal, v = 0, zero corner, huge corner and huge border, tiny scale.
func TestBorderedDeflation(t *testing.T) {
	rng := newRand(6)
	m := 12
	id := randOrtho(t, rng, m, m)
	for i := range id.Data {
		id.Data[i] = 0
	}
	for i := 0; i < m; i++ {
		id.Data[i*id.Stride+i] = 1
	}
	v := randVec(rng, m)
	v[0], v[5], v[11] = 0, 0, 0
	checkBordered(t, "z exact zeros", seq(m, -3, 0.5), id, v, 0.7, nil)
	v = randVec(rng, m)
	v[3], v[7] = 1e-18, -1e-17
	checkBordered(t, "z tiny", seq(m, -3, 0.5), id, v, 0.7, nil)
	checkBordered(t, "repeated d", []float64{-2, -1, -1, -1, 0, 0, 1, 1 + 1e-15, 1 + 2e-15, 3, 3, 5}, id, randVec(rng, m), 1, nil)
	clustered := make([]float64, m)
	for i := range clustered {
		clustered[i] = 1 + float64(i)*1e-13
	}
	checkBordered(t, "clustered d", clustered, randOrtho(t, rng, m, m), randVec(rng, m), 1, nil)
	eq := make([]float64, m)
	for i := range eq {
		eq[i] = 2
	}
	checkBordered(t, "all d equal", eq, randOrtho(t, rng, m, m), randVec(rng, m), 2, nil)
	checkBordered(t, "v zero", seq(m, 0, 1), randOrtho(t, rng, m, m), make([]float64, m), 3, nil)
	checkBordered(t, "all zero", make([]float64, m), randOrtho(t, rng, m, m), make([]float64, m), 0, nil)
	checkBordered(t, "huge alpha", seq(m, 0, 1), randOrtho(t, rng, m, m), randVec(rng, m), 1e13, nil)
	checkBordered(t, "huge negative alpha", seq(m, 0, 1), randOrtho(t, rng, m, m), randVec(rng, m), -1e13, nil)
	checkBordered(t, "huge border", seq(m, 0, 1), randOrtho(t, rng, m, m), scaleVec(randVec(rng, m), 1e9), 0, nil)
	checkBordered(t, "tiny scale", scaleVec(seq(m, 1, 1), 1e-200), randOrtho(t, rng, m, m), scaleVec(randVec(rng, m), 1e-200), 1e-200, nil)
	checkBordered(t, "huge scale", scaleVec(seq(m, 1, 1), 1e200), randOrtho(t, rng, m, m), scaleVec(randVec(rng, m), 1e200), 1e200, nil)
}

// TestBorderedKernelGrowth borders a Gaussian kernel matrix one point at a
// time, 150 points, feeding each output back as the next input, and checks
// the final decomposition: orthogonality <= 1e-13 and reconstruction of
// the kernel matrix <= 1e-13 relative (errors add up about linearly over
// the steps, each ~m eps).
func TestBorderedKernelGrowth(t *testing.T) {
	rng := newRand(7)
	const n, dim = 150, 4
	x := make([][]float64, n)
	for i := range x {
		x[i] = randVec(rng, dim)
	}
	var d []float64
	u := general(0, 0)
	for p := 0; p < n; p++ {
		v := make([]float64, p)
		for i := range v {
			v[i] = gaussK(x[i], x[p], 1.5)
		}
		dOut := make([]float64, p+1)
		uOut := general(p+1, p+1)
		if err := secular.Bordered(nil, d, u, v, 1, nil, dOut, uOut); err != nil {
			t.Fatalf("point %d: %v", p, err)
		}
		d, u = dOut, uOut
	}
	k := general(n, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k.Data[i*n+j] = gaussK(x[i], x[j], 1.5)
		}
	}
	if e := orthErr(u); e > 1e-13 {
		t.Errorf("orthogonality %.3g > 1e-13", e)
	}
	if e := reconErr(u, d, k); e > 1e-13 {
		t.Errorf("relative reconstruction error %.3g > 1e-13", e)
	}
}

func TestBorderedErrors(t *testing.T) {
	u := general(3, 3)
	for i := 0; i < 3; i++ {
		u.Data[i*3+i] = 1
	}
	ok := func() ([]float64, []float64, []float64, blas64.General) {
		return []float64{1, 2, 3}, []float64{1, 1, 1}, make([]float64, 4), general(4, 4)
	}
	d, v, dOut, uOut := ok()
	if err := secular.Bordered(nil, d, u, v[:2], 1, nil, dOut, uOut); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short v: %v", err)
	}
	if err := secular.Bordered(nil, d, u, v, 1, []float64{1}, dOut, uOut); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short w: %v", err)
	}
	if err := secular.Bordered(nil, d, u, v, 1, nil, dOut[:3], uOut); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short dOut: %v", err)
	}
	if err := secular.Bordered(nil, d, u, v, math.Inf(1), nil, dOut, uOut); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("Inf alpha: %v", err)
	}
	u.Data[4] = math.NaN()
	if err := secular.Bordered(nil, d, u, v, 1, nil, dOut, uOut); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in U: %v", err)
	}
}

// TestArrowRootIterations: the rational models converge in a few steps;
// over all cases of TestArrowRootDense the mean is at most 6 steps and no
// root takes more than 40 (bisection alone would take ~50 per root).
func TestArrowRootIterations(t *testing.T) {
	var count, total, worst int
	secular.SetIterHook(func(k int) { count++; total += k; worst = max(worst, k) })
	defer secular.SetIterHook(nil)
	rng := newRand(31)
	for _, c := range arrowCases(rng) {
		delta := make([]float64, len(c.d))
		for j := 0; j <= len(c.d); j++ {
			if _, err := secular.ArrowRoot(j, c.d, c.z, c.alpha, delta); err != nil {
				t.Fatal(err)
			}
		}
	}
	mean := float64(total) / float64(count)
	t.Logf("%d roots, mean %.2f steps, worst %d", count, mean, worst)
	if mean > 6 || worst > 40 {
		t.Errorf("mean %.2f steps (want <= 6), worst %d (want <= 40)", mean, worst)
	}
}

// TestBorderedRandomAdversarial mixes the hard structures at random over
// 300 small problems: poles drawn from a few clusters (exact duplicates,
// gaps down to 1e-15), border components spanning 1e-16..1, corners from
// -1e6 to 1e6, with and without a border direction; each is checked by
// checkBordered (orthogonality, reconstruction, dense eigenvalues).
func TestBorderedRandomAdversarial(t *testing.T) {
	rng := newRand(8)
	for it := 0; it < 300; it++ {
		m := 1 + rng.IntN(25)
		centres := randVec(rng, 1+rng.IntN(3))
		d := make([]float64, m)
		for i := range d {
			c := centres[rng.IntN(len(centres))]
			switch rng.IntN(3) {
			case 0:
				d[i] = c
			case 1:
				d[i] = c + math.Pow(10, -15+12*rng.Float64())*rng.NormFloat64()
			default:
				d[i] = rng.NormFloat64()
			}
		}
		n := m + rng.IntN(3)
		u := randOrtho(t, rng, n, m)
		v := randVec(rng, n)
		for i := range v {
			v[i] *= math.Pow(10, -16*rng.Float64()*float64(rng.IntN(2)))
		}
		alpha := rng.NormFloat64() * math.Pow(10, 6*(2*rng.Float64()-1))
		var w []float64
		if rng.IntN(2) == 1 {
			w = unitOrthTo(rng, u)
		}
		checkBordered(t, fmt.Sprintf("case %d (n=%d m=%d)", it, n, m), d, u, v, alpha, w)
	}
}

// TestBorderedOverflow: eigenvalues beyond the float64 range are an error,
// not Inf.
func TestBorderedOverflow(t *testing.T) {
	u := general(2, 2)
	u.Data[0], u.Data[3] = 1, 1
	err := secular.Bordered(nil, []float64{1.7e308, 1.7e308}, u, []float64{1.7e308, 1.7e308}, 1.7e308, nil, make([]float64, 3), general(3, 3))
	if !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("error %v, want ErrNonFinite", err)
	}
}

package secular_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

const eps = 0x1p-53

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5ec)) }

func general(r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*max(c, 1))}
}

// symEig returns the ascending eigenvalues of the symmetric matrix a (lower
// triangle read, a not modified) and, if vecs, the eigenvectors as columns.
func symEig(t testing.TB, a blas64.General, vecs bool) ([]float64, blas64.General) {
	t.Helper()
	n := a.Rows
	c := general(n, n)
	for i := 0; i < n; i++ {
		copy(c.Data[i*c.Stride:i*c.Stride+n], a.Data[i*a.Stride:i*a.Stride+n])
	}
	w := make([]float64, n)
	if n == 0 {
		return w, c
	}
	// Always EVCompute: gonum v0.17's Dsyev with EVNone panics in Dlascl
	// (Dsterf path) when the matrix needs scaling (norm beyond ~1e154 or
	// below ~1e-154).
	job := lapack.EVCompute
	s := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: c.Stride, Data: c.Data}
	work := make([]float64, 1)
	lapack64.Syev(job, s, w, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Syev(job, s, w, work, len(work)) {
		t.Fatal("reference Syev did not converge")
	}
	return w, c
}

// randOrtho returns an n x m matrix with orthonormal columns (eigenvectors of
// a random symmetric matrix).
func randOrtho(t testing.TB, rng *rand.Rand, n, m int) blas64.General {
	a := general(n, n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			x := rng.NormFloat64()
			a.Data[i*n+j], a.Data[j*n+i] = x, x
		}
	}
	_, q := symEig(t, a, true)
	u := general(n, m)
	for i := 0; i < n; i++ {
		copy(u.Data[i*u.Stride:i*u.Stride+m], q.Data[i*q.Stride:i*q.Stride+m])
	}
	return u
}

// compose returns U diag(d) U^T + rho v v^T (v may be nil).
func compose(u blas64.General, d []float64, rho float64, v []float64) blas64.General {
	n, m := u.Rows, u.Cols
	ud := general(n, m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			ud.Data[i*ud.Stride+j] = u.Data[i*u.Stride+j] * d[j]
		}
	}
	a := general(n, n)
	if n > 0 && m > 0 {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, ud, u, 0, a)
	}
	for i := range v {
		for j := range v {
			a.Data[i*a.Stride+j] += rho * v[i] * v[j]
		}
	}
	return a
}

// projected returns U (diag(d) + rho z z^T) U^T with z = U^T v.
func projected(u blas64.General, d []float64, rho float64, v []float64) blas64.General {
	n, m := u.Rows, u.Cols
	z := make([]float64, m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			z[j] += u.Data[i*u.Stride+j] * v[i]
		}
	}
	uz := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			uz[i] += u.Data[i*u.Stride+j] * z[j]
		}
	}
	return compose(u, d, rho, uz)
}

// orthErr is ||U^T U - I||_max.
func orthErr(u blas64.General) float64 {
	m := u.Cols
	g := general(m, m)
	if u.Rows > 0 && m > 0 {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, u, u, 0, g)
	}
	e := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			x := g.Data[i*g.Stride+j]
			if i == j {
				x--
			}
			e = math.Max(e, math.Abs(x))
		}
	}
	return e
}

func frob(a blas64.General) float64 {
	s := 0.0
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			x := a.Data[i*a.Stride+j]
			s += x * x
		}
	}
	return math.Sqrt(s)
}

// reconErr is ||U diag(d) U^T - a||_F / max(||a||_F, tiny).
func reconErr(u blas64.General, d []float64, a blas64.General) float64 {
	b := compose(u, d, 0, nil)
	diff := general(a.Rows, a.Cols)
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			diff.Data[i*diff.Stride+j] = b.Data[i*b.Stride+j] - a.Data[i*a.Stride+j]
		}
	}
	na := frob(a)
	if na == 0 {
		return frob(diff)
	}
	return frob(diff) / na
}

func maxAbs(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s = math.Max(s, math.Abs(v))
	}
	return s
}

func isAscending(x []float64) bool { return sort.Float64sAreSorted(x) }

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

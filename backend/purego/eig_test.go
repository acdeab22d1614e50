package purego

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestSymEigDivideAndConquer checks the divide-and-conquer path (several
// levels of merges above dcLeaf) on random, clustered and repeated spectra:
// residual ||A V - V diag(w)||_max <= 50 n u ||A||_max and orthogonality
// ||V^T V - I||_max <= 50 n u, the backward-stable bounds of a Householder
// reduction followed by dstedc-style merges with a modest constant.
func TestSymEigDivideAndConquer(t *testing.T) {
	const u = 0x1p-52
	rng := rand.New(rand.NewPCG(3, 4))
	largest := 300
	if testing.Short() {
		largest = 4*dcLeaf + 1 // still three levels of merges
	}
	for _, n := range []int{dcLeaf + 1, 2*dcLeaf + 3, largest} {
		for _, kind := range []string{"random", "clustered", "repeated"} {
			a := make([]float64, n*n)
			switch kind {
			case "random":
				for i := 0; i < n; i++ {
					for j := 0; j <= i; j++ {
						v := rng.NormFloat64()
						a[i*n+j], a[j*n+i] = v, v
					}
				}
			default:
				// Q diag(lambda) Q^T with Q from the QR-free product of
				// reflections, lambda clustered or repeated.
				lam := make([]float64, n)
				for i := range lam {
					if kind == "clustered" {
						lam[i] = float64(i%3) + 1e-13*float64(i)
					} else {
						lam[i] = float64(i % 2)
					}
				}
				q := randomOrthogonal(rng, n)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						s := 0.0
						for k := 0; k < n; k++ {
							s += q[i*n+k] * lam[k] * q[j*n+k]
						}
						a[i*n+j] = s
					}
				}
			}
			amax := 0.0
			for _, v := range a {
				amax = math.Max(amax, math.Abs(v))
			}
			v := append([]float64(nil), a...)
			w := make([]float64, n)
			if err := New().SymEig(blas64.General{Rows: n, Cols: n, Stride: n, Data: v}, w, true); err != nil {
				t.Fatalf("n=%d %s: %v", n, kind, err)
			}
			for i := 1; i < n; i++ {
				if w[i] < w[i-1] {
					t.Fatalf("n=%d %s: eigenvalues not ascending at %d", n, kind, i)
				}
			}
			av := make([]float64, n*n)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: n, Stride: n, Data: a},
				blas64.General{Rows: n, Cols: n, Stride: n, Data: v}, 0, blas64.General{Rows: n, Cols: n, Stride: n, Data: av})
			res, orth := 0.0, 0.0
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					res = math.Max(res, math.Abs(av[i*n+j]-v[i*n+j]*w[j]))
					s := 0.0
					for k := 0; k < n; k++ {
						s += v[k*n+i] * v[k*n+j]
					}
					if i == j {
						s--
					}
					orth = math.Max(orth, math.Abs(s))
				}
			}
			if tol := 50 * float64(n) * u * amax * math.Sqrt(float64(n)); res > tol {
				t.Errorf("n=%d %s: residual %g > %g", n, kind, res, tol)
			}
			if tol := 50 * float64(n) * u; orth > tol {
				t.Errorf("n=%d %s: orthogonality %g > %g", n, kind, orth, tol)
			}
		}
	}
}

// randomOrthogonal returns an n x n orthogonal matrix (row-major) as a
// product of n random Householder reflections.
func randomOrthogonal(rng *rand.Rand, n int) []float64 {
	q := make([]float64, n*n)
	for i := 0; i < n; i++ {
		q[i*n+i] = 1
	}
	x := make([]float64, n)
	for r := 0; r < n; r++ {
		norm := 0.0
		for i := range x {
			x[i] = rng.NormFloat64()
			norm += x[i] * x[i]
		}
		norm = math.Sqrt(norm)
		for i := range x {
			x[i] /= norm
		}
		// q = q (I - 2 x x^T)
		for i := 0; i < n; i++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += q[i*n+k] * x[k]
			}
			for k := 0; k < n; k++ {
				q[i*n+k] -= 2 * s * x[k]
			}
		}
	}
	return q
}

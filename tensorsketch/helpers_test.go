package tensorsketch

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
)

// randData returns an n x d matrix with entries N(0,1)/sqrt(d) of which a
// fraction density is nonzero.
func randData(n, d int, density float64, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rng.Float64() < density {
				x.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(d)*density))
			}
		}
	}
	return x
}

// toCSR converts a dense matrix to CSR (nonzeros only).
func toCSR(x *mat.Dense) *dataset.CSR {
	n, d := x.Dims()
	c := &dataset.CSR{Rows: n, Cols: d, RowPtr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if v := x.At(i, j); v != 0 {
				c.Col = append(c.Col, j)
				c.Val = append(c.Val, v)
			}
		}
		c.RowPtr[i+1] = len(c.Val)
	}
	return c
}

// exactK computes the kernel matrix of e on the rows of x.
func exactK(e expansion, x *mat.Dense) *mat.SymDense {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			k.SetSym(i, j, e.eval(x.RawRowView(i), x.RawRowView(j)))
		}
	}
	return k
}

// gram returns Z Z^T for features Z (n x D).
func gram(z *mat.Dense) *mat.SymDense {
	n, _ := z.Dims()
	g := mat.NewSymDense(n, nil)
	g.SymOuterK(1, z)
	return g
}

// spectralErrors returns eps_lambda = |(K+lambda I)^{-1/2} (Kt - K) (K+lambda I)^{-1/2}|_2
// (the smallest eps for which Kt is an (eps, lambda)-spectral approximation
// of K) and rel_spec = |Kt - K|_2 / |K|_2, by dense eigendecompositions.
func spectralErrors(t *testing.T, k, kt *mat.SymDense, lambda float64) (epsLambda, relSpec float64) {
	t.Helper()
	n := k.SymmetricDim()
	var es mat.EigenSym
	if !es.Factorize(k, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	// M = V diag((l+lambda)^{-1/2}) V^T
	s := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		c := 1 / math.Sqrt(math.Max(vals[j], 0)+lambda)
		for i := 0; i < n; i++ {
			s.Set(i, j, v.At(i, j)*c)
		}
	}
	var msq mat.Dense
	msq.Mul(s, v.T())
	diff := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			diff.SetSym(i, j, kt.At(i, j)-k.At(i, j))
		}
	}
	var tmp, e mat.Dense
	tmp.Mul(&msq, diff)
	e.Mul(&tmp, &msq)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, (e.At(i, j)+e.At(j, i))/2)
		}
	}
	return specNorm(t, sym), specNorm(t, diff) / math.Max(vals[n-1], 1e-300)
}

func specNorm(t *testing.T, a *mat.SymDense) float64 {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(a, false) {
		t.Fatal("eigendecomposition failed")
	}
	v := es.Values(nil)
	return math.Max(math.Abs(v[0]), math.Abs(v[len(v)-1]))
}

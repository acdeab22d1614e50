package kernels

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// newRand returns the package's deterministic generator for a seed and a
// stream (one stream per use, so maps built from one seed are independent).
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^stream))
}

// gaussianRows fills an m x d row-major slice with independent N(0,1) entries.
func gaussianRows(rng *rand.Rand, m, d int) []float64 {
	w := make([]float64, m*d)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	return w
}

// sphereRows returns m directions, each uniform on S^{d-1}. With orthogonal
// set, they come in blocks of d mutually orthogonal directions: the rows of
// Haar-distributed orthogonal matrices (QR of a Gaussian matrix with the signs
// of R's diagonal moved into Q), so each direction is still uniform.
func sphereRows(rng *rand.Rand, m, d int, orthogonal bool) []float64 {
	if !orthogonal {
		w := gaussianRows(rng, m, d)
		for i := 0; i < m; i++ {
			normalize(w[i*d : (i+1)*d])
		}
		return w
	}
	w := make([]float64, 0, m*d)
	for len(w) < m*d {
		q := haar(rng, d)
		need := min(d, m-len(w)/d)
		w = append(w, q.RawMatrix().Data[:need*d]...)
	}
	return w
}

// haar returns a d x d orthogonal matrix from the Haar measure (Mezzadri 2007).
func haar(rng *rand.Rand, d int) *mat.Dense {
	g := mat.NewDense(d, d, gaussianRows(rng, d, d))
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	for j := 0; j < d; j++ {
		if r.At(j, j) < 0 {
			for i := 0; i < d; i++ {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	// Rows of a Haar matrix are orthonormal and each is uniform on the sphere.
	return &q
}

func normalize(v []float64) {
	n := math.Sqrt(dot(v, v))
	if n == 0 { // probability zero; fall back to e_1
		v[0] = 1
		return
	}
	for i := range v {
		v[i] /= n
	}
}

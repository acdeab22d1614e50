package secular_test

import (
	"fmt"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/purego"
	"github.com/zonal-ml/zonal/backend/secular"
)

// benchProblem is a random m x m eigensystem and update vector.
func benchProblem(b *testing.B, m int) ([]float64, blas64.General, []float64) {
	rng := newRand(uint64(m))
	d := randVec(rng, m)
	sort.Float64s(d)
	return d, randOrtho(b, rng, m, m), randVec(rng, m)
}

// BenchmarkUpdate times one rank-one update of an m x m eigensystem (n = m)
// with the products through purego's Gemm (the RankOneUpdate of the purego
// backend) and through gonum's reference blas64.Gemm.
func BenchmarkUpdate(b *testing.B) {
	for _, m := range []int{100, 1000} {
		d, u, v := benchProblem(b, m)
		dOut := make([]float64, m)
		uOut := general(m, m)
		for _, g := range []struct {
			name string
			gemm secular.GemmFunc
		}{{"purego", purego.New().Gemm}, {"gonum", blas64.Gemm}} {
			b.Run(fmt.Sprintf("m=%d/gemm=%s", m, g.name), func(b *testing.B) {
				for b.Loop() {
					if err := secular.Update(nil, g.gemm, d, u, 0.7, v, dOut, uOut); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUpdateRoots times the O(m^2) part alone (z, roots, Gu-Eisenstat,
// inner eigenvectors, copies) by giving Update a no-op Gemm for the final
// product.
func BenchmarkUpdateRoots(b *testing.B) {
	const m = 1000
	d, u, v := benchProblem(b, m)
	dOut := make([]float64, m)
	uOut := general(m, m)
	noop := func(blas.Transpose, blas.Transpose, float64, blas64.General, blas64.General, float64, blas64.General) {
	}
	for b.Loop() {
		if err := secular.Update(nil, noop, d, u, 0.7, v, dOut, uOut); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDenseEig is the alternative the update replaces: a full
// eigendecomposition (values and vectors) of the updated m x m matrix by
// purego's SymEig (gonum Dsyev).
func BenchmarkDenseEig(b *testing.B) {
	for _, m := range []int{100, 1000} {
		d, u, v := benchProblem(b, m)
		a := compose(u, d, 0.7, v)
		w := make([]float64, m)
		work := general(m, m)
		bk := purego.New()
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			for b.Loop() {
				copy(work.Data, a.Data)
				if err := bk.SymEig(work, w, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

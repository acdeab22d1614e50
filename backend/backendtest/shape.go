package backendtest

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// testShapes checks that mismatched operands panic with an error wrapping
// zonal.ErrShape (shape mismatches are programming errors, as in blas64).
func testShapes(t *testing.T, b backend.Backend) {
	g := func(r, c int) blas64.General {
		return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*max(c, 1))}
	}
	vec := func(n int) blas64.Vector { return blas64.Vector{N: n, Inc: 1, Data: make([]float64, n)} }
	cases := map[string]func(){
		"Gemm inner": func() { b.Gemm(blas.NoTrans, blas.NoTrans, 1, g(2, 3), g(4, 2), 0, g(2, 2)) },
		"Gemm C":     func() { b.Gemm(blas.Trans, blas.NoTrans, 1, g(3, 2), g(3, 2), 0, g(3, 2)) },
		"Gemm stride": func() {
			b.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: 2, Cols: 3, Stride: 2, Data: make([]float64, 6)}, g(3, 2), 0, g(2, 2))
		},
		"Gemm short data": func() {
			b.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 5)}, g(3, 2), 0, g(2, 2))
		},
		"Syrk C":        func() { b.Syrk(blas.Trans, 1, g(5, 3), 0, g(5, 5)) },
		"Gemv x":        func() { b.Gemv(blas.NoTrans, 1, g(2, 3), vec(2), 0, vec(2)) },
		"Dot":           func() { b.Dot(vec(2), vec(3)) },
		"Axpy":          func() { b.Axpy(1, vec(2), vec(3)) },
		"Scal inc 0":    func() { b.Scal(1, blas64.Vector{N: 2, Inc: 0, Data: make([]float64, 2)}) },
		"Cholesky":      func() { _ = b.Cholesky(g(2, 3)) },
		"TriSolve":      func() { b.TriSolve(blas.NoTrans, g(3, 3), g(2, 1)) },
		"CholSolve":     func() { b.CholSolve(g(3, 3), g(4, 1)) },
		"SymEig w":      func() { _ = b.SymEig(g(3, 3), make([]float64, 2), true) },
		"bad transpose": func() { b.Gemm('x', blas.NoTrans, 1, g(2, 2), g(2, 2), 0, g(2, 2)) },
	}
	for name, f := range cases {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok || !errors.Is(err, zonal.ErrShape) {
					t.Errorf("%s: panic value %v, want an error wrapping zonal.ErrShape", name, r)
				}
			}()
			f()
		}()
	}
}

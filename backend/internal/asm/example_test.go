package asm_test

import (
	"fmt"

	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal/backend/internal/asm"
)

func ExampleDgemm() {
	// C = A * B^T for row-major A (2x3) and B (2x3).
	a := []float64{1, 2, 3, 4, 5, 6}
	b := []float64{1, 0, 1, 0, 1, 0}
	c := make([]float64, 4)
	asm.Dgemm(blas.NoTrans, blas.Trans, 2, 2, 3, 1, a, 3, b, 3, 0, c, 2)
	fmt.Println(c)
	// Output: [4 2 10 5]
}

func ExampleDpotrf() {
	// A = [4 2; 2 5] = L L^T with L = [2 0; 1 2].
	a := []float64{4, 0, 2, 5}
	pivot, _ := asm.Dpotrf(2, a, 2)
	fmt.Println(pivot, a[0], a[2], a[3])
	// Output: -1 2 1 2
}

func ExampleGegenbauerRecurrence() {
	// Legendre polynomials (d = 3) P_0..P_2 at t = 0.5 and 1.
	t := []float64{0.5, 1}
	out := make([]float64, 3*len(t))
	asm.GegenbauerRecurrence(out, t, 2, 3)
	fmt.Println(out)
	// Output: [1 1 0.5 1 -0.125 1]
}

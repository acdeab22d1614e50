//go:build netlib

// Package openblas gives asm's comparison benchmarks (build tag netlib)
// direct access to OpenBLAS's thread count and to LAPACKE's Cholesky, which
// gonum's netlib packages do not expose. It names the link flags itself.
package openblas

/*
#cgo LDFLAGS: -lopenblas -llapacke
#include <lapacke.h>
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
*/
import "C"

import "unsafe"

// SetThreads sets the number of threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Threads returns the number of threads OpenBLAS uses.
func Threads() int { return int(C.openblas_get_num_threads()) }

// DpotrfLowerRowMajor factors the lower triangle of the n x n row-major A
// in place by LAPACKE_dpotrf called column-major on the upper triangle (the
// same memory, without LAPACKE's row-major transposition copies). It returns
// LAPACK's info (0 on success, j > 0 when the leading minor of order j is not
// positive definite).
func DpotrfLowerRowMajor(n int, a []float64, lda int) int {
	if n == 0 {
		return 0
	}
	return int(C.LAPACKE_dpotrf(C.LAPACK_COL_MAJOR, 'U', C.lapack_int(n), (*C.double)(unsafe.Pointer(&a[0])), C.lapack_int(lda)))
}

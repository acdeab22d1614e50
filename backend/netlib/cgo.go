//go:build netlib

package netlib

// The link flags for Debian/Ubuntu's libopenblas-dev and liblapacke-dev
// (gonum's netlib packages carry none). OpenBLAS comes first so that the
// LAPACK symbols LAPACKE calls (dpotrf_, dsyevd_) and dlaed4_ resolve to
// OpenBLAS's optimized LAPACK. The prototypes are declared here rather than
// taken from cblas.h/lapacke.h so that no -I flag is needed.

/*
#cgo LDFLAGS: -lopenblas -llapacke
#cgo CFLAGS: -O2

#include <stdint.h>

// OpenBLAS threading control.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

// LAPACKE (LP64: lapack_int is int32).
#define ZONAL_LAPACK_COL_MAJOR 102
int32_t LAPACKE_dpotrf(int matrix_layout, char uplo, int32_t n, double *a, int32_t lda);
int32_t LAPACKE_dsyevd(int matrix_layout, char jobz, char uplo, int32_t n, double *a, int32_t lda, double *w);

// LAPACK's Fortran secular-equation root finder (exported by OpenBLAS).
void dlaed4_(const int32_t *n, const int32_t *i, const double *d, const double *z, double *delta, const double *rho, double *dlam, int32_t *info);
*/
import "C"

import "unsafe"

func setThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

func getThreads() int { return int(C.openblas_get_num_threads()) }

// potrfColUpper calls LAPACKE_dpotrf column-major with uplo 'U' on the n x n
// array at a with leading dimension lda, which is exactly a row-major lower
// Cholesky factorization in place. It returns LAPACK's info.
func potrfColUpper(n int, a []float64, lda int) int {
	return int(C.LAPACKE_dpotrf(C.ZONAL_LAPACK_COL_MAJOR, 'U', C.int32_t(n), (*C.double)(unsafe.Pointer(&a[0])), C.int32_t(lda)))
}

// syevdColUpper calls LAPACKE_dsyevd column-major with uplo 'U' (the
// row-major lower triangle). With vectors, the eigenvectors overwrite a as
// column-major columns, i.e. row-major rows. It returns LAPACK's info.
func syevdColUpper(vectors bool, n int, a []float64, lda int, w []float64) int {
	job := C.char('N')
	if vectors {
		job = 'V'
	}
	return int(C.LAPACKE_dsyevd(C.ZONAL_LAPACK_COL_MAJOR, job, 'U', C.int32_t(n), (*C.double)(unsafe.Pointer(&a[0])), C.int32_t(lda), (*C.double)(unsafe.Pointer(&w[0]))))
}

// laed4 calls LAPACK's dlaed4 for the 1-based root index i1.
func laed4(i1 int, d, z []float64, rho float64, delta []float64) (lambda float64, info int) {
	n := C.int32_t(len(d))
	ci := C.int32_t(i1)
	cr := C.double(rho)
	var dlam C.double
	var cinfo C.int32_t
	C.dlaed4_(&n, &ci, (*C.double)(unsafe.Pointer(&d[0])), (*C.double)(unsafe.Pointer(&z[0])), (*C.double)(unsafe.Pointer(&delta[0])), &cr, &dlam, &cinfo)
	return float64(dlam), int(cinfo)
}

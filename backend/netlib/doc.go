// Package netlib is zonal's cgo backend: OpenBLAS for BLAS (through
// gonum.org/v1/netlib/blas/netlib), OpenBLAS's LAPACK through LAPACKE for
// Cholesky and the symmetric eigenproblem, and LAPACK's dlaed4 for the roots
// of the secular equation. It is compiled only with the build tag `netlib`
// and needs libopenblas-dev and liblapacke-dev (Debian/Ubuntu names).
//
// LAPACKE is called column-major with the triangle flag swapped: a row-major
// n x n array with stride s is the column-major array of its transpose with
// leading dimension s, and for a symmetric matrix the row-major lower triangle
// is the column-major upper one. This avoids the transposed copies LAPACKE's
// row-major interface makes (twice the time of a n=2048 Cholesky).
//
// Single-precision Gaussian kernel blocks (GaussianBlock32 and the
// prepared centres of PrepareGaussian32) are not OpenBLAS calls: they use
// zonal's fused float32 kernel, the purego backend's, so float32 FALKON's
// K_nM has the same bits on both backends, cached or streamed, and its
// streamed passes run 3.4 times faster than through cblas_sgemm (see
// GaussianBlock32).
//
// OpenBLAS runs its own thread pool. A service calling the backend from many
// goroutines should lower it with SetThreads(1) so the cores are not
// oversubscribed.
//
// Without the tag the package is empty; backend.ByName("netlib") then
// reports that it is not compiled in.
package netlib

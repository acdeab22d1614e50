package asm

import (
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
)

// Single precision. Sgemm and Ssyrk are Dgemm and Dsyrk instantiated for
// float32: the same packing, cache blocking, triangle filter, goroutine split
// (by rows, columns or k) and code-path dispatch (gemm.go), with float32
// micro-kernels. A float32 vector holds twice as many elements, so each
// kernel does twice the flops of its float64 counterpart per instruction.

// Block sizes of the float32 kernels. They keep the float64 kernels' bytes
// (a kc x nr sliver of B in L1, an mc x kc block of A in L2), not their
// element counts: with 4-byte elements the A block holds twice the rows.
// They are not tuned by measurement.
const (
	kcS6x16, mcS6x16, ncS6x16    = 256, 480, 4080 // B sliver 16 KiB, A block 480 KiB
	kcS12x32, mcS12x32, ncS12x32 = 256, 264, 4096 // B sliver 32 KiB, A block 264 KiB
	kcS8x48, mcS8x48, ncS8x48    = 192, 256, 4080 // B sliver 36 KiB, A block 192 KiB
)

// sgemmKernels lists the float32 micro-kernels of each code path; Sgemm uses
// the first, and the others are alternatives that the tests check and the
// comparison benchmark measures (setSgemmKernel). The amd64 kernels are added
// by sgemm_amd64.go.
var sgemmKernels = map[string][]*gemmKernel[float32]{
	"generic": {{name: "generic4x4", mr: 4, nr: 4, kc: kcGeneric, mc: mcGeneric, nc: ncGeneric, fn: kern4x4Generic[float32]}},
}

// sgemmForced, when set, overrides the path's first float32 kernel.
var sgemmForced atomic.Pointer[gemmKernel[float32]]

func sgemmKernel() *gemmKernel[float32] {
	if k := sgemmForced.Load(); k != nil {
		return k
	}
	return sgemmKernels[cur().path][0]
}

// setSgemmKernel makes Sgemm and Ssyrk use k (nil: the path's default) and
// returns the previous override. Like SetPath it is for tests and
// benchmarks, not for use while other goroutines call the package.
func setSgemmKernel(k *gemmKernel[float32]) *gemmKernel[float32] {
	return sgemmForced.Swap(k)
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in single precision for
// row-major matrices, op(A) m x k, op(B) k x n and C m x n, with the argument
// conventions of gonum's blas.Float32.Sgemm. Products are accumulated in
// float32 (with FMA on the assembly paths), so an entry is off by at most
// about k*2^-24*sum_p |op(A)[i,p]||op(B)[p,j]|. With beta == 0, C is
// overwritten and its old contents (even NaN) are ignored; with alpha == 0
// or k == 0, A and B are not read. As for Dgemm, the arguments are validated
// by the caller.
func Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(sgemmKernel(), tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Ssyrk computes the ul triangle of the n x n row-major symmetric
//
//	C = alpha*A*A^T + beta*C   (t == NoTrans, A is n x k)
//	C = alpha*A^T*A + beta*C   (t == Trans,   A is k x n)
//
// in single precision, with the conventions of Dsyrk: only the micro-tiles
// meeting the triangle are computed, the other strict triangle is neither
// read nor written, beta == 0 ignores the old contents of C.
func Ssyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	syrk(sgemmKernel(), ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

package purego

import "gonum.org/v1/gonum/blas"

// SetSgemm32 replaces the single-precision product of GaussianBlock32 for a
// test and returns a function restoring it.
func SetSgemm32(f func(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)) (restore func()) {
	prev := sgemm32
	sgemm32 = f
	return func() { sgemm32 = prev }
}

// SetGaussStrip32Bytes sets GaussianBlock32's strip size for a test and
// returns a function restoring it.
func SetGaussStrip32Bytes(n int) (restore func()) {
	prev := gaussStrip32Bytes
	gaussStrip32Bytes = n
	return func() { gaussStrip32Bytes = prev }
}

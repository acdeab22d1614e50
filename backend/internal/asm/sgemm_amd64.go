//go:build !noasm

package asm

//go:generate go run -C _gen ./sgemm -out ../sgemm_amd64.s -stubs ../sgemm_stub_amd64.go -pkg asm

// The float32 assembly kernels, registered under the code paths of
// impl_amd64.go. The AVX-512 path uses the 12x32 tile; the 8x48 tile (the
// float64 8x24 doubled in width) is its measured alternative.
func init() {
	avx2 := &gemmKernel[float32]{name: "avx2_6x16", mr: 6, nr: 16, kc: kcS6x16, mc: mcS6x16, nc: ncS6x16,
		fn: func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			_ = a[6*k-1]
			_ = b[16*k-1]
			_ = c[5*ldc+15]
			skern6x16AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	k12x32 := &gemmKernel[float32]{name: "avx512_12x32", mr: 12, nr: 32, kc: kcS12x32, mc: mcS12x32, nc: ncS12x32,
		fn: func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			_ = a[12*k-1]
			_ = b[32*k-1]
			_ = c[11*ldc+31]
			skern12x32AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	k8x48 := &gemmKernel[float32]{name: "avx512_8x48", mr: 8, nr: 48, kc: kcS8x48, mc: mcS8x48, nc: ncS8x48,
		fn: func(k int, a, b, c []float32, ldc int, alpha, beta float32) {
			_ = a[8*k-1]
			_ = b[48*k-1]
			_ = c[7*ldc+47]
			skern8x48AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	sgemmKernels["avx2"] = []*gemmKernel[float32]{avx2}
	sgemmKernels["avx512"] = []*gemmKernel[float32]{k12x32, k8x48}
}

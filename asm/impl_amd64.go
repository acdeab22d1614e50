//go:build !noasm

package asm

//go:generate go run -C _gen ./gemm -out ../gemm_amd64.s -stubs ../gemm_stub_amd64.go -pkg asm

func avx2Impl() *impl {
	p := genericImpl()
	p.path = "avx2"
	p.gemm = &gemmKernel{name: "avx2_6x8", mr: 6, nr: 8, kc: kcAVX2, mc: mcAVX2, nc: ncAVX2,
		fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
			_ = a[6*k-1]
			_ = b[8*k-1]
			_ = c[5*ldc+7]
			kern6x8AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	return p
}

func avx512Impl() *impl {
	p := avx2Impl()
	p.path = "avx512"
	p.gemm = &gemmKernel{name: "avx512_8x24", mr: 8, nr: 24, kc: kcAVX512, mc: mcAVX512, nc: ncAVX512,
		fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
			_ = a[8*k-1]
			_ = b[24*k-1]
			_ = c[7*ldc+23]
			kern8x24AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	return p
}

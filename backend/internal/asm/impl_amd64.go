//go:build !noasm

package asm

//go:generate go run -C _gen ./gemm -out ../gemm_amd64.s -stubs ../gemm_stub_amd64.go -pkg asm
//go:generate go run -C _gen ./level1 -out ../level1_amd64.s -stubs ../level1_stub_amd64.go -pkg asm
//go:generate go run -C _gen ./vexp -out ../exp_amd64.s -stubs ../exp_stub_amd64.go -pkg asm
//go:generate go run -C _gen ./gegen -out ../gegen_amd64.s -stubs ../gegen_stub_amd64.go -pkg asm

func avx2Impl() *impl {
	return &impl{
		path: "avx2",
		gemm: &gemmKernel[float64]{name: "avx2_6x8", mr: 6, nr: 8, kc: kcAVX2, mc: mcAVX2, nc: ncAVX2,
			fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
				_ = a[6*k-1]
				_ = b[8*k-1]
				_ = c[5*ldc+7]
				kern6x8AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
			}},
		dot:   dotAVX2,
		axpy:  axpyAVX2,
		scal:  scalAVX2,
		sumsq: sumsqAVX2,
		exp:   expVec,
		gegen: gegenVec,
		gauss: gaussVec,
	}
}

// avx512Impl is the AVX2 set with the AVX-512 GEMM micro-kernel and exp
// (eight lanes, VSCALEFPD for the 2^n scaling). The level-1 and recurrence
// kernels are memory-bound and stay 256-bit.
func avx512Impl() *impl {
	p := avx2Impl()
	p.path = "avx512"
	p.gemm = &gemmKernel[float64]{name: "avx512_8x24", mr: 8, nr: 24, kc: kcAVX512, mc: mcAVX512, nc: ncAVX512,
		fn: func(k int, a, b, c []float64, ldc int, alpha, beta float64) {
			_ = a[8*k-1]
			_ = b[24*k-1]
			_ = c[7*ldc+23]
			kern8x24AVX512(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
	p.exp = expVec512
	p.gauss = gaussVec512
	return p
}

// expVec512 is expVec with eight lanes.
func expVec512(dst, src []float64) { expLanes(dst, src, 8, expAVX512) }

func gaussVec512(c []float64, rows, cols, ldc int, xn, yn []float64, gamma float64) {
	gaussLanes(c, rows, cols, ldc, xn, yn, gamma, 8, gaussAVX512, gaussVec)
}

// expVec runs the vector kernel on whole groups of four and the last one to
// three elements through a padded group, so every element gets the same
// algorithm.
func expVec(dst, src []float64) { expLanes(dst, src, 4, expAVX2) }

func gaussVec(c []float64, rows, cols, ldc int, xn, yn []float64, gamma float64) {
	gaussLanes(c, rows, cols, ldc, xn, yn, gamma, 4, gaussAVX2, func(c []float64, rows, cols, ldc int, xn, yn []float64, gamma float64) {
		gaussTail(c, rows, cols, ldc, xn, yn, gamma, 4, expAVX2)
	})
}

func gegenVec(dst, t, p1, p2 []float64, a, b float64) {
	n := len(dst)
	t, p1, p2 = t[:n], p1[:n], p2[:n]
	n4 := n &^ 3
	if n4 > 0 {
		gegenAVX2(dst[:n4], t, p1, p2, a, b)
	}
	if n4 < n {
		gegenGeneric(dst[n4:], t[n4:], p1[n4:], p2[n4:], a, b)
	}
}

//go:build !noasm

package asm

//go:generate go run -C _gen ./vexp32 -out ../exp32_amd64.s -stubs ../exp32_stub_amd64.go -pkg asm
//go:generate go run -C _gen ./rows32 -out ../rows32_amd64.s -stubs ../rows32_stub_amd64.go -pkg asm

var (
	avx2Kernels32 = kernels32{exp: exp32Vec, gauss: gauss32Vec,
		dotRow: dotRow32AVX2, axpy4Row: axpy4Rows32AVX2, axpyRow: axpyRow32AVX2}
	// The row kernels are memory-bound and stay 256-bit on AVX-512.
	avx512Kernels32 = kernels32{exp: exp32Vec512, gauss: gauss32Vec512,
		dotRow: dotRow32AVX2, axpy4Row: axpy4Rows32AVX2, axpyRow: axpyRow32AVX2}
)

// cpuKernels32 returns the float32 kernels of the named code path (nil for
// "generic"). The paths are those of impl: a path is only active when the
// CPU has its instructions.
func cpuKernels32(path string) *kernels32 {
	switch path {
	case "avx512":
		return &avx512Kernels32
	case "avx2":
		return &avx2Kernels32
	}
	return nil
}

// exp32Vec runs the AVX2 kernel on whole groups of eight and the last one to
// seven elements through a padded group, so every element gets the same
// algorithm.
func exp32Vec(dst, src []float32) { expLanes(dst, src, 8, exp32AVX2) }

// exp32Vec512 is exp32Vec with sixteen lanes.
func exp32Vec512(dst, src []float32) { expLanes(dst, src, 16, exp32AVX512) }

// expLanes runs kern (lanes = 4 to 16 elements per step; it handles
// len(src) rounded down to a multiple of lanes) on src, and the last
// len(src) mod lanes elements through a zero-padded group. The float64 and
// float32 exponentials share it.
func expLanes[T float32 | float64](dst, src []T, lanes int, kern func(dst, src []T)) {
	n := len(src)
	dst = dst[:n]
	if n >= lanes {
		kern(dst, src)
	}
	if r := n % lanes; r != 0 {
		var buf [16]T
		copy(buf[:lanes], src[n-r:])
		kern(buf[:lanes], buf[:lanes])
		copy(dst[n-r:], buf[:r])
	}
}

// gaussLanes runs the Gaussian epilogue kernel kern (lanes elements per
// vector; it handles cols rounded down to a multiple of lanes) on c, and
// rest on the remaining columns. The float64 and float32 paths share it.
func gaussLanes[T float32 | float64](c []T, rows, cols, ldc int, xn, yn []T, gamma T, lanes int,
	kern func(c *T, ldc, rows, cols int, xn, yn *T, gamma T),
	rest func(c []T, rows, cols, ldc int, xn, yn []T, gamma T)) {
	if rows == 0 || cols == 0 {
		return
	}
	_ = c[(rows-1)*ldc+cols-1]
	_ = xn[rows-1]
	_ = yn[cols-1]
	cv := cols &^ (lanes - 1)
	if cv > 0 {
		kern(&c[0], ldc, rows, cv, &xn[0], &yn[0], gamma)
	}
	if cv < cols {
		rest(c[cv:], rows, cols-cv, ldc, xn, yn[cv:], gamma)
	}
}

// gaussTail is the epilogue on fewer columns than lanes, the vector width
// of kern, with the vector kernels' arithmetic: the argument
// -gamma*max(0, (xn[i]+yn[j]) + c[i,j]) formed in scalar code, the
// exponential by kern on a padded group.
func gaussTail[T float32 | float64](c []T, rows, cols, ldc int, xn, yn []T, gamma T, lanes int, kern func(dst, src []T)) {
	var buf [16]T
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		for j, v := range row {
			buf[j] = gaussArg(xn[i], yn[j], v, -gamma)
		}
		kern(buf[:lanes], buf[:lanes])
		copy(row, buf[:len(row)])
	}
}

func gauss32Vec(c []float32, rows, cols, ldc int, xn, yn []float32, gamma float32) {
	gaussLanes(c, rows, cols, ldc, xn, yn, gamma, 8, gauss32AVX2, func(c []float32, rows, cols, ldc int, xn, yn []float32, gamma float32) {
		gaussTail(c, rows, cols, ldc, xn, yn, gamma, 8, exp32AVX2)
	})
}

func gauss32Vec512(c []float32, rows, cols, ldc int, xn, yn []float32, gamma float32) {
	gaussLanes(c, rows, cols, ldc, xn, yn, gamma, 16, gauss32AVX512, gauss32Vec)
}

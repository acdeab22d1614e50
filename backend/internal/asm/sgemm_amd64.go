//go:build !noasm

package asm

//go:generate go run -C _gen ./sgemm -out ../sgemm_amd64.s -stubs ../sgemm_stub_amd64.go -pkg asm

// The float32 assembly kernels, registered under the code paths of
// impl_amd64.go. The AVX-512 path uses the 12x32 tile; the 8x48 tile (the
// float64 8x24 doubled in width) is its alternative for measurements.
func init() {
	sgemmKernels["avx2"] = []*gemmKernel[float32]{
		asmKernel("avx2_6x16", 6, 16, kcS6x16, mcS6x16, ncS6x16, skern6x16AVX2),
	}
	sgemmKernels["avx512"] = []*gemmKernel[float32]{
		asmKernel("avx512_12x32", 12, 32, kcS12x32, mcS12x32, ncS12x32, skern12x32AVX512),
		asmKernel("avx512_8x48", 8, 48, kcS8x48, mcS8x48, ncS8x48, skern8x48AVX512),
	}
}

// asmKernel wraps the assembly micro-kernel f of an mr x nr tile: the bounds
// checks on the packed slivers and the C tile run in Go before f reads or
// writes through the pointers.
func asmKernel[T float](name string, mr, nr, kc, mc, nc int, f func(k int, a, b, c *T, ldc int, alpha, beta T)) *gemmKernel[T] {
	return &gemmKernel[T]{name: name, mr: mr, nr: nr, kc: kc, mc: mc, nc: nc,
		fn: func(k int, a, b, c []T, ldc int, alpha, beta T) {
			_ = a[mr*k-1]
			_ = b[nr*k-1]
			_ = c[(mr-1)*ldc+nr-1]
			f(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
		}}
}

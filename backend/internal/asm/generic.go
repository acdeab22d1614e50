package asm

// This file holds the pure-Go kernels: the fallback on every CPU, the only
// path under the noasm build tag, and the reference the assembly is tested
// against.

func genericImpl() *impl {
	return &impl{
		path:  "generic",
		gemm:  &gemmKernel[float64]{name: "generic4x4", mr: 4, nr: 4, kc: kcGeneric, mc: mcGeneric, nc: ncGeneric, fn: kern4x4Generic[float64]},
		dot:   dotGeneric,
		axpy:  axpyGeneric,
		scal:  scalGeneric,
		sumsq: sumsqGeneric,
		exp:   expGeneric,
		gegen: gegenGeneric,
		gauss: gaussGeneric,
	}
}

// kern4x4Generic is the pure-Go micro-kernel (mr = nr = 4) of both
// precisions.
func kern4x4Generic[T float](k int, a, b, c []T, ldc int, alpha, beta T) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	a = a[:4*k]
	b = b[:4*k]
	for p := 0; p < len(a); p += 4 {
		ap := a[p : p+4 : p+4]
		bq := b[p : p+4 : p+4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bq[0], bq[1], bq[2], bq[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	acc := [16]T{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
	for i := 0; i < 4; i++ {
		row := c[i*ldc : i*ldc+4]
		if beta == 0 {
			for j := range row {
				row[j] = alpha * acc[i*4+j]
			}
		} else {
			for j := range row {
				row[j] = alpha*acc[i*4+j] + beta*row[j]
			}
		}
	}
}

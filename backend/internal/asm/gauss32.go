package asm

// GaussianFromProduct32 is GaussianFromProduct in single precision: it turns
// the m x n block c = -2 X Y^T (leading dimension ldc), computed by any
// single-precision GEMM, into Gaussian kernel values in place,
//
//	c[i*ldc+j] = exp(-gamma * max(0, (xnorm2[i] + ynorm2[j]) + c[i*ldc+j])),
//
// every operation in float32 (two additions, the clamp, the product with
// -gamma, then Exp32's algorithm, so the exponential adds under 1 ulp).
// Squared distances that come out negative through rounding are clamped to
// 0; NaN gives NaN. Every code path gives the same bits. The arguments are
// validated by the caller: c holds (m-1)*ldc+n values, xnorm2 m and ynorm2 n.
func GaussianFromProduct32(c []float32, ldc, m, n int, xnorm2, ynorm2 []float32, gamma float32) {
	if m == 0 || n == 0 {
		return
	}
	k32().gauss(c, m, n, ldc, xnorm2[:m], ynorm2[:n], gamma)
}

// gaussArg is the argument of the exponential for one entry,
// negGamma*max(0, (xi+yj)+v), NaN staying NaN (the vector kernels' order).
func gaussArg[T float32 | float64](xi, yj, v, negGamma T) T {
	d2 := (xi + yj) + v
	if d2 < 0 {
		d2 = 0
	}
	return negGamma * d2
}

// gauss32Generic: c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])).
func gauss32Generic(c []float32, rows, cols, ldc int, xn, yn []float32, gamma float32) {
	ng := -gamma
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		x := xn[i]
		for j, v := range row {
			row[j] = exp32Scalar(gaussArg(x, yn[j], v, ng))
		}
	}
}

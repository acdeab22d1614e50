package asm

import "github.com/zonal-ml/zonal/backend/internal/check"

// GaussianBlock computes the Gaussian kernel block
//
//	dst[i*ldd+j] = exp(-gamma * max(0, xnorm2[i] + ynorm2[j] - 2 x_i.y_j))
//
// for the m rows x_i of x (m x d, row stride ldx) and the n rows y_j of y
// (n x d, row stride ldy), where xnorm2[i] = |x_i|^2 and ynorm2[j] = |y_j|^2
// are supplied by the caller (see SumSq). The inner products come from the
// GEMM kernels and the exponential is applied to each finished strip of the
// product while it is still in cache, so dst is written once. Squared
// distances that come out slightly negative through rounding are clamped to 0;
// NaN inputs give NaN. The arguments are validated by the caller
// (backend/internal/check.GaussianBlock).
func GaussianBlock(dst []float64, ldd int, x []float64, ldx int, y []float64, ldy int, m, n, d int, xnorm2, ynorm2 []float64, gamma float64) {
	if m == 0 || n == 0 {
		return
	}
	p := cur()
	if d == 0 {
		check.Scale(fullC, m, n, 0, dst, ldd)
		gaussStrip(p, dst, ldd, 0, m, 0, n, xnorm2, ynorm2, gamma)
		return
	}
	g := gemmProblem[float64]{kern: p.gemm, tA: false, tB: true, m: m, n: n, k: d, alpha: -2, beta: 0,
		a: x, lda: ldx, b: y, ldb: ldy, c: dst, ldc: ldd}
	g.epi = func(i0, rows, j0, cols int) {
		gaussStrip(p, dst, ldd, i0, rows, j0, cols, xnorm2, ynorm2, gamma)
	}
	g.run()
}

// GaussianFromProduct turns the m x n block c = -2 X Y^T (leading dimension
// ldc), computed by any GEMM, into Gaussian kernel values in place:
//
//	c[i*ldc+j] = exp(-gamma * max(0, xnorm2[i] + ynorm2[j] + c[i*ldc+j])),
//
// with the same vector kernels (and so the same results) as GaussianBlock's
// fused epilogue. It is the second half of the unfused path for backends
// whose GEMM is not package asm's.
func GaussianFromProduct(c []float64, ldc, m, n int, xnorm2, ynorm2 []float64, gamma float64) {
	if m == 0 || n == 0 {
		return
	}
	gaussStrip(cur(), c, ldc, 0, m, 0, n, xnorm2, ynorm2, gamma)
}

// gaussStrip turns C = -2 X Y^T on rows [i0, i0+rows), columns [j0, j0+cols)
// into kernel values.
func gaussStrip(p *impl, c []float64, ldc, i0, rows, j0, cols int, xn, yn []float64, gamma float64) {
	p.gauss(c[i0*ldc+j0:], rows, cols, ldc, xn[i0:i0+rows], yn[j0:j0+cols], gamma)
}

// gaussGeneric: c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])).
func gaussGeneric(c []float64, rows, cols, ldc int, xn, yn []float64, gamma float64) {
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		x := xn[i]
		for j, v := range row {
			d2 := (x + yn[j]) + v
			if d2 < 0 {
				d2 = 0
			}
			row[j] = expScalar(-gamma * d2)
		}
	}
}

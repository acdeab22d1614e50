package asm

import "github.com/zonal-ml/zonal/backend/internal/check"

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

// GaussianBlock32 is GaussianBlock in single precision: the inner products
// come from the float32 GEMM kernels (Sgemm's packing, blocking and
// threading: the centres y are packed once per block, not once per strip of
// x) and the float32 Gaussian epilogue of GaussianFromProduct32 is applied
// to each finished strip of the product while it is in cache, so dst is
// written once. The arguments are validated by the caller
// (backend/internal/check.GaussianBlock32).
func GaussianBlock32(dst []float32, ldd int, x []float32, ldx int, y []float32, ldy int, m, n, d int, xnorm2, ynorm2 []float32, gamma float32) {
	if m == 0 || n == 0 {
		return
	}
	k := k32()
	if d == 0 {
		check.Scale(fullC, m, n, float32(0), dst, ldd)
		k.gauss(dst, m, n, ldd, xnorm2[:m], ynorm2[:n], gamma)
		return
	}
	g := gemmProblem[float32]{kern: sgemmKernel(), tA: false, tB: true, m: m, n: n, k: d, alpha: -2, beta: 0,
		a: x, lda: ldx, b: y, ldb: ldy, c: dst, ldc: ldd}
	g.epi = func(i0, rows, j0, cols int) {
		k.gauss(dst[i0*ldd+j0:], rows, cols, ldd, xnorm2[i0:i0+rows], ynorm2[j0:j0+cols], gamma)
	}
	g.run()
}

// GaussianCentres32 is the y side of GaussianBlock32 prepared once for
// many blocks against the same centres: y packed for the float32 GEMM
// kernel (once, instead of once per block), with its squared norms and
// gamma. Its blocks have GaussianBlock32's bits. It is immutable and safe
// for concurrent use.
type GaussianCentres32 struct {
	pb     *packedB[float32]
	y      []float32
	ldy    int
	n, d   int
	ynorm2 []float32
	gamma  float32
}

// PrepareGaussian32 packs the n x d centres y (leading dimension ldy) for
// the active code path's float32 kernel; ynorm2 holds their n squared
// norms. The arguments are validated by the caller; y and ynorm2 are kept
// (not copied) and must not change.
func PrepareGaussian32(y []float32, ldy, n, d int, ynorm2 []float32, gamma float32) *GaussianCentres32 {
	c := &GaussianCentres32{y: y, ldy: ldy, n: n, d: d, ynorm2: ynorm2[:n], gamma: gamma}
	if n > 0 && d > 0 {
		c.pb = newPackedB(sgemmKernel(), true, d, n, y, ldy)
	}
	return c
}

// PackedBytes is the size of the packed copy of the centres.
func (c *GaussianCentres32) PackedBytes() int64 {
	if c.pb == nil {
		return 0
	}
	return int64(len(c.pb.data)) * 4
}

// Block is GaussianBlock32 of the m rows of x (leading dimension ldx, d
// columns, squared norms xnorm2) against the centres, into dst (m x n,
// leading dimension ldd), on the calling goroutine (callers run blocks in
// parallel). When the code path has changed since PrepareGaussian32 (tests
// switching paths), it is GaussianBlock32 itself.
func (c *GaussianCentres32) Block(dst []float32, ldd int, x []float32, ldx, m int, xnorm2 []float32) {
	if m == 0 || c.n == 0 {
		return
	}
	if c.pb == nil || c.pb.kern != sgemmKernel() {
		GaussianBlock32(dst, ldd, x, ldx, c.y, c.ldy, m, c.n, c.d, xnorm2, c.ynorm2, c.gamma)
		return
	}
	k := k32()
	ldy, n := c.ldy, c.n
	g := gemmProblem[float32]{kern: c.pb.kern, tA: false, tB: true, m: m, n: n, k: c.d, alpha: -2, beta: 0,
		a: x, lda: ldx, b: c.y, ldb: ldy, c: dst, ldc: ldd, pre: c.pb}
	g.epi = func(i0, rows, j0, cols int) {
		k.gauss(dst[i0*ldd+j0:], rows, cols, ldd, xnorm2[i0:i0+rows], c.ynorm2[j0:j0+cols], c.gamma)
	}
	g.block(0, m, 0, n)
}

package check

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// General32 is General for a single-precision view.
func General32(name string, g blas32.General) {
	Shape(name, g.Rows, g.Cols, g.Stride, len(g.Data))
}

func dims32(t blas.Transpose, g blas32.General) (r, c int) {
	if t == blas.NoTrans {
		return g.Rows, g.Cols
	}
	return g.Cols, g.Rows
}

// Gemm32 is Gemm for single-precision views: it validates C = op(A)*op(B)
// and returns m, n, k.
func Gemm32(tA, tB blas.Transpose, a, b, c blas32.General) (m, n, k int) {
	Trans(tA)
	Trans(tB)
	General32("Sgemm A", a)
	General32("Sgemm B", b)
	General32("Sgemm C", c)
	m, k = dims32(tA, a)
	kb, n := dims32(tB, b)
	if k != kb || c.Rows != m || c.Cols != n {
		Panicf("Sgemm: op(A) %dx%d, op(B) %dx%d, C %dx%d", m, k, kb, n, c.Rows, c.Cols)
	}
	return m, n, k
}

// Syrk32 is Syrk for single-precision views; it returns n (order of C) and k.
func Syrk32(t blas.Transpose, a, c blas32.General) (n, k int) {
	Trans(t)
	General32("Ssyrk A", a)
	General32("Ssyrk C", c)
	if t == blas.NoTrans {
		n, k = a.Rows, a.Cols
	} else {
		n, k = a.Cols, a.Rows
	}
	if c.Rows != n || c.Cols != n {
		Panicf("Ssyrk: A %dx%d (trans %q) needs C %dx%d, have %dx%d", a.Rows, a.Cols, rune(t), n, n, c.Rows, c.Cols)
	}
	return n, k
}

// GaussianBlock32 is GaussianBlock for single-precision views.
func GaussianBlock32(x, y blas32.General, xn, yn []float32, dst blas32.General) (m, n, d int) {
	General32("GaussianBlock32 X", x)
	General32("GaussianBlock32 Y", y)
	General32("GaussianBlock32 dst", dst)
	m, n, d = x.Rows, y.Rows, x.Cols
	if y.Cols != d || dst.Rows != m || dst.Cols != n {
		Panicf("GaussianBlock32: X %dx%d, Y %dx%d, dst %dx%d", m, d, n, y.Cols, dst.Rows, dst.Cols)
	}
	if len(xn) != m || len(yn) != n {
		Panicf("GaussianBlock32: %d and %d squared norms for %d and %d rows", len(xn), len(yn), m, n)
	}
	return m, n, d
}

// Exp32 validates dst = exp(src) in single precision.
func Exp32(dst, src []float32) {
	if len(dst) < len(src) {
		Panicf("Exp32: len(dst) = %d < len(src) = %d", len(dst), len(src))
	}
}

// MirrorLower32 is MirrorLower for a single-precision view.
func MirrorLower32(c blas32.General) { reflectLower(c.Rows, c.Data, c.Stride, false) }

package check

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// General32 is General for a single-precision view.
func General32(name string, g blas32.General) {
	Shape(name, g.Rows, g.Cols, g.Stride, len(g.Data))
}

// Gemm32 is Gemm for single-precision views: it validates C = op(A)*op(B)
// and returns m, n, k.
func Gemm32(tA, tB blas.Transpose, a, b, c blas32.General) (m, n, k int) {
	General32("Sgemm A", a)
	General32("Sgemm B", b)
	General32("Sgemm C", c)
	return GemmDims("Sgemm", tA, tB, a.Rows, a.Cols, b.Rows, b.Cols, c.Rows, c.Cols)
}

// Syrk32 is Syrk for single-precision views; it returns n (order of C) and k.
func Syrk32(t blas.Transpose, a, c blas32.General) (n, k int) {
	General32("Ssyrk A", a)
	General32("Ssyrk C", c)
	return SyrkDims("Ssyrk", t, a.Rows, a.Cols, c.Rows, c.Cols)
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

// GaussianCentres32 validates the centres y and their squared norms yn of
// a prepared float32 Gaussian block and returns y's shape.
func GaussianCentres32(y blas32.General, yn []float32) (n, d int) {
	General32("GaussianCentres32 Y", y)
	if len(yn) != y.Rows {
		Panicf("GaussianCentres32: %d squared norms for %d rows", len(yn), y.Rows)
	}
	return y.Rows, y.Cols
}

// Rows32 validates a float32 matrix k of rows x cols for the row products
// DotRows32 and AxpyRows32 (rows and cols being the lengths of their
// vectors).
func Rows32(k blas32.General, rows, cols int) {
	General32("row products", k)
	if k.Rows != rows || k.Cols != cols {
		Panicf("row products: k is %dx%d, the vectors want %dx%d", k.Rows, k.Cols, rows, cols)
	}
}

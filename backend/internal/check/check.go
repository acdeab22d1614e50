// Package check holds the argument validation and the small helpers that
// every Backend implementation (and package asm) shares: shape checks on
// row-major blas64.General views (a mismatch is a programming error and panics
// with an error wrapping zonal.ErrShape), scaling of a matrix or one of its
// triangles, and mirroring or transposing across the diagonal.
//
// Arguments are validated once, here (or, for purego's gonum blas.Float64,
// in its own methods with gonum's panic messages); the kernels of package asm
// below do not check again.
package check

import (
	"fmt"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Panicf panics with an error wrapping zonal.ErrShape.
func Panicf(format string, args ...any) {
	panic(fmt.Errorf("backend: %s: %w", fmt.Sprintf(format, args...), zonal.ErrShape))
}

// General panics unless g is a well-formed row-major view: non-negative
// dimensions, Stride >= Cols (and >= 1 when the view is not empty) and Data
// long enough.
func General(name string, g blas64.General) {
	Shape(name, g.Rows, g.Cols, g.Stride, len(g.Data))
}

// Shape is General for a view of any element type: rows x cols with the
// given stride over n elements.
func Shape(name string, rows, cols, stride, n int) {
	if rows < 0 || cols < 0 {
		Panicf("%s: negative dimension %dx%d", name, rows, cols)
	}
	if rows == 0 || cols == 0 {
		return
	}
	if stride < cols {
		Panicf("%s: stride %d < cols %d", name, stride, cols)
	}
	if n < (rows-1)*stride+cols {
		Panicf("%s: data length %d too short for %dx%d stride %d", name, n, rows, cols, stride)
	}
}

// Vector panics unless v is a well-formed vector with a non-zero increment.
func Vector(name string, v blas64.Vector) {
	if v.N < 0 {
		Panicf("%s: negative length %d", name, v.N)
	}
	if v.N == 0 {
		return
	}
	if v.Inc == 0 {
		Panicf("%s: zero increment", name)
	}
	inc := v.Inc
	if inc < 0 {
		inc = -inc
	}
	if len(v.Data) < (v.N-1)*inc+1 {
		Panicf("%s: data length %d too short for n=%d inc=%d", name, len(v.Data), v.N, v.Inc)
	}
}

// Trans panics unless t is NoTrans or Trans (ConjTrans is accepted as Trans).
func Trans(t blas.Transpose) {
	if t != blas.NoTrans && t != blas.Trans && t != blas.ConjTrans {
		Panicf("bad transpose %q", rune(t))
	}
}

// Dims returns rows and columns of op(g).
func Dims(t blas.Transpose, g blas64.General) (r, c int) {
	if t == blas.NoTrans {
		return g.Rows, g.Cols
	}
	return g.Cols, g.Rows
}

// Gemm validates C = op(A)*op(B) and returns m, n, k.
func Gemm(tA, tB blas.Transpose, a, b, c blas64.General) (m, n, k int) {
	General("Gemm A", a)
	General("Gemm B", b)
	General("Gemm C", c)
	return GemmDims("Gemm", tA, tB, a.Rows, a.Cols, b.Rows, b.Cols, c.Rows, c.Cols)
}

// GemmDims checks the transposes and the shapes of C = op(A)*op(B) for A
// ar x ac, B br x bc and C cr x cc (views already checked), and returns m,
// n, k; name prefixes the panic message.
func GemmDims(name string, tA, tB blas.Transpose, ar, ac, br, bc, cr, cc int) (m, n, k int) {
	Trans(tA)
	Trans(tB)
	m, k = ar, ac
	if tA != blas.NoTrans {
		m, k = ac, ar
	}
	kb, n := br, bc
	if tB != blas.NoTrans {
		kb, n = bc, br
	}
	if k != kb || cr != m || cc != n {
		Panicf("%s: op(A) %dx%d, op(B) %dx%d, C %dx%d", name, m, k, kb, n, cr, cc)
	}
	return m, n, k
}

// Syrk validates C = op(A)*op(A)^T with op(A) = A^T for t == Trans (A^T A)
// and op(A) = A for t == NoTrans (A A^T); returns n (order of C) and k.
func Syrk(t blas.Transpose, a, c blas64.General) (n, k int) {
	General("Syrk A", a)
	General("Syrk C", c)
	return SyrkDims("Syrk", t, a.Rows, a.Cols, c.Rows, c.Cols)
}

// SyrkDims checks the transpose and the shapes of Syrk for A ar x ac and C
// cr x cc (views already checked), and returns n and k.
func SyrkDims(name string, t blas.Transpose, ar, ac, cr, cc int) (n, k int) {
	Trans(t)
	n, k = ar, ac
	if t != blas.NoTrans {
		n, k = ac, ar
	}
	if cr != n || cc != n {
		Panicf("%s: A %dx%d (trans %q) needs C %dx%d, have %dx%d", name, ar, ac, rune(t), n, n, cr, cc)
	}
	return n, k
}

// Gemv validates y = op(A)*x and returns the dimensions of A.
func Gemv(t blas.Transpose, a blas64.General, x, y blas64.Vector) (m, n int) {
	Trans(t)
	General("Gemv A", a)
	Vector("Gemv x", x)
	Vector("Gemv y", y)
	r, c := Dims(t, a)
	if x.N != c || y.N != r {
		Panicf("Gemv: op(A) %dx%d, x %d, y %d", r, c, x.N, y.N)
	}
	return a.Rows, a.Cols
}

// Square validates a square matrix and returns its order.
func Square(name string, a blas64.General) int {
	General(name, a)
	if a.Rows != a.Cols {
		Panicf("%s: not square: %dx%d", name, a.Rows, a.Cols)
	}
	return a.Rows
}

// TriSolve validates op(L)*X = B and returns L's order and B's column count.
func TriSolve(t blas.Transpose, l, b blas64.General) (n, nrhs int) {
	Trans(t)
	n = Square("TriSolve L", l)
	General("TriSolve B", b)
	if b.Rows != n {
		Panicf("TriSolve: L is %dx%d, B has %d rows", n, n, b.Rows)
	}
	return n, b.Cols
}

// Part selects the elements of a matrix a helper touches.
type Part int

const (
	Full  Part = iota // every element
	Lower             // j <= i (diagonal included)
	Upper             // j >= i (diagonal included)
)

// Scale sets the part of the m x n row-major C (leading dimension ldc) to
// beta*C; with beta == 0 those elements are zeroed without being read (NaN
// there is ignored), with beta == 1 nothing is touched. It is the one
// scaling helper of the backends and of package asm, in both precisions.
func Scale[T float32 | float64](part Part, m, n int, beta T, c []T, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		j0, j1 := 0, n
		switch part {
		case Lower:
			j1 = min(i+1, n)
		case Upper:
			j0 = min(i, n)
		}
		row := c[i*ldc+j0 : i*ldc+j1]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// ScaleGeneral sets C = beta*C; with beta == 0, C is zeroed without being read.
func ScaleGeneral(beta float64, c blas64.General) {
	Scale(Full, c.Rows, c.Cols, beta, c.Data, c.Stride)
}

// ScaleVector sets y = beta*y; with beta == 0, y is zeroed without being read.
func ScaleVector(beta float64, y blas64.Vector) {
	if beta == 1 || y.N == 0 {
		return
	}
	inc, start := y.Inc, 0
	if inc < 0 {
		start = (1 - y.N) * inc
	}
	for i := 0; i < y.N; i++ {
		p := start + i*inc
		if beta == 0 {
			y.Data[p] = 0
		} else {
			y.Data[p] *= beta
		}
	}
}

// MirrorLower copies the strict lower triangle of the square C into its strict
// upper triangle, so that C is symmetric.
func MirrorLower(c blas64.General) { reflectLower(c.Rows, c.Data, c.Stride, false) }

// TransposeSquare transposes the n x n row-major a (leading dimension lda) in
// place: a[i,j] and a[j,i] are exchanged for every j < i.
func TransposeSquare(n int, a []float64, lda int) { reflectLower(n, a, lda, true) }

// reflectLower visits every pair (i, j), j < i, of the n x n array a and
// copies a[i,j] to a[j,i] (swap false) or exchanges the two (swap true). It
// walks 32x32 tiles so that both the rows read and the columns written stay in
// cache.
func reflectLower[T float32 | float64](n int, a []T, lda int, swap bool) {
	const tb = 32
	for i0 := 0; i0 < n; i0 += tb {
		i1 := min(i0+tb, n)
		for j0 := 0; j0 <= i0; j0 += tb {
			j1 := min(j0+tb, n)
			for i := i0; i < i1; i++ {
				row := a[i*lda : i*lda+min(j1, i)]
				if swap {
					for j := j0; j < len(row); j++ {
						row[j], a[j*lda+i] = a[j*lda+i], row[j]
					}
					continue
				}
				for j := j0; j < len(row); j++ {
					a[j*lda+i] = row[j]
				}
			}
		}
	}
}

// ZeroUpper zeroes the strict upper triangle of the square C.
func ZeroUpper(c blas64.General) {
	for i := 0; i < c.Rows; i++ {
		clear(c.Data[i*c.Stride+i+1 : i*c.Stride+c.Cols])
	}
}

// NormT maps ConjTrans to Trans (the two are the same for real matrices).
func NormT(t blas.Transpose) blas.Transpose {
	if t == blas.ConjTrans {
		return blas.Trans
	}
	return t
}

// GemmTrivial checks a Gemm call's shapes and handles the cases that need no
// product (an empty C; k == 0 or alpha == 0, where C = beta*C). It returns
// the dimensions and whether the caller still has to compute the product.
func GemmTrivial(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) (m, n, k int, compute bool) {
	m, n, k = Gemm(tA, tB, a, b, c)
	if m == 0 || n == 0 {
		return m, n, k, false
	}
	if k == 0 || alpha == 0 {
		ScaleGeneral(beta, c)
		return m, n, k, false
	}
	return m, n, k, true
}

// GaussianBlock validates dst = K(x, y) for the Gaussian kernel block: x is
// m x d, y is n x d, dst is m x n, len(xn) == m and len(yn) == n. It returns
// m, n and d.
func GaussianBlock(x, y blas64.General, xn, yn []float64, dst blas64.General) (m, n, d int) {
	General("GaussianBlock X", x)
	General("GaussianBlock Y", y)
	General("GaussianBlock dst", dst)
	m, n, d = x.Rows, y.Rows, x.Cols
	if y.Cols != d || dst.Rows != m || dst.Cols != n {
		Panicf("GaussianBlock: X %dx%d, Y %dx%d, dst %dx%d", m, d, n, y.Cols, dst.Rows, dst.Cols)
	}
	if len(xn) != m || len(yn) != n {
		Panicf("GaussianBlock: %d and %d squared norms for %d and %d rows", len(xn), len(yn), m, n)
	}
	return m, n, d
}

// Exp validates dst = exp(src): dst at least as long as src.
func Exp(dst, src []float64) {
	if len(dst) < len(src) {
		Panicf("Exp: len(dst) = %d < len(src) = %d", len(dst), len(src))
	}
}

// Gegenbauer validates the recurrence for degrees 0..q in dimension d at
// len(t) points into out.
func Gegenbauer(out, t []float64, q, d int) {
	if q < 0 || d < 2 {
		Panicf("GegenbauerRecurrence: need q >= 0 and d >= 2, have q = %d, d = %d", q, d)
	}
	if len(out) < (q+1)*len(t) {
		Panicf("GegenbauerRecurrence: len(out) = %d < (q+1)*len(t) = %d", len(out), (q+1)*len(t))
	}
}

// SameLen panics unless x and y have the same length.
func SameLen(name string, x, y []float64) {
	if len(x) != len(y) {
		Panicf("%s: lengths %d and %d", name, len(x), len(y))
	}
}

// VectorPair validates two vectors of equal length for a level-1 operation
// and returns the length.
func VectorPair(name string, x, y blas64.Vector) int {
	Vector(name+" x", x)
	Vector(name+" y", y)
	if x.N != y.N {
		Panicf("%s: lengths %d and %d", name, x.N, y.N)
	}
	return x.N
}

// GemvTrivial checks a Gemv call's shapes and handles the cases that need no
// product (an empty y; an empty x or alpha == 0, where y = beta*y). It
// returns the dimensions of A and whether the caller still has to compute
// the product.
func GemvTrivial(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector) (m, n int, compute bool) {
	m, n = Gemv(t, a, x, y)
	if y.N == 0 {
		return m, n, false
	}
	if x.N == 0 || alpha == 0 {
		ScaleVector(beta, y)
		return m, n, false
	}
	return m, n, true
}

// Rows validates a float64 matrix k of rows x cols for the row products
// DotRows and AxpyRows (as Rows32).
func Rows(k blas64.General, rows, cols int) {
	General("row products", k)
	if k.Rows != rows || k.Cols != cols {
		Panicf("row products: k is %dx%d, the vectors want %dx%d", k.Rows, k.Cols, rows, cols)
	}
}

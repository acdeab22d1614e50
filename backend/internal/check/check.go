// Package check holds the argument validation and the small helpers that
// every Backend implementation shares: shape checks on row-major
// blas64.General views (a mismatch is a programming error and panics with an
// error wrapping zonal.ErrShape), scaling of C for empty inner dimensions, and
// mirroring of a lower triangle into the upper one.
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
	if g.Rows < 0 || g.Cols < 0 {
		Panicf("%s: negative dimension %dx%d", name, g.Rows, g.Cols)
	}
	if g.Rows == 0 || g.Cols == 0 {
		return
	}
	if g.Stride < g.Cols {
		Panicf("%s: stride %d < cols %d", name, g.Stride, g.Cols)
	}
	if len(g.Data) < (g.Rows-1)*g.Stride+g.Cols {
		Panicf("%s: data length %d too short for %dx%d stride %d", name, len(g.Data), g.Rows, g.Cols, g.Stride)
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
	Trans(tA)
	Trans(tB)
	General("Gemm A", a)
	General("Gemm B", b)
	General("Gemm C", c)
	m, k = Dims(tA, a)
	kb, n := Dims(tB, b)
	if k != kb || c.Rows != m || c.Cols != n {
		Panicf("Gemm: op(A) %dx%d, op(B) %dx%d, C %dx%d", m, k, kb, n, c.Rows, c.Cols)
	}
	return m, n, k
}

// Syrk validates C = op(A)*op(A)^T with op(A) = A^T for t == Trans (A^T A)
// and op(A) = A for t == NoTrans (A A^T); returns n (order of C) and k.
func Syrk(t blas.Transpose, a, c blas64.General) (n, k int) {
	Trans(t)
	General("Syrk A", a)
	General("Syrk C", c)
	if t == blas.NoTrans {
		n, k = a.Rows, a.Cols
	} else {
		n, k = a.Cols, a.Rows
	}
	if c.Rows != n || c.Cols != n {
		Panicf("Syrk: A %dx%d (trans %q) needs C %dx%d, have %dx%d", a.Rows, a.Cols, rune(t), n, n, c.Rows, c.Cols)
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

// ScaleGeneral sets C = beta*C; with beta == 0, C is zeroed without being read.
func ScaleGeneral(beta float64, c blas64.General) {
	if beta == 1 {
		return
	}
	for i := 0; i < c.Rows; i++ {
		row := c.Data[i*c.Stride : i*c.Stride+c.Cols]
		if beta == 0 {
			clear(row)
		} else {
			for j := range row {
				row[j] *= beta
			}
		}
	}
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
// upper triangle.
func MirrorLower(c blas64.General) {
	// Tiles of 32x32 keep both the rows read and the columns written in cache.
	const tb = 32
	n, s := c.Rows, c.Stride
	for i0 := 0; i0 < n; i0 += tb {
		i1 := min(i0+tb, n)
		for j0 := 0; j0 <= i0; j0 += tb {
			j1 := min(j0+tb, n)
			for i := i0; i < i1; i++ {
				for j := j0; j < min(j1, i); j++ {
					c.Data[j*s+i] = c.Data[i*s+j]
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

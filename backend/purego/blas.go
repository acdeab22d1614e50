package purego

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Implementation is a gonum blas.Float64 (and the rest of gonum's BLAS
// interfaces, through the embedded gonum.Implementation) whose Dgemm, Dsyrk,
// Ddot, Daxpy and Dscal run zonal's kernels; every other routine is gonum's.
// Use it for all of gonum with
//
//	blas64.Use(purego.BLAS())
//
// It is stateless and safe for concurrent use. Invalid arguments panic with
// gonum's messages, exactly as gonum's own implementation does.
type Implementation struct {
	gonum.Implementation
}

var _ blas.Float64 = Implementation{}

// BLAS returns the pure-Go blas.Float64 accelerated by zonal's kernels.
func BLAS() blas.Float64 { return Implementation{} }

// Panic messages, the same strings gonum uses.
const (
	badTranspose = "blas: illegal transpose"
	badUplo      = "blas: illegal triangle"
	nLT0         = "blas: n < 0"
	mLT0         = "blas: m < 0"
	kLT0         = "blas: k < 0"
	badLdA       = "blas: bad leading dimension of A"
	badLdB       = "blas: bad leading dimension of B"
	badLdC       = "blas: bad leading dimension of C"
	shortA       = "blas: insufficient length of a"
	shortB       = "blas: insufficient length of b"
	shortC       = "blas: insufficient length of c"
	zeroIncX     = "blas: zero x index increment"
	zeroIncY     = "blas: zero y index increment"
	shortX       = "blas: insufficient length of x"
	shortY       = "blas: insufficient length of y"
)

func validTrans(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}

// Dgemm computes C = alpha*op(A)*op(B) + beta*C for row-major A, B, C, where
// op(A) is m x k, op(B) is k x n. With beta == 0, C is not read.
func (Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !validTrans(tA) || !validTrans(tB) {
		panic(badTranspose)
	}
	switch {
	case m < 0:
		panic(mLT0)
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	}
	tA, tB = check.NormT(tA), check.NormT(tB)
	// Rows and columns of A and B as stored.
	ar, ac := m, k
	if tA == blas.Trans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB == blas.Trans {
		br, bc = n, k
	}
	switch {
	case lda < max(1, ac):
		panic(badLdA)
	case ldb < max(1, bc):
		panic(badLdB)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case ar > 0 && len(a) < (ar-1)*lda+ac:
		panic(shortA)
	case br > 0 && len(b) < (br-1)*ldb+bc:
		panic(shortB)
	case len(c) < (m-1)*ldc+n:
		panic(shortC)
	}
	if k == 0 || alpha == 0 {
		check.Scale(check.Full, m, n, beta, c, ldc)
		return
	}
	gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dsyrk computes the ul triangle of C = alpha*A*A^T + beta*C (tA == NoTrans,
// A is n x k) or C = alpha*A^T*A + beta*C (tA == Trans, A is k x n): only
// that triangle's micro-tiles are computed. The other strict triangle is not
// referenced.
func (Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if ul != blas.Lower && ul != blas.Upper {
		panic(badUplo)
	}
	if !validTrans(tA) {
		panic(badTranspose)
	}
	switch {
	case n < 0:
		panic(nLT0)
	case k < 0:
		panic(kLT0)
	}
	tA = check.NormT(tA)
	ar, ac := n, k
	if tA == blas.Trans {
		ar, ac = k, n
	}
	switch {
	case lda < max(1, ac):
		panic(badLdA)
	case ldc < max(1, n):
		panic(badLdC)
	}
	if n == 0 {
		return
	}
	switch {
	case ar > 0 && len(a) < (ar-1)*lda+ac:
		panic(shortA)
	case len(c) < (n-1)*ldc+n:
		panic(shortC)
	}
	if k == 0 || alpha == 0 {
		part := check.Lower
		if ul == blas.Upper {
			part = check.Upper
		}
		check.Scale(part, n, n, beta, c, ldc)
		return
	}
	syrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
}

// checkVec panics if the vector of length n with increment inc does not fit
// in a slice of length l.
func checkVec(n, inc, l int, short string) {
	if inc < 0 {
		inc = -inc
	}
	if l <= (n-1)*inc {
		panic(short)
	}
}

// Ddot returns sum_i x_i*y_i.
func (Implementation) Ddot(n int, x []float64, incX int, y []float64, incY int) float64 {
	if incX == 0 {
		panic(zeroIncX)
	}
	if incY == 0 {
		panic(zeroIncY)
	}
	if n <= 0 {
		if n == 0 {
			return 0
		}
		panic(nLT0)
	}
	checkVec(n, incX, len(x), shortX)
	checkVec(n, incY, len(y), shortY)
	return dot(n, x, incX, y, incY)
}

// Daxpy computes y += alpha*x.
func (Implementation) Daxpy(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	if incX == 0 {
		panic(zeroIncX)
	}
	if incY == 0 {
		panic(zeroIncY)
	}
	if n <= 0 {
		if n == 0 {
			return
		}
		panic(nLT0)
	}
	checkVec(n, incX, len(x), shortX)
	checkVec(n, incY, len(y), shortY)
	if alpha == 0 {
		return
	}
	axpy(n, alpha, x, incX, y, incY)
}

// Dscal computes x *= alpha. As in the reference BLAS, a negative increment
// is a no-op.
func (Implementation) Dscal(n int, alpha float64, x []float64, incX int) {
	if incX < 1 {
		if incX == 0 {
			panic(zeroIncX)
		}
		return
	}
	if n < 1 {
		if n == 0 {
			return
		}
		panic(nLT0)
	}
	checkVec(n, incX, len(x), shortX)
	scal(n, alpha, x, incX)
}

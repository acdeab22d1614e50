package asm

import (
	"math"

	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/internal/floatpool"
)

// Block sizes of the recursive factorizations: problems of this order or
// smaller are solved by the unblocked loops; larger ones split in halves
// whose off-diagonal work is one GEMM or SYRK call.
const (
	cholLeaf = 48
	trsmLeaf = 48
)

// Dpotrf computes the Cholesky factorization A = L*L^T of the n x n
// symmetric positive definite row-major A, whose lower triangle is read and
// overwritten by L (the strict upper triangle is not referenced). It is
// recursive: with A = [A11 .; A21 A22] split in halves,
//
//	L11 = chol(A11);  L21 = A21 * L11^{-T};  L22 = chol(A22 - L21 L21^T),
//
// so almost all flops run in Dtrsm's GEMM updates and in Dsyrk.
//
// It returns -1 on success, or the 0-based index j of the first pivot that is
// not positive (or NaN), with the value a_jj - sum_k l_jk^2 found there; the
// factorization stops at that column. The arguments are validated by the
// caller.
func Dpotrf(n int, a []float64, lda int) (pivot int, value float64) {
	if n == 0 {
		return -1, 0
	}
	return potrfRec(n, a, lda)
}

func potrfRec(n int, a []float64, lda int) (int, float64) {
	if n <= cholLeaf {
		return potf2(n, a, lda)
	}
	n1 := n / 2
	if n1 > 2*cholLeaf {
		n1 = n1 / 16 * 16
	}
	n2 := n - n1
	if p, v := potrfRec(n1, a, lda); p >= 0 {
		return p, v
	}
	a21 := a[n1*lda:]
	// L21 = A21 * L11^{-T}: solve X * L11^T = A21 for the n2 x n1 block.
	trsmRLT(n2, n1, a, lda, a21, lda)
	// A22 -= L21 * L21^T (lower triangle).
	a22 := a[n1*lda+n1:]
	Dsyrk(blas.Lower, blas.NoTrans, n2, n1, -1, a21, lda, 1, a22, lda)
	p, v := potrfRec(n2, a22, lda)
	if p >= 0 {
		return p + n1, v
	}
	return -1, 0
}

// potf2 is the unblocked left-looking Cholesky on the lower triangle.
func potf2(n int, a []float64, lda int) (int, float64) {
	dot := cur().dot
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+j+1]
		ajj := rj[j] - dot(rj[:j], rj[:j])
		if !(ajj > 0) {
			rj[j] = ajj
			return j, ajj
		}
		ajj = math.Sqrt(ajj)
		rj[j] = ajj
		inv := 1 / ajj
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			ri[j] = (ri[j] - dot(ri[:j], rj[:j])) * inv
		}
	}
	return -1, 0
}

// trsmRLT solves X * L^T = B in place in the m x n matrix B, where L is the
// n x n lower triangle of l (non-unit diagonal). Recursive on L:
// with L = [L11 0; L21 L22], X = [X1 X2]:
//
//	X1 = B1 L11^{-T};  X2 = (B2 - X1 L21^T) L22^{-T}.
func trsmRLT(m, n int, l []float64, ldl int, b []float64, ldb int) {
	if n <= trsmLeaf {
		trsmRLTLeaf(m, n, l, ldl, b, ldb)
		return
	}
	n1 := n / 2
	n2 := n - n1
	trsmRLT(m, n1, l, ldl, b, ldb)
	// B2 -= X1 * L21^T, L21 = l[n1:, :n1] (n2 x n1).
	Dgemm(blas.NoTrans, blas.Trans, m, n2, n1, -1, b, ldb, l[n1*ldl:], ldl, 1, b[n1:], ldb)
	trsmRLT(m, n2, l[n1*ldl+n1:], ldl, b[n1:], ldb)
}

// trsmRLTLeaf solves X L^T = B for n <= trsmLeaf columns. Column j of X is
// (B[:,j] - sum_{p<j} l_jp X[:,p]) / l_jj; columns of row-major B are
// strided, so chunks of rows are transposed into a scratch block where each
// column is a contiguous vector and the updates are long axpys.
func trsmRLTLeaf(m, n int, l []float64, ldl int, b []float64, ldb int) {
	const chunk = 256
	p := cur()
	buf := floatpool.Get(n * min(chunk, m))
	defer floatpool.Put(buf)
	for i0 := 0; i0 < m; i0 += chunk {
		mc := min(chunk, m-i0)
		t := (*buf)[:n*mc]
		for i := 0; i < mc; i++ {
			row := b[(i0+i)*ldb : (i0+i)*ldb+n]
			for j, v := range row {
				t[j*mc+i] = v
			}
		}
		for j := 0; j < n; j++ {
			tj := t[j*mc : (j+1)*mc]
			lj := l[j*ldl : j*ldl+j+1]
			for q := 0; q < j; q++ {
				if lj[q] != 0 {
					p.axpy(-lj[q], t[q*mc:(q+1)*mc], tj)
				}
			}
			d := lj[j]
			for i := range tj {
				tj[i] /= d
			}
		}
		for i := 0; i < mc; i++ {
			row := b[(i0+i)*ldb : (i0+i)*ldb+n]
			for j := range row {
				row[j] = t[j*mc+i]
			}
		}
	}
}

// DtrsmLL solves op(L) X = alpha*B in place in the m x n row-major B, where L
// is the m x m lower triangle of l with a non-unit (diag == NonUnit) or unit
// diagonal, op(L) = L (t == NoTrans) or L^T (t == Trans). This is gonum's
// Dtrsm with side = Left and uplo = Lower. Recursive: off-diagonal work is
// GEMM. The arguments are validated by the caller.
func DtrsmLL(t blas.Transpose, diag blas.Diag, m, n int, alpha float64, l []float64, ldl int, b []float64, ldb int) {
	tl := isTrans(t)
	if m == 0 || n == 0 {
		return
	}
	check.Scale(fullC, m, n, alpha, b, ldb)
	trsmLL(tl, diag == blas.Unit, m, n, l, ldl, b, ldb)
}

func trsmLL(tl, unit bool, m, n int, l []float64, ldl int, b []float64, ldb int) {
	if m <= trsmLeaf {
		axpy := cur().axpy
		if !tl {
			// Forward: x_i = (b_i - sum_{p<i} l_ip x_p) / l_ii, rows of B.
			for i := 0; i < m; i++ {
				bi := b[i*ldb : i*ldb+n]
				li := l[i*ldl : i*ldl+i+1]
				for p := 0; p < i; p++ {
					if li[p] != 0 {
						axpy(-li[p], b[p*ldb:p*ldb+n], bi)
					}
				}
				if !unit {
					inv := 1 / li[i]
					for j := range bi {
						bi[j] *= inv
					}
				}
			}
			return
		}
		// Backward with L^T: x_i = (b_i - sum_{p>i} l_pi x_p) / l_ii.
		for i := m - 1; i >= 0; i-- {
			bi := b[i*ldb : i*ldb+n]
			if !unit {
				inv := 1 / l[i*ldl+i]
				for j := range bi {
					bi[j] *= inv
				}
			}
			for p := 0; p < i; p++ {
				if v := l[i*ldl+p]; v != 0 {
					axpy(-v, bi, b[p*ldb:p*ldb+n])
				}
			}
		}
		return
	}
	m1 := m / 2
	m2 := m - m1
	l21 := l[m1*ldl:]
	if !tl {
		// L11 X1 = B1; B2 -= L21 X1; L22 X2 = B2.
		trsmLL(false, unit, m1, n, l, ldl, b, ldb)
		Dgemm(blas.NoTrans, blas.NoTrans, m2, n, m1, -1, l21, ldl, b, ldb, 1, b[m1*ldb:], ldb)
		trsmLL(false, unit, m2, n, l[m1*ldl+m1:], ldl, b[m1*ldb:], ldb)
		return
	}
	// L^T = [L11^T L21^T; 0 L22^T]: L22^T X2 = B2; B1 -= L21^T X2; L11^T X1 = B1.
	trsmLL(true, unit, m2, n, l[m1*ldl+m1:], ldl, b[m1*ldb:], ldb)
	Dgemm(blas.Trans, blas.NoTrans, m1, n, m2, -1, l21, ldl, b[m1*ldb:], ldb, 1, b, ldb)
	trsmLL(true, unit, m1, n, l, ldl, b, ldb)
}

// DtrsmLU solves op(U) X = alpha*B in place in the m x n row-major B, where U
// is the m x m upper triangle of u with a non-unit (diag == NonUnit) or unit
// diagonal, op(U) = U (t == NoTrans) or U^T (t == Trans); the strict lower
// triangle of u is not read. This is gonum's Dtrsm with side = Left and
// uplo = Upper, recursive as DtrsmLL. The arguments are validated by the
// caller.
func DtrsmLU(t blas.Transpose, diag blas.Diag, m, n int, alpha float64, u []float64, ldu int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	check.Scale(fullC, m, n, alpha, b, ldb)
	trsmLU(isTrans(t), diag == blas.Unit, m, n, u, ldu, b, ldb)
}

func trsmLU(tu, unit bool, m, n int, u []float64, ldu int, b []float64, ldb int) {
	if m <= trsmLeaf {
		axpy := cur().axpy
		scale := func(bi []float64, d float64) {
			if !unit {
				inv := 1 / d
				for j := range bi {
					bi[j] *= inv
				}
			}
		}
		if !tu {
			// Backward: x_i = (b_i - sum_{p>i} u_ip x_p) / u_ii, rows of B.
			for i := m - 1; i >= 0; i-- {
				bi := b[i*ldb : i*ldb+n]
				ui := u[i*ldu : i*ldu+m]
				for p := i + 1; p < m; p++ {
					if ui[p] != 0 {
						axpy(-ui[p], b[p*ldb:p*ldb+n], bi)
					}
				}
				scale(bi, ui[i])
			}
			return
		}
		// Forward with U^T: x_i = (b_i - sum_{p<i} u_pi x_p) / u_ii, done
		// by rows of U: once x_i is known, b_p -= u_ip x_i for p > i.
		for i := 0; i < m; i++ {
			bi := b[i*ldb : i*ldb+n]
			scale(bi, u[i*ldu+i])
			for p := i + 1; p < m; p++ {
				if v := u[i*ldu+p]; v != 0 {
					axpy(-v, bi, b[p*ldb:p*ldb+n])
				}
			}
		}
		return
	}
	m1 := m / 2
	m2 := m - m1
	u12 := u[m1:]
	u22 := u[m1*ldu+m1:]
	if !tu {
		// U22 X2 = B2; B1 -= U12 X2; U11 X1 = B1.
		trsmLU(false, unit, m2, n, u22, ldu, b[m1*ldb:], ldb)
		Dgemm(blas.NoTrans, blas.NoTrans, m1, n, m2, -1, u12, ldu, b[m1*ldb:], ldb, 1, b, ldb)
		trsmLU(false, unit, m1, n, u, ldu, b, ldb)
		return
	}
	// U^T = [U11^T 0; U12^T U22^T]: U11^T X1 = B1; B2 -= U12^T X1; U22^T X2 = B2.
	trsmLU(true, unit, m1, n, u, ldu, b, ldb)
	Dgemm(blas.Trans, blas.NoTrans, m2, n, m1, -1, u12, ldu, b, ldb, 1, b[m1*ldb:], ldb)
	trsmLU(true, unit, m2, n, u22, ldu, b[m1*ldb:], ldb)
}

// DtrsmRLT solves X * L^T = alpha*B in place in the m x n row-major B, where L
// is the n x n lower triangle of l with a non-unit diagonal (gonum's Dtrsm
// with side = Right, uplo = Lower, tA = Trans, diag = NonUnit). This is the
// panel solve of a right-looking Cholesky: L21 = A21 * L11^{-T}. The
// arguments are validated by the caller.
func DtrsmRLT(m, n int, alpha float64, l []float64, ldl int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	check.Scale(fullC, m, n, alpha, b, ldb)
	trsmRLT(m, n, l, ldl, b, ldb)
}

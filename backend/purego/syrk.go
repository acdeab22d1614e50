package purego

import "gonum.org/v1/gonum/blas"

// syrkTri computes the ul triangle of C = alpha*op(A)*op(A)^T + beta*C, where
// C is n x n, op(A) = A (n x k) for t == NoTrans and A^T (A is k x n) for
// t == Trans. The other strict triangle of C is neither read nor written.
// n, k >= 1.
//
// The product is split recursively: with C = [C11 C12; C21 C22] and op(A)'s
// rows split the same way into A1 and A2, C11 and C22 are symmetric products
// of the halves and the off-diagonal block (C21 = A2*A1^T for the lower
// triangle, C12 = A1*A2^T for the upper) is one large gemm. Only the diagonal
// leaves (order <= syrkLeaf) compute a full tile, so the flop count is
// n^2*k + O(n*syrkLeaf*k) instead of GEMM's 2*n^2*k.
func syrkTri(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if n <= syrkLeaf {
		syrkDiag(ul, t, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	n1 := n / 2
	if n1 > 2*syrkLeaf {
		// Keep the split on a multiple of 8 so inner tiles stay aligned with
		// typical micro-kernel widths.
		n1 &^= 7
	}
	n2 := n - n1
	// a2 is the start of op(A)'s second block of rows.
	var a2 []float64
	if t == blas.Trans {
		a2 = a[n1:]
	} else {
		a2 = a[n1*lda:]
	}
	tB := blas.Trans
	if t == blas.Trans {
		tB = blas.NoTrans
	}
	syrkTri(ul, t, n1, k, alpha, a, lda, beta, c, ldc)
	if ul == blas.Lower {
		// C21 = alpha*op(A2)*op(A1)^T + beta*C21.
		gemm(t, tB, n2, n1, k, alpha, a2, lda, a, lda, beta, c[n1*ldc:], ldc)
	} else {
		// C12 = alpha*op(A1)*op(A2)^T + beta*C12.
		gemm(t, tB, n1, n2, k, alpha, a, lda, a2, lda, beta, c[n1:], ldc)
	}
	syrkTri(ul, t, n2, k, alpha, a2, lda, beta, c[n1*ldc+n1:], ldc)
}

// scaleTri sets the ul triangle of the n x n C to beta*C (zero without reading
// C when beta == 0).
func scaleTri(ul blas.Uplo, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < n; i++ {
		row := c[i*ldc : i*ldc+i+1]
		if ul == blas.Upper {
			row = c[i*ldc+i : i*ldc+n]
		}
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

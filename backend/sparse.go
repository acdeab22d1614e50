package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/internal/parallel"
)

// CSR is the backend's view of a sparse Rows x Cols matrix in compressed
// sparse row form, as raw arrays (package dataset's CSR converts to it
// without a copy): the entries of row i are Val[RowPtr[i]:RowPtr[i+1]] in
// the columns Col[RowPtr[i]:RowPtr[i+1]].
//
// Unlike dataset.CSR it may be a view of consecutive rows of a larger
// matrix (RowsView): RowPtr[0] need not be 0, and the entries before
// RowPtr[0] or after RowPtr[Rows] are not read. Columns need not be sorted
// within a row; a column repeated in a row counts as the sum of its entries.
type CSR struct {
	Rows, Cols int
	RowPtr     []int
	Col        []int
	Val        []float64
}

// RowsView returns rows [i0, i1) of a as a CSR sharing a's arrays
// (0 <= i0 <= i1 <= a.Rows; it panics otherwise, like a slice index).
func (a CSR) RowsView(i0, i1 int) CSR {
	return CSR{Rows: i1 - i0, Cols: a.Cols, RowPtr: a.RowPtr[i0 : i1+1], Col: a.Col, Val: a.Val}
}

// checkCSR panics (zonal.ErrShape) unless a is consistent: non-negative
// shape, len(RowPtr) == Rows+1, 0 <= RowPtr[0] <= ... <= RowPtr[Rows] <=
// min(len(Col), len(Val)), and every column of the rows in [0, Cols). It
// costs O(Rows + nnz), less than any product with a.
func checkCSR(name string, a CSR) {
	if a.Rows < 0 || a.Cols < 0 {
		check.Panicf("%s: negative dimension %dx%d", name, a.Rows, a.Cols)
	}
	if len(a.RowPtr) != a.Rows+1 {
		check.Panicf("%s: len(RowPtr) = %d, want Rows+1 = %d", name, len(a.RowPtr), a.Rows+1)
	}
	if a.RowPtr[0] < 0 {
		check.Panicf("%s: RowPtr[0] = %d < 0", name, a.RowPtr[0])
	}
	for i := 0; i < a.Rows; i++ {
		if a.RowPtr[i] > a.RowPtr[i+1] {
			check.Panicf("%s: RowPtr decreases at row %d (%d > %d)", name, i, a.RowPtr[i], a.RowPtr[i+1])
		}
	}
	if end := a.RowPtr[a.Rows]; end > len(a.Col) || end > len(a.Val) {
		check.Panicf("%s: RowPtr[Rows] = %d beyond len(Col) = %d or len(Val) = %d", name, end, len(a.Col), len(a.Val))
	}
	for k := a.RowPtr[0]; k < a.RowPtr[a.Rows]; k++ {
		if j := a.Col[k]; j < 0 || j >= a.Cols {
			check.Panicf("%s: column %d of entry %d not in [0, %d)", name, j, k, a.Cols)
		}
	}
}

// sparseParallelWork is the number of multiply-adds below which SparseGemm
// runs on the calling goroutine.
const sparseParallelWork = 1 << 16

// sparseBlockRows is the number of rows of A per task of SparseGemm's A B
// and A B^T, sparseStripCols the number of columns of C per task of its
// A^T B and A^T B^T.
const (
	sparseBlockRows = 64
	sparseStripCols = 64
)

// SparseGemm computes C = alpha op(A) op(B) + beta C for a sparse A (CSR)
// and dense B and C, op(X) being X or X^T:
//
//	tA = NoTrans, tB = NoTrans: C (Rows x n) += alpha A B,     B Cols x n;
//	tA = NoTrans, tB = Trans:   C (Rows x n) += alpha A B^T,   B n x Cols;
//	tA = Trans,   tB = NoTrans: C (Cols x n) += alpha A^T B,   B Rows x n;
//	tA = Trans,   tB = Trans:   C (Cols x n) += alpha A^T B^T, B n x Rows,
//
// in O(nnz(A) n) operations whatever the number of columns of A. With
// beta == 0, C is not read (NaN in C is ignored), as in BLAS. C must not
// alias B.
//
// Written once for every backend: A B accumulates each row of C as
// sum_k A[i,k] B[k,:] with AxpySlice (b's, or zonal's vector axpy; a plain
// loop when B has fewer than 8 columns), A B^T
// takes each entry as a gather dot product sum_k A[i,k] B[j,k] over the
// row's entries; both run over blocks of rows of A on GOMAXPROCS goroutines
// when the product is large. A^T B scatters alpha A[i,k] B[i,:] into row k
// of C (AxpySlice) and A^T B^T the column B[:,i], on the calling goroutine
// (rows of A write to the same rows of C). Within each entry of C the
// terms are added in the order of A's entries.
//
// Shapes and the CSR arrays are validated once (see CSR; out-of-range
// columns included): a mismatch is a programming error and panics with an
// error wrapping zonal.ErrShape.
func SparseGemm(b Backend, tA, tB blas.Transpose, alpha float64, a CSR, bm blas64.General, beta float64, c blas64.General) {
	check.Trans(tA)
	check.Trans(tB)
	checkCSR("SparseGemm A", a)
	check.General("SparseGemm B", bm)
	check.General("SparseGemm C", c)
	m, k := a.Rows, a.Cols
	if tA != blas.NoTrans {
		m, k = k, m
	}
	kb, n := check.Dims(tB, bm)
	if k != kb || c.Rows != m || c.Cols != n {
		check.Panicf("SparseGemm: op(A) %dx%d, op(B) %dx%d, C %dx%d", m, k, kb, n, c.Rows, c.Cols)
	}
	if m == 0 || n == 0 {
		return
	}
	axpy := sliceAxpy(b)
	if n < shortAxpy {
		axpy = scalarAxpy
	}
	if tA == blas.NoTrans {
		work := (a.RowPtr[a.Rows] - a.RowPtr[0] + a.Rows) * n
		sparseBlocks(a.Rows, sparseBlockRows, work, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				crow := c.Data[i*c.Stride : i*c.Stride+n]
				scaleRow(beta, crow)
				lo, hi := a.RowPtr[i], a.RowPtr[i+1]
				if tB == blas.NoTrans {
					for p := lo; p < hi; p++ {
						j := a.Col[p]
						axpy(alpha*a.Val[p], bm.Data[j*bm.Stride:j*bm.Stride+n], crow)
					}
					continue
				}
				cols, vals := a.Col[lo:hi], a.Val[lo:hi]
				for jj := range crow {
					brow := bm.Data[jj*bm.Stride : jj*bm.Stride+k]
					s := 0.0
					for q, col := range cols {
						s += vals[q] * brow[col]
					}
					crow[jj] += alpha * s
				}
			}
		})
		return
	}
	// Rows of A scatter into the same rows of C: the tasks are strips of
	// C's columns instead, each running over all of A.
	work := (a.RowPtr[a.Rows] - a.RowPtr[0] + a.Rows) * n
	sparseBlocks(n, sparseStripCols, work, func(j0, j1 int) {
		for i := 0; i < m; i++ {
			scaleRow(beta, c.Data[i*c.Stride+j0:i*c.Stride+j1])
		}
		for i := 0; i < a.Rows; i++ {
			for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
				j, v := a.Col[p], alpha*a.Val[p]
				crow := c.Data[j*c.Stride+j0 : j*c.Stride+j1]
				if tB == blas.NoTrans {
					axpy(v, bm.Data[i*bm.Stride+j0:i*bm.Stride+j1], crow)
					continue
				}
				for jj := range crow {
					crow[jj] += v * bm.Data[(j0+jj)*bm.Stride+i]
				}
			}
		}
	})
}

// shortAxpy is the row length of B below which SparseGemm's A B and A^T B
// use a plain loop: a vector kernel's call costs more than it saves on a
// handful of elements (n = 1 is a sparse matrix-vector product).
const shortAxpy = 8

// scalarAxpy is y += alpha x by a plain loop.
func scalarAxpy(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}

// scaleRow sets row = beta*row, clearing it (NaN included) when beta == 0.
func scaleRow(beta float64, row []float64) {
	switch beta {
	case 0:
		clear(row)
	case 1:
	default:
		for i := range row {
			row[i] *= beta
		}
	}
}

// sparseBlocks runs f on the blocks [i0, i1) of bs indices of [0, n), on up
// to GOMAXPROCS goroutines when work (multiply-adds) is large enough, else
// on the caller's in one call.
func sparseBlocks(n, bs, work int, f func(i0, i1 int)) {
	if work < sparseParallelWork {
		f(0, n)
		return
	}
	parallel.Blocks(nil, n, bs, f)
}

// sliceAxpy returns b's AxpySlice when it has one, else zonal's vector axpy
// (the two paths of AxpySlice, chosen once; the lengths are checked by the
// caller).
func sliceAxpy(b Backend) func(alpha float64, x, y []float64) {
	if f, ok := b.(SliceAxpyer); ok {
		return f.AxpySlice
	}
	return asm.Daxpy
}

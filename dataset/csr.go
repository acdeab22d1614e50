package dataset

// CSR is a sparse n x d matrix in compressed sparse row form: the nonzeros of
// row i are Val[RowPtr[i]:RowPtr[i+1]] at columns Col[RowPtr[i]:RowPtr[i+1]]
// (0-based, strictly increasing within a row). len(RowPtr) == Rows+1.
type CSR struct {
	Rows, Cols int
	RowPtr     []int
	Col        []int
	Val        []float64
}

// Dims returns the number of rows and columns.
func (m *CSR) Dims() (r, c int) { return m.Rows, m.Cols }

// NNZ returns the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Val) }

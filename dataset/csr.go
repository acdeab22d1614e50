package dataset

import (
	"fmt"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// CSR is a sparse n x d matrix in compressed sparse row form: the nonzeros of
// row i are Val[RowPtr[i]:RowPtr[i+1]] at columns Col[RowPtr[i]:RowPtr[i+1]]
// (0-based, strictly increasing within a row). len(RowPtr) == Rows+1.
//
// Entries may hold explicit zeros (the LIBSVM reader keeps what the file
// says; NewCSRFromDense stores none). CSR implements mat.Matrix (At by binary
// search within a row) so it can be passed where a gonum matrix is read, but
// algorithms that care about nnz should iterate rows with Row.
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

// NewCSR builds a CSR from its parts (not copied) and validates it.
func NewCSR(rows, cols int, rowPtr, col []int, val []float64) (*CSR, error) {
	m := &CSR{Rows: rows, Cols: cols, RowPtr: rowPtr, Col: col, Val: val}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Validate checks the invariants: Rows, Cols >= 0; len(RowPtr) == Rows+1,
// RowPtr[0] == 0, RowPtr non-decreasing, RowPtr[Rows] == len(Col) ==
// len(Val); every column in [0, Cols) and strictly increasing within its
// row. A violation is an error wrapping zonal.ErrRange (indices) or zonal.ErrShape
// (lengths) that names the row.
func (m *CSR) Validate() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("%w: CSR has negative shape %d x %d", zonal.ErrShape, m.Rows, m.Cols)
	}
	if len(m.RowPtr) != m.Rows+1 {
		return fmt.Errorf("%w: CSR len(RowPtr) = %d, want Rows+1 = %d", zonal.ErrShape, len(m.RowPtr), m.Rows+1)
	}
	if len(m.Col) != len(m.Val) {
		return fmt.Errorf("%w: CSR len(Col) = %d != len(Val) = %d", zonal.ErrShape, len(m.Col), len(m.Val))
	}
	if m.RowPtr[0] != 0 || m.RowPtr[m.Rows] != len(m.Col) {
		return fmt.Errorf("%w: CSR RowPtr[0] = %d, RowPtr[Rows] = %d, want 0 and nnz = %d", zonal.ErrShape, m.RowPtr[0], m.RowPtr[m.Rows], len(m.Col))
	}
	for i := 0; i < m.Rows; i++ {
		if m.RowPtr[i] > m.RowPtr[i+1] {
			return fmt.Errorf("%w: CSR RowPtr decreases at row %d (%d > %d)", zonal.ErrShape, i, m.RowPtr[i], m.RowPtr[i+1])
		}
	}
	for i := 0; i < m.Rows; i++ {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		prev := -1
		for k := lo; k < hi; k++ {
			j := m.Col[k]
			if j < 0 || j >= m.Cols {
				return fmt.Errorf("%w: CSR row %d: column %d not in [0, %d)", zonal.ErrRange, i, j, m.Cols)
			}
			if j <= prev {
				return fmt.Errorf("%w: CSR row %d: column %d does not increase (previous %d)", zonal.ErrRange, i, j, prev)
			}
			prev = j
		}
	}
	return nil
}

// NewCSRFromDense returns the CSR form of a, storing the entries that are not
// exactly zero (NaN is stored).
func NewCSRFromDense(a mat.Matrix) *CSR {
	r, c := a.Dims()
	m := &CSR{Rows: r, Cols: c, RowPtr: make([]int, r+1)}
	raw, isDense := a.(*mat.Dense)
	for i := 0; i < r; i++ {
		if isDense {
			for j, v := range raw.RawRowView(i) {
				if v != 0 {
					m.Col = append(m.Col, j)
					m.Val = append(m.Val, v)
				}
			}
		} else {
			for j := 0; j < c; j++ {
				if v := a.At(i, j); v != 0 {
					m.Col = append(m.Col, j)
					m.Val = append(m.Val, v)
				}
			}
		}
		m.RowPtr[i+1] = len(m.Col)
	}
	return m
}

// ToDense returns the dense Rows x Cols matrix. gonum has no zero-size
// Dense, so it panics like mat.NewDense when Rows or Cols is 0 (the readers
// never return such a CSR). Entries repeated in a row are not expected
// (Validate rejects them).
func (m *CSR) ToDense() *mat.Dense {
	d := mat.NewDense(m.Rows, m.Cols, nil)
	raw := d.RawMatrix()
	for i := 0; i < m.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+m.Cols]
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		cols, vals := m.Col[lo:hi], m.Val[lo:hi:hi]
		for k, j := range cols {
			row[j] = vals[k]
		}
	}
	return d
}

// Row returns the column indices and values of row i (views into m, not
// copies). Iterate a CSR as
//
//	for i := 0; i < m.Rows; i++ {
//		cols, vals := m.Row(i)
//		for k, j := range cols { use(i, j, vals[k]) }
//	}
//
// i must be in [0, Rows) (it panics otherwise, like a slice index).
func (m *CSR) Row(i int) (cols []int, vals []float64) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	return m.Col[lo:hi:hi], m.Val[lo:hi:hi]
}

// RowDot returns the inner product of row i with the dense vector x,
// sum_k Val[k] x[Col[k]], in O(nnz of row i). It is an error (zonal.ErrRange) if i
// is not in [0, Rows) and (zonal.ErrShape) if len(x) != Cols.
func (m *CSR) RowDot(i int, x []float64) (float64, error) {
	if i < 0 || i >= m.Rows {
		return 0, fmt.Errorf("%w: CSR.RowDot row %d not in [0, %d)", zonal.ErrRange, i, m.Rows)
	}
	if len(x) != m.Cols {
		return 0, fmt.Errorf("%w: CSR.RowDot len(x) = %d, want %d", zonal.ErrShape, len(x), m.Cols)
	}
	cols, vals := m.Row(i)
	var s float64
	for k, j := range cols {
		s += vals[k] * x[j]
	}
	return s, nil
}

// RowNorm2 returns the squared Euclidean norm of row i (i in [0, Rows)).
func (m *CSR) RowNorm2(i int) float64 {
	_, vals := m.Row(i)
	var s float64
	for _, v := range vals {
		s += v * v
	}
	return s
}

// RowNorms2 returns the squared Euclidean norms of all rows (RowNorm2 of
// each), in O(nnz).
func (m *CSR) RowNorms2() []float64 {
	out := make([]float64, m.Rows)
	for i := range out {
		out[i] = m.RowNorm2(i)
	}
	return out
}

// MulVec computes dst = m x (len(dst) == Rows, len(x) == Cols) in O(nnz).
func (m *CSR) MulVec(dst, x []float64) error {
	if len(dst) != m.Rows || len(x) != m.Cols {
		return fmt.Errorf("%w: CSR.MulVec: %d x %d matrix, len(dst) = %d, len(x) = %d", zonal.ErrShape, m.Rows, m.Cols, len(dst), len(x))
	}
	for i := range dst {
		cols, vals := m.Row(i)
		var s float64
		for k, j := range cols {
			s += vals[k] * x[j]
		}
		dst[i] = s
	}
	return nil
}

// MulDense computes dst = m b for a dense Cols x k matrix b in O(nnz * k);
// dst must be Rows x k.
func (m *CSR) MulDense(dst *mat.Dense, b mat.Matrix) error {
	br, bc := b.Dims()
	dr, dc := dst.Dims()
	if br != m.Cols || dr != m.Rows || dc != bc {
		return fmt.Errorf("%w: CSR.MulDense: (%d x %d)(%d x %d) into %d x %d", zonal.ErrShape, m.Rows, m.Cols, br, bc, dr, dc)
	}
	bd, ok := b.(*mat.Dense)
	if !ok {
		bd = mat.DenseCopyOf(b)
	}
	braw := bd.RawMatrix()
	draw := dst.RawMatrix()
	for i := 0; i < m.Rows; i++ {
		out := draw.Data[i*draw.Stride : i*draw.Stride+dc]
		clear(out)
		cols, vals := m.Row(i)
		for k, j := range cols {
			v := vals[k]
			brow := braw.Data[j*braw.Stride : j*braw.Stride+bc]
			for t, w := range brow {
				out[t] += v * w
			}
		}
	}
	return nil
}

// Subset returns a new CSR holding the given rows in the given order
// (copied). An index outside [0, Rows) is an error wrapping zonal.ErrRange.
func (m *CSR) Subset(rows []int) (*CSR, error) {
	nnz := 0
	for k, r := range rows {
		if r < 0 || r >= m.Rows {
			return nil, fmt.Errorf("%w: CSR.Subset rows[%d] = %d not in [0, %d)", zonal.ErrRange, k, r, m.Rows)
		}
		nnz += m.RowPtr[r+1] - m.RowPtr[r]
	}
	out := &CSR{Rows: len(rows), Cols: m.Cols, RowPtr: make([]int, len(rows)+1),
		Col: make([]int, 0, nnz), Val: make([]float64, 0, nnz)}
	for k, r := range rows {
		cols, vals := m.Row(r)
		out.Col = append(out.Col, cols...)
		out.Val = append(out.Val, vals...)
		out.RowPtr[k+1] = len(out.Col)
	}
	return out, nil
}

// SliceRows returns rows [i0, i1) as a CSR that shares m's Col and Val
// (only the i1-i0+1 row pointers are new, rebased to start at 0), so a
// block of rows costs O(i1-i0) whatever its nnz; writing its values writes
// m's. An empty or out-of-range [i0, i1) is an error wrapping
// zonal.ErrRange.
func (m *CSR) SliceRows(i0, i1 int) (*CSR, error) {
	if i0 < 0 || i1 > m.Rows || i0 >= i1 {
		return nil, fmt.Errorf("%w: CSR.SliceRows [%d, %d) not a non-empty range of [0, %d)", zonal.ErrRange, i0, i1, m.Rows)
	}
	lo, hi := m.RowPtr[i0], m.RowPtr[i1]
	ptr := make([]int, i1-i0+1)
	for k := range ptr {
		ptr[k] = m.RowPtr[i0+k] - lo
	}
	return &CSR{Rows: i1 - i0, Cols: m.Cols, RowPtr: ptr, Col: m.Col[lo:hi:hi], Val: m.Val[lo:hi:hi]}, nil
}

// At returns element (i, j), found by binary search in row i. It panics
// for indices out of range, as gonum matrices do.
func (m *CSR) At(i, j int) float64 {
	if i < 0 || i >= m.Rows || j < 0 || j >= m.Cols {
		panic(mat.ErrIndexOutOfRange)
	}
	cols, vals := m.Row(i)
	lo, hi := 0, len(cols)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if cols[h] < j {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo < len(cols) && cols[lo] == j {
		return vals[lo]
	}
	return 0
}

// T returns the transpose as an implicit mat.Matrix.
func (m *CSR) T() mat.Matrix { return mat.Transpose{Matrix: m} }

var _ mat.Matrix = (*CSR)(nil)

// SparseDot is the inner product of two sparse vectors given by their
// strictly increasing column lists ca, cb and values va, vb (a CSR row, see
// Row), by merging the two lists: O(len(ca) + len(cb)).
func SparseDot(ca []int, va []float64, cb []int, vb []float64) float64 {
	s := 0.0
	for p, q := 0, 0; p < len(ca) && q < len(cb); {
		switch {
		case ca[p] < cb[q]:
			p++
		case ca[p] > cb[q]:
			q++
		default:
			s += va[p] * vb[q]
			p++
			q++
		}
	}
	return s
}

package dataset

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Dense32 is a dense Rows x Cols matrix of float32 entries stored row-major
// without padding: entry (i, j) is Data[i*Cols+j]. It holds training rows at
// half the memory of a *mat.Dense for fits that read the rows only through
// single-precision kernel blocks (solvers.FitFalkon with Precision
// zonal.Float32). It implements mat.Matrix (At widens one entry) so it can
// be passed where a gonum matrix is read; code that reads many entries
// should use Row.
type Dense32 struct {
	Rows, Cols int
	Data       []float32
}

// NewDense32 rounds the dense rows of x (round to nearest) into a new
// Dense32 of the same shape.
//
// Errors: zonal.ErrEmpty for a nil x or one without rows or columns;
// zonal.ErrNonFinite for NaN or Inf in x, or for a finite entry beyond
// float32's range (about 3.4e38), naming the entry.
func NewDense32(x mat.Matrix) (*Dense32, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	if d, ok := x.(*mat.Dense); ok && (d == nil || d.IsEmpty()) {
		return nil, fmt.Errorf("%w: empty matrix", zonal.ErrEmpty)
	}
	r, c := x.Dims()
	if r == 0 || c == 0 {
		return nil, fmt.Errorf("%w: %dx%d matrix", zonal.ErrEmpty, r, c)
	}
	out := &Dense32{Rows: r, Cols: c, Data: make([]float32, r*c)}
	row := make([]float64, c)
	for i := 0; i < r; i++ {
		var vals []float64
		if d, ok := x.(*mat.Dense); ok {
			vals = d.RawRowView(i)
		} else {
			vals = mat.Row(row, i, x)
		}
		dst := out.Data[i*c : (i+1)*c]
		for j, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
			f := float32(v)
			if math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) = %g is beyond float32's range", zonal.ErrNonFinite, i, j, v)
			}
			dst[j] = f
		}
	}
	return out, nil
}

// Validate checks the invariants: Rows, Cols >= 0 and len(Data) ==
// Rows*Cols (zonal.ErrShape otherwise).
func (m *Dense32) Validate() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("%w: Dense32 has negative shape %d x %d", zonal.ErrShape, m.Rows, m.Cols)
	}
	if len(m.Data) != m.Rows*m.Cols {
		return fmt.Errorf("%w: Dense32 %d x %d has %d entries, want %d", zonal.ErrShape, m.Rows, m.Cols, len(m.Data), m.Rows*m.Cols)
	}
	return nil
}

// Dims returns the number of rows and columns.
func (m *Dense32) Dims() (r, c int) { return m.Rows, m.Cols }

// At returns entry (i, j) widened to float64. It panics for an index out of
// range, as mat.Matrix's At does.
func (m *Dense32) At(i, j int) float64 {
	if uint(i) >= uint(m.Rows) {
		panic(mat.ErrRowAccess)
	}
	if uint(j) >= uint(m.Cols) {
		panic(mat.ErrColAccess)
	}
	return float64(m.Data[i*m.Cols+j])
}

// T returns the implicit transpose.
func (m *Dense32) T() mat.Matrix { return mat.Transpose{Matrix: m} }

// Row returns row i (not a copy).
func (m *Dense32) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Bytes is the memory of the entries, 4 Rows Cols.
func (m *Dense32) Bytes() int64 { return 4 * int64(m.Rows) * int64(m.Cols) }

// RowRange returns rows [i0, i1) as a Dense32 sharing m's entries.
//
// Errors: zonal.ErrRange for a range outside [0, Rows] or with i1 < i0.
func (m *Dense32) RowRange(i0, i1 int) (*Dense32, error) {
	if i0 < 0 || i1 > m.Rows || i1 < i0 {
		return nil, fmt.Errorf("%w: rows [%d, %d) of a %d-row Dense32", zonal.ErrRange, i0, i1, m.Rows)
	}
	return &Dense32{Rows: i1 - i0, Cols: m.Cols, Data: m.Data[i0*m.Cols : i1*m.Cols : i1*m.Cols]}, nil
}

// Subset returns the rows idx of m, in that order, copied.
//
// Errors: zonal.ErrRange for an index outside [0, Rows).
func (m *Dense32) Subset(idx []int) (*Dense32, error) {
	out := &Dense32{Rows: len(idx), Cols: m.Cols, Data: make([]float32, len(idx)*m.Cols)}
	for k, i := range idx {
		if i < 0 || i >= m.Rows {
			return nil, fmt.Errorf("%w: row %d of a %d-row Dense32", zonal.ErrRange, i, m.Rows)
		}
		copy(out.Data[k*m.Cols:(k+1)*m.Cols], m.Row(i))
	}
	return out, nil
}

// ToDense returns m widened to a new *mat.Dense (exact: every float32 is a
// float64).
func (m *Dense32) ToDense() *mat.Dense {
	if m.Rows == 0 || m.Cols == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(m.Rows, m.Cols, nil)
	raw := out.RawMatrix().Data
	for i, v := range m.Data[:m.Rows*m.Cols] {
		raw[i] = float64(v)
	}
	return out
}

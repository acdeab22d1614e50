package tensorsketch

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
)

// rows is the internal sparse row view every map and the sampler work on.
// Dense input is converted by keeping its nonzero entries, so dense and CSR
// inputs holding the same numbers give bit-identical results.
type rows struct {
	n, d int
	ptr  []int
	col  []int
	val  []float64
}

func (r *rows) row(i int) ([]int, []float64) {
	a, b := r.ptr[i], r.ptr[i+1]
	return r.col[a:b], r.val[a:b]
}

func (r *rows) nnz() int { return r.ptr[r.n] }

// rowsBytes is the size of a rows value with n rows and nnz entries.
func rowsBytes(n, nnz int) int64 {
	return budget.Bytes(8, n+1) + budget.Bytes(16, nnz)
}

// toRows converts x to rows: a *dataset.CSR (validated with its Validate
// method, then its nonzeros copied; no dense copy is made) or any other
// mat.Matrix (its nonzero entries, read through RawMatrix when available).
// d >= 0 is the width the caller expects. Before allocating, the copy plus
// more(n, nnz) bytes are checked against limit (budget.Check with what).
//
// Errors: zonal.ErrEmpty (nil or no rows/columns), zonal.ErrShape (width,
// or wrapped by zonal.ErrFormat for CSR lengths), zonal.ErrFormat with
// zonal.ErrRange (CSR column indices), zonal.ErrNonFinite (NaN or Inf),
// zonal.ErrTooLarge (budget).
func toRows(x mat.Matrix, d int, limit int64, what string, more func(n, nnz int) int64) (*rows, error) {
	if c, ok := x.(*dataset.CSR); ok {
		return csrRows(c, d, limit, what, more)
	}
	if x == nil {
		return nil, fmt.Errorf("%w: nil input", zonal.ErrEmpty)
	}
	n, c := x.Dims()
	if n == 0 || c == 0 {
		return nil, fmt.Errorf("%w: input is %dx%d", zonal.ErrEmpty, n, c)
	}
	if d >= 0 && c != d {
		return nil, fmt.Errorf("%w: input has %d columns, map expects %d", zonal.ErrShape, c, d)
	}
	var raw []float64
	stride := 0
	if rm, ok := x.(mat.RawMatrixer); ok {
		g := rm.RawMatrix()
		raw, stride = g.Data, g.Stride
	}
	at := func(i, j int) float64 {
		if raw != nil {
			return raw[i*stride+j]
		}
		return x.At(i, j)
	}
	// first pass: check finiteness and count the nonzeros
	nnz := 0
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			v := at(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
			if v != 0 {
				nnz++
			}
		}
	}
	if err := checkRows(n, nnz, limit, what, more); err != nil {
		return nil, err
	}
	r := &rows{n: n, d: c, ptr: make([]int, n+1), col: make([]int, 0, nnz), val: make([]float64, 0, nnz)}
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			if v := at(i, j); v != 0 {
				r.col = append(r.col, j)
				r.val = append(r.val, v)
			}
		}
		r.ptr[i+1] = len(r.val)
	}
	return r, nil
}

func checkRows(n, nnz int, limit int64, what string, more func(n, nnz int) int64) error {
	need := rowsBytes(n, nnz)
	if more != nil {
		need = satAdd(need, more(n, nnz))
	}
	return budget.Check(what, need, limit)
}

// satAdd adds byte counts, saturating at math.MaxInt64.
func satAdd(a ...int64) int64 {
	s := int64(0)
	for _, v := range a {
		if v > math.MaxInt64-s {
			return math.MaxInt64
		}
		s += v
	}
	return s
}

// csrRows validates x (dataset's CSR.Validate; its errors are wrapped by
// zonal.ErrFormat) and copies its nonzero entries. Rows without entries are
// allowed (they are the zero vector).
func csrRows(x *dataset.CSR, d int, limit int64, what string, more func(n, nnz int) int64) (*rows, error) {
	if x == nil || x.Rows == 0 || x.Cols == 0 {
		return nil, fmt.Errorf("%w: empty CSR matrix", zonal.ErrEmpty)
	}
	if d >= 0 && x.Cols != d {
		return nil, fmt.Errorf("%w: input has %d columns, map expects %d", zonal.ErrShape, x.Cols, d)
	}
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", zonal.ErrFormat, err)
	}
	nnz := 0
	for p, v := range x.Val {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			i, _ := slices.BinarySearch(x.RowPtr, p+1)
			return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i-1, x.Col[p], v)
		}
		if v != 0 {
			nnz++
		}
	}
	if err := checkRows(x.Rows, nnz, limit, what, more); err != nil {
		return nil, err
	}
	r := &rows{n: x.Rows, d: x.Cols, ptr: make([]int, x.Rows+1), col: make([]int, 0, nnz), val: make([]float64, 0, nnz)}
	for i := 0; i < x.Rows; i++ {
		for p := x.RowPtr[i]; p < x.RowPtr[i+1]; p++ {
			if v := x.Val[p]; v != 0 {
				r.col = append(r.col, x.Col[p])
				r.val = append(r.val, v)
			}
		}
		r.ptr[i+1] = len(r.val)
	}
	return r, nil
}

// augment returns the rows x' = (scale*x, extra): the map from the
// polynomial kernel (gamma <x,y> + c)^p to the homogeneous <x',y'>^p with
// scale = sqrt(gamma) and extra = sqrt(c). With extra == 0 no column is added
// but the width is still d+1.
func (r *rows) augment(scale, extra float64) *rows {
	out := &rows{n: r.n, d: r.d + 1, ptr: make([]int, r.n+1)}
	k := r.nnz()
	if extra != 0 {
		k += r.n
	}
	out.col = make([]int, 0, k)
	out.val = make([]float64, 0, k)
	for i := 0; i < r.n; i++ {
		c, v := r.row(i)
		for p := range c {
			out.col = append(out.col, c[p])
			out.val = append(out.val, scale*v[p])
		}
		if extra != 0 {
			out.col = append(out.col, r.d)
			out.val = append(out.val, extra)
		}
		out.ptr[i+1] = len(out.val)
	}
	return out
}

// sqNorms returns |x_i|^2 for every row.
func (r *rows) sqNorms() []float64 {
	out := make([]float64, r.n)
	for i := range out {
		_, v := r.row(i)
		s := 0.0
		for _, a := range v {
			s += a * a
		}
		out[i] = s
	}
	return out
}

// checkDst checks that dst is n x D.
func checkDst(dst *mat.Dense, n, D int) error {
	if dst == nil {
		return fmt.Errorf("%w: nil destination", zonal.ErrShape)
	}
	r, c := dst.Dims()
	if r != n || c != D {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, c, n, D)
	}
	return nil
}

package solvers

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// Inputs of the solvers and models: an n x d matrix that is either a
// *mat.Dense or a *dataset.CSR. A CSR input is never turned into an n x d
// dense matrix here: row blocks are CSR views (rowRange), centres and cells
// are CSR subsets (subsetRows) and every kernel block comes from
// kernels.MatrixInto with the CSR passed through. The helpers below are the
// only places in the package that look at the concrete type.

// checkInput validates a solver or model input: a *mat.Dense, or a
// *dataset.CSR whose invariants hold (CSR.Validate); any other mat.Matrix is
// refused rather than copied, because a copy of a large implicit matrix is
// the n x d dense array the CSR path exists to avoid. Errors wrap
// zonal.ErrShape (nil, another type, a CSR whose parts disagree with its
// shape) or zonal.ErrRange (a CSR column index outside [0, d) or not
// increasing).
func checkInput(what string, x mat.Matrix) error {
	switch m := x.(type) {
	case *mat.Dense:
		if m == nil {
			return fmt.Errorf("%w: nil %s", zonal.ErrShape, what)
		}
		return nil
	case *dataset.CSR:
		if m == nil {
			return fmt.Errorf("%w: nil %s", zonal.ErrShape, what)
		}
		if err := m.Validate(); err != nil {
			return fmt.Errorf("solvers: %s (%d x %d CSR): %w", what, m.Rows, m.Cols, err)
		}
		return nil
	case nil:
		return fmt.Errorf("%w: nil %s", zonal.ErrShape, what)
	default:
		return fmt.Errorf("%w: %s must be a *mat.Dense or a *dataset.CSR, got %T", zonal.ErrShape, what, x)
	}
}

// checkNonEmptyInput is checkInput that also refuses a matrix without rows
// or columns (zonal.ErrShape).
func checkNonEmptyInput(what string, x mat.Matrix) error {
	if err := checkInput(what, x); err != nil {
		return err
	}
	if d, ok := x.(*mat.Dense); ok && d.IsEmpty() {
		return fmt.Errorf("%w: empty %s", zonal.ErrShape, what)
	}
	if r, c := x.Dims(); r == 0 || c == 0 {
		return fmt.Errorf("%w: empty %s (%dx%d)", zonal.ErrShape, what, r, c)
	}
	return nil
}

// isCSR reports whether m is a *dataset.CSR.
func isCSR(m mat.Matrix) bool { _, ok := m.(*dataset.CSR); return ok }

// checkFiniteCSR: no NaN or Inf among the stored values of m
// (zonal.ErrNonFinite naming the row and column), in O(nnz).
func checkFiniteCSR(what string, m *dataset.CSR) error {
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s row %d column %d is %g", zonal.ErrNonFinite, what, i, cols[k], v)
			}
		}
	}
	return nil
}

// rowRange returns rows [i0, i1) of x (i0 < i1): a slice of a Dense, or a
// CSR sharing Col and Val with x whose row pointers (i1-i0+1 ints) are
// rebased to start at 0.
func rowRange(x mat.Matrix, i0, i1 int) mat.Matrix {
	if s, ok := x.(*dataset.CSR); ok {
		if i0 == 0 && i1 == s.Rows {
			return s
		}
		lo, hi := s.RowPtr[i0], s.RowPtr[i1]
		ptr := make([]int, i1-i0+1)
		for j := range ptr {
			ptr[j] = s.RowPtr[i0+j] - lo
		}
		return &dataset.CSR{Rows: i1 - i0, Cols: s.Cols, RowPtr: ptr, Col: s.Col[lo:hi:hi], Val: s.Val[lo:hi:hi]}
	}
	d := x.(*mat.Dense)
	_, c := d.Dims()
	return d.Slice(i0, i1, 0, c)
}

// subsetRows returns the rows idx of x in that order, copied: a Dense, a
// Dense32 (float32 FALKON's rows), or a CSR (dataset.CSR.Subset, O(nnz of
// the rows)).
func subsetRows(x mat.Matrix, idx []int) mat.Matrix {
	if s, ok := x.(*dataset.Dense32); ok {
		sub, err := s.Subset(idx)
		if err != nil { // the solvers only pass valid row indices
			panic(err)
		}
		return sub
	}
	if s, ok := x.(*dataset.CSR); ok {
		sub, err := s.Subset(idx)
		if err != nil { // the solvers only pass valid row indices
			panic(err)
		}
		return sub
	}
	return gatherRows(x.(*mat.Dense), idx)
}

// copyInput returns a copy of x of the same kind (Dense or CSR).
func copyInput(x mat.Matrix) mat.Matrix {
	if s, ok := x.(*dataset.CSR); ok {
		all := make([]int, s.Rows)
		for i := range all {
			all[i] = i
		}
		return subsetRows(s, all)
	}
	return mat.DenseCopyOf(x)
}

// likeCenters returns x in a form whose kernel blocks against centres c can
// be formed without densifying anything: when c is a CSR and x a Dense, the
// CSR of x (x is already held densely, so this costs at most its size);
// otherwise x itself.
func likeCenters(x, c mat.Matrix) mat.Matrix {
	if isCSR(c) && !isCSR(x) {
		return dataset.NewCSRFromDense(x)
	}
	return x
}

// diagBlock is the row block of kernelDiag.
const diagBlock = 32

// kernelDiag returns k(x_i, x_i) for every row of x. For a Dense x it calls
// k.Eval on the rows; for a CSR x, whose rows Eval cannot take, it forms the
// diagBlock x diagBlock kernel blocks of consecutive rows with
// kernels.MatrixInto and keeps their diagonals (diagBlock kernel values per
// row, O(diagBlock^2) scratch).
func kernelDiag(ctx context.Context, be backend.Backend, k kernels.Kernel, x mat.Matrix) ([]float64, error) {
	n, _ := x.Dims()
	out := make([]float64, n)
	if d, ok := x.(*mat.Dense); ok {
		for i := range out {
			r := rowOf(d, i)
			out[i] = k.Eval(r, r)
		}
		return out, nil
	}
	blk := mat.NewDense(min(diagBlock, n), min(diagBlock, n), nil)
	for i0 := 0; i0 < n; i0 += diagBlock {
		i1 := min(i0+diagBlock, n)
		xb := rowRange(x, i0, i1)
		b := blk.Slice(0, i1-i0, 0, i1-i0).(*mat.Dense)
		if err := kernels.MatrixInto(ctx, b, k, xb, xb, kernels.Options{Backend: be}); err != nil {
			return nil, err
		}
		for j := i0; j < i1; j++ {
			out[j] = b.At(j-i0, j-i0)
		}
	}
	return out, nil
}

// Model-file encoding of an input-space matrix (expansion centres, ParK
// centroids): a Dense as before (uint64 rows >= 1, uint64 cols, the values
// row by row), a CSR as uint64 0 (a row count no dense field has, so files
// without CSR fields are unchanged and still load), uint64 csrTag, uint64
// rows, uint64 cols, uint64 nnz, RowPtr (rows+1 uint64), Col (nnz uint64),
// Val (nnz floats).
const csrTag = 1

// matrix appends a Dense or CSR matrix (see csrTag).
func (e *enc) matrix(m mat.Matrix) {
	s, ok := m.(*dataset.CSR)
	if !ok {
		e.dense(m.(*mat.Dense))
		return
	}
	e.u64(0)
	e.u64(csrTag)
	e.u64(uint64(s.Rows))
	e.u64(uint64(s.Cols))
	e.u64(uint64(len(s.Val)))
	for _, p := range s.RowPtr {
		e.u64(uint64(p))
	}
	for _, c := range s.Col {
		e.u64(uint64(c))
	}
	for _, v := range s.Val {
		e.f64(v)
	}
}

// matrix reads what enc.matrix wrote: a Dense (as dec.dense) or a CSR that
// passes CSR.Validate, has at least one row and column and finite values.
func (d *dec) matrix(what string) mat.Matrix {
	if d.err != nil {
		return nil
	}
	if len(d.b) >= 8 && binary.LittleEndian.Uint64(d.b) != 0 {
		return d.dense(what)
	}
	d.u64(what + " rows")
	if tag := d.u64(what + " tag"); d.err == nil && tag != csrTag {
		d.fail("%s: unknown matrix encoding %d", what, tag)
	}
	r, c, ok := d.dims(what)
	nnz := d.u64(what + " nnz")
	if !ok || d.err != nil {
		return nil
	}
	left := uint64(len(d.b)) / 8
	if r >= left || nnz > left || r+1+2*nnz > left || c > uint64(math.MaxInt) {
		d.fail("%s declares a %dx%d CSR with %d nonzeros, %d bytes left", what, r, c, nnz, len(d.b))
		return nil
	}
	s := &dataset.CSR{Rows: int(r), Cols: int(c), RowPtr: make([]int, r+1), Col: make([]int, nnz), Val: make([]float64, nnz)}
	for i := range s.RowPtr {
		s.RowPtr[i] = int(min(d.u64(what+" row pointer"), uint64(math.MaxInt)))
	}
	for i := range s.Col {
		s.Col[i] = int(min(d.u64(what+" column"), uint64(math.MaxInt)))
	}
	for i := range s.Val {
		s.Val[i] = d.f64(what)
	}
	if d.err != nil {
		return nil
	}
	if err := s.Validate(); err != nil {
		d.fail("%s: %v", what, err)
		return nil
	}
	if err := checkFiniteCSR(what, s); err != nil {
		d.fail("%v", err)
		return nil
	}
	return s
}

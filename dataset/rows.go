package dataset

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// SelectRows returns the rows idx of x, copied, in the given order
// (repeats allowed), of the same kind as x: a *CSR for a *CSR (O(nnz) of
// the rows, never densified), a *mat.Dense for a *mat.Dense, and a
// *mat.Dense for any other mat.Matrix (returned as M). It is the module's
// one row-subset helper.
//
// Errors: zonal.ErrEmpty for a nil x or no indices, zonal.ErrRange for an
// index outside [0, n), and CSR.Validate's for a malformed CSR.
func SelectRows[M mat.Matrix](x M, idx []int) (M, error) {
	var zero M
	xm := mat.Matrix(x)
	if xm == nil || len(idx) == 0 {
		return zero, fmt.Errorf("%w: no rows to select", zonal.ErrEmpty)
	}
	if c, ok := xm.(*CSR); ok {
		if c == nil {
			return zero, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
		}
		if err := c.Validate(); err != nil {
			return zero, err
		}
	}
	if d, ok := xm.(*mat.Dense); ok && d == nil {
		return zero, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	n, d := xm.Dims()
	for k, r := range idx {
		if r < 0 || r >= n {
			return zero, fmt.Errorf("%w: row index %d (position %d) not in [0, %d)", zonal.ErrRange, r, k, n)
		}
	}
	var out mat.Matrix
	switch m := xm.(type) {
	case *CSR:
		s, err := m.Subset(idx)
		if err != nil {
			return zero, err
		}
		out = s
	case *mat.Dense:
		o := mat.NewDense(len(idx), d, nil)
		for i, r := range idx {
			copy(o.RawRowView(i), m.RawRowView(r))
		}
		out = o
	default:
		o := mat.NewDense(len(idx), d, nil)
		for i, r := range idx {
			for j := 0; j < d; j++ {
				o.Set(i, j, xm.At(r, j))
			}
		}
		out = o
	}
	res, ok := out.(M)
	if !ok {
		return zero, fmt.Errorf("%w: cannot return the rows of a %T as %T", zonal.ErrParam, x, zero)
	}
	return res, nil
}

// MustSelectRows is SelectRows for indices the caller generated itself
// (folds, subsamples, centre draws of a matrix it validated): an error
// there is a bug, and it panics.
func MustSelectRows[M mat.Matrix](x M, idx []int) M {
	r, err := SelectRows(x, idx)
	if err != nil {
		panic(err)
	}
	return r
}

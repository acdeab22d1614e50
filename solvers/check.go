package solvers

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"gonum.org/v1/gonum/mat"
)

// checkLambda: lambda > 0 and finite (zonal.ErrParam).
func checkLambda(lambda float64) error {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return fmt.Errorf("%w: lambda must be positive and finite, got %g", zonal.ErrParam, lambda)
	}
	return nil
}

// checkXY validates training data: x a *mat.Dense or a valid *dataset.CSR
// (checkInput), n >= 1 rows, finite entries, Y with n rows (zonal.ErrShape,
// zonal.ErrRange, zonal.ErrEmpty, zonal.ErrNonFinite).
func checkXY(x mat.Matrix, y *mat.Dense) (n, d, k int, err error) {
	return checkXYOf(x, y, false)
}

// checkXYOf is checkXY that also accepts a valid *dataset.Dense32 x when
// rows32 is set (float32 FALKON).
func checkXYOf(x mat.Matrix, y *mat.Dense, rows32 bool) (n, d, k int, err error) {
	if y == nil {
		return 0, 0, 0, fmt.Errorf("%w: nil input", zonal.ErrShape)
	}
	if x32, ok := x.(*dataset.Dense32); ok && rows32 {
		if x32 == nil {
			return 0, 0, 0, fmt.Errorf("%w: nil training matrix", zonal.ErrShape)
		}
		if err := x32.Validate(); err != nil {
			return 0, 0, 0, fmt.Errorf("solvers: training matrix: %w", err)
		}
	} else if err := checkInput("training matrix", x); err != nil {
		return 0, 0, 0, err
	}
	n, d = x.Dims()
	if n == 0 || d == 0 {
		return 0, 0, 0, fmt.Errorf("%w: empty training matrix (%dx%d)", zonal.ErrEmpty, n, d)
	}
	ny, k := y.Dims()
	if ny != n {
		return 0, 0, 0, fmt.Errorf("%w: %d training rows but %d labels", zonal.ErrShape, n, ny)
	}
	if err := checkFinite("features", x); err != nil {
		return 0, 0, 0, err
	}
	if err := checkFinite("labels", y); err != nil {
		return 0, 0, 0, err
	}
	return n, d, k, nil
}

// checkFinite: no NaN or Inf in m (zonal.ErrNonFinite, naming the entry);
// O(nnz) for a CSR.
func checkFinite(what string, m mat.Matrix) error {
	if s, ok := m.(*dataset.CSR); ok {
		return checkFiniteCSR(what, s)
	}
	r, c := m.Dims()
	if x32, ok := m.(*dataset.Dense32); ok {
		for i := 0; i < r; i++ {
			for j, v := range x32.Row(i) {
				if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
					return fmt.Errorf("%w: %s row %d column %d is %g", zonal.ErrNonFinite, what, i, j, f)
				}
			}
		}
		return nil
	}
	if d, ok := m.(*mat.Dense); ok {
		raw := d.RawMatrix()
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+c]
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%w: %s row %d column %d is %g", zonal.ErrNonFinite, what, i, j, v)
				}
			}
		}
		return nil
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := m.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s row %d column %d is %g", zonal.ErrNonFinite, what, i, j, v)
			}
		}
	}
	return nil
}

// checkPredict validates Predict's arguments: dst n x k for x n x d, x a
// *mat.Dense or a valid *dataset.CSR (zonal.ErrShape, zonal.ErrRange).
func checkPredict(dst *mat.Dense, x mat.Matrix, d, k int) error {
	if dst == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	if err := checkInput("input", x); err != nil {
		return err
	}
	n, dx := x.Dims()
	if dx != d {
		return fmt.Errorf("%w: model expects %d features, input has %d", zonal.ErrShape, d, dx)
	}
	r, c := dst.Dims()
	if r != n || c != k {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, c, n, k)
	}
	return nil
}

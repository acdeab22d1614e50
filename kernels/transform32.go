package kernels

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Single-precision features (zonal.Float32): Transform32 writes
// z(x) into a float32 destination, for solvers that store feature blocks in
// float32 (ridge with zonal.Float32 accumulates Z^T Z from them).
//
// Maps whose cost is a large product implement FeatureMap32 and compute
// that product in float32 (FourierMap: the projections X W^T; Nystrom: the
// kernel block K(X, C) and its product with K_CC^{-1/2}); each documents
// its error and what stays float64. Every other map (GegenbauerMap, the
// tensorsketch maps, user maps) goes through one generic fallback: its
// float64 Transform on a block of at most transform32Rows rows at a time
// into float64 scratch, rounded to nearest, so the result is round(Transform)
// up to the round-off by which the map's float64 result may depend on its
// blocking (at most one float32 ulp for a value that lies within that
// round-off of a rounding boundary).

// FeatureMap32 is implemented by feature maps with their own
// single-precision Transform. Callers use the package function Transform32,
// which falls back to Transform for other maps.
type FeatureMap32 interface {
	FeatureMap
	// Transform32 writes the features of the rows of x (n x d) to dst
	// (n x D, row-major, Stride >= D), rounded to float32 or computed
	// partly in float32 as the map documents. Errors as for Transform:
	// zonal.ErrEmpty, zonal.ErrShape (x without d columns, dst not n x D),
	// zonal.ErrNonFinite (NaN or Inf in x).
	Transform32(dst blas32.General, x mat.Matrix) error
}

// transform32Rows is the row block of Transform32's generic fallback: its
// float64 scratch is transform32Rows x D.
const transform32Rows = 256

// Transform32 writes the features fm(x) of the rows of x (n x d) into the
// float32 matrix dst (n x D, Stride >= D). A map that implements
// FeatureMap32 computes them itself; for any other map, fm.Transform runs
// on consecutive blocks of at most 256 rows (views of a *mat.Dense, row
// slices of a *dataset.CSR sharing its entries, never a dense copy of a
// CSR; a dense copy of the block for other matrix types) into a float64
// scratch block (256 x D floats), rounded to nearest into dst.
//
// Errors: zonal.ErrParam for a nil map; zonal.ErrEmpty (nil or empty x, a
// dst without Data), zonal.ErrShape (x without d columns, dst not n x D), and the map's
// Transform errors, e.g. zonal.ErrNonFinite (NaN or Inf in x). The fallback
// reports a block's error with the block's rows; dst is then partly
// written.
func Transform32(fm FeatureMap, dst blas32.General, x mat.Matrix) error {
	if fm == nil {
		return fmt.Errorf("%w: nil feature map", zonal.ErrParam)
	}
	if f, ok := fm.(FeatureMap32); ok {
		return f.Transform32(dst, x)
	}
	n, err := checkTransform32(dst, x, fm.InputDim(), fm.Dim())
	if err != nil {
		return err
	}
	D := fm.Dim()
	rows := min(n, transform32Rows)
	scratch := mat.NewDense(rows, D, nil)
	for i0 := 0; i0 < n; i0 += rows {
		i1 := min(n, i0+rows)
		xb, err := RowBlock(x, i0, i1)
		if err != nil {
			return err
		}
		s := scratch
		if i1-i0 != rows {
			s = scratch.Slice(0, i1-i0, 0, D).(*mat.Dense)
		}
		if err := fm.Transform(s, xb); err != nil {
			if i0 == 0 && i1 == n {
				return err
			}
			return fmt.Errorf("kernels: features of rows %d..%d: %w", i0, i1-1, err)
		}
		sg := s.RawMatrix()
		for i := 0; i < i1-i0; i++ {
			round32(dst.Data[(i0+i)*dst.Stride:(i0+i)*dst.Stride+D], sg.Data[i*sg.Stride:i*sg.Stride+D])
		}
	}
	return nil
}

// checkTransform32 validates the shapes of a Transform32 call and returns n.
func checkTransform32(dst blas32.General, x mat.Matrix, d, dim int) (int, error) {
	if dst.Data == nil {
		return 0, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	n, err := checkInput(x, d)
	if err != nil {
		return 0, err
	}
	if dst.Rows != n || dst.Cols != dim || dst.Stride < dim || len(dst.Data) < (n-1)*dst.Stride+dim {
		return 0, fmt.Errorf("%w: float32 dst is %dx%d (stride %d, %d entries), want %dx%d",
			zonal.ErrShape, dst.Rows, dst.Cols, dst.Stride, len(dst.Data), n, dim)
	}
	return n, nil
}

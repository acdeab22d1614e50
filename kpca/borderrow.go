package kpca

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// borderRow checks a new point x (what names it in errors: "point",
// "landmark") and returns its kernel row a_i = k(x, p_i) against the m
// stored points pts (row-major, m x len(x)) and k(x, x): the border of the
// bordered update that adds x. Errors: zonal.ErrShape (x not of length
// dim), zonal.ErrNonFinite (NaN or Inf in x, in the row or in k(x, x)).
func borderRow(k kernels.Kernel, b backend.Backend, x []float64, dim int, pts []float64, m int, what string) ([]float64, float64, error) {
	if len(x) != dim {
		return nil, 0, fmt.Errorf("kpca: %s of length %d, want %d: %w", what, len(x), dim, zonal.ErrShape)
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("kpca: %s holds %v: %w", what, v, zonal.ErrNonFinite)
		}
	}
	a := make([]float64, m)
	if m > 0 {
		if err := kernels.MatrixInto(context.Background(), mat.NewDense(1, m, a), k,
			mat.NewDense(1, dim, x), mat.NewDense(m, dim, pts[:m*dim]), kernels.Options{Backend: b}); err != nil {
			return nil, 0, fmt.Errorf("kpca: kernel row: %w", err)
		}
	}
	kxx := k.Eval(x, x)
	if math.IsNaN(kxx) || math.IsInf(kxx, 0) {
		return nil, 0, fmt.Errorf("kpca: kernel value k(x,x) = %v: %w", kxx, zonal.ErrNonFinite)
	}
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("kpca: kernel value %v: %w", v, zonal.ErrNonFinite)
		}
	}
	return a, kxx, nil
}

package kpca

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

func frob(g blas64.General) float64 {
	// Scaled sum of squares to avoid overflow.
	scale, ssq := 0.0, 1.0
	for i := 0; i < g.Rows; i++ {
		for _, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			if v != 0 {
				a := math.Abs(v)
				if scale < a {
					ssq = 1 + ssq*(scale/a)*(scale/a)
					scale = a
				} else {
					ssq += (a / scale) * (a / scale)
				}
			}
		}
	}
	return scale * math.Sqrt(ssq)
}

func symmetrize(g blas64.General) {
	for i := 0; i < g.Rows; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (g.Data[i*g.Stride+j] + g.Data[j*g.Stride+i])
			g.Data[i*g.Stride+j], g.Data[j*g.Stride+i] = v, v
		}
	}
}

func checkFinite(m *mat.Dense) error {
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("kpca: value %v: %w", v, zonal.ErrNonFinite)
			}
		}
	}
	return nil
}

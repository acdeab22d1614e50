package kernels

// TEMPORARY skeleton so dependent packages compile; the kernels work replaces it.

import (
	"encoding/binary"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
)

// Gaussian is k(x, y) = exp(-|x-y|^2 / (2 sigma^2)).
type Gaussian struct{ Sigma float64 }

// NewGaussian returns the Gaussian kernel of bandwidth sigma > 0.
func NewGaussian(sigma float64) (Gaussian, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return Gaussian{}, fmt.Errorf("%w: gaussian sigma must be positive and finite, got %g", ErrParam, sigma)
	}
	return Gaussian{Sigma: sigma}, nil
}

func (g Gaussian) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		t := x[i] - y[i]
		s += t * t
	}
	return math.Exp(-s / (2 * g.Sigma * g.Sigma))
}
func (g Gaussian) Kind() string   { return "gaussian" }
func (g Gaussian) String() string { return fmt.Sprintf("gaussian(sigma=%g)", g.Sigma) }
func (g Gaussian) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(g.Sigma)), nil
}

// MatrixInto writes K(X, Y) (rows of X against rows of Y) into dst (nx x ny).
func MatrixInto(dst *mat.Dense, b backend.Backend, k Kernel, x, y mat.Matrix) error {
	nx, d := x.Dims()
	ny, d2 := y.Dims()
	if d != d2 {
		return fmt.Errorf("%w: X has %d columns, Y has %d", ErrDim, d, d2)
	}
	r, c := dst.Dims()
	if r != nx || c != ny {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", ErrDim, r, c, nx, ny)
	}
	xr := make([]float64, d)
	yr := make([]float64, d)
	for i := 0; i < nx; i++ {
		mat.Row(xr, i, x)
		for j := 0; j < ny; j++ {
			mat.Row(yr, j, y)
			dst.Set(i, j, k.Eval(xr, yr))
		}
	}
	return nil
}

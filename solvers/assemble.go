package solvers

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// This file builds models from parameters computed elsewhere (for example
// by a distributed pipeline that sums K_nM^T K_nM over many machines and
// solves the M x M system once), so that they are saved, loaded and served
// like fitted ones.

// NewFalkonModel returns the FALKON-kind model f(x) = mean + K(x, C) alpha
// for a kernel k, centres C (M x d), coefficients alpha (M x k) and output
// means (length k; nil means zeros). lambda is recorded in the model file
// only. Any alpha solving (K_nM^T K_nM + lambda n K_MM) alpha = K_nM^T (Y -
// mean) is the model FitFalkon approximates by CG. The matrices are copied.
// Prediction runs on opts.Backend.
//
// Errors: zonal.ErrParam for a nil kernel or a lambda that is not positive
// and finite; zonal.ErrShape for nil or empty matrices, alpha's row count
// other than M or a mean whose length is not alpha's column count;
// zonal.ErrNonFinite for NaN or Inf in the centres, alpha or mean.
func NewFalkonModel(k kernels.Kernel, centers, alpha *mat.Dense, mean []float64, lambda float64, opts Options) (*Falkon, error) {
	e, err := newCheckedExpansion(k, centers, alpha, mean, lambda, opts)
	if err != nil {
		return nil, err
	}
	return &Falkon{exp: e, lambda: lambda}, nil
}

// NewRidgeModel returns the ridge-kind model f(x) = mean + z(x) W for a
// feature map z with D features, weights W (D x k) and output means (length
// k; nil means zeros). lambda is recorded in the model file only. The
// weights are copied. Prediction runs on opts.Backend.
//
// Errors: zonal.ErrParam for a nil map or a lambda that is not positive and
// finite; zonal.ErrShape for nil or empty weights, a row count other than
// the map's Dim or a mean whose length is not W's column count;
// zonal.ErrNonFinite for NaN or Inf in W or mean.
func NewRidgeModel(fm kernels.FeatureMap, w *mat.Dense, mean []float64, lambda float64, opts Options) (*Ridge, error) {
	if fm == nil {
		return nil, fmt.Errorf("%w: nil feature map", zonal.ErrParam)
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if w == nil || w.IsEmpty() {
		return nil, fmt.Errorf("%w: nil or empty weights", zonal.ErrShape)
	}
	D, k := w.Dims()
	if D != fm.Dim() {
		return nil, fmt.Errorf("%w: weights have %d rows, the map has %d features", zonal.ErrShape, D, fm.Dim())
	}
	mean, err := checkMean(mean, k)
	if err != nil {
		return nil, err
	}
	if err := checkFinite("weights", w); err != nil {
		return nil, err
	}
	return newRidge(opts.backend(), fm, mat.DenseCopyOf(w), mean, lambda), nil
}

// NewParKModel gathers independently fitted cells into one ParK-kind model:
// centroids c_q (Q x d, one row per cell) and cell q's FALKON model, which
// predicts every point whose nearest centroid in the RKHS of k, by
// ||phi(x) - phi(c_q)||^2, is c_q (ties to the smaller index). The cells
// must use kernel k (the same kind and parameters) and have the same input
// dimension and output count. lambda is recorded in the model file only.
// Prediction runs on opts.Backend.
//
// The cells must have the same Precision, which the model takes.
//
// Errors: zonal.ErrParam for a nil kernel, a nil cell, a cell with another
// kernel or precision, or a lambda that is not positive and finite; zonal.ErrShape for nil
// or empty centroids, a cell count other than the centroid count, or cells
// whose dimensions differ from the centroids' or from each other;
// zonal.ErrNonFinite for NaN or Inf in the centroids.
func NewParKModel(k kernels.Kernel, centroids *mat.Dense, cells []*Falkon, lambda float64, opts Options) (*ParK, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if centroids == nil || centroids.IsEmpty() {
		return nil, fmt.Errorf("%w: nil or empty centroids", zonal.ErrShape)
	}
	q, d := centroids.Dims()
	if len(cells) != q {
		return nil, fmt.Errorf("%w: %d centroids, %d cells", zonal.ErrShape, q, len(cells))
	}
	if err := checkFinite("centroids", centroids); err != nil {
		return nil, err
	}
	kb, err := k.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("solvers: encoding kernel %s: %w", k.Kind(), err)
	}
	be := opts.backend()
	c := mat.DenseCopyOf(centroids)
	p := &ParK{kern: k, centroids: c, cdiag: make([]float64, q), cells: make([]*expansion, q), lambda: lambda}
	for i, f := range cells {
		if f == nil {
			return nil, fmt.Errorf("%w: cell %d is nil", zonal.ErrParam, i)
		}
		fk := f.exp.kern
		fb, err := fk.MarshalBinary()
		if err != nil || fk.Kind() != k.Kind() || !slices.Equal(fb, kb) {
			return nil, fmt.Errorf("%w: cell %d uses kernel %s, the model %s", zonal.ErrParam, i, fk, k)
		}
		if f.InputDim() != d || f.Outputs() != cells[0].Outputs() {
			return nil, fmt.Errorf("%w: cell %d takes %d inputs with %d outputs, want %d inputs and %d outputs",
				zonal.ErrShape, i, f.InputDim(), f.Outputs(), d, cells[0].Outputs())
		}
		if f.exp.prec != cells[0].exp.prec {
			return nil, fmt.Errorf("%w: cell %d has precision %v, cell 0 %v", zonal.ErrParam, i, f.exp.prec, cells[0].exp.prec)
		}
		p.cells[i] = withPrecision(newExpansion(be, k, f.exp.centers, f.exp.alpha, f.exp.mean), f.exp.prec)
		r := rowOf(c, i)
		p.cdiag[i] = k.Eval(r, r)
	}
	return p, nil
}

// newCheckedExpansion checks and copies the parts of an expansion.
func newCheckedExpansion(k kernels.Kernel, centers, alpha *mat.Dense, mean []float64, lambda float64, opts Options) (*expansion, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if centers == nil || alpha == nil || centers.IsEmpty() || alpha.IsEmpty() {
		return nil, fmt.Errorf("%w: nil or empty centres or alpha", zonal.ErrShape)
	}
	m, _ := centers.Dims()
	ma, ka := alpha.Dims()
	if ma != m {
		return nil, fmt.Errorf("%w: %d centres, alpha has %d rows", zonal.ErrShape, m, ma)
	}
	mean, err := checkMean(mean, ka)
	if err != nil {
		return nil, err
	}
	if err := checkFinite("centres", centers); err != nil {
		return nil, err
	}
	if err := checkFinite("alpha", alpha); err != nil {
		return nil, err
	}
	return newExpansion(opts.backend(), k, mat.DenseCopyOf(centers), mat.DenseCopyOf(alpha), mean), nil
}

// checkMean returns a copy of mean (zeros when nil) after checking its
// length k and finiteness.
func checkMean(mean []float64, k int) ([]float64, error) {
	if mean == nil {
		return make([]float64, k), nil
	}
	if len(mean) != k {
		return nil, fmt.Errorf("%w: mean has %d entries for %d outputs", zonal.ErrShape, len(mean), k)
	}
	for j, v := range mean {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: mean %d is %g", zonal.ErrNonFinite, j, v)
		}
	}
	return slices.Clone(mean), nil
}

package solvers

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// rowWeights are the validated Options.Weights of a fit on the rows that
// remain after dropping the zero-weight ones (see prepareWeights).
type rowWeights struct {
	w    []float64 // per kept row; nil: unweighted (every row weight 1)
	sum  float64   // sum of w; the row count when unweighted
	kept []int     // original index of each kept row; nil when no row was dropped
	// given is the sum of the caller's weights (0: none given), what the
	// model records.
	given float64
}

// CheckWeights validates per-row weights for n rows: nil (unweighted) or n
// finite values >= 0, not all zero. It returns their sum (n for nil).
//
// Errors: a *zonal.ParamError with Param "Weights" (wrapping zonal.ErrParam,
// and zonal.ErrShape for a wrong length or zonal.ErrNonFinite for a NaN or
// Inf) naming the first bad row.
func CheckWeights(w []float64, n int) (float64, error) {
	if w == nil {
		return float64(n), nil
	}
	if len(w) != n {
		return 0, &zonal.ParamError{Param: "Weights", Reason: fmt.Sprintf("%d weights for %d rows (want one weight per row)", len(w), n), Err: zonal.ErrShape}
	}
	var sum float64
	for i, v := range w {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return 0, &zonal.ParamError{Param: "Weights", Reason: fmt.Sprintf("the weight of row %d is %g (weights must be finite)", i, v), Err: zonal.ErrNonFinite}
		case v < 0:
			return 0, &zonal.ParamError{Param: "Weights", Reason: fmt.Sprintf("the weight of row %d is %g (weights must be >= 0)", i, v)}
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		reason := "all weights are zero (at least one row must have a positive weight)"
		if sum > 0 {
			reason = "the weights sum to +Inf (rescale them)"
		}
		return 0, &zonal.ParamError{Param: "Weights", Reason: reason}
	}
	return sum, nil
}

// prepareWeights validates w for the n rows of x and y and drops the rows
// of weight zero (they do not enter the objective): it returns the rows
// kept and their weights. Weights that are all equal are the unweighted
// fit exactly (the objective divides by their sum), so they come back as
// nil weights and the fit takes the unweighted path.
func prepareWeights(x mat.Matrix, y *mat.Dense, w []float64) (mat.Matrix, *mat.Dense, rowWeights, error) {
	n, _ := x.Dims()
	sum, err := CheckWeights(w, n)
	if err != nil {
		return nil, nil, rowWeights{}, err
	}
	if uniformWeights(w) {
		return x, y, rowWeights{sum: float64(n), given: sumIf(w != nil, sum)}, nil
	}
	var kept []int
	for i, v := range w {
		if v > 0 {
			kept = append(kept, i)
		}
	}
	if len(kept) == n {
		return x, y, rowWeights{w: w, sum: sum, given: sum}, nil
	}
	wk := SubsetWeights(w, kept)
	rw := rowWeights{w: wk, sum: sum, kept: kept, given: sum}
	if uniformWeights(wk) {
		rw.w, rw.sum = nil, float64(len(kept))
	}
	return subsetRows(x, kept), gatherRows(y, kept), rw, nil
}

// SubsetWeights returns the weights of the rows idx, w[idx[0]],
// w[idx[1]], ..., for a fit on those rows; nil for nil w (unweighted stays
// unweighted).
func SubsetWeights(w []float64, idx []int) []float64 {
	if w == nil {
		return nil
	}
	out := make([]float64, len(idx))
	for r, i := range idx {
		out[r] = w[i]
	}
	return out
}

// uniformWeights reports whether w is nil or all its entries are equal.
func uniformWeights(w []float64) bool {
	for _, v := range w {
		if v != w[0] {
			return false
		}
	}
	return true
}

// original maps indices of kept rows back to the caller's rows.
func (rw rowWeights) original(idx []int) []int {
	if rw.kept == nil {
		return idx
	}
	out := make([]int, len(idx))
	for j, i := range idx {
		out[j] = rw.kept[i]
	}
	return out
}

func sumIf(ok bool, v float64) float64 {
	if ok {
		return v
	}
	return 0
}

// sqrtWeights returns sqrt(w_i) (nil for nil w).
func sqrtWeights(w []float64) []float64 {
	if w == nil {
		return nil
	}
	s := make([]float64, len(w))
	for i, v := range w {
		s[i] = math.Sqrt(v)
	}
	return s
}

// scaleRows multiplies row i of g by s[i] (nothing for nil s).
func scaleRows(g blas64.General, s []float64) {
	if s == nil {
		return
	}
	for i := 0; i < g.Rows; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+g.Cols]
		for j := range row {
			row[j] *= s[i]
		}
	}
}

// scaledRows returns a copy of y with row i multiplied by s[i] (y itself
// for nil s).
func scaledRows(y *mat.Dense, s []float64) *mat.Dense {
	if s == nil {
		return y
	}
	c := mat.DenseCopyOf(y)
	scaleRows(c.RawMatrix(), s)
	return c
}

// scaleRowsCols sets a_ij = s_i a_ij s_j for the square a (nothing for nil s).
func scaleRowsCols(a *mat.Dense, s []float64) {
	if s == nil {
		return
	}
	r := a.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+r.Cols]
		for j := range row {
			row[j] *= s[i] * s[j]
		}
	}
}

// centerWeights returns the weights of the centres at idx scaled to sum to
// M (D of newFalkonFactors), or nil when w is nil or the centres' weights
// are all equal (D = I, the unweighted preconditioner).
func centerWeights(w []float64, idx []int) []float64 {
	if w == nil {
		return nil
	}
	cw := make([]float64, len(idx))
	var sum float64
	for j, i := range idx {
		cw[j] = w[i]
		sum += w[i]
	}
	if uniformWeights(cw) {
		return nil
	}
	for j := range cw {
		cw[j] *= float64(len(idx)) / sum
	}
	return cw
}

// TrainingWeights is what a pipeline records of the row weights its model
// was fitted with (Pipeline.Weights; the model file keeps it, format
// version 4). It says how the fit was weighted; a prediction does not use
// it.
type TrainingWeights struct {
	// Sum is the sum of the row weights the fit used (sample weight times
	// class factor): finite and > 0.
	Sum float64
	// Rows is the number of training rows of positive weight (the rows
	// that entered the objective): >= 1.
	Rows int
	// ClassFactors are the class weights of a classifier, one per class
	// of the pipeline's Encoding.Classes in that order (each finite and
	// >= 0); nil without class weights.
	ClassFactors []float64
}

// NewTrainingWeights is the record of a fit on the row weights w (the
// weights given to Options.Weights) with the class factors cf (nil: none):
// nil for nil w (an unweighted fit records nothing).
//
// Errors: those of CheckWeights for w; a *zonal.ParamError on
// "TrainingWeights.ClassFactors" for a NaN, Inf or negative factor.
func NewTrainingWeights(w, cf []float64) (*TrainingWeights, error) {
	if w == nil {
		return nil, nil
	}
	sum, err := CheckWeights(w, len(w))
	if err != nil {
		return nil, err
	}
	tw := &TrainingWeights{Sum: sum, ClassFactors: slices.Clone(cf)}
	for _, v := range w {
		if v > 0 {
			tw.Rows++
		}
	}
	if err := tw.check(nil); err != nil {
		return nil, err
	}
	return tw, nil
}

// check validates w, and for a non-nil enc that its class factors are
// one per class of a classifier.
func (w *TrainingWeights) check(enc *Encoding) error {
	bad := func(param, reason string) error {
		return &zonal.ParamError{Param: param, Reason: reason}
	}
	switch {
	case !(w.Sum > 0) || math.IsInf(w.Sum, 0):
		return bad("TrainingWeights.Sum", fmt.Sprintf("the recorded weight sum is %g (want finite and > 0)", w.Sum))
	case w.Rows < 1:
		return bad("TrainingWeights.Rows", fmt.Sprintf("%d rows of positive weight recorded (want >= 1)", w.Rows))
	}
	for j, v := range w.ClassFactors {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return bad("TrainingWeights.ClassFactors", fmt.Sprintf("the factor of class %d is %g (want finite and >= 0)", j, v))
		}
	}
	if enc != nil && w.ClassFactors != nil {
		if enc.Task != TaskClassification || len(w.ClassFactors) != len(enc.Classes) {
			return &zonal.ParamError{Param: "TrainingWeights.ClassFactors", Reason: fmt.Sprintf("%d class factors for a %s model with %d classes", len(w.ClassFactors), enc.Task, len(enc.Classes)), Err: zonal.ErrShape}
		}
	}
	return nil
}

// weightSumSetter is a model of this package whose WeightSum a loaded
// pipeline's record restores.
type weightSumSetter interface {
	setWeightSum(float64)
}

package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// weight is the weight of row i: 1 when w is nil.
func weight(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

// checkInputs checks predictions (what names them in messages) against
// labels y and weights w: the same nonzero length, no NaN in pred, no NaN
// or Inf in y, and valid weights. It returns the total weight.
//
// Infinite predictions are refused when finite is set (every metric that
// does arithmetic on them) and allowed otherwise (rankings by score).
func checkInputs(what string, pred, y, w []float64, finite bool) (float64, error) {
	if len(pred) != len(y) {
		return 0, fmt.Errorf("%w: %w: %d %s for %d labels", zonal.ErrParam, zonal.ErrShape, len(pred), what, len(y))
	}
	if err := checkLabels(y); err != nil {
		return 0, err
	}
	for i, v := range pred {
		if math.IsNaN(v) || (finite && math.IsInf(v, 0)) {
			return 0, fmt.Errorf("%w: %s %d is %g", zonal.ErrNonFinite, what, i, v)
		}
	}
	return CheckWeights(w, len(y))
}

// checkLabels refuses no labels (ErrEmpty) and NaN or Inf labels.
func checkLabels(y []float64) error {
	if len(y) == 0 {
		return fmt.Errorf("%w: no labels", zonal.ErrEmpty)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: label %d is %g", zonal.ErrNonFinite, i, v)
		}
	}
	return nil
}

// CheckWeights checks the sample weights of n rows as every function of
// this package does and returns their sum (n for nil weights): w is nil or
// has n entries, each finite and >= 0, with a positive, finite sum.
//
// Errors: zonal.ErrParam, with ErrShape for the wrong length and with
// ErrNonFinite for a NaN or Inf weight.
func CheckWeights(w []float64, n int) (float64, error) {
	if w == nil {
		return float64(n), nil
	}
	if len(w) != n {
		return 0, fmt.Errorf("%w: %w: %d weights for %d rows", zonal.ErrParam, zonal.ErrShape, len(w), n)
	}
	sum := 0.0
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%w: %w: weight %d is %g", zonal.ErrParam, zonal.ErrNonFinite, i, v)
		}
		if v < 0 {
			return 0, fmt.Errorf("%w: weight %d is negative (%g)", zonal.ErrParam, i, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return 0, fmt.Errorf("%w: the weights sum to %g (want a positive, finite total)", zonal.ErrParam, sum)
	}
	return sum, nil
}

// BinaryLabels checks binary labels y with weights w as the binary
// functions of this package do and returns the negative and the positive
// class: y must hold exactly two distinct finite values, the larger being
// positive, each with a positive total weight.
//
// Errors: zonal.ErrEmpty for no labels, ErrNonFinite for a NaN or Inf
// label, ErrParam for bad weights and for other than two classes.
func BinaryLabels(y, w []float64) (neg, pos float64, err error) {
	if err := checkLabels(y); err != nil {
		return 0, 0, err
	}
	if _, err := CheckWeights(w, len(y)); err != nil {
		return 0, 0, err
	}
	neg, pos, _, _, err = binaryClasses(y, w)
	return neg, pos, err
}

// binaryClasses returns the negative and positive class of binary labels
// y: the two distinct values, the larger being positive (as in
// solvers.Encoding, where an output > 0 means Classes[1]). It also returns
// the total weight of each class; both must be positive.
func binaryClasses(y, w []float64) (neg, pos, wNeg, wPos float64, err error) {
	neg, pos = y[0], y[0]
	for _, v := range y {
		switch {
		case v == neg || v == pos:
		case neg == pos:
			neg, pos = min(neg, v), max(pos, v)
		default:
			return 0, 0, 0, 0, fmt.Errorf("%w: binary metric on labels with more than two classes (%g, %g, %g)", zonal.ErrParam, neg, pos, v)
		}
	}
	if neg == pos {
		return 0, 0, 0, 0, fmt.Errorf("%w: the labels hold one class only (%g); a binary metric needs both classes", zonal.ErrParam, neg)
	}
	for i, v := range y {
		if v == pos {
			wPos += weight(w, i)
		} else {
			wNeg += weight(w, i)
		}
	}
	if wNeg == 0 || wPos == 0 {
		empty := pos
		if wNeg == 0 {
			empty = neg
		}
		return 0, 0, 0, 0, fmt.Errorf("%w: class %g has zero total weight; a binary metric needs both classes", zonal.ErrParam, empty)
	}
	return neg, pos, wNeg, wPos, nil
}

// classIndex maps each class value to its position in classes, which must
// be distinct and finite (at least min of them).
func classIndex(classes []float64, least int) (map[float64]int, error) {
	if len(classes) < least {
		return nil, fmt.Errorf("%w: %d classes given, want at least %d", zonal.ErrParam, len(classes), least)
	}
	idx := make(map[float64]int, len(classes))
	for j, c := range classes {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, fmt.Errorf("%w: class %d is %g", zonal.ErrNonFinite, j, c)
		}
		if _, dup := idx[c]; dup {
			return nil, fmt.Errorf("%w: class %g is listed twice", zonal.ErrParam, c)
		}
		idx[c] = j
	}
	return idx, nil
}

// labelIndex returns the class position of every label in v (what names
// the values in messages).
func labelIndex(what string, v []float64, idx map[float64]int) ([]int, error) {
	out := make([]int, len(v))
	for i, x := range v {
		j, ok := idx[x]
		if !ok {
			return nil, fmt.Errorf("%w: %s %d is %g, not one of the classes", zonal.ErrParam, what, i, x)
		}
		out[i] = j
	}
	return out, nil
}

// unionClasses returns the sorted distinct values of a and b.
func unionClasses(a, b []float64) []float64 {
	c := make([]float64, 0, len(a)+len(b))
	c = append(c, a...)
	c = append(c, b...)
	slices.Sort(c)
	return slices.Compact(c)
}

// probTol is how far a row of probabilities may sum from 1. Rows computed
// in float64 sum to 1 within a few k * 1.1e-16, rows stored in float32
// within k * 6e-8, so 1e-5 accepts float32 probabilities of up to about
// 150 classes; the mistakes it is there to catch (raw scores or one-vs-rest
// outputs passed as probabilities, a dropped column) are off by far more.
const probTol = 1e-5

// checkProbs checks an n x k probability matrix against n labels and k
// classes: entries in [0, 1], rows summing to 1 within probTol. Rows that
// do not are refused rather than renormalised, because such a row means the
// caller passed something other than probabilities.
func checkProbs(prob *mat.Dense, n, k int) error {
	if prob == nil {
		return fmt.Errorf("%w: nil probability matrix", zonal.ErrParam)
	}
	r, c := prob.Dims()
	if r != n || c != k {
		return fmt.Errorf("%w: %w: %dx%d probabilities for %d labels and %d classes", zonal.ErrParam, zonal.ErrShape, r, c, n, k)
	}
	for i := range r {
		s := 0.0
		for j := range c {
			p := prob.At(i, j)
			if math.IsNaN(p) {
				return fmt.Errorf("%w: probability (%d, %d) is NaN", zonal.ErrNonFinite, i, j)
			}
			if p < 0 || p > 1 {
				return fmt.Errorf("%w: probability (%d, %d) is %g, outside [0, 1]", zonal.ErrParam, i, j, p)
			}
			s += p
		}
		if math.Abs(s-1) > probTol {
			return fmt.Errorf("%w: probabilities of row %d sum to %g, not 1 (within %g)", zonal.ErrParam, i, s, probTol)
		}
	}
	return nil
}

// checkBinaryProbs checks probabilities of the positive class: each in
// [0, 1] (not NaN).
func checkBinaryProbs(p []float64) error {
	for i, v := range p {
		if math.IsNaN(v) {
			return fmt.Errorf("%w: probability %d is NaN", zonal.ErrNonFinite, i)
		}
		if v < 0 || v > 1 {
			return fmt.Errorf("%w: probability %d is %g, outside [0, 1]", zonal.ErrParam, i, v)
		}
	}
	return nil
}

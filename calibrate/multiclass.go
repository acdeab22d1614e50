package calibrate

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Multiclass calibrates k per-class scores one versus rest: calibrator j
// maps the score of column j to the probability of Classes[j] against all
// other classes, and the k calibrated values of a row are divided by their
// sum so the row is a probability distribution. (The one-vs-rest
// probabilities are each calibrated but need not sum to 1; normalising is
// the simple fix scikit-learn's CalibratedClassifierCV also applies.)
//
// The fields are the whole state, plain values a model file can store:
// Method, the Classes in column order, and one calibrator per class in
// Platt (MethodPlatt) or Isotonic (MethodIsotonic), the other slice empty.
// Call Validate after decoding.
type Multiclass struct {
	Method   Method
	Classes  []float64
	Platt    []Platt
	Isotonic []Isotonic
}

// FitMulticlass fits one calibrator per column of the n x k scores, column
// j against the rows of label classes[j], with weights w (nil: all 1).
// Every class must occur in y with positive weight, and so must some other
// class: a one-vs-rest calibrator needs both sides.
//
// Errors: zonal.ErrParam for an invalid method, fewer than two or
// repeated classes, a label outside classes, a class absent from y, and
// bad weights; ErrParam with ErrShape for a score matrix of the wrong
// shape; ErrNonFinite for NaN or Inf scores, classes or labels; ErrEmpty
// for no rows; those of the binary fits.
func FitMulticlass(m Method, scores *mat.Dense, classes, y, w []float64) (*Multiclass, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if err := checkClasses(classes); err != nil {
		return nil, err
	}
	if scores == nil {
		return nil, fmt.Errorf("%w: nil score matrix", zonal.ErrParam)
	}
	if r, c := scores.Dims(); r != len(y) || c != len(classes) {
		return nil, fmt.Errorf("%w: %w: %dx%d scores for %d labels and %d classes", zonal.ErrParam, zonal.ErrShape, r, c, len(y), len(classes))
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("%w: no labels", zonal.ErrEmpty)
	}
	known := make(map[float64]bool, len(classes))
	for _, c := range classes {
		known[c] = true
	}
	for i, v := range y {
		if !known[v] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: label %d is %g", zonal.ErrNonFinite, i, v)
			}
			return nil, fmt.Errorf("%w: label %d is %g, not one of the classes", zonal.ErrParam, i, v)
		}
	}
	mc := &Multiclass{Method: m, Classes: append([]float64(nil), classes...)}
	t := make([]float64, len(y))
	for j, c := range classes {
		for i, v := range y {
			t[i] = 0
			if v == c {
				t[i] = 1
			}
		}
		cal, err := Fit(m, mat.Col(nil, j, scores), t, w)
		if err != nil {
			return nil, fmt.Errorf("class %g: %w", c, err)
		}
		switch cal := cal.(type) {
		case *Platt:
			mc.Platt = append(mc.Platt, *cal)
		case *Isotonic:
			mc.Isotonic = append(mc.Isotonic, *cal)
		}
	}
	return mc, nil
}

// checkClasses requires at least two distinct finite classes.
func checkClasses(classes []float64) error {
	if len(classes) < 2 {
		return fmt.Errorf("%w: %d classes, want at least 2", zonal.ErrParam, len(classes))
	}
	seen := make(map[float64]bool, len(classes))
	for j, c := range classes {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("%w: class %d is %g", zonal.ErrNonFinite, j, c)
		}
		if seen[c] {
			return fmt.Errorf("%w: class %g is listed twice", zonal.ErrParam, c)
		}
		seen[c] = true
	}
	return nil
}

// members returns the number of calibrators of the method and of the
// other method.
func (m *Multiclass) members() (mine, other int) {
	if m.Method == MethodIsotonic {
		return len(m.Isotonic), len(m.Platt)
	}
	return len(m.Platt), len(m.Isotonic)
}

// calibrator returns calibrator j.
func (m *Multiclass) calibrator(j int) Calibrator {
	if m.Method == MethodIsotonic {
		return &m.Isotonic[j]
	}
	return &m.Platt[j]
}

// ApplyRow writes the calibrated probabilities of one row of k scores to
// dst (k entries; dst may be scores). When every calibrated value is 0
// (possible with isotonic calibrators far below their fitted range) the
// row is uniform, 1/k each.
//
// Errors: zonal.ErrParam (with ErrShape) unless both have len(Classes)
// entries; ErrNonFinite for a NaN score; ErrFormat for a calibrator
// without one member per class (Validate checks the rest). dst is not
// written then.
func (m *Multiclass) ApplyRow(dst, scores []float64) error {
	k := len(m.Classes)
	if members, _ := m.members(); members != k {
		return fmt.Errorf("%w: %s calibrator of %d classes with %d members (call Validate after decoding)", zonal.ErrFormat, m.Method, k, members)
	}
	if len(scores) != k || len(dst) != k {
		return fmt.Errorf("%w: %w: %d scores into %d probabilities for %d classes", zonal.ErrParam, zonal.ErrShape, len(scores), len(dst), k)
	}
	for j, s := range scores {
		if math.IsNaN(s) {
			return fmt.Errorf("%w: score %d is NaN", zonal.ErrNonFinite, j)
		}
	}
	sum := 0.0
	for j, s := range scores {
		dst[j] = m.calibrator(j).Apply(s)
		sum += dst[j]
	}
	for j := range dst {
		if sum > 0 {
			dst[j] /= sum
		} else {
			dst[j] = 1 / float64(k)
		}
	}
	return nil
}

// Apply returns the n x k calibrated probabilities of n x k scores, rows
// summing to 1 (to rounding, within k float64 ulps).
//
// Errors: those of ApplyRow for any row.
func (m *Multiclass) Apply(scores *mat.Dense) (*mat.Dense, error) {
	if scores == nil {
		return nil, fmt.Errorf("%w: nil score matrix", zonal.ErrParam)
	}
	n, k := scores.Dims()
	if k != len(m.Classes) {
		return nil, fmt.Errorf("%w: %w: %dx%d scores for %d classes", zonal.ErrParam, zonal.ErrShape, n, k, len(m.Classes))
	}
	out := mat.NewDense(n, k, nil)
	row := make([]float64, k)
	for i := range n {
		mat.Row(row, i, scores)
		if err := m.ApplyRow(out.RawRowView(i), row); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return out, nil
}

// Validate checks the fields: a valid method, at least two distinct finite
// classes, one valid calibrator of the method per class and none of the
// other.
//
// Errors: zonal.ErrFormat (with the sentinel of the fault) otherwise.
func (m *Multiclass) Validate() error {
	if err := m.Method.Check(); err != nil {
		return fmt.Errorf("%w: %w", zonal.ErrFormat, err)
	}
	if err := checkClasses(m.Classes); err != nil {
		return fmt.Errorf("%w: %w", zonal.ErrFormat, err)
	}
	if n, other := m.members(); n != len(m.Classes) || other != 0 {
		return fmt.Errorf("%w: %s calibrator of %d classes holds %d Platt and %d isotonic calibrators", zonal.ErrFormat, m.Method, len(m.Classes), len(m.Platt), len(m.Isotonic))
	}
	for j := range m.Classes {
		if err := m.calibrator(j).Validate(); err != nil {
			return fmt.Errorf("class %g: %w", m.Classes[j], err)
		}
	}
	return nil
}

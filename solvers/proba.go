package solvers

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
)

// Calibration maps the outputs of a classification pipeline to class
// probabilities. The model's outputs are least-squares scores (near -1 and
// +1, see Encoding), which rank the classes but are not probabilities; a
// calibrator fitted on held-out scores (package calibrate) turns them into
// probabilities. Exactly one field is set:
//
//   - Binary, for two classes: the probability of Classes[1] (the larger
//     label) as a function of the model's one output;
//   - Multiclass, for more: one calibrator per output column, one versus
//     rest, the row normalised to sum 1; its Classes are the encoding's.
type Calibration struct {
	Binary     calibrate.Calibrator
	Multiclass *calibrate.Multiclass
}

// Method is the calibration method of c.
func (c *Calibration) Method() calibrate.Method {
	if c.Binary != nil {
		return c.Binary.Method()
	}
	return c.Multiclass.Method
}

// check reports whether c fits the encoding enc and holds valid
// calibrators.
//
// Errors: zonal.ErrState for a regression encoding; zonal.ErrParam for a
// calibration of the wrong shape (Binary for more than two classes,
// Multiclass for two, both or neither set, Multiclass classes that are not
// the encoding's) and for an invalid calibrator (wrapping its Validate
// error).
func (c *Calibration) check(enc Encoding) error {
	if enc.Task != TaskClassification {
		return fmt.Errorf("%w: a calibration needs a classification pipeline, this one is %s", zonal.ErrState, enc.Task)
	}
	k := len(enc.Classes)
	switch {
	case (c.Binary == nil) == (c.Multiclass == nil):
		return fmt.Errorf("%w: a calibration needs exactly one of Binary and Multiclass", zonal.ErrParam)
	case k == 2 && c.Binary == nil:
		return fmt.Errorf("%w: two classes need a Binary calibrator", zonal.ErrParam)
	case k > 2 && c.Multiclass == nil:
		return fmt.Errorf("%w: %d classes need a Multiclass calibrator", zonal.ErrParam, k)
	}
	var err error
	if c.Binary != nil {
		err = c.Binary.Validate()
	} else {
		err = c.Multiclass.Validate()
		if err == nil && !slices.Equal(c.Multiclass.Classes, enc.Classes) {
			err = fmt.Errorf("%w: calibrator classes %v, the encoding's are %v", zonal.ErrParam, c.Multiclass.Classes, enc.Classes)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: calibration: %w", zonal.ErrParam, err)
	}
	return nil
}

// DefaultThreshold is the probability of the positive class above which a
// calibrated binary pipeline predicts it: 0.5, the decision of least
// expected error when the probabilities are calibrated.
const DefaultThreshold = 0.5

// WithCalibration returns a pipeline like p whose classification outputs
// are mapped to probabilities by c (see Calibration); c nil removes it. p
// itself is unchanged. c is used as it is, not copied: it must not be
// changed afterwards.
//
// Errors: those of the calibration's check: zonal.ErrState for a
// regression pipeline, zonal.ErrParam for a calibration that does not fit
// the classes or is invalid.
func (p *Pipeline) WithCalibration(c *Calibration) (*Pipeline, error) {
	if c != nil {
		if err := c.check(p.Encoding); err != nil {
			return nil, err
		}
	}
	q, err := p.clone()
	if err != nil {
		return nil, err
	}
	q.Calibration = c
	return q, nil
}

// HasProbabilities reports whether p predicts probabilities: a
// classification pipeline holding a Calibration.
func (p *Pipeline) HasProbabilities() bool {
	return p.Calibration != nil && p.Encoding.Task == TaskClassification
}

// Classes is the number of probability columns of PredictProba (the
// classes of a classification pipeline; 0 for regression).
func (p *Pipeline) Classes() int {
	if p.Encoding.Task != TaskClassification {
		return 0
	}
	return len(p.Encoding.Classes)
}

// PredictProba writes the class probabilities of every row of x (dense or
// CSR, as PredictOutputs) to dst (n x Classes(), column j the probability
// of Encoding.Classes[j]); every row is in [0, 1] and sums to 1 (to
// rounding).
//
// Errors: zonal.ErrState for a regression pipeline or one without a
// calibration; zonal.ErrShape unless x is n x d and dst n x Classes();
// those of PredictOutputs.
func (p *Pipeline) PredictProba(dst *mat.Dense, x mat.Matrix) error {
	if err := p.probaState(); err != nil {
		return err
	}
	if dst == nil || x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	n, _ := x.Dims()
	if r, c := dst.Dims(); r != n || c != p.Classes() {
		return fmt.Errorf("%w: dst is %d x %d, want %d x %d", zonal.ErrShape, r, c, n, p.Classes())
	}
	if n == 0 {
		return nil
	}
	out := mat.NewDense(n, p.Outputs(), nil)
	if err := p.PredictOutputs(out, x); err != nil {
		return err
	}
	return p.Probabilities(dst, out)
}

// probaState is the error of asking p for probabilities it cannot give.
func (p *Pipeline) probaState() error {
	if p.Encoding.Task != TaskClassification {
		return fmt.Errorf("%w: a %s model has no class probabilities", zonal.ErrState, p.Encoding.Task)
	}
	if p.Calibration == nil {
		return fmt.Errorf("%w: the model has no calibrator, so no probabilities (refit it with calibration, or use its scores)", zonal.ErrState)
	}
	return nil
}

// Probabilities maps raw model outputs out (n x Outputs(), as
// PredictOutputs writes them) to class probabilities dst (n x Classes()).
// Serving code that has the outputs already uses it instead of
// PredictProba.
//
// Errors: those of PredictProba except PredictOutputs'; zonal.ErrNonFinite
// for a NaN output.
func (p *Pipeline) Probabilities(dst, out *mat.Dense) error {
	if err := p.probaState(); err != nil {
		return err
	}
	if dst == nil || out == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	n, k := out.Dims()
	if r, c := dst.Dims(); k != p.Outputs() || r != n || c != p.Classes() {
		return fmt.Errorf("%w: %d x %d outputs into %d x %d probabilities, the model has %d outputs and %d classes", zonal.ErrShape, n, k, r, c, p.Outputs(), p.Classes())
	}
	for i := 0; i < n; i++ {
		row, s := rowOf(dst, i), rowOf(out, i)
		if c := p.Calibration.Binary; c != nil {
			q := c.Apply(s[0])
			if math.IsNaN(q) {
				return fmt.Errorf("%w: row %d output is NaN", zonal.ErrNonFinite, i)
			}
			row[0], row[1] = 1-q, q
			continue
		}
		if err := p.Calibration.Multiclass.ApplyRow(row, s); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return nil
}

// DecodeOutputs writes the label of every row of the raw outputs out
// (n x Outputs()) to dst: Encoding.Decode, except that a calibrated binary
// pipeline predicts Classes[1] when its probability exceeds
// DefaultThreshold (the calibrated decision; the raw rule, output > 0,
// ignores that the score's zero need not be where the classes are equally
// likely). A multiclass pipeline predicts the class of the largest output
// either way: the one-vs-rest calibrators are monotone per class but not
// across classes, and an isotonic calibrator's plateaus would tie classes
// the scores tell apart. PredictLabels and the server decode with it.
//
// Errors: those of Encoding.Decode.
func (p *Pipeline) DecodeOutputs(dst []float64, out *mat.Dense) error {
	if p.Calibration != nil && p.Calibration.Binary != nil {
		return p.DecodeAt(dst, out, DefaultThreshold)
	}
	return p.Encoding.Decode(dst, out)
}

// DecodeAt is DecodeOutputs of a calibrated binary pipeline at another
// threshold: the label is Classes[1] when its calibrated probability
// exceeds threshold, Classes[0] otherwise (0 predicts Classes[1] for every
// row of positive probability, 1 never).
//
// Errors: zonal.ErrState unless p is a calibrated binary pipeline;
// zonal.ErrParam for a threshold outside [0, 1]; zonal.ErrShape unless out
// is n x 1 and dst has n entries; zonal.ErrNonFinite for a NaN output.
// Nothing is written then.
func (p *Pipeline) DecodeAt(dst []float64, out *mat.Dense, threshold float64) error {
	if err := p.checkThreshold(threshold); err != nil {
		return err
	}
	if out == nil {
		return fmt.Errorf("%w: nil outputs", zonal.ErrShape)
	}
	n, k := out.Dims()
	if k != 1 || len(dst) != n {
		return fmt.Errorf("%w: decoding %dx%d outputs into %d labels, a binary model has 1 output", zonal.ErrShape, n, k, len(dst))
	}
	c := p.Calibration.Binary
	for i := 0; i < n; i++ {
		if math.IsNaN(out.At(i, 0)) {
			return fmt.Errorf("%w: row %d output is NaN", zonal.ErrNonFinite, i)
		}
	}
	for i := 0; i < n; i++ {
		dst[i] = p.Encoding.Classes[0]
		if c.Apply(out.At(i, 0)) > threshold {
			dst[i] = p.Encoding.Classes[1]
		}
	}
	return nil
}

// checkThreshold is the error of deciding at threshold with p, if any.
func (p *Pipeline) checkThreshold(threshold float64) error {
	if err := p.probaState(); err != nil {
		return err
	}
	if p.Calibration.Binary == nil {
		return fmt.Errorf("%w: a decision threshold needs two classes, the model has %d", zonal.ErrState, p.Classes())
	}
	if !(threshold >= 0 && threshold <= 1) {
		return fmt.Errorf("%w: threshold %g outside [0, 1]", zonal.ErrParam, threshold)
	}
	return nil
}

// PredictLabelsAt is PredictLabels of a calibrated binary pipeline at a
// decision threshold other than DefaultThreshold (see DecodeAt).
//
// Errors: those of DecodeAt and PredictLabels.
func (p *Pipeline) PredictLabelsAt(dst []float64, x mat.Matrix, threshold float64) error {
	if err := p.checkThreshold(threshold); err != nil {
		return err
	}
	return p.predictLabels(dst, x, true, threshold)
}

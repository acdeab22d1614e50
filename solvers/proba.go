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

// LogitModel is a classification model whose outputs are logits of the
// class probabilities (Logistic): one output, the log-odds of Classes[1],
// for two classes, mapped by the sigmoid; one per class for more, mapped
// by softmax. A pipeline over one has probabilities without a
// Calibration, and its decisions (the sign of the logit, the largest
// logit) are those of the probabilities (above 1/2, the largest).
type LogitModel interface {
	Model
	// Logits only marks the outputs as logits.
	Logits()
}

// logits reports whether p's model outputs logits (LogitModel).
func (p *Pipeline) logits() bool {
	_, ok := p.Model.(LogitModel)
	return ok
}

// HasProbabilities reports whether p predicts probabilities: a
// classification pipeline holding a Calibration, or whose model outputs
// logits (LogitModel).
func (p *Pipeline) HasProbabilities() bool {
	return p.Encoding.Task == TaskClassification && (p.Calibration != nil || p.logits())
}

// binaryProba reports whether p decides two classes by a probability
// (a Binary calibration, or a binary logit model).
func (p *Pipeline) binaryProba() bool {
	if p.Calibration != nil {
		return p.Calibration.Binary != nil
	}
	return p.logits() && p.Classes() == 2
}

// binaryProb is the probability of Classes[1] at the output s of a
// pipeline with binaryProba.
func (p *Pipeline) binaryProb(s float64) float64 {
	if p.Calibration != nil {
		return p.Calibration.Binary.Apply(s)
	}
	return calibrate.Sigmoid(s)
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
// Without a calibration, a pipeline over a LogitModel maps the logits by
// the sigmoid (two classes) or softmax.
//
// Errors: zonal.ErrState for a regression pipeline or one without a
// calibration and without a LogitModel; zonal.ErrShape unless x is n x d and dst n x Classes();
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
	if p.Calibration == nil && !p.logits() {
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
		if p.binaryProba() {
			q := p.binaryProb(s[0])
			if math.IsNaN(q) {
				return fmt.Errorf("%w: row %d output is NaN", zonal.ErrNonFinite, i)
			}
			row[0], row[1] = 1-q, q
			continue
		}
		if p.Calibration == nil {
			for j, v := range s {
				if math.IsNaN(v) {
					return fmt.Errorf("%w: row %d output %d is NaN", zonal.ErrNonFinite, i, j)
				}
			}
			softmaxInto(row, s)
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
// the scores tell apart. A pipeline over a binary LogitModel (no
// calibration) decides like a calibrated one, by sigmoid(logit) > 0.5
// (the sign of the logit, except that a logit too small to move the
// sigmoid off 0.5 gives Classes[0], as the probabilities' argmax does).
// PredictLabels and the server decode with it.
//
// Errors: those of Encoding.Decode.
func (p *Pipeline) DecodeOutputs(dst []float64, out *mat.Dense) error {
	if p.binaryProba() {
		return p.DecodeAt(dst, out, DefaultThreshold)
	}
	return p.Encoding.Decode(dst, out)
}

// DecodeAt is DecodeOutputs of a calibrated binary pipeline (or one over a
// binary LogitModel) at another threshold: the label is Classes[1] when
// its probability exceeds threshold, Classes[0] otherwise (0 predicts Classes[1] for every
// row of positive probability, 1 never).
//
// Errors: zonal.ErrState unless p is a calibrated binary pipeline or one
// over a binary LogitModel;
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
	for i := 0; i < n; i++ {
		if math.IsNaN(out.At(i, 0)) {
			return fmt.Errorf("%w: row %d output is NaN", zonal.ErrNonFinite, i)
		}
	}
	for i := 0; i < n; i++ {
		dst[i] = p.Encoding.Classes[0]
		if p.binaryProb(out.At(i, 0)) > threshold {
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
	if !p.binaryProba() {
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

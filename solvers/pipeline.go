package solvers

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"gonum.org/v1/gonum/mat"
)

// Scaler standardises inputs: x'_j = (x_j - Mean_j) / Scale_j.
type Scaler struct {
	Mean, Scale []float64
}

// NewScaler checks and wraps mean and scale (same length, finite, scale != 0).
//
// Errors: zonal.ErrShape for empty slices or different lengths;
// zonal.ErrParam for a non-finite mean or scale or a zero scale.
func NewScaler(mean, scale []float64) (*Scaler, error) {
	if len(mean) != len(scale) || len(mean) == 0 {
		return nil, fmt.Errorf("%w: scaler mean has %d entries, scale %d", zonal.ErrShape, len(mean), len(scale))
	}
	for j := range mean {
		if math.IsNaN(mean[j]) || math.IsInf(mean[j], 0) || math.IsNaN(scale[j]) || math.IsInf(scale[j], 0) || scale[j] == 0 {
			return nil, fmt.Errorf("%w: scaler column %d has mean %g, scale %g", zonal.ErrParam, j, mean[j], scale[j])
		}
	}
	return &Scaler{Mean: mean, Scale: scale}, nil
}

// applyRow writes the standardised x to dst.
func (s *Scaler) applyRow(dst, x []float64) {
	for j, v := range x {
		dst[j] = (v - s.Mean[j]) / s.Scale[j]
	}
}

// Pipeline is what a model file holds and `zonal predict` serves: an
// optional text transform (tf-idf and/or L2 row normalization), an optional
// input scaler, a fitted model, the label encoding of its task and, for
// classification, an optional calibration of its outputs into class
// probabilities (proba.go), and, for a weighted fit, the record of its
// training weights (TrainingWeights; not used by predictions). An input row x goes through Text, then Scaler,
// then Model. It is immutable after construction and safe for concurrent
// use.
type Pipeline struct {
	Text        *dataset.TextTransform // nil: no text transform (set by WithText)
	Scaler      *Scaler                // nil: inputs are used as they are
	Encoding    Encoding
	Model       Model
	Calibration *Calibration     // nil: no probabilities (set by WithCalibration)
	Weights     *TrainingWeights // nil: unweighted fit, or not recorded (set by WithWeights)
	pool        sync.Pool        // *pipeScratch
}

type pipeScratch struct {
	xs  [smallBatch + 1]*mat.Dense
	out [smallBatch + 1]*mat.Dense
}

// NewPipeline checks that the parts fit together. An Encoding with TaskAuto
// is taken as TaskRegression.
//
// Errors: zonal.ErrParam for a nil model; zonal.ErrShape when the scaler's
// length is not the model's InputDim or the encoding's Outputs not the
// model's.
func NewPipeline(s *Scaler, enc Encoding, m Model) (*Pipeline, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", zonal.ErrParam)
	}
	if s != nil && len(s.Mean) != m.InputDim() {
		return nil, fmt.Errorf("%w: scaler for %d columns, model takes %d", zonal.ErrShape, len(s.Mean), m.InputDim())
	}
	if enc.Task == TaskAuto {
		enc.Task = TaskRegression
	}
	if enc.Outputs() != m.Outputs() {
		return nil, fmt.Errorf("%w: task %s needs %d outputs, model has %d", zonal.ErrShape, enc.Task, enc.Outputs(), m.Outputs())
	}
	p := &Pipeline{Scaler: s, Encoding: enc, Model: m}
	p.pool.New = func() any { return new(pipeScratch) }
	return p, nil
}

// WithText returns a pipeline like p whose inputs first go through the
// fitted text transform t (before p's scaler); t nil removes it. p itself
// is unchanged.
//
// Errors: zonal.ErrShape when t was fitted on another number of columns
// than the model's InputDim.
func (p *Pipeline) WithText(t *dataset.TextTransform) (*Pipeline, error) {
	if t != nil && t.Cols != p.InputDim() {
		return nil, fmt.Errorf("%w: text transform for %d columns, model takes %d", zonal.ErrShape, t.Cols, p.InputDim())
	}
	q, err := p.clone()
	if err != nil {
		return nil, err
	}
	q.Text = t
	return q, nil
}

// clone returns a new pipeline of p's parts (its own scratch pool).
func (p *Pipeline) clone() (*Pipeline, error) {
	q, err := NewPipeline(p.Scaler, p.Encoding, p.Model)
	if err != nil {
		return nil, err
	}
	q.Text, q.Calibration, q.Weights = p.Text, p.Calibration, p.Weights
	return q, nil
}

// WithWeights returns a pipeline like p that records w, the training
// weights of its model's fit (a copy of w is kept); w nil removes the
// record. p itself is unchanged. The record goes into the model file
// (format version 4) and, on loading, restores the WeightSum of this
// package's models.
//
// Errors: a *zonal.ParamError (wrapping zonal.ErrParam; zonal.ErrShape for
// class factors that are not one per class of a classifier) for a Sum
// that is not finite and > 0, Rows < 1, or a NaN, Inf or negative class
// factor.
func (p *Pipeline) WithWeights(w *TrainingWeights) (*Pipeline, error) {
	if w != nil {
		if err := w.check(&p.Encoding); err != nil {
			return nil, err
		}
		w = &TrainingWeights{Sum: w.Sum, Rows: w.Rows, ClassFactors: slices.Clone(w.ClassFactors)}
	}
	q, err := p.clone()
	if err != nil {
		return nil, err
	}
	q.Weights = w
	return q, nil
}

// InputDim is the number of input columns d.
func (p *Pipeline) InputDim() int { return p.Model.InputDim() }

// Outputs is the number of model outputs k.
func (p *Pipeline) Outputs() int { return p.Model.Outputs() }

// PredictOutputs transforms x (n x d: Text, then Scaler) and writes the raw
// model outputs to dst (n x k). x is a *mat.Dense, a *dataset.CSR (see
// predictSparse: never densified whole) or any other mat.Matrix (copied).
// Dense batches of at most 32 rows do not allocate after warm-up.
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k; the text
// transform's errors (zonal.ErrRange for a negative count under tf-idf,
// zonal.ErrNonFinite); the model's Predict errors (zonal.ErrNonFinite for
// NaN or Inf in x); a malformed CSR's Validate error.
func (p *Pipeline) PredictOutputs(dst *mat.Dense, xm mat.Matrix) error {
	if dst == nil || xm == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	var x *mat.Dense
	switch m := xm.(type) {
	case *dataset.CSR:
		if m == nil {
			return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
		}
		return p.predictSparse(dst, m)
	case *mat.Dense:
		if m == nil {
			return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
		}
		x = m
	default:
		x = mat.DenseCopyOf(xm)
	}
	if p.Scaler == nil && p.Text == nil {
		return p.Model.Predict(dst, x)
	}
	n, d := x.Dims()
	if d != p.InputDim() {
		return fmt.Errorf("%w: model expects %d features, input has %d", zonal.ErrShape, p.InputDim(), d)
	}
	var xs *mat.Dense
	if n <= smallBatch && n > 0 {
		s := p.pool.Get().(*pipeScratch)
		defer p.pool.Put(s)
		if s.xs[n] == nil {
			s.xs[n] = mat.NewDense(n, d, nil)
		}
		xs = s.xs[n]
	} else {
		xs = mat.NewDense(max(n, 1), d, nil)
		if n == 0 {
			return nil
		}
	}
	for i := 0; i < n; i++ {
		if err := p.inputRow(rowOf(xs, i), rowOf(x, i)); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return p.Model.Predict(dst, xs)
}

// inputRow writes the transformed input row x to dst (len d each).
func (p *Pipeline) inputRow(dst, x []float64) error {
	copy(dst, x)
	if p.Text != nil {
		if err := p.Text.ApplyVec(dst); err != nil {
			return err
		}
	}
	if p.Scaler != nil {
		p.Scaler.applyRow(dst, dst)
	}
	return nil
}

// csrBlockBytes bounds the dense row block PredictOutputsCSR hands the
// model: rows = csrBlockBytes / (8 d), between 1 and smallBatch*32.
const csrBlockBytes = 32 << 20

// predictSparse is PredictOutputs for sparse rows x (n x d CSR): the text
// transform runs on the nonzeros (O(nnz)); the model gets the rows in dense
// blocks of at most csrBlockBytes (32 MiB), so no dense n x d matrix is
// formed.
func (p *Pipeline) predictSparse(dst *mat.Dense, x *dataset.CSR) error {
	n, d := x.Dims()
	k := p.Outputs()
	if d != p.InputDim() {
		return fmt.Errorf("%w: model expects %d features, input has %d", zonal.ErrShape, p.InputDim(), d)
	}
	if dn, dk := dst.Dims(); dn != n || dk != k {
		return fmt.Errorf("%w: dst is %d x %d, want %d x %d", zonal.ErrShape, dn, dk, n, k)
	}
	if err := x.Validate(); err != nil {
		return err
	}
	if p.Text != nil {
		var err error
		if x, err = p.Text.ApplyCSR(x); err != nil {
			return err
		}
	}
	// The rows go to the model in dense blocks (scaled when there is a
	// scaler), also when there is none, although Model.Predict takes a
	// mat.Matrix and could then be given x as it is.
	bs := max(1, min(n, smallBatch*32, csrBlockBytes/(8*d)))
	block := mat.NewDense(bs, d, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		xb := block
		if i1-i0 != bs {
			xb = block.Slice(0, i1-i0, 0, d).(*mat.Dense)
		}
		xb.Zero()
		for i := i0; i < i1; i++ {
			row := rowOf(xb, i-i0)
			cols, vals := x.Row(i)
			for t, j := range cols {
				row[j] = vals[t]
			}
			if p.Scaler != nil {
				p.Scaler.applyRow(row, row)
			}
		}
		if err := p.Model.Predict(dst.Slice(i0, i1, 0, k).(*mat.Dense), xb); err != nil {
			return fmt.Errorf("rows %d..%d: %w", i0, i1-1, err)
		}
	}
	return nil
}

// PredictLabels writes the prediction for every row of x (dense or CSR, as
// PredictOutputs) to dst (length n): the value for regression, the class
// label for classification (DecodeOutputs: the calibrated decision of a
// calibrated binary pipeline, the largest output otherwise). Dense batches of at most 32 rows do not
// allocate after warm-up.
//
// Errors: zonal.ErrShape unless x is n x d and dst has n entries; the
// model's Predict errors (zonal.ErrNonFinite for NaN or Inf in x).
func (p *Pipeline) PredictLabels(dst []float64, x mat.Matrix) error {
	return p.predictLabels(dst, x, false, 0)
}

// predictLabels is PredictLabels, decoding at the threshold (DecodeAt)
// when at is set.
func (p *Pipeline) predictLabels(dst []float64, x mat.Matrix, at bool, threshold float64) error {
	if x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	if c, ok := x.(*dataset.CSR); ok && c == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	if d, ok := x.(*mat.Dense); ok && d == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	n, _ := x.Dims()
	if len(dst) != n {
		return fmt.Errorf("%w: dst has %d entries for %d rows", zonal.ErrShape, len(dst), n)
	}
	if n == 0 {
		return nil
	}
	k := p.Outputs()
	var out *mat.Dense
	if n <= smallBatch {
		s := p.pool.Get().(*pipeScratch)
		defer p.pool.Put(s)
		if s.out[n] == nil {
			s.out[n] = mat.NewDense(n, k, nil)
		}
		out = s.out[n]
	} else {
		out = mat.NewDense(n, k, nil)
	}
	if err := p.PredictOutputs(out, x); err != nil {
		return err
	}
	if at {
		return p.DecodeAt(dst, out, threshold)
	}
	return p.DecodeOutputs(dst, out)
}

// DirectBatch is the largest batch the models predict row by row (direct
// kernel evaluations); larger batches go through kernel blocks and Gemm.
// The two sum in different orders, so a row's outputs can differ in the
// last bits between them: a caller that predicts a stream in blocks and
// wants the outputs of predicting it whole keeps blocks above this size.
const DirectBatch = smallBatch

// SparseBlockBytes bounds the dense row blocks PredictOutputs hands the
// model for CSR rows: min(n, 32 DirectBatch, SparseBlockBytes/(8 d)) rows.
const SparseBlockBytes = csrBlockBytes

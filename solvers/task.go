package solvers

import (
	"fmt"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Task is what the labels mean.
type Task int

const (
	// TaskAuto reads the task from the structure of the labels
	// (DetectTask).
	TaskAuto Task = iota
	// TaskRegression predicts real values.
	TaskRegression
	// TaskClassification predicts one of the label values seen in training.
	TaskClassification
)

// String returns "auto", "regression" or "classification".
func (t Task) String() string {
	switch t {
	case TaskRegression:
		return "regression"
	case TaskClassification:
		return "classification"
	}
	return "auto"
}

// ParseTask parses "auto" (or ""), "regression" or "classification".
//
// Errors: zonal.ErrParam for any other string.
func ParseTask(s string) (Task, error) {
	switch s {
	case "auto", "":
		return TaskAuto, nil
	case "regression":
		return TaskRegression, nil
	case "classification":
		return TaskClassification, nil
	}
	return TaskAuto, fmt.Errorf("%w: unknown task %q (auto, regression, classification)", zonal.ErrParam, s)
}

// Encoding maps labels to training targets and model outputs back to labels.
//
// Regression: one output, the label itself. Classification with two classes
// c0 < c1: one output, target -1 for c0 and +1 for c1, prediction by sign
// (c1 when the output is > 0). With C > 2 classes: C outputs, target +1 in the
// label's column and -1 elsewhere (one versus all), prediction by argmax
// (the first maximum).
type Encoding struct {
	Task    Task      // TaskRegression or TaskClassification
	Classes []float64 // sorted distinct labels (classification only)
}

// NewEncoding chooses the encoding of training labels y for task (TaskAuto
// decides from y by DetectTask).
//
// Errors: zonal.ErrShape for no labels; zonal.ErrNonFinite for a NaN or Inf
// label; zonal.ErrParam for classification with fewer than 2 classes or an
// unknown task.
func NewEncoding(y []float64, task Task) (Encoding, error) {
	if len(y) == 0 {
		return Encoding{}, fmt.Errorf("%w: no labels", zonal.ErrShape)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Encoding{}, fmt.Errorf("%w: label %d is %g", zonal.ErrNonFinite, i, v)
		}
	}
	classes := slices.Clone(y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	if task == TaskAuto {
		task = DetectTask(y)
	}
	switch task {
	case TaskRegression:
		return Encoding{Task: TaskRegression}, nil
	case TaskClassification:
		if len(classes) < 2 {
			return Encoding{}, fmt.Errorf("%w: classification needs at least 2 classes, labels have %d", zonal.ErrParam, len(classes))
		}
		return Encoding{Task: TaskClassification, Classes: classes}, nil
	}
	return Encoding{}, fmt.Errorf("%w: bad task %d", zonal.ErrParam, task)
}

// Outputs is the number of model outputs k.
func (e Encoding) Outputs() int {
	if e.Task == TaskClassification && len(e.Classes) > 2 {
		return len(e.Classes)
	}
	return 1
}

// Targets returns the n x k training targets for labels y.
//
// Errors: zonal.ErrNonFinite for a NaN or Inf label; zonal.ErrParam for a
// label that is not one of the classes (classification); zonal.ErrEmpty for
// no labels.
func (e Encoding) Targets(y []float64) (*mat.Dense, error) {
	if len(y) == 0 {
		return nil, fmt.Errorf("%w: no labels", zonal.ErrEmpty)
	}
	k := e.Outputs()
	t := mat.NewDense(len(y), k, nil)
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: label %d is %g", zonal.ErrNonFinite, i, v)
		}
		if e.Task != TaskClassification {
			t.Set(i, 0, v)
			continue
		}
		c, ok := slices.BinarySearch(e.Classes, v)
		if !ok {
			return nil, fmt.Errorf("%w: label %g of row %d is not a training class", zonal.ErrParam, v, i)
		}
		row := rowOf(t, i)
		if k == 1 {
			row[0] = float64(2*c - 1)
			continue
		}
		for j := range row {
			row[j] = -1
		}
		row[c] = 1
	}
	return t, nil
}

// Decode writes the label of every row of the outputs (n x k) to dst.
//
// Errors: zonal.ErrShape unless out has Outputs() columns and dst n entries;
// zonal.ErrParam for a classification encoding with fewer than 2 classes.
// Nothing is written then.
func (e Encoding) Decode(dst []float64, out *mat.Dense) error {
	if out == nil {
		return fmt.Errorf("%w: nil outputs", zonal.ErrShape)
	}
	n, k := out.Dims()
	if k != e.Outputs() || len(dst) != n {
		return fmt.Errorf("%w: decoding %dx%d outputs into %d labels, the %s encoding has %d outputs", zonal.ErrShape, n, k, len(dst), e.Task, e.Outputs())
	}
	if e.Task == TaskClassification && len(e.Classes) < 2 {
		return fmt.Errorf("%w: classification encoding with %d classes", zonal.ErrParam, len(e.Classes))
	}
	for i := 0; i < n; i++ {
		row := rowOf(out, i)
		switch {
		case e.Task != TaskClassification:
			dst[i] = row[0]
		case k == 1:
			if row[0] > 0 {
				dst[i] = e.Classes[1]
			} else {
				dst[i] = e.Classes[0]
			}
		default:
			best := 0
			for j := 1; j < k; j++ {
				if row[j] > row[best] {
					best = j
				}
			}
			dst[i] = e.Classes[best]
		}
	}
	return nil
}

// Metrics of predicted labels against true ones; the fields that do not
// apply to the task are nil.
type Metrics struct {
	RMSE, MAE, R2, Accuracy *float64
}

// Evaluate computes the metrics of the task: RMSE, MAE and R^2 for
// regression, accuracy for classification (NaN when pred and y differ in
// length or are empty, as in each metric).
func (e Encoding) Evaluate(pred, y []float64) Metrics {
	if e.Task == TaskClassification {
		a := Accuracy(pred, y)
		return Metrics{Accuracy: &a}
	}
	r, m, r2 := RMSE(pred, y), MAE(pred, y), R2(pred, y)
	return Metrics{RMSE: &r, MAE: &m, R2: &r2}
}

// sameLength reports whether pred and y can be compared: the same, nonzero
// length. Each metric is NaN otherwise.
func sameLength(pred, y []float64) bool { return len(pred) == len(y) && len(y) > 0 }

// RMSE is sqrt(mean((pred - y)^2)); NaN when pred and y differ in length or
// are empty.
func RMSE(pred, y []float64) float64 {
	if !sameLength(pred, y) {
		return math.NaN()
	}
	s := 0.0
	for i := range y {
		d := pred[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(y)))
}

// MAE is mean(|pred - y|); NaN when pred and y differ in length or are empty.
func MAE(pred, y []float64) float64 {
	if !sameLength(pred, y) {
		return math.NaN()
	}
	s := 0.0
	for i := range y {
		s += math.Abs(pred[i] - y[i])
	}
	return s / float64(len(y))
}

// R2 is 1 - sum (pred - y)^2 / sum (y - mean y)^2; NaN for constant y and
// when pred and y differ in length or are empty.
func R2(pred, y []float64) float64 {
	if !sameLength(pred, y) {
		return math.NaN()
	}
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	ss, st := 0.0, 0.0
	for i := range y {
		ss += (pred[i] - y[i]) * (pred[i] - y[i])
		st += (y[i] - mean) * (y[i] - mean)
	}
	if st == 0 {
		return math.NaN()
	}
	return 1 - ss/st
}

// Accuracy is the fraction of pred equal to y; NaN when pred and y differ in
// length or are empty.
func Accuracy(pred, y []float64) float64 {
	if !sameLength(pred, y) {
		return math.NaN()
	}
	c := 0
	for i := range y {
		if pred[i] == y[i] {
			c++
		}
	}
	return float64(c) / float64(len(y))
}

package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// evaluation is every test metric of a fitted pipeline that applies
// (metrics.Report: null where a metric does not apply), with the
// precision and recall of the decisions: of the positive class (the larger
// label) with two classes, their macro means with more. (Their JSON names
// end in _score: "precision" is the arithmetic precision of fit's model.)
type evaluation struct {
	metrics.Report
	Precision *float64 `json:"precision_score"`
	Recall    *float64 `json:"recall_score"`
	// Threshold is the probability of the positive class above which a
	// calibrated binary classifier predicts it (null otherwise).
	Threshold *float64 `json:"threshold"`
	// UnseenLabels are the test labels that are not classes of the model
	// (increasing; omitted when there are none) and UnseenRows the test
	// rows that have them: they count as errors, and the probability
	// metrics (AUC, log loss, Brier) are left out.
	UnseenLabels []float64 `json:"unseen_test_labels,omitempty"`
	UnseenRows   int       `json:"unseen_test_rows,omitempty"`
	confusion    *metrics.ConfusionMatrix
}

// maxConfusionClasses is the most classes whose confusion matrix the text
// report prints (metrics.ConfusionMatrix.String's table limit).
const maxConfusionClasses = 20

// thresholdFlag is a -threshold value and whether it was given.
type thresholdFlag struct {
	value float64
	set   bool
}

// check refuses a threshold outside [0, 1].
func (f thresholdFlag) check() error {
	if f.set && !(f.value >= 0 && f.value <= 1) {
		return usagef("-threshold %g: want a probability in [0, 1]", f.value)
	}
	return nil
}

// decode writes the labels of the outputs out: at the threshold when one
// was given (a calibrated binary classifier only), else the pipeline's own
// decision (DecodeOutputs).
func (f thresholdFlag) decode(pipe *solvers.Pipeline, dst []float64, out *mat.Dense) error {
	if !f.set {
		return pipe.DecodeOutputs(dst, out)
	}
	err := pipe.DecodeAt(dst, out, f.value)
	if errors.Is(err, zonal.ErrState) {
		return fmt.Errorf("-threshold applies to a calibrated binary classifier (%w)", err)
	}
	return err
}

// evaluate predicts the rows x with pipe (labels at the threshold f) and
// measures them against y; it returns the predictions too.
func evaluate(pipe *solvers.Pipeline, x mat.Matrix, y []float64, f thresholdFlag) ([]float64, evaluation, error) {
	n := len(y)
	pred := make([]float64, n)
	var ev evaluation
	if n == 0 {
		return pred, ev, nil
	}
	out := mat.NewDense(n, pipe.Outputs(), nil)
	if err := pipe.PredictOutputs(out, x); err != nil {
		return nil, ev, err
	}
	if err := f.decode(pipe, pred, out); err != nil {
		return nil, ev, err
	}
	if pipe.Encoding.Task != solvers.TaskClassification {
		rep, err := metrics.RegressionReport(pred, y, nil)
		ev.Report = rep
		return pred, ev, err
	}
	classes := pipe.Encoding.Classes
	var prob *mat.Dense
	if pipe.HasProbabilities() {
		prob = mat.NewDense(n, pipe.Classes(), nil)
		if err := pipe.Probabilities(prob, out); err != nil {
			return nil, ev, err
		}
		if len(classes) == 2 {
			ev.Threshold = ptr(solvers.DefaultThreshold)
			if f.set {
				ev.Threshold = ptr(f.value)
			}
		}
	}
	rep, err := metrics.ClassificationReport(pred, y, nil, classes, prob)
	if err != nil && !slicesSubset(y, classes) {
		// Test labels the model never saw: the label metrics over every
		// label present, without the probability ones (their columns
		// are the training classes).
		for _, v := range y {
			if _, ok := slices.BinarySearch(classes, v); !ok {
				ev.UnseenRows++
				if !slices.Contains(ev.UnseenLabels, v) {
					ev.UnseenLabels = append(ev.UnseenLabels, v)
				}
			}
		}
		slices.Sort(ev.UnseenLabels)
		classes = nil
		rep, err = metrics.ClassificationReport(pred, y, nil, nil, nil)
	}
	if err != nil {
		return nil, ev, err
	}
	ev.Report = rep
	if classes == nil {
		classes = slices.Concat(y, pred)
		slices.Sort(classes)
		classes = slices.Compact(classes)
	}
	cs, err := metrics.PerClass(pred, y, nil, classes)
	if err != nil {
		return nil, ev, err
	}
	if len(pipe.Encoding.Classes) == 2 {
		if j := slices.Index(classes, pipe.Encoding.Classes[1]); j >= 0 {
			ev.Precision, ev.Recall = finite(&cs.Precision[j]), finite(&cs.Recall[j])
		}
	} else {
		ev.Precision, ev.Recall = finite(&cs.MacroPrecision), finite(&cs.MacroRecall)
	}
	if len(classes) <= maxConfusionClasses {
		if ev.confusion, err = metrics.NewConfusionMatrix(pred, y, nil, classes); err != nil {
			return nil, ev, err
		}
	}
	return pred, ev, nil
}

// slicesSubset reports whether every value of y is one of the sorted
// classes.
func slicesSubset(y, classes []float64) bool {
	for _, v := range y {
		if _, ok := slices.BinarySearch(classes, v); !ok {
			return false
		}
	}
	return true
}

// writeEvaluation prints the test metrics of ev that are present, and the
// confusion matrix of up to maxConfusionClasses classes.
func writeEvaluation(w io.Writer, ev evaluation) {
	r := ev.Report
	line := func(label string, parts ...any) {
		var s []string
		for i := 0; i+1 < len(parts); i += 2 {
			if v := parts[i+1].(*float64); v != nil {
				s = append(s, fmt.Sprintf("%s %.4f", parts[i], *v))
			}
		}
		if len(s) > 0 {
			fmt.Fprintf(w, "%s %s\n", label, strings.Join(s, ", "))
		}
	}
	if r.RMSE != nil {
		fmt.Fprintf(w, "test RMSE %.6g  MAE %.6g  R^2 %.4f\n", *r.RMSE, *r.MAE, derefOr(r.R2))
		line("test", "Poisson deviance", r.PoissonDeviance)
		return
	}
	if r.Accuracy != nil {
		fmt.Fprintf(w, "test accuracy %.4f\n", *r.Accuracy)
	}
	line("test", "balanced accuracy", r.BalancedAccuracy, "F1", r.F1, "precision", ev.Precision, "recall", ev.Recall)
	if ev.Threshold != nil {
		fmt.Fprintf(w, "decisions at probability %g of the positive class\n", *ev.Threshold)
	}
	line("test", "AUC", r.AUC, "log loss", r.LogLoss, "Brier", r.Brier)
	if ev.UnseenRows > 0 {
		labels := make([]string, 0, min(len(ev.UnseenLabels), 11))
		for i, v := range ev.UnseenLabels {
			if i == 10 {
				labels = append(labels, fmt.Sprintf("... %d in all", len(ev.UnseenLabels)))
				break
			}
			labels = append(labels, fmt.Sprint(v))
		}
		fmt.Fprintf(w, "%d test rows have labels the model has no class for (%s): counted as errors, and no AUC, log loss or Brier score\n", ev.UnseenRows, strings.Join(labels, ", "))
	}
	if ev.confusion != nil {
		fmt.Fprintf(w, "confusion matrix (true classes down, predicted across):\n%s", ev.confusion)
		if s := ev.confusion.String(); len(s) > 0 && s[len(s)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
}

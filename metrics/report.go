package metrics

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Report holds every metric that applies to one evaluation. A field is nil
// (JSON null) when the metric does not apply to the task, needs
// probabilities that were not given, or is undefined on this sample (AUC
// with one class present, R^2 of constant labels, F1 of a positive class
// that is neither present nor predicted); it is never NaN or Inf. The JSON
// names rmse, mae, r2 and accuracy are those of `zonal fit -json`.
type Report struct {
	// Classification, from labels.
	Accuracy         *float64 `json:"accuracy"`
	BalancedAccuracy *float64 `json:"balanced_accuracy"`
	// F1 of the positive class (the larger label) with two classes, the
	// macro F1 with more.
	F1 *float64 `json:"f1"`
	// Classification, from probabilities: ROCAUC (two classes, on the
	// probability of the positive class) or ROCAUCMulti, BinaryLogLoss or
	// LogLoss, BinaryBrier or Brier.
	AUC     *float64 `json:"auc"`
	LogLoss *float64 `json:"logloss"`
	Brier   *float64 `json:"brier"`
	// Regression.
	RMSE *float64 `json:"rmse"`
	MAE  *float64 `json:"mae"`
	R2   *float64 `json:"r2"`
	// PoissonDeviance is set only when every label is >= 0 and every
	// prediction > 0.
	PoissonDeviance *float64 `json:"poisson_deviance"`
}

// Value returns the metric n of the report and whether it is present.
// NameAuto and invalid names are never present (Resolve first).
func (r Report) Value(n Name) (float64, bool) {
	var p *float64
	switch n {
	case NameAccuracy:
		p = r.Accuracy
	case NameBalancedAccuracy:
		p = r.BalancedAccuracy
	case NameAUC:
		p = r.AUC
	case NameLogLoss:
		p = r.LogLoss
	case NameF1:
		p = r.F1
	case NameRMSE:
		p = r.RMSE
	case NameMAE:
		p = r.MAE
	case NameR2:
		p = r.R2
	}
	if p == nil {
		return math.NaN(), false
	}
	return *p, true
}

// finite is &v, or nil when v is NaN or Inf.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ClassificationReport evaluates predicted labels pred against y, and,
// when prob is not nil, the class probabilities prob. classes is the class
// order: the columns of prob, which is n x len(classes), or n x 1 holding
// the probability of classes[1] when there are two classes. It may be nil
// without prob (then the sorted distinct values of y and pred); every
// label and prediction must be one of the classes.
//
// Errors: those of NewConfusionMatrix and, with prob, of LogLoss (a
// missing classes slice is ErrParam).
func ClassificationReport(pred, y, w, classes []float64, prob *mat.Dense) (Report, error) {
	if prob != nil && classes == nil {
		return Report{}, fmt.Errorf("%w: probabilities without their classes", zonal.ErrParam)
	}
	cm, err := NewConfusionMatrix(pred, y, w, classes)
	if err != nil {
		return Report{}, err
	}
	classes = cm.Classes
	s := cm.scores()
	acc, total := 0.0, 0.0
	for j := range classes {
		acc += cm.Counts[j][j]
		total += s.Support[j]
	}
	r := Report{Accuracy: finite(acc / total), BalancedAccuracy: finite(s.MacroRecall), F1: finite(s.MacroF1)}
	if len(classes) == 2 {
		r.F1 = finite(s.F1[1])
	}
	if prob == nil {
		return r, nil
	}
	if len(classes) < 2 {
		return Report{}, fmt.Errorf("%w: probabilities of %d class", zonal.ErrParam, len(classes))
	}
	present := 0
	for _, v := range s.Support {
		if v > 0 {
			present++
		}
	}
	if len(classes) == 2 {
		return binaryProbReport(r, prob, classes, y, w, present == 2)
	}
	ll, err := LogLoss(prob, classes, y, w)
	if err != nil {
		return Report{}, err
	}
	br, err := Brier(prob, classes, y, w)
	if err != nil {
		return Report{}, err
	}
	r.LogLoss, r.Brier = finite(ll), finite(br)
	if present == len(classes) {
		a, err := ROCAUCMulti(prob, classes, y, w)
		if err != nil {
			return Report{}, err
		}
		r.AUC = finite(a)
	}
	return r, nil
}

// binaryProbReport adds the metrics of the probabilities of classes[1] to
// r: prob is n x 1 (those probabilities) or n x 2 (both columns, rows
// summing to 1). The binary metrics are computed on the rows' class
// positions, which keeps the classes' order and works when one class is
// absent; AUC only when both are present.
func binaryProbReport(r Report, prob *mat.Dense, classes, y, w []float64, both bool) (Report, error) {
	n := len(y)
	rows, c := prob.Dims()
	if rows != n || (c != 1 && c != 2) {
		return Report{}, fmt.Errorf("%w: %w: %dx%d probabilities for %d labels of 2 classes (want %d x 1 or %d x 2)", zonal.ErrParam, zonal.ErrShape, rows, c, n, n, n)
	}
	if c == 2 {
		if err := checkProbs(prob, n, 2); err != nil {
			return Report{}, err
		}
	}
	p := make([]float64, n)
	for i := range n {
		p[i] = prob.At(i, c-1)
	}
	if err := checkBinaryProbs(p); err != nil {
		return Report{}, err
	}
	isPos := func(i int) bool { return y[i] == classes[1] }
	total, _ := CheckWeights(w, n) // checked by NewConfusionMatrix
	r.LogLoss = finite(binaryLogLoss(p, isPos, w, total))
	r.Brier = finite(binaryBrier(p, isPos, w, total))
	if both {
		wNeg, wPos := 0.0, 0.0
		for i := range n {
			if isPos(i) {
				wPos += weight(w, i)
			} else {
				wNeg += weight(w, i)
			}
		}
		r.AUC = finite(auc(p, isPos, w, wNeg, wPos))
	}
	return r, nil
}

// RegressionReport evaluates predictions pred against y: RMSE, MAE, R^2
// (nil for constant y) and, when every label is >= 0 and every prediction
// > 0, the mean Poisson deviance.
//
// Errors: those of RMSE.
func RegressionReport(pred, y, w []float64) (Report, error) {
	rmse, err := RMSE(pred, y, w)
	if err != nil {
		return Report{}, err
	}
	mae, _ := MAE(pred, y, w) // same checks as RMSE
	r := Report{RMSE: finite(rmse), MAE: finite(mae)}
	if r2, err := R2(pred, y, w); err == nil {
		r.R2 = finite(r2)
	}
	counts := true
	for i := range y {
		counts = counts && y[i] >= 0 && pred[i] > 0
	}
	if counts {
		d, _ := PoissonDeviance(pred, y, w)
		r.PoissonDeviance = finite(d)
	}
	return r, nil
}

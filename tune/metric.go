package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// calibrationParts is the number of parts the held-out rows of a split or
// of leave-one-out are cut into for log loss (fewer when a class has fewer
// rows): each part's probabilities come from a calibrator fitted on the
// other parts.
const calibrationParts = 5

// setMetric validates SearchOptions.Metric against the task, the score and
// the criterion, and sets the searcher's metric name and direction.
func (s *searcher) setMetric() error {
	o := &s.opts
	classification := s.enc.Task == solvers.TaskClassification
	if err := o.Metric.Check(); err != nil {
		return &zonal.ParamError{Param: "Metric", Value: o.Metric, Reason: "unknown metric", Err: err}
	}
	if err := o.Metric.CheckTask(classification); err != nil {
		return &zonal.ParamError{Param: "Metric", Value: o.Metric, Reason: fmt.Sprintf("does not apply to %s", s.enc.Task), Err: err}
	}
	if o.Metric != metrics.NameAuto {
		switch {
		case o.Criterion == CriterionGCV:
			return &zonal.ParamError{Param: "Metric", Value: o.Metric, Reason: "GCV scores a setting by its own criterion, not by a metric (use CriterionCV or CriterionLOO)"}
		case o.Score == ScoreSquared:
			return &zonal.ParamError{Param: "Metric", Value: o.Metric, Reason: "ScoreSquared scores by the squared error; a Metric needs ScoreTask"}
		}
	}
	s.by = o.Metric.Resolve(classification)
	s.metric = s.by.String()
	return nil
}

// stratified reports whether the k folds are drawn per class: for the
// classification metrics other than accuracy, which weigh the classes
// (balanced accuracy, F1) or need both sides of every class (AUC, log
// loss).
func (s *searcher) stratified() bool {
	return s.by.Classification() && s.by != metrics.NameAccuracy
}

// kFolds draws the k folds of cross-validation: dataset.KFold, or with a
// class-weighing metric calibrate.StratifiedFolds, so every fold holds
// every class; a class with fewer than k rows is then an error (some fold
// would lack it, and its AUC, F1 or calibration would be undefined there).
func (s *searcher) kFolds(n, k int) ([]dataset.Fold, error) {
	if !s.stratified() || k < 2 {
		return dataset.KFold(n, k, s.opts.Seed) // (its error for k < 2)
	}
	folds, err := calibrate.StratifiedFolds(s.labels, k, s.opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("metric %s needs every class in every one of the %d folds: %w (use fewer folds or another metric)", s.by, k, err)
	}
	return folds, nil
}

// checkHeldOut refuses a class-weighing metric when a split's validation
// rows lack a class, and log loss when the held-out rows (a split's; every
// row for leave-one-out) have fewer than 2 rows of a class; it sets the
// calibration parts of log loss.
func (s *searcher) checkHeldOut() error {
	if !s.stratified() {
		return nil
	}
	var scored []int // the rows of a split's validation or of LOO
	switch {
	case s.opts.Criterion == CriterionLOO:
		scored = make([]int, len(s.labels))
		for i := range scored {
			scored[i] = i
		}
	case len(s.folds) == 1:
		scored = s.folds[0].Test
	default:
		// k-fold: StratifiedFolds put every class in every fold, and the
		// folds are the calibration parts.
		for _, f := range s.folds {
			s.calParts = append(s.calParts, f.Test)
		}
		return nil
	}
	y := make([]float64, len(scored))
	for r, i := range scored {
		y[r] = s.labels[i]
	}
	least := len(y)
	for _, c := range s.enc.Classes {
		m := 0
		for _, v := range y {
			if v == c {
				m++
			}
		}
		least = min(least, m)
	}
	need := 1
	if s.by == metrics.NameLogLoss {
		need = 2 // a calibrator fitted without a class cannot score it
	}
	if least < need {
		return fmt.Errorf("%w: metric %s needs at least %d held-out row(s) of every class, and one class has %d (hold out more rows or choose another metric)", zonal.ErrParam, s.by, need, least)
	}
	if s.by != metrics.NameLogLoss {
		return nil
	}
	parts, err := calibrate.StratifiedFolds(y, min(calibrationParts, least), s.opts.Seed+1)
	if err != nil {
		return err
	}
	for _, p := range parts {
		rows := make([]int, len(p.Test))
		for r, i := range p.Test {
			rows[r] = scored[i]
		}
		s.calParts = append(s.calParts, rows)
	}
	return nil
}

// pooled reports whether held-out decision values are kept for scoring
// after every fold is done (log loss: its calibrators use other folds;
// not for the logistic loss, whose logits are probabilities already).
func (s *searcher) pooled() bool { return s.by == metrics.NameLogLoss && !s.logistic() }

// metricScore is the value of the searcher's metric for the held-out
// outputs out of the rows with labels truth and weights w (nil: all 1);
// NaN when an output is not finite or the metric is undefined there.
func (s *searcher) metricScore(out *mat.Dense, truth, w []float64) float64 {
	switch s.by {
	case metrics.NameAccuracy, metrics.NameRMSE:
		return s.taskScore(out, truth, w)
	case metrics.NameAUC:
		if !finiteMatrix(out) {
			return math.NaN()
		}
		if _, k := out.Dims(); k == 1 {
			return orNaN(metrics.ROCAUC(out.RawMatrix().Data, truth, w))
		}
		return orNaN(metrics.ROCAUCMulti(out, s.enc.Classes, truth, w))
	}
	pred := make([]float64, len(truth))
	if err := s.enc.Decode(pred, out); err != nil || !finiteMatrix(out) {
		return math.NaN()
	}
	switch s.by {
	case metrics.NameBalancedAccuracy:
		return orNaN(metrics.BalancedAccuracy(pred, truth, w))
	case metrics.NameF1:
		cs, err := metrics.PerClass(pred, truth, w, s.enc.Classes)
		if err != nil {
			return math.NaN()
		}
		if len(s.enc.Classes) == 2 {
			return cs.F1[1] // the positive class, the larger label
		}
		return cs.MacroF1
	case metrics.NameMAE:
		return orNaN(metrics.MAE(pred, truth, w))
	case metrics.NameR2:
		return orNaN(metrics.R2(pred, truth, w))
	}
	return math.NaN()
}

// keep stores held-out outputs out of the rows idx (nil: every row) in the
// pooled decision values of lambda li.
func (s *searcher) keep(li int, out *mat.Dense, idx []int) {
	dst := s.dec[li]
	if idx == nil {
		dst.Copy(out)
		return
	}
	for r, i := range idx {
		copy(dst.RawRowView(i), out.RawRowView(r))
	}
}

// newPooled allocates the pooled decision values of a group.
func (s *searcher) newPooled() {
	s.dec = nil
	if !s.pooled() {
		return
	}
	n, kout := s.t.Dims()
	s.dec = make([]*mat.Dense, len(s.lambdas))
	for i := range s.dec {
		s.dec[i] = mat.NewDense(n, kout, nil)
	}
}

// pooledBytes is the size of the pooled decision values of a group.
func (s *searcher) pooledBytes() int64 {
	if !s.pooled() {
		return 0
	}
	n, kout := s.t.Dims()
	return int64(len(s.lambdas)) * 8 * int64(n) * int64(kout)
}

// logLossScores replaces the scores [lambda][fold] by the log loss of
// calibrated probabilities: every calibration part's rows get their
// probabilities from a Platt calibrator (one versus rest, rows normalised,
// with more than two classes) fitted on the decision values and weights of
// the other parts' rows, never on the rows it scores. A fold's score is
// the weighted log loss of its rows (every row for leave-one-out). A lambda
// whose calibrators cannot be fitted (NaN outputs, no convergence) scores
// NaN.
func (s *searcher) logLossScores(scores [][]float64) {
	n, _ := s.t.Dims()
	for li := range s.lambdas {
		if hasNaN(scores[li]) {
			for fi := range scores[li] {
				scores[li][fi] = math.NaN()
			}
			continue
		}
		prob, err := s.crossCalibrated(s.dec[li], n)
		for fi := range scores[li] {
			if err != nil {
				scores[li][fi] = math.NaN()
				continue
			}
			var rows []int
			if len(s.folds) > 0 {
				rows = s.folds[fi].Test
			} else {
				rows = make([]int, n)
				for i := range rows {
					rows[i] = i
				}
			}
			scores[li][fi] = orNaN(metrics.LogLoss(dataset.MustSelectRows(prob, rows), s.enc.Classes, s.labelsOf(rows), s.weightsOf(rows)))
		}
	}
}

// crossCalibrated returns the n x C class probabilities of the rows of the
// calibration parts (other rows stay 0): part p's from the calibrator
// fitted on the other parts.
func (s *searcher) crossCalibrated(dec *mat.Dense, n int) (*mat.Dense, error) {
	classes := s.enc.Classes
	prob := mat.NewDense(n, len(classes), nil)
	for p, rows := range s.calParts {
		var fit []int
		for q, other := range s.calParts {
			if q != p {
				fit = append(fit, other...)
			}
		}
		fy, fw := s.labelsOf(fit), s.weightsOf(fit)
		fd := dataset.MustSelectRows(dec, fit)
		if len(classes) == 2 {
			cal, err := calibrate.FitPlatt(fd.RawMatrix().Data, fy, fw)
			if err != nil {
				return nil, err
			}
			for _, i := range rows {
				q := cal.Apply(dec.At(i, 0))
				prob.Set(i, 0, 1-q)
				prob.Set(i, 1, q)
			}
			continue
		}
		cal, err := calibrate.FitMulticlass(calibrate.MethodPlatt, fd, classes, fy, fw)
		if err != nil {
			return nil, err
		}
		for _, i := range rows {
			if err := cal.ApplyRow(prob.RawRowView(i), dec.RawRowView(i)); err != nil {
				return nil, err
			}
		}
	}
	return prob, nil
}

// labelsOf returns the labels of the rows idx of the tuned rows.
func (s *searcher) labelsOf(idx []int) []float64 {
	y := make([]float64, len(idx))
	for r, i := range idx {
		y[r] = s.labels[i]
	}
	return y
}

// orNaN is v, or NaN when err is set (a metric undefined on these rows).
func orNaN(v float64, err error) float64 {
	if err != nil {
		return math.NaN()
	}
	return v
}

func hasNaN(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

func finiteMatrix(m *mat.Dense) bool {
	r, _ := m.Dims()
	for i := range r {
		for _, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

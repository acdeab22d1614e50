package calibrate

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/metrics"
	"gonum.org/v1/gonum/mat"
)

// ChoiceMinGain is the relative log-loss gain isotonic regression must
// show over Platt scaling for ChooseMethod to pick it: its cross-validated
// log-loss at most (1 - ChoiceMinGain) times Platt's.
const ChoiceMinGain = 0.01

// Choice is the outcome of ChooseMethod or ChooseMulticlassMethod: the
// method picked and the evidence it was picked on.
type Choice struct {
	// Method is the method picked.
	Method Method
	// Platt and Isotonic are the cross-validated log-losses of the two
	// methods: the mean over the folds of each fold's weighted log-loss
	// (metrics.BinaryLogLoss, or metrics.LogLoss of the normalised
	// one-vs-rest probabilities) of the calibrator fitted on the other
	// folds.
	Platt, Isotonic float64
	// SE is the standard error of the mean per-fold difference
	// Platt - Isotonic (the sample standard deviation of the k
	// differences over sqrt(k)).
	SE float64
	// Folds is the number of folds.
	Folds int
}

// Reason says in words why Method was picked.
func (c Choice) Reason() string {
	rel := "lower"
	gain := 0.0
	if c.Platt > 0 {
		gain = 100 * (c.Platt - c.Isotonic) / c.Platt
	}
	if gain < 0 {
		rel, gain = "higher", -gain
	}
	verdict := "not at least 1% and one standard error better"
	if c.Method == MethodIsotonic {
		verdict = "at least 1% and more than one standard error better"
	}
	return fmt.Sprintf("%d-fold CV log-loss of the out-of-fold scores: platt %.4g, isotonic %.4g, %.1f%% %s, SE of the difference %.2g: isotonic %s",
		c.Folds, c.Platt, c.Isotonic, gain, rel, c.SE, verdict)
}

// ChooseMethod picks the calibration method of binary scores by
// cross-validation: on k stratified folds of the rows (StratifiedFolds
// with seed) it fits Platt scaling and isotonic regression on k-1 folds
// and scores each on the fold left out by weighted log-loss. It picks
// isotonic regression only when its mean log-loss is at least
// ChoiceMinGain (1%) below Platt's and the mean gain exceeds one standard
// error of the per-fold differences; Platt scaling otherwise, the smoother
// map that cannot overfit a few rows. The scores must be held-out scores
// (OutOfFold), the kind the calibrator is then fitted on: the choice
// judges the map from those scores to probabilities.
//
// Errors: zonal.ErrParam (with ErrShape) for slices of different lengths,
// and for k < 2 or a class with fewer than k rows; ErrEmpty for no rows;
// ErrNonFinite for a NaN or Inf score or label; those of metrics'
// label and weight checks and of the two fits.
func ChooseMethod(score, y, w []float64, k int, seed uint64) (Choice, error) {
	if len(y) == 0 {
		return Choice{}, fmt.Errorf("%w: no rows", zonal.ErrEmpty)
	}
	if _, err := binaryInput(score, y, w); err != nil {
		return Choice{}, err
	}
	return choose(y, k, seed, func(m Method, train, test []int) (float64, error) {
		c, err := Fit(m, subset(score, train), subset(y, train), subset(w, train))
		if err != nil {
			return 0, err
		}
		p := make([]float64, len(test))
		for t, i := range test {
			p[t] = c.Apply(score[i])
		}
		return metrics.BinaryLogLoss(p, subset(y, test), subset(w, test))
	})
}

// ChooseMulticlassMethod is ChooseMethod for n x k one-vs-rest scores
// whose columns follow classes (FitMulticlass): each fold's log-loss is
// metrics.LogLoss of the normalised probabilities of the calibrator
// fitted on the other folds. One method serves all classes, as in
// Multiclass.
//
// Errors: those of ChooseMethod and FitMulticlass.
func ChooseMulticlassMethod(scores *mat.Dense, classes, y, w []float64, k int, seed uint64) (Choice, error) {
	if len(y) == 0 {
		return Choice{}, fmt.Errorf("%w: no rows", zonal.ErrEmpty)
	}
	if scores == nil {
		return Choice{}, fmt.Errorf("%w: nil score matrix", zonal.ErrParam)
	}
	if r, c := scores.Dims(); r != len(y) || c != len(classes) {
		return Choice{}, fmt.Errorf("%w: %w: %dx%d scores for %d labels and %d classes", zonal.ErrParam, zonal.ErrShape, r, c, len(y), len(classes))
	}
	if w != nil && len(w) != len(y) {
		return Choice{}, fmt.Errorf("%w: %w: %d weights for %d labels", zonal.ErrParam, zonal.ErrShape, len(w), len(y))
	}
	// FitMulticlass checks the classes, labels and scores of the whole
	// set once, so the folds' fits fail only on what a fold alone lacks.
	if _, err := FitMulticlass(MethodPlatt, scores, classes, y, w); err != nil {
		return Choice{}, err
	}
	return choose(y, k, seed, func(m Method, train, test []int) (float64, error) {
		c, err := FitMulticlass(m, scoreRows(scores, train), classes, subset(y, train), subset(w, train))
		if err != nil {
			return 0, err
		}
		p, err := c.Apply(scoreRows(scores, test))
		if err != nil {
			return 0, err
		}
		return metrics.LogLoss(p, classes, subset(y, test), subset(w, test))
	})
}

// choose runs the cross-validation of both methods on k stratified folds
// of y, loss(m, train, test) being the test rows' log-loss of method m
// fitted on the training rows, and applies the rule of ChooseMethod.
func choose(y []float64, k int, seed uint64, loss func(m Method, train, test []int) (float64, error)) (Choice, error) {
	folds, err := StratifiedFolds(y, k, seed)
	if err != nil {
		return Choice{}, err
	}
	c := Choice{Folds: k}
	diff := make([]float64, k)
	for f, fold := range folds {
		lp, err := loss(MethodPlatt, fold.Train, fold.Test)
		if err != nil {
			return Choice{}, fmt.Errorf("choice fold %d, platt: %w", f, err)
		}
		li, err := loss(MethodIsotonic, fold.Train, fold.Test)
		if err != nil {
			return Choice{}, fmt.Errorf("choice fold %d, isotonic: %w", f, err)
		}
		c.Platt += lp / float64(k)
		c.Isotonic += li / float64(k)
		diff[f] = lp - li
	}
	gain := c.Platt - c.Isotonic
	ss := 0.0
	for _, d := range diff {
		ss += (d - gain) * (d - gain)
	}
	c.SE = math.Sqrt(ss / float64(k-1) / float64(k))
	c.Method = decide(c.Platt, c.Isotonic, c.SE)
	return c, nil
}

// decide is the rule of ChooseMethod: isotonic when its log-loss iso is at
// least ChoiceMinGain below platt's and the gain exceeds se.
func decide(platt, iso, se float64) Method {
	if iso <= (1-ChoiceMinGain)*platt && platt-iso > se {
		return MethodIsotonic
	}
	return MethodPlatt
}

// subset returns v's entries at idx (nil for nil v: no weights).
func subset(v []float64, idx []int) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(idx))
	for t, i := range idx {
		out[t] = v[i]
	}
	return out
}

// scoreRows copies the rows idx of s.
func scoreRows(s *mat.Dense, idx []int) *mat.Dense {
	_, k := s.Dims()
	out := mat.NewDense(len(idx), k, nil)
	for t, i := range idx {
		out.SetRow(t, s.RawRowView(i))
	}
	return out
}

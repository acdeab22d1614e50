package metrics

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// LogLossEps is the clipping bound of the log losses: the probability q a
// row gives its true class is used as min(max(q, eps), 1-eps) (for binary
// probabilities p, q is p for a positive row and 1-p for a negative one,
// so both classes are clipped alike). Without it one confident mistake
// (q = 0) makes the mean loss +Inf and the metric useless for comparing
// models; with it a single row costs at most -log(1e-15) = 34.5 nats,
// still a heavy penalty. 1e-15 is far below any probability a calibrated
// model reports, so it changes no sensible prediction; the upper bound
// only gives a certain and right row the loss -log(1-eps), about 1e-15,
// instead of 0. It is the bound scikit-learn used before version 1.3.
const LogLossEps = 1e-15

// clipProb is q clipped to [LogLossEps, 1-LogLossEps].
func clipProb(q float64) float64 { return min(max(q, LogLossEps), 1-LogLossEps) }

// LogLoss is the weighted mean negative log-likelihood (cross-entropy) of
// class probabilities,
//
//	-sum_i w_i log(clip(p_{i, c(i)})) / sum_i w_i,
//
// where c(i) is the column of row i's label and clip is LogLossEps
// clipping. prob is n x k, its column j the probability of classes[j];
// every entry must be in [0, 1] and every row must sum to 1 within 1e-5.
// Rows that do not are refused, not renormalised: they mean raw scores or
// unnormalised one-vs-rest outputs were passed, and renormalising would
// score something the model never predicted. Log loss rewards honest
// probabilities and punishes confident mistakes without bound (up to the
// clip), so it is the metric for choosing among calibrated models; it is 0
// for perfect certainty and log(k) for the uniform guess.
//
// Errors: zonal.ErrEmpty for no rows; ErrNonFinite for a NaN probability or
// a NaN/Inf label; ErrParam for fewer than two or repeated classes, a label
// that is not a class, bad weights, entries outside [0, 1] or rows not
// summing to 1, and (with ErrShape) a matrix of the wrong shape.
func LogLoss(prob *mat.Dense, classes, y, w []float64) (float64, error) {
	lab, total, err := checkClassProbs(prob, classes, y, w)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i, j := range lab {
		s -= weight(w, i) * math.Log(clipProb(prob.At(i, j)))
	}
	return s / total, nil
}

// BinaryLogLoss is LogLoss for binary labels given the probability p_i of
// the positive class (the larger label value):
// -sum_i w_i [t_i log p_i + (1 - t_i) log(1 - p_i)] / sum_i w_i with
// t_i = 1 for positive rows and p clipped as in LogLoss.
//
// Like every binary function it needs both classes in y (the positive
// class is told by its value); for a sample of one class use LogLoss with
// the classes given.
//
// Errors: as ROCAUC, and ErrParam (ErrNonFinite for NaN or Inf) for a
// probability outside [0, 1].
func BinaryLogLoss(p, y, w []float64) (float64, error) {
	pos, total, err := checkBinary(p, y, w)
	if err != nil {
		return math.NaN(), err
	}
	return binaryLogLoss(p, func(i int) bool { return y[i] == pos }, w, total), nil
}

// binaryLogLoss is the mean log loss of checked probabilities p of the
// rows isPos, total the sum of the weights.
func binaryLogLoss(p []float64, isPos func(int) bool, w []float64, total float64) float64 {
	s := 0.0
	for i, v := range p {
		if !isPos(i) {
			v = 1 - v
		}
		s -= weight(w, i) * math.Log(clipProb(v))
	}
	return s / total
}

// Brier is the multiclass Brier score, the weighted mean over rows of the
// squared distance between the probability row and the one-hot label,
//
//	sum_i w_i sum_j (p_ij - [y_i = classes[j]])^2 / sum_i w_i,
//
// Brier's original definition, between 0 (perfect) and 2. With two classes
// it is twice BinaryBrier. Unlike log loss it is bounded, so one confident
// mistake cannot dominate it; it measures calibration and sharpness
// together. prob and classes are checked as in LogLoss.
//
// Errors: those of LogLoss.
func Brier(prob *mat.Dense, classes, y, w []float64) (float64, error) {
	lab, total, err := checkClassProbs(prob, classes, y, w)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i, c := range lab {
		r := 0.0
		for j := range classes {
			d := prob.At(i, j)
			if j == c {
				d--
			}
			r += d * d
		}
		s += weight(w, i) * r
	}
	return s / total, nil
}

// BinaryBrier is the weighted mean squared error of the probability p_i of
// the positive class (the larger label value) against t_i in {0, 1},
// sum_i w_i (p_i - t_i)^2 / sum_i w_i: 0 is perfect, 0.25 is the constant
// guess 1/2, and the constant guess of the positive rate pi scores
// pi (1 - pi), so on a 6%-positive problem anything above 0.056 is worse
// than predicting the base rate.
//
// Errors: those of BinaryLogLoss.
func BinaryBrier(p, y, w []float64) (float64, error) {
	pos, total, err := checkBinary(p, y, w)
	if err != nil {
		return math.NaN(), err
	}
	return binaryBrier(p, func(i int) bool { return y[i] == pos }, w, total), nil
}

// binaryBrier is the Brier score of checked probabilities p of the rows
// isPos, total the sum of the weights.
func binaryBrier(p []float64, isPos func(int) bool, w []float64, total float64) float64 {
	s := 0.0
	for i, v := range p {
		if isPos(i) {
			v--
		}
		s += weight(w, i) * v * v
	}
	return s / total
}

// checkBinary checks positive-class probabilities p against binary labels
// y and weights w, returning the positive class and the total weight.
func checkBinary(p, y, w []float64) (pos, total float64, err error) {
	if total, err = checkInputs("probabilities", p, y, w, true); err != nil {
		return 0, 0, err
	}
	if _, pos, _, _, err = binaryClasses(y, w); err != nil {
		return 0, 0, err
	}
	return pos, total, checkBinaryProbs(p)
}

// checkClassProbs checks an n x k probability matrix against its classes,
// labels y and weights w, returning each label's column and the total
// weight.
func checkClassProbs(prob *mat.Dense, classes, y, w []float64) ([]int, float64, error) {
	if err := checkLabels(y); err != nil {
		return nil, 0, err
	}
	total, err := CheckWeights(w, len(y))
	if err != nil {
		return nil, 0, err
	}
	idx, err := classIndex(classes, 2)
	if err != nil {
		return nil, 0, err
	}
	if err := checkProbs(prob, len(y), len(classes)); err != nil {
		return nil, 0, err
	}
	lab, err := labelIndex("label", y, idx)
	return lab, total, err
}

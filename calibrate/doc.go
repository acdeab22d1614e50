// Package calibrate turns classifier scores into calibrated probabilities:
// among the rows given probability 0.2, about 20% should be positive.
// Kernel classifiers in zonal output least-squares scores near -1 and +1
// (solvers.Encoding), which rank well but are not probabilities; a
// calibrator maps them to probabilities for log loss, expected-cost
// decisions and thresholds chosen by rate.
//
// # Methods
//
// Platt scaling (FitPlatt) fits p = sigmoid(A s + B) by maximum likelihood
// with Platt's smoothed targets, two parameters, so it needs few rows (a
// few hundred) and cannot overfit much, but it assumes the
// score-to-probability map is a sigmoid. Isotonic regression (FitIsotonic)
// fits the best nondecreasing map by pool-adjacent-violators, assuming only
// that higher scores mean higher probability; it wins with many rows
// (thousands) and loses, by overfitting in steps, with few. Method names
// them (platt, isotonic) for settings; Fit dispatches. ChooseMethod (and
// ChooseMulticlassMethod) picks one from held-out scores: both are
// fitted on k-1 of k stratified folds of the scores and scored by
// log-loss on the fold left out, and isotonic regression is picked only
// when its mean log-loss is at least ChoiceMinGain (1%) lower and the
// gain exceeds one standard error of the per-fold differences; the
// returned Choice holds both losses and says why (Reason).
//
// Multiclass (FitMulticlass) calibrates each class's score one versus rest
// and divides each row by its sum, so the probabilities of a row sum to 1.
//
// Binary labels follow package metrics: two distinct values, the larger
// positive. Every fit takes sample weights (nil: all 1; see
// metrics.CheckWeights), a weight counting as that many copies of the row.
//
// # Held-out scores
//
// A calibrator must be fitted on scores of rows the model did not train
// on: in-sample scores are overconfident, and a calibrator fitted on them
// inherits it. FitCV (and FitMulticlassCV) take a function that fits the
// model on some rows and scores others, run it on k stratified folds
// (StratifiedFolds: every class in every fold, which matters when
// positives are rare), and fit the calibrator on the out-of-fold scores;
// OutOfFold and OutOfFoldMatrix do the collecting for callers with their
// own folds.
//
// # Storage
//
// Calibrators are plain structs of exported fields, with no hidden state:
// Platt{A, B}, Isotonic{X, Y} (knots) and Multiclass{Method, Classes,
// Platt or Isotonic}. A model file stores the fields (floats and float
// slices) and, after reading them back, calls Validate, which refuses
// values a fit cannot produce (non-finite parameters, knots out of order,
// probabilities outside [0, 1], per-class slices of the wrong length) with
// zonal.ErrFormat. A decoded calibrator gives bit-identical outputs.
// There is no MarshalBinary: the model file's own encoding of float slices
// is enough, and keeps one format.
package calibrate

// Package metrics measures predictions against true labels: classification
// metrics from predicted labels, from scores and from probabilities, and
// regression metrics, all with optional sample weights, plus the Name
// setting a model search is scored by and a Report of every metric that
// applies.
//
// # Conventions
//
// Arguments come in the order prediction (labels, scores or
// probabilities), truth y, weights w. Every function takes sample weights
// w: nil means every row weighs 1; otherwise w has one entry per row, each
// finite and >= 0, with a positive sum, and a row of weight k counts as k
// copies of the row (so integer weights give exactly the metric of the
// repeated rows). Sums are weighted counts wherever the definitions below
// say "count" or "fraction".
//
// Binary functions (ROCAUC, BinaryPRF, RecallAtPrecision, BinaryLogLoss,
// BinaryBrier) need labels of exactly two distinct values, both with
// positive weight; the positive class is the larger value, as in
// solvers.Encoding (0/1 and -1/+1 labels both mean "1 is positive").
// Multiclass functions take the class order explicitly: a classes slice
// whose j-th value is the class of column j of a probability matrix
// (*mat.Dense, n x k, rows are points).
//
// Errors wrap the zonal sentinels: ErrEmpty for no rows; ErrNonFinite for
// a NaN prediction, score or probability or a NaN/Inf label (and Inf where
// the value enters arithmetic: labels predicted, regression predictions,
// probabilities; a score only needs an order, so +-Inf scores are allowed);
// ErrParam for bad weights (with ErrNonFinite for NaN/Inf ones), for
// lengths that differ (with ErrShape), for a label outside the classes,
// and for a metric undefined on the sample (AUC of one class, R^2 of
// constant labels). The functions return NaN with every error.
//
// # Classification from labels
//
// Accuracy is the weighted fraction of correct labels. It misleads on
// imbalanced problems: on a 6%-positive fraud or diagnosis set the model
// that never raises an alarm scores 0.94. BalancedAccuracy, the mean of the
// per-class recalls, scores that model 0.5 (1/C for C classes), and is the
// label metric to choose models by when classes differ in size.
// ConfusionMatrix shows where the errors go; PerClass gives precision
// (of the rows predicted c, the fraction that are c), recall (of the rows of
// c, the fraction predicted c) and F1 = 2 P R / (P + R) for every class and
// their macro means (each class counting once). F1 of the rare class is
// the usual score when only the positive class matters and true negatives
// are uninformative.
//
// # Classification from scores
//
// ROCAUC is the probability that a random positive scores above a random
// negative (ties count one half): 0.5 for a useless ranking, 1 for a
// perfect one, independent of the class ratio and of any threshold, hence
// the metric of choice for ranking models on imbalanced data.
// ROCAUCMulti is its macro one-vs-rest mean. BinaryPRF gives precision,
// recall and F1 at one threshold, RecallAtPrecision the best recall among
// thresholds whose precision reaches a floor (alerts that must be right
// 90% of the time).
//
// # Classification from probabilities
//
// LogLoss (cross-entropy) and Brier score judge the probabilities
// themselves, calibration included: use them to compare calibrated models
// or calibration methods (package calibrate). Log loss clips probabilities
// to [1e-15, 1 - 1e-15] (LogLossEps says why) and refuses rows that do not
// sum to 1, rather than renormalising what may not be probabilities at
// all. The Brier score is bounded, so it is less swayed by a few confident
// mistakes than log loss.
//
// # Regression
//
// RMSE (root mean squared error, in the units of y, what least squares
// minimises), MAE (mean absolute error, robust to outliers), R2 (fraction of
// the variance explained, scale-free) and PoissonDeviance (mean Poisson
// deviance, for counts and rates, where the variance grows with the mean).
//
// # Choosing models
//
// Name is the typed setting for the metric a search maximises or
// minimises (accuracy, balanced_accuracy, auc, logloss, f1, rmse, mae,
// r2), with String, ParseName, text marshalling, Maximize and Better.
// Report computes every metric that applies to a task at once, with nil
// (JSON null) where a metric does not apply or is undefined.
package metrics

// Package tune chooses the bandwidth sigma, the regularisation lambda and the
// number of centres or features of a kernel fit from the data.
//
// # Defaults from the data
//
// MedianSigma is the median heuristic (the median distance between rows,
// estimated on a seeded sample of pairs), ScaleSigma the equivalent of
// scikit-learn's gamma = 'scale', and AutoCenters a centre count of order
// sqrt(n) log n capped by n and a memory budget. The task (classes or
// regression) is read from the labels by solvers.DetectTask.
//
// # Lambda paths
//
// Every method tuned here is a linear smoother whose dependence on lambda is
// diagonal in one eigenbasis, with the regulariser c = lambda n_train of the
// solvers package (lambda multiplies the number of training rows):
//
//   - exact KRR: K_tr = V diag(s) V^T, alpha = V diag(1/(s+c)) V^T Y_c;
//   - ridge on features Z (random Fourier or Nystrom), and FALKON, whose
//     exact solution with centres C is ridge on the Nystrom features
//     Z = K_nC K_CC^{-1/2}: Z_tr^T Z_tr = U diag(s) U^T,
//     W = U diag(1/(s+c)) U^T Z_tr^T Y_c.
//
// So one eigendecomposition per sigma (and centre set, and fold) gives the
// predictions for every lambda as F(lambda) = 1 mean^T + A diag(1/(s+c)) B
// with A = K_te,tr V or Z_te U and B = V^T Y_c or U^T Z_tr^T Y_c, at
// O(n_te r k) per lambda. On all rows the same basis gives leave-one-out
// predictions and generalized cross-validation in closed form (see LOO and
// GCV in Criterion).
//
// What every lambda shares in any case is the kernel matrix or the feature
// matrix and its Gram matrix (built once per sigma and size on all rows; a
// fold's G_tr = G - Z_te^T Z_te). An eigendecomposition costs as much as
// about 14 Cholesky factorisations with OpenBLAS and 150 with the pure-Go
// backend, so for shorter lambda grids the k-fold paths factor G_tr + c I
// once per lambda instead (SearchOptions.Solver).
//
// # Search
//
// Search evaluates a grid sigma x lambda x size by k-fold cross-validation,
// a validation split, closed-form leave-one-out or GCV; Golden replaces the
// sigma grid by a golden-section search on log sigma with the whole lambda
// path inside each evaluation. Both return a table of every setting (mean
// and spread of the score over folds, time) and the best setting, refitted
// on all rows when asked.
//
// # Metrics
//
// SearchOptions.Metric chooses what the held-out predictions of k-fold
// cross-validation, a split or leave-one-out are scored by (a
// metrics.Name; GCV has its own criterion and refuses any other than
// NameAuto). The default is accuracy for classification and RMSE for
// regression; any metric of the task may be asked for: accuracy,
// balanced_accuracy, auc, logloss and f1 for classification, rmse, mae and
// r2 for regression. The best setting is the one with the best mean over
// folds in the metric's direction (higher for accuracy, balanced_accuracy,
// auc, f1 and r2, lower for logloss, rmse and mae; Result.HigherIsBetter).
// Every metric is weighted by SearchOptions.Weights.
//
// The models are least-squares fits of the one-versus-all encoding
// (solvers.Encoding), so a held-out row has a decision value per class (one
// with two classes, positive meaning the larger label). AUC ranks them:
// the binary AUC of the one value, or the macro one-vs-rest AUC of the
// per-class values with more classes. Accuracy, balanced accuracy and F1
// score the decoded labels (the sign with two classes, the largest value
// otherwise); F1 is that of the positive class (the larger label) with two
// classes and the macro F1 over the classes with more.
//
// Decision values of a squared loss are not probabilities, so log loss
// scores calibrated ones, fitted honestly: the held-out rows are cut into
// parts (k-fold: the folds themselves; a split's validation rows or
// leave-one-out's rows: up to 5 stratified parts), and each part's
// probabilities come from a Platt calibrator (package calibrate; one
// versus rest with rows normalised for more than two classes) fitted on
// the held-out decision values of the other parts, never on the rows it
// scores. The held-out values of a k-fold's other folds come from models
// that did not see them either; a fold's score is then the log loss of its
// rows. A setting's log loss therefore measures the model and a
// calibration fitted on about (k-1)/k of the held-out rows, as a refit
// calibrated on out-of-fold scores would be.
//
// With a classification metric other than accuracy the k folds are
// stratified (calibrate.StratifiedFolds), so each holds every class: AUC,
// a calibrator and the positive class's F1 are undefined without it, and a
// balanced score would not be comparable between folds. A class with fewer
// rows than folds, a split whose validation rows lack a class, and (log
// loss) held-out rows with fewer than 2 rows of a class are refused with
// ErrParam.
//
// # Weights
//
// SearchOptions.Weights makes every fit the solvers' weighted one (lambda
// times the training rows' weight sum; targets centred by the weighted
// mean) and every score weighted. The lambda paths stay diagonal in one
// eigenbasis: that of the scaled problem, rows sqrt(w_i) z_i (KRR:
// D K D with D = diag(sqrt(w))), whose unweighted no-intercept fit is the
// weighted one. A fold's sums are weighted the same way (G = Z^T W Z, ...);
// the closed-form leave-one-out divides the scaled residual by sqrt(w_i)
// and centres each left-out fit by the others' weighted mean (loo.go has
// the formulas; tests compare them with weighted refits on n-1 rows).
// Rows of weight zero are dropped before the folds are drawn.
//
// # Logistic loss
//
// SearchOptions.Loss LossLogistic tunes logistic FALKON (solvers.FitLogistic,
// MethodFalkon's centre counts in Sizes) on a classification task. Its fit
// is not a linear smoother, so nothing above is shared: per sigma, size and
// fold the lambdas are one regularisation path (solvers.FitLogisticPath,
// largest lambda first, each warm-started from the one before, to relative
// gradient LogisticPathGradTol), and each lambda's model scores the fold's
// held-out rows. The logits are probabilities already, so the default
// metric, log loss, is solvers.LogisticLoss of the held-out logits
// themselves (weighted), without the Platt calibration of the squared
// loss; the other classification metrics score the logits as they score
// decision values. Only k-fold cross-validation and a split apply (no
// closed-form leave-one-out or GCV); the refit is solvers.FitLogistic at
// the best setting on all rows. Golden works the same way.
// SearchOptions.Intercept InterceptFitted gives every fold's path and the
// refit an unpenalised constant per output
// (solvers.LogisticOptions.Intercept).
//
// # ParK
//
// MethodParK tunes ParK (solvers.FitParK with SearchOptions.Cells cells and
// Sizes centres in all) by cross-validation or a split only. Nothing of the
// above is shared there: the partition is made in the kernel's feature space
// (it changes with sigma) and each cell's FALKON preconditioner with lambda,
// so every setting and fold is one ParK fit scored on the held-out rows.
// `zonal fit -method park` with automatic sigma and lambda uses the cheaper
// FALKON path on the same rows instead.
package tune

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

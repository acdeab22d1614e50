// Package solvers turns kernels and feature maps into fitted models: kernel
// ridge regression solved exactly, on explicit features, by FALKON and by
// ParK, the conjugate-gradient method they share, the classification and
// regression tasks built on top, and the versioned model file.
//
// # Conventions
//
// Every solver minimises the same empirical objective over n training rows
// with k outputs (the columns of Y):
//
//	(1/n) ||F - Y||_F^2 + lambda ||f||^2
//
// so that lambda has one meaning everywhere:
//
//   - exact KRR: f(x) = K(x, X) alpha with (K + lambda n I) alpha = Y;
//   - ridge on a feature map z: f(x) = z(x) W with
//     (Z^T Z + lambda n I) W = Z^T Y (Z^T Z and Z^T Y accumulated over row
//     blocks, Z is never held whole); with RidgeOptions.Precision Float32
//     the blocks are float32 features (kernels.Transform32) whose Gram and
//     Z^T Y are formed in float32 and summed in float64 (ridge.go states
//     the error bound), and the solve stays float64;
//   - FALKON (Rudi, Carratino, Rosasco 2017) with M centres C:
//     f(x) = K(x, C) alpha with (K_nM^T K_nM + lambda n K_MM) alpha = K_nM^T Y,
//     solved by CG on the preconditioned system
//     B^T (K_nM^T K_nM / n + lambda K_MM) B beta = B^T K_nM^T Y / n,
//     B = T^{-1} A^{-1}, T = chol(K_MM + eps M I), A = chol(T T^T / M + lambda I)
//     (T, A upper triangular as in the paper, both kept in one M x M array:
//     A^T in its lower triangle, T in its strict upper one, T's diagonal
//     aside; see falkonfactors.go); with Precision Float32, K_nM is stored
//     and computed in float32 and everything else stays float64
//     (falkon32.go says where the line is drawn and why); K_nM is cached
//     whole when it fits the MemoryBudget after the factors and otherwise
//     streamed: every CG pass runs on per-worker blocks of K_nM (about
//     512 KiB in float32; in float64 at least 64 rows, knm64.go) that are
//     computed (against centres prepared once per fit) and applied,
//     K_b^T (K_b w) with float64 sums, while they are in cache, so a
//     streamed fit holds only those blocks however large the budget and
//     its passes cost about the flops of computing K_nM (bench/scale's
//     figures); and the training
//     rows may be given as a *dataset.Dense32 (float32, half the memory;
//     FALKON with uniform centres only: the other solvers, leverage-score
//     sampling and Precision Float64 refuse it, and CSR rows stay float64);
//   - ParK (Carratino et al. 2021): a Voronoi partition of the feature space
//     into Q cells around centroids phi(c_q), c_q training rows chosen by a
//     partition strategy (the paper's farthest-point rule, a trimmed
//     subsample version, or kernel k-means++ with Lloyd medoid steps; the
//     default is the paper's rule, see DefaultPartition), optionally
//     size-capped by offsets w_q (a power diagram that prediction
//     reuses), and one FALKON per cell with lambda_q = lambda n / n_q,
//     which makes every cell's absolute regulariser lambda_q n_q = lambda n the
//     global one, so Q = 1 is FALKON exactly.
//
// Logistic (FitLogistic; Meanti et al. 2020, "Kernel methods through the
// roof") is the one solver with another loss: a classifier on FALKON's
// centres and preconditioner minimising the weighted mean logistic
// (binary) or softmax (multinomial) loss plus (lambda/2) alpha^T K_MM alpha,
// the paper's objective (the squared loss's lambda does not carry over:
// the logistic loss's curvature is at most 1/4), by Newton steps solved
// with preconditioned CG over a decreasing lambda path; its outputs are
// logits, so its pipelines have probabilities without a calibration.
// LogisticOptions.Intercept InterceptFitted adds an unpenalised constant
// per logit, solved jointly with alpha in every Newton step and stored
// where the squared loss stores its intercept (see FitLogistic).
//
// A scikit-learn Ridge alpha corresponds to alpha = lambda n.
//
// The targets are centred: each model stores the training mean of every output
// column and adds it back at prediction (an unpenalised intercept).
//
// # Intercept
//
// FALKON can instead fit its constant with the expansion
// (FalkonOptions.Intercept = InterceptFitted): it minimises
//
//	(1/sum w) sum_i w_i (k_M(x_i)^T alpha + b - y_i)^2 + lambda alpha^T K_MM alpha
//
// over alpha and an unpenalised b. Eliminating b = ybar - mu^T alpha, with
// mu = K_nM^T w / sum w the weighted column means of K_nM, leaves FALKON on
// the centred columns Kc = K_nM - 1 mu^T: its normal operator is
// Kc^T W Kc, and its right-hand side is unchanged (the centred targets
// have weighted mean 0). The entries are centred (a cached K_nM once, a
// streamed block each time it is computed), not the product: K_nM^T W
// K_nM - (sum w) mu mu^T is the same in exact arithmetic, but for a wide
// kernel its two terms agree to nearly every digit and their difference
// is rounding, which CG meets as negative curvature. The preconditioner
// stays that of the uncentred problem, which the centring (a rank-one
// change of the operator) moves by at most one CG iteration in exact
// arithmetic. mu is summed in the right-hand side's pass. The model
// stores b where the mean intercept stores ybar, so the model file is the
// same. This is scikit-learn's Ridge(fit_intercept=True) on Nystrom
// features; the two differ where the kernel expansion decays, away from
// the training rows and with narrow kernels, where predictions fall back
// to the intercept (package estimator chooses between them by the tuning
// score).
//
// # Weights
//
// Options.Weights gives row i a weight w_i >= 0 (finite, not all zero;
// CheckWeights is the one validation, a *zonal.ParamError on "Weights"
// otherwise). A weighted fit minimises
//
//	(1/sum w) sum_i w_i |f(x_i) - y_i|^2 + lambda ||f||^2
//
// with the targets centred by their weighted mean sum_i w_i y_i / sum w.
// With integer weights this is exactly the unweighted fit on the rows
// repeated w_i times, lambda meaning the same (the identity is the test);
// scaling all weights by one factor changes nothing, so equal weights are
// the unweighted fit and take its path. Every "n" of the systems above
// becomes sum w and every sum over rows is weighted: KRR factors
// S K S + lambda sum(w) I with S = W^(1/2) and takes alpha = S beta; ridge
// accumulates Z^T W Z and Z^T W Y by scaling each block's rows by
// sqrt(w_i); FALKON's passes form K_nM^T W (K_nM u), its centres are drawn
// among the rows of positive weight, and its preconditioner takes the
// centres' weights D (scaled to sum to M) in A = chol(T D T^T / M + lambda I),
// the centres standing in for the weighted rows as they stand in for the
// rows unweighted; ParK partitions the rows of positive weight unweighted
// and gives each cell its rows' weights with lambda_q = lambda sum(w) /
// sum_q(w). Rows of weight zero are dropped before anything is formed (a
// KRR model does not keep them). Fitted models report WeightSum. A
// pipeline may record how its model was weighted (Pipeline.Weights, a
// TrainingWeights: the weight sum, the rows of positive weight and the
// class factors; estimator.Fit sets it for a weighted fit): the model file
// keeps the record (format version 4, so that files of unweighted fits
// stay byte for byte as before), and a loaded model's WeightSum is the
// record's Sum. Predictions never use it: the fitted function is all they
// need.
//
// With M = n centres FALKON solves the exact KRR system, and with an exact
// feature map (Nystrom on all training points, Z Z^T = K) ridge regression on
// features gives the exact KRR predictor; both identities are tests.
//
// # Sparse input
//
// Every fit and every model's Predict take x as a *mat.Dense or a
// *dataset.CSR (other matrix types are refused with zonal.ErrShape). A CSR x
// is never densified: row blocks are CSR views, kernel blocks come from
// kernels.MatrixInto with the CSR passed through, and the centres a fit keeps
// (KRR's training rows, FALKON's centres, ParK's centroids and cells) are
// CSR rows (dataset.CSR.Subset) that stay CSR in the model and its file.
// Memory then follows nnz(X), the M x M factors and the n x M kernel blocks.
// A model predicts dense and CSR rows alike; dense rows against CSR centres
// are converted to CSR, never the reverse.
//
// # Tasks
//
// Regression predicts the outputs directly (metrics RMSE, MAE, R^2).
// Binary classification trains on targets +1/-1 and predicts by sign;
// multi-class classification trains one +1/-1 output per class (one versus
// all) and predicts the argmax; the metric is accuracy.
//
// # Iteration caps and diagnostics
//
// FALKON (and every ParK cell) solves its M-dimensional system by CG. With
// Iterations zero (the default) CG runs until the relative residual of the
// preconditioned system meets Tol, and stops short only by one of three
// rules, all derived from the problem, never by a fixed count (the second
// also applies under an explicit cap):
//
//   - the predicted cap. CG's step lengths alpha_i and ratios beta_i are
//     the Lanczos coefficients of the preconditioned operator; the extreme
//     eigenvalues of their tridiagonal (Sturm bisection, cheap) estimate its
//     condition number kappa from below, the estimate rising with every
//     step. CG's error bound 2 ((sqrt(kappa)-1)/(sqrt(kappa)+1))^m, times
//     sqrt(kappa) for the residual, reaches Tol after
//     m = ln(2 sqrt(kappa)/Tol) / ln((sqrt(kappa)+1)/(sqrt(kappa)-1)),
//     about sqrt(kappa)/2 ln(2 sqrt(kappa)/Tol), iterations whatever the
//     spectrum; the cap is 2 m + 10 for the current estimate (the 2 for
//     the estimate still rising, the 10 for the first steps).
//   - the stall rule. CG minimises x^T A x - 2 b^T x, which for FALKON is
//     the training objective up to a constant, over a growing space, so in
//     exact arithmetic it falls at every step. It is evaluated with the
//     true residual (every 50 iterations, and whenever the recursive
//     residual claims convergence); once neither it nor the true residual
//     has improved since the last evaluation, rounding has won: the run
//     stops (Stalled) and keeps its best iterate. (The residual is part of
//     the rule because the objective resolves changes only down to its
//     own rounding.) A column whose true residual exceeds twice the
//     recursive one restarts from it, which keeps the condition estimate
//     honest.
//   - the ceiling 3 M + 50: M steps suffice in exact arithmetic, rounding
//     delays convergence (measured: 61 iterations for M = 40), and the
//     rules above stop hopeless runs long before it.
//
// An explicit Iterations > 0 replaces the predicted cap and the ceiling
// (the stall rule still stops a run that cannot improve). Either way not meeting Tol is not an error:
// every model implements Diagnosed, whose Diagnostics say the iterations,
// the cap, the final true relative residual, Tol, Converged, Stalled and
// the condition estimate (ParK: aggregated over the cells, each cell's in
// ParKReport); Diagnostics.String is a one-line warning. KRR and Ridge
// solve directly and report Converged. Model files do not record
// diagnostics: a loaded model's are the zero Diagnostics (Known false).
//
// Tol (default 1e-9) and prediction accuracy: the training objective of
// the iterate exceeds its minimum by r^T W^-1 r <= kappa Tol^2 times the
// objective's total decrease, W the preconditioned operator, so 1e-9 is
// ample (kappa Tol^2 <= 1e-6 up to kappa = 1e12). It is strict rather
// than loose: measured on smooth low-noise problems (n 2000-4000, d 3-4,
// Gaussian kernel, M 500-600), the test error stopped changing at a
// relative residual of about 1e-4, while the accuracy that rounding allows
// in the FALKON operator (whose triangular solves by T amplify rounding
// by K_MM's conditioning) was 2e-6..2e-8 at lambda 1e-9 and 3e-9 at
// lambda 1e-6. There the stall rule stops the run (Stalled, after 56 to
// 650 iterations, against a ceiling of 1550 to 1850 and the former fixed
// 20, which left test errors 2 to 40 times larger) at the test error of
// the best attainable solve, and the diagnostics say that Tol was not
// met.
//
// # Options, backends and errors
//
// Every fit takes ctx first and an options struct last; FalkonOptions,
// ParKOptions and CGOptions embed Options (Backend, MemoryBudget, Progress).
// The backend a fit is given (nil: backend.Default() when the fit starts) is
// the one its model predicts on; a model read by Load or UnmarshalPipeline
// predicts on Options.Backend of that call (nil: backend.Default() at load
// time). To move a fitted model to another backend, save it and load it with
// that backend. Every function's doc names the zonal sentinel errors it can
// return.
//
// # Serving
//
// Fitted models are immutable. Predict on one row or a small batch writes into
// a caller buffer without allocating after warm-up (scratch space comes from a
// sync.Pool) and is safe for concurrent use by many goroutines.
//
// # Model files
//
// A model file (Save, Load) holds a Pipeline: the model's kind, the task and
// label encoding, the optional scaler, text transform and (classification)
// calibration, then the model's own bytes.
//
// # Probabilities
//
// A classification pipeline may hold a Calibration (WithCalibration; the
// estimator fits one on held-out scores): PredictProba then gives one
// probability per class, rows summing to 1, and a binary pipeline decides
// by its probability (Classes[1] above DefaultThreshold, 0.5, or the
// threshold of PredictLabelsAt) instead of the sign of its score. A
// Logistic model's outputs are logits (LogitModel): its pipeline gives
// probabilities (sigmoid, softmax) without a calibration. Without either,
// and for regression, PredictProba is zonal.ErrState.
//
// # Adding a solver
//
// Each model kind lives in one file: its type implements PersistentModel
// (Kind, InputDim, Outputs, Predict, MarshalBinary) and an init function
// registers its decoder with RegisterModel. A new solver does the same in
// its own file; no switch statement elsewhere names the kinds.
package solvers

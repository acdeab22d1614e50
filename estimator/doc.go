// Package estimator is zonal's one-call fit: from training rows (dense or
// CSR) and raw targets to a fitted solvers.Pipeline (scaler, text
// transform, label encoding, model), choosing every setting the Options
// leave zero, with a Report of what was chosen and why. `zonal fit` is a
// thin shell around Fit; bench programs and the Beam module use the same
// Plan.
//
//	pipe, report, err := estimator.Fit(ctx, x, y, estimator.Options{})
//
// # Two steps: plan, then fit
//
// NewPlan decides everything that needs only the data's shape (rows,
// columns, density) and the options: the method, whether CSR rows stay
// sparse, which input transforms are tuned, how sigma and lambda are
// chosen, the centre count, and the memory check of the main allocation.
// It is cheap, needs no data values, and is what `zonal fit -dry-run`
// prints. Fit makes the plan, then the choices that need the data (sigma,
// lambda, the standardized-or-raw decision), then fits.
//
// # The policy, and why
//
//   - Method: FALKON (Nystrom KRR solved by preconditioned CG) unless asked
//     otherwise: near-exact accuracy at O(n M) memory and time.
//   - Sparse rows: kept as CSR below SparseDensity (10%) nnz/(n d), where
//     the CSR is 5x smaller than the dense matrix and the sparse products
//     cost about as much as dense ones; densified above it.
//   - Standardization: standardize dense rows (features of unlike units are
//     the common case); when sigma and lambda are both chosen, the raw
//     features are tuned too and kept only when their tuning loss is lower
//     by RawMargin (5%), the noise level of leave-one-out scores on a few
//     thousand rows (pixels and counts on one scale tune better raw, as
//     standardizing blows up rare features). With sigma searched, the two
//     are compared after the first EarlyEvaluations (2) golden-section
//     evaluations each; when one is clearly better there (by RawMargin),
//     only it is searched further (reusing its two): 8 sigma evaluations
//     instead of 12, a third of the choosing. When they are closer, both
//     searches run to the end and the whole-search rule decides (on the
//     suite, 41 of 85 splits were that close).
//     Sparse rows are never standardized: centering makes every row dense.
//   - Centres: FALKON takes FalkonCenters, the larger of tune.AutoCenters,
//     ceil(sqrt(n) ln n) (the order of FALKON's statistical analysis, a
//     floor), and min(n, MinCenters = 2048), at most what the memory
//     budget holds for the M x M factors and the cached n x M kernel block.
//     The floor alone gave 67 to 121 centres on the suite's sets of a few
//     hundred rows, where scikit-learn's Nystroem(min(n, 4096)) is exact
//     KRR and beat it by up to 6 accuracy points; at 2048 centres the
//     factorization costs about 10^10 flops (a second or less), and the
//     floor takes over from n ~ 50000. ParK keeps the floor (its cells
//     share the centres).
//   - More centres where they pay: when the tuning rows say so, FALKON's
//     chosen count is doubled, up to GrowCenters (4096), n and the memory
//     budget. The test: the best setting scored again with half the tuning
//     centres; if the full count lowers the selection loss by more than
//     RawMargin (5%, the noise of left-out scores on a few thousand rows),
//     the Nystrom error is still falling with M (a low-dimensional,
//     low-noise target on many rows) and the next doubling pays too. On a
//     smooth 6-feature regression of 12000 rows (noise 0.01) it doubled
//     (left-out squared error 0.0021 against 0.0042) to test RMSE 0.020;
//     on CPS1988's wages it kept 2048 (0.2682 against 0.2683). It costs one
//     lambda path at half the tuning centres, an eighth of one at the full
//     count.
//   - Tuning centres: sigma and lambda are scored with Plan.TuneCenters
//     centres on the tuning rows. When the fit's centres cover every
//     tuning row and there are at most ExactLOOCenters (2048) of them, the
//     tuner scores the fitted model itself, which is then exact KRR, by
//     its leave-one-out from one eigendecomposition per sigma. Otherwise
//     it scores a stated proxy, Nystrom KRR on at most TuneCenters (1024)
//     centres: each sigma costs two eigendecompositions, of K_CC (M^3)
//     and of the features' Gram matrix (r^3, r the rank of K_CC above
//     its round-off floor: the proxy is scored in K_CC's eigenbasis,
//     kernels.NewNystromBasis, r features instead of M, the same scores;
//     on CPS1988 and Fertility r is 250 to 370 of 1024 near the median
//     heuristic, on MNIST all 1024), with 8 sigmas per fit (two input
//     transforms, 2 golden-section steps each, then 4 more on the one
//     kept); in a CPU profile of the default fit on
//     digits (OpenBLAS) choosing took 9.5 of 9.8 CPU seconds at 1024, and
//     2048 would cost 8x that. The proxy's gap is measured in
//     bench/defaults: on DNA (2549 training rows, mean of 3 seeded
//     splits) tuning with 2048 centres instead of 1024 moved the test
//     accuracy from 0.9639 to 0.9660, about one test row in 637, at 3 to 6
//     times the choosing time.
//   - Selection score: the squared error of the left-out outputs against
//     the encoded targets (tune.ScoreSquared), for classification the
//     +-1 one-versus-rest targets: accuracy is a step function of sigma
//     and lambda, flat over plateaus and noisy by one row in n, and a
//     golden-section search cannot follow it; the squared error moves with
//     every margin. On the suite's small classification sets it raised
//     the mean accuracy on 4 of 7 sets (Pima 0.781 to 0.791, Sonar 0.859
//     to 0.868) and lowered it on one (Glass 0.693 to 0.688). The report
//     gives the chosen setting's left-out accuracy (or RMSE).
//   - Sigma: the median heuristic m; when lambda is chosen too, a
//     golden-section search on log sigma over m x [1/8, 8] with 6
//     evaluations, each scoring the whole lambda path from one
//     eigendecomposition (tune.Golden). SigmaScale is scikit-learn's
//     gamma = 'scale'.
//   - Lambda: the best of AutoLambdas (1e-10 ... 1e-1) on a seeded
//     subsample of tune.AutoRows (4000) rows (FALKON and ParK with the
//     squared loss: NystromTuneRows, a quarter of the rows from 16000 on,
//     at most MaxTuneRows = 8000, which smooths the leave-one-out score
//     over sigma on large sets), scored by closed-form
//     leave-one-out of the same estimator family (FALKON and ParK as
//     Nystrom KRR on the same centre count; ridge on the same map; exact
//     KRR on at most 2000 rows, by an 80/20 split above ExactLOORows). The
//     lambda best on r rows is scaled by r/n for n rows: the objective
//     (1/n)|f(X)-y|^2 + lambda |f|^2 weighs the data more as n grows, and
//     r/n keeps scikit-learn's alpha = lambda n fixed.
//   - Intercept: the targets' mean (the default), or the constant fitted
//     with the expansion, unpenalised (solvers.InterceptFitted,
//     scikit-learn's Ridge with fit_intercept on Nystroem features). They
//     differ where the expansion decays between and away from the training
//     rows, with narrow kernels in many dimensions, where a prediction falls
//     back to the intercept. With InterceptAuto (FALKON, squared loss,
//     float64, lambda chosen by leave-one-out), the fitted one is scored at
//     the chosen sigma over the same lambdas (its closed-form leave-one-out
//     on the centred kernel or features the search built there, one more
//     eigendecomposition and lambda path) and kept
//     when its selection loss is lower by more than RawMargin, as the raw
//     transform must be. On the suite's small sets (5 splits each) it was
//     kept on all splits of Ionosphere, whose accuracy rose from 0.926 to
//     0.957 (scikit-learn's grid: 0.960), on 3 of 5 of musk (0.937 to
//     0.924) and 1 of 5 of Sonar (0.868 to 0.849), both within one test row
//     of scikit-learn's, and on no split of the others.
//   - Loss (LossLogistic, asked for): a kernel logistic (two classes) or
//     softmax classifier on FALKON's centres (solvers.FitLogistic). Sigma is
//     chosen as for the squared loss (its golden-section search, or the
//     median heuristic); lambda by the held-out mean log-loss of the
//     logistic fit itself over AutoLambdas, on seeded stratified 80/20
//     folds (LogisticValidation) of the tuning subsample, as many as it
//     takes to hold out LogisticHeldOutRows (800) rows in all and
//     LogisticHeldOutClassRows (50) of every class (one fold of a balanced
//     AutoRows, all five below 1000 rows or 250 rows of a class), the whole path fitted once per
//     fold with warm starts (solvers.FitLogisticPath), each fold's path
//     ended after two decades in a row more than 1% above its least
//     held-out log-loss (LogisticPatience, LogisticPatienceRise: the
//     smallest lambdas cost the most Newton steps; a plateau does not end
//     it),
//     then refined around the best decade (LogisticRefine: the quarter
//     decades between it and its neighbours, one more path per fold on the
//     same folds and centres, warm-started from the fold's model at the
//     decade just above them, solvers.LogisticOptions.Start), and scaled
//     to n rows as above. The folds and their held-out kernel rows are
//     made once for all these paths and both intercepts; the Newton steps
//     and CG iterations of choosing are Chosen.TuneNewtonSteps and
//     Chosen.TuneCGIterations. Why the refinement: the
//     log-loss's minimum over lambda is flat to about 1% over a quarter
//     decade but not over a decade. On bench/probs' splits (seed 1) the
//     decade grid chose 8e-4 on PimaIndiansDiabetes and 8e-6 on
//     breast_cancer (test log-loss 0.448 and 0.088), the refined choice
//     2.5e-4 and 1.4e-5 (0.435 and 0.081; scikit-learn's
//     LogisticRegression with C from its grid 0.432 and 0.081). The
//     held-out curve was not biased in lambda:
//     over five outer folds of each of those sets the lambda of least mean
//     held-out log-loss of the inner folds was that of least mean outer
//     test log-loss, and at the squared loss's sigma halved or doubled the
//     held-out log-loss at its best lambda changed by under 1% on
//     PimaIndiansDiabetes, so neither the rows/n scaling, nor tuning on
//     fewer centres (the tuning fits of those sets use every fold row as a
//     centre, as the final fit does), nor sigma was what lost. The
//     logistic loss has no closed-form
//     leave-one-out, and the squared loss's lambda would be the wrong one:
//     the two objectives weigh the penalty differently. No calibration:
//     the model's logits give the probabilities (sigmoid, softmax), fitted
//     by maximum likelihood. Intercept: InterceptFitted adds one
//     unpenalised constant per logit (solvers.LogisticOptions.Intercept,
//     scikit-learn's LogisticRegression(fit_intercept=True)), InterceptMean
//     none (the logits are the expansion alone, the paper's model), and
//     InterceptAuto, when lambda is chosen, scores the lambda path both
//     ways on the same folds and keeps the fitted one only when its best
//     held-out log-loss is lower by more than RawMargin, the squared loss's
//     rule (none when lambda is given: nothing to score it with). Not
//     fitted by default: on the bench/probs split the intercept lowered no
//     set's test log-loss (PimaIndiansDiabetes and breast_cancer at every
//     lambda of 1e-2 ... 1e-6 at the chosen sigma, at their best lambda
//     0.4220 without against 0.4235 with and 0.0771 against 0.0796; spam
//     at its chosen lambda, 0.1603 against 0.1654): a Gaussian expansion
//     on standardized rows already carries a constant where the rows are,
//     and the margin keeps the model without one unless the folds clearly
//     prefer it.
//   - Task: classes when the labels are two integer values, or integer
//     values each seen at least 5 times (solvers.DetectTask); a forced
//     classification of a target that looks continuous is refused.
//   - Calibration (classification): the pipeline carries a calibrator of its
//     scores into class probabilities (package calibrate), fitted on held-out
//     scores, never on the training rows' own: in-sample scores of a kernel
//     model are overconfident (exact KRR with a small lambda interpolates its
//     training labels), and a calibrator fitted on them would be too. The
//     plan's model (the same kernel, sigma, method and map; the same
//     centre count, at most the fold's rows) is refitted on CalibrationFolds
//     (5) stratified folds, each scoring the rows it left out, and the
//     calibrator is fitted on those out-of-fold scores (calibrate.OutOfFold,
//     one versus rest beyond two classes). A fold model on r of the n
//     training rows is fitted at lambda n / r: the objective
//     (1/n)|f(X)-y|^2 + lambda |f|^2 is, times n, the sum of squared errors
//     plus lambda n |f|^2, so lambda n / r keeps the final model's penalty
//     lambda n against the fold's own sum (a scikit-learn estimator of fixed
//     alpha refitted on folds does the same; weighted, n and r are weight
//     sums). Five folds give each fold model 4/5 of the rows, closer to the
//     final model than 3 folds' 2/3, at about four model fits on the
//     calibration rows: all rows up to CalibrationRows (5000, the scale of
//     the 4000 rows lambda is tuned on), above it a seeded stratified
//     subsample of that many, where the fold models also take at most
//     tune.AutoCenters of their rows as centres, so that calibration costs
//     about 2 10^4 / n of the model fit for the methods linear in n
//     (FALKON, ParK, ridge): a minor part from about 10^5 rows on, and
//     below that the fit is dominated by choosing sigma and lambda.
//     CalibrationAuto chooses the method on the out-of-fold scores
//     (calibrate.ChooseMethod, ChooseMulticlassMethod): both calibrators
//     are fitted on CalibrationChoiceFolds (5) stratified folds of those
//     scores and scored by log-loss on the fold left out, and isotonic
//     regression is chosen only when its mean log-loss is at least 1%
//     below Platt's and the gain exceeds one standard error of the
//     per-fold differences. Platt's two parameters cannot overfit but
//     assume a sigmoid; isotonic regression assumes only monotonicity but
//     fits a step per few rows, and the comparisons of Niculescu-Mizil and
//     Caruana (ICML 2005) put the cross-over near a thousand rows, a
//     count that depends on how far the map is from a sigmoid: the folds
//     measure it on the data, and the margin keeps the smoother Platt on a
//     near tie. Report.Chosen.Calibration gives the reason and
//     CalibrationPlatt and CalibrationIsotonic the two losses; Platt or
//     isotonic given explicitly is used without the choice. Beyond two
//     classes one method serves every class, judged by the log-loss of the
//     normalised one-vs-rest probabilities. Every class must be in every
//     fold: a class of r < 5 rows (r >= 2) gets Platt scaling on the
//     scores of r folds (with a note under CalibrationAuto, since the
//     choice and isotonic regression need more rows; CalibrationIsotonic
//     is then an error), and a class of one row leaves the pipeline
//     uncalibrated (with a note; an error for Platt or isotonic asked for).
//     CalibrationNone skips the refits. A calibrated binary
//     pipeline's labels are its decisions at probability 0.5
//     (solvers.Pipeline.DecodeOutputs).
//
// # Weights
//
// Options.Weights (sample weights) and Options.ClassWeight (a factor per
// class: scikit-learn's class_weight, "balanced" being n / (k n_c)) give
// each row the weight sample weight x class factor. They are validated once,
// in Fit, against the rows and the classes, and the same weights then go
// everywhere a row counts: to the tuning (tune.SearchOptions.Weights:
// weighted folds, closed forms and scores), to the model fit
// (solvers.Options.Weights, whose package documentation gives the weighted
// objective), and to the calibration, whose fold models are fitted on their
// rows' weights and whose calibrator is fitted on the held-out rows'
// weights, so that the probabilities are those of the weighted
// distribution. The plan (centres, tuning rows) is made from the data's
// shape as without weights. Report.Weighted, WeightSum and ClassWeights
// say what was used, and the pipeline Fit returns records it
// (solvers.Pipeline.Weights, TrainingWeights), as its model file does.
//
// # Float32 rows
//
// With Precision float32, a FALKON fit (squared loss, uniform centres)
// reads its training rows only through float32 kernel blocks, so after the
// tuning Fit converts its own scaled copy of dense rows to a
// *dataset.Dense32 (4 bytes an entry) and drops the float64 copy: the final
// fit, its lambda raises and the calibration's fold fits read the float32
// rows (the fold models' held-out rows are widened to float64, one fold at
// a time, to be predicted). The tuning runs before the conversion, on the
// float64 rows (its subsamples are small). Report.Rows32 and RowBytes say
// what was held. The rows stay float64 for the other methods, the logistic
// loss, leverage-score centres, CSR rows, and rows Fit does not scale (the
// caller's own matrix, which a float32 copy would add to); the caller's x
// is never modified, and once Fit has converted its copy nothing in Fit
// references x, so a caller that drops its own references (as zonal fit
// does) lets the float64 rows be collected during the fit.
//
// No rule looks at a data set's name or is fitted to one data set.
//
// # Errors
//
// Bad options are *zonal.ParamError (wrapping zonal.ErrParam) naming the
// field; work that does not fit the memory budget is *zonal.TooLargeError
// (wrapping zonal.ErrTooLarge) with the bytes needed and the budget. A
// command-line tool maps both to its own flags with errors.As.
package estimator

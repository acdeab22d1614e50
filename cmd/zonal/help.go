package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/tune"
)

// helpTopics are the long explanations of `zonal help NAME`; flag help
// stays one line.
var helpTopics = map[string]func() string{
	"fit":  fitHelp,
	"tune": tuneHelp,
}

// helpTopic prints `zonal help NAME`: the topic's text, or the command's
// flags when it has no topic.
func helpTopic(name string, stdout, stderr io.Writer) int {
	if h, ok := helpTopics[name]; ok {
		io.WriteString(stdout, h())
		return exitOK
	}
	if c, ok := commands[name]; ok {
		fmt.Fprintf(stdout, "zonal %s: %s\nRun `zonal %s -h` for its flags.\n", name, c.summary, name)
		return exitOK
	}
	fmt.Fprintf(stderr, "zonal help: unknown topic %q (commands: %s)\n", name, strings.Join(commandNames(), ", "))
	return exitUsage
}

func commandNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	return sortedStrings(names)
}

func fitHelp() string {
	return fmt.Sprintf(`zonal fit: fit a kernel model and report its test metric

Usage: zonal fit %s

With only -train (and -test, or -split), every setting is chosen from the
data by the library (package estimator; the same call from Go gives the
same model file). -dry-run prints what would be chosen, without fitting.

-method       falkon (default; Nystrom KRR on M centres, preconditioned CG),
              exact (Cholesky of K + lambda n I, up to a few 10^4 rows),
              ridge (on the -map features, -features D), park (-cells Q
              Voronoi cells, one FALKON each).
-loss         squared (default): kernel ridge regression, also on the
              +-1 targets of a classification, whose scores the calibration
              turns into probabilities. logistic: classification only, with
              -method falkon: a logistic (two classes) or softmax classifier
              on the M centres (Newton steps, each solved by CG with
              FALKON's preconditioner, along a decreasing lambda path); its
              probabilities are its own (no calibration), its -lambda is
              that of (1/n) sum loss + (lambda/2) |f|^2, chosen (auto) by
              the held-out log-loss of a stratified %.0f/%.0f split of the
              tuning rows, sigma as for the squared loss.
-sigma        auto: the median distance m between training rows; with
              -lambda auto, the best of a golden-section search on log sigma
              over m x [1/%d, %d] with %d evaluations. scale: scikit-learn's
              gamma = 'scale', sqrt(d var(X) / 2). Or a number.
-lambda       the ridge parameter of (1/n)|f(X)-y|^2 + lambda |f|^2
              (scikit-learn's alpha = lambda n). auto: the best of 1e-10 ...
              1e-1 by closed-form leave-one-out on a seeded subsample of at
              most %d rows (exact: %d rows, by an 80/20 split above %d),
              times rows/n for all n rows (the same alpha); FALKON and ParK
              are scored with at most %d centres, classifiers by the squared
              error of their left-out scores (a smooth stand-in for the
              error rate).
-centers      auto: FALKON the larger of ceil(sqrt(n) ln n) and min(n, %d),
              ParK ceil(sqrt(n) ln n); at most n and what -memory holds (the
              M x M factors and the cached n x M kernel block).
-standardize  by default each feature is standardized (mean 0, variance 1
              on the training rows) unless, with -sigma and -lambda auto, the
              raw features tune %.0f%% better (pixels and counts on one scale
              do). -standardize or -standardize=false decides; -scale F alone
              multiplies the features instead. Stored in the model.
-sparse       LIBSVM rows stay CSR when their density nnz/(n d) is below
              %.0f%% (auto), or always (yes), or never (no). Sparse rows are
              never standardized (centering would make them dense).
-task         auto: classes when the labels are two integer values, or
              integer values each seen at least 5 times.
-precision    float32 halves the memory of FALKON's and ParK's K_nM and of
              ridge's feature blocks (so -memory caches twice the centres);
              factors, CG, solves and coefficients stay float64; not exact.
              FALKON also holds standardized or scaled dense training rows
              in float32 after the tuning (-json: rows_precision).
-iterations   caps FALKON's and ParK's CG iterations (0: the solver's rule).
-memory       the budget of the large arrays (default 2G): exact KRR and a
              too-large -centers or -features are refused above it; FALKON
              caches K_nM below it and streams it above.
-tfidf, -normalize  text transforms fitted on the training rows, stored in
              the model.
-intercept    falkon with the squared loss: auto (default) keeps the targets'
              mean as the model's constant unless fitting it with the
              expansion, unpenalised (fitted; scikit-learn's Ridge intercept),
              scores 5%% lower by leave-one-out at the chosen sigma; mean or
              fitted decides. With -loss logistic fitted is one
              unpenalised constant per logit (LogisticRegression's
              intercept), mean none (the logits are the expansion alone),
              and auto scores the lambda path both ways on its held-out
              folds and fits it when that is 5%% lower (none with -lambda).
-calibration  classifiers: auto (default) stores a calibration of the scores
              into class probabilities (zonal predict -proba), fitted on the
              out-of-fold scores of the same model refitted on %d
              stratified folds (at most %d rows): isotonic regression when
              its log-loss on %d folds of those scores is at least 1%% and
              one standard error below Platt scaling's, Platt scaling
              otherwise ("chosen" in -json gives both losses); or platt,
              isotonic, none (no refits, no probabilities). A class of 2 to
              4 training rows gets Platt scaling on that many folds (a
              note says so); one of a single row, no probabilities.
-threshold    calibrated binary classifiers: the test decisions predict the
              larger label when its probability exceeds P (default 0.5);
              not stored in the model (zonal predict -threshold).
-weights      a text file of one sample weight (finite, >= 0, not all 0)
              per line, one line per row of -train; -split and -subsample
              keep each row's weight. The fit minimises
              (1/sum w) sum w_i |f(x_i)-y_i|^2 + lambda |f|^2 (integer
              weights: the fit on rows repeated that often); lambda is tuned
              on weighted scores and the calibration on weighted folds.
-weight-column  the same weights from a CSV header column of -train,
              dropped from the features (and from -test when it has it).
-class-weight classifiers: each row's weight times its class's factor:
              balanced (n / (k n_c), k classes, n_c rows of class c: every
              class weighs n / k, scikit-learn's class_weight="balanced"),
              LABEL:W,LABEL:W,... (classes not listed 1), or none.
              The test metrics stay unweighted. The model file records the
              weight sum, the rows of positive weight and the class factors
              (zonal predict -json "weights"; format version 4, read by this
              build and later ones only).
The report gives every test metric that applies: accuracy, balanced
accuracy, F1, precision and recall (of the larger label with two classes,
macro means with more), and with a calibration AUC, log loss and Brier
score, and the confusion matrix (up to 20 classes); RMSE, MAE, R^2 and the
Poisson deviance (non-negative targets) for regression.
`, fitSynopsis, 100*(1-estimator.LogisticValidation), 100*estimator.LogisticValidation, estimator.GoldenSpread, estimator.GoldenSpread, estimator.GoldenEvaluations,
		tune.AutoRows, estimator.ExactTuneRows, estimator.ExactLOORows, estimator.TuneCenters, estimator.MinCenters, 100*estimator.RawMargin, 100*estimator.SparseDensity,
		estimator.CalibrationFolds, estimator.CalibrationRows, estimator.CalibrationChoiceFolds)
}

func tuneHelp() string {
	return fmt.Sprintf(`zonal tune: choose sigma, lambda and centres by cross-validation, refit the best

Usage: zonal tune %s

It scores every setting of the grid (-sigmas x -lambdas x -centers or
-features) by k-fold cross-validation (-folds, default 5), one split
(-criterion split), closed-form leave-one-out (loo) or GCV (gcv): the whole
lambda path of a (sigma, size) pair costs one eigendecomposition per fold.
-golden N replaces the sigma grid by a golden-section search of N
evaluations. -rows N tunes on a seeded subsample of N rows and refits the
best setting on all of them. The data flags and -standardize, -sparse,
-task, -weights, -weight-column and -class-weight mean what they mean for
zonal fit (zonal help fit): with weights every fit of the search is the
weighted one and every score weighted (the metric, and the calibrators of
logloss).

-metric chooses what the search maximises or minimises, from the held-out
predictions of each fold (or split, or leave-one-out): auto (accuracy for
classification, rmse for regression), accuracy, balanced_accuracy, auc,
logloss or f1 for classification, rmse, mae or r2 for regression; a metric
of the other task is a usage error, and so is any metric but auto with
-criterion gcv, which has its own criterion. auc ranks the held-out
decision values (macro one-vs-rest with more than two classes); f1 is that
of the larger label with two classes, the macro F1 with more; logloss
scores probabilities from a Platt calibrator fitted on the held-out
decision values of the other folds (of other parts of the held-out rows
for split and loo), never on the rows it scores. With balanced_accuracy,
auc, logloss or f1 the folds are stratified by class, and a class with
fewer rows than folds is an error. Higher is better for accuracy,
balanced_accuracy, auc, f1 and r2, lower for logloss, rmse and mae; the
report and -json name the metric. The refitted model's test rows report
every metric that applies. The refit has no calibration: fit with zonal fit
for probabilities, or tune the logistic loss.

-loss logistic tunes logistic FALKON (classification, -method falkon;
-centers its centre counts): per sigma, centre count and fold the lambdas
are one warm-started regularisation path on the fold's training rows, each
model scoring the held-out rows. -metric auto is then logloss of the
model's own probabilities (no Platt calibrator; the other classification
metrics score its logits), only -criterion kfold or split apply (the
logistic fit has no closed-form loo or gcv), and the refit is the logistic
model at the best setting on all rows, with probabilities (predict -proba,
serve) and no calibration. -intercept fitted gives every fold's fit and the
refit one unpenalised constant per logit (default mean: none). A
regression target is a usage error.
`, tuneSynopsis)
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

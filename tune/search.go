package tune

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// Method is an estimator family Search can tune.
type Method string

// Methods Search can tune.
const (
	MethodExact  Method = "exact"  // exact KRR (n x n kernel matrix)
	MethodRidge  Method = "ridge"  // ridge on a feature map (Map)
	MethodFalkon Method = "falkon" // FALKON with uniformly drawn centres
	// MethodParK ("park", ParK with Cells cells) is in park.go.
)

func (m Method) String() string { return string(m) }

// ParseMethod parses exact, ridge, falkon or park.
func ParseMethod(s string) (Method, error) {
	return zonal.ParseSetting("Method", s, MethodExact, MethodRidge, MethodFalkon, MethodParK)
}

// Map is a feature map of MethodRidge.
type Map string

// Feature maps for MethodRidge.
const (
	MapFourier Map = "fourier" // random Fourier features, Size = D (even)
	MapNystrom Map = "nystrom" // Nystrom features on Size uniformly drawn rows
	MapCustom  Map = "custom"  // SearchOptions.NewMap
)

func (m Map) String() string { return string(m) }

// ParseMap parses fourier or nystrom (custom maps are given by NewMap).
func ParseMap(s string) (Map, error) { return zonal.ParseSetting("Map", s, MapFourier, MapNystrom) }

// Criterion is what a setting is scored by.
type Criterion string

// Criteria a setting is scored by.
const (
	CriterionCV  Criterion = "cv"  // k-fold cross-validation (Folds), or a split (Validation)
	CriterionLOO Criterion = "loo" // closed-form leave-one-out on all rows
	CriterionGCV Criterion = "gcv" // generalized cross-validation on all rows (lower is better)
)

func (c Criterion) String() string { return string(c) }

// ParseCriterion parses cv, loo or gcv.
func ParseCriterion(s string) (Criterion, error) {
	return zonal.ParseSetting("Criterion", s, CriterionCV, CriterionLOO, CriterionGCV)
}

// Score is what a held-out (or left-out) prediction is scored by.
type Score string

// Scores of the held-out predictions.
const (
	// ScoreTask is the task's metric: accuracy (classification, higher is
	// better) or RMSE (regression).
	ScoreTask Score = ""
	// ScoreSquared is the mean over rows of the squared error of the model's
	// outputs against its encoded targets (classification: the +-1
	// one-versus-rest targets; regression: the squared error, RMSE^2),
	// lower is better. For classification it is a smooth surrogate of the
	// error rate: accuracy is a step function of sigma and lambda, flat on
	// plateaus and noisy by one row in n, which a golden-section search on
	// sigma cannot follow; the squared error moves with every margin.
	ScoreSquared Score = "squared"
)

func (c Score) String() string {
	if c == ScoreTask {
		return "task"
	}
	return string(c)
}

// ParseScore parses task (or "") and squared.
func ParseScore(s string) (Score, error) {
	if s == "task" {
		return ScoreTask, nil
	}
	return zonal.ParseSetting("Score", s, ScoreTask, ScoreSquared)
}

// Options are the settings every long operation of the package shares.
type Options struct {
	// Backend does the linear algebra; nil means backend.Default().
	Backend backend.Backend
	// Progress receives Stage "tune" reports: Done of Total settings, and
	// in Residual the best mean score so far (NaN before the first).
	Progress zonal.ProgressFunc
	// MemoryBudget bounds the working arrays in bytes (kernel matrix or
	// features, per-fold eigenbases, refit); 0 means zonal.DefaultMemoryBudget.
	MemoryBudget int64
}

// SearchOptions configures Search and Golden. The zero value (plus a
// Method) is usable: every grid has a data-driven default.
type SearchOptions struct {
	Options
	// Method is MethodExact, MethodRidge, MethodFalkon or MethodParK; ""
	// means MethodExact (MethodFalkon with LossLogistic).
	Method Method
	// Loss is the training loss: LossSquared ("" too) or LossLogistic,
	// logistic FALKON (MethodFalkon, Sizes its centre counts, each fold's
	// fit taking at most its training rows) on a classification task, scored by CriterionCV (k folds or a split:
	// the logistic fit has no closed-form LOO or GCV) with ScoreTask,
	// Metric NameAuto meaning log loss of the logits' own probabilities
	// (solvers.LogisticLoss, no Platt calibration); the refit is
	// solvers.FitLogistic. Anything else with LossLogistic is a
	// *zonal.ParamError.
	Loss Loss
	// Cells is the number of Voronoi cells Q of MethodParK; 0 means
	// DefaultCells. Partition is its partition strategy (solvers'
	// ParKOptions.Partition; "" is solvers' default).
	Cells     int
	Partition solvers.Partition
	// Map is the feature map of MethodRidge: MapFourier ("" too) or
	// MapNystrom; ignored when NewMap is set.
	Map Map
	// NewMap, when set, makes the feature map of MethodRidge for a kernel
	// (from Kernel at the setting's sigma) and a size: any map (Gegenbauer,
	// a sketch) can be tuned. It must be deterministic (seed it from Seed)
	// and its Dim need not equal size. Result.Map is then "custom".
	NewMap func(k kernels.Kernel, size int) (kernels.FeatureMap, error)
	// Kernel makes the kernel of a bandwidth; nil means the Gaussian
	// exp(-|x-y|^2 / (2 sigma^2)).
	Kernel func(sigma float64) (kernels.Kernel, error)
	// Sigmas is the bandwidth grid. nil means MedianSigma times
	// 2^-2, 2^-1, 1, 2, 2^2; an empty non-nil slice is an error.
	Sigmas []float64
	// Lambdas is the regularisation grid (solvers' lambda, which multiplies
	// the number of training rows). nil means 1e-10, 1e-9, ..., 1e-1; an
	// empty non-nil slice is an error.
	Lambdas []float64
	// Sizes are the centre counts M (MethodFalkon; the total over the
	// cells for MethodParK) or feature counts D
	// (MethodRidge; even for MapFourier); ignored by MethodExact. nil means
	// AutoCenters(n, MemoryBudget) (rounded up to even for Fourier).
	Sizes []int
	// Criterion is CriterionCV ("" too), CriterionLOO or CriterionGCV.
	Criterion Criterion
	// Score is what CV and LOO predictions are scored by: ScoreTask ("",
	// the Metric) or ScoreSquared ("squared"; Result.Metric "squared_error"); GCV has its own.
	Score Score
	// Metric is the metric of ScoreTask: metrics.NameAuto (the zero value:
	// accuracy for classification, RMSE for regression) or any metric that
	// applies to the task (metrics.Name.CheckTask), the search keeping the
	// setting whose mean over folds is best in the metric's direction
	// (metrics.Name.Maximize). AUC and F1 score the held-out decision
	// values, log loss Platt-calibrated probabilities of them (see the
	// package doc). With a classification metric other than accuracy the
	// k folds are stratified by class. A Metric other than NameAuto with
	// ScoreSquared or CriterionGCV is an error.
	Metric metrics.Name
	// Folds is k of k-fold cross-validation (dataset.KFold); 0 means 5.
	Folds int
	// Validation, when > 0, replaces k-fold by one split that holds out this
	// fraction of the rows (dataset.Split); it must be in (0, 1).
	Validation float64
	// Task is what the labels mean; solvers.TaskAuto reads it from them
	// (solvers.DetectTask).
	Task solvers.Task
	// Seed drives the folds, the feature maps and the centres: a seed
	// gives the same table on every run.
	Seed uint64
	// Refit fits the best setting on all rows (Result.Model).
	Refit bool
	// Rows, when > 0 and below n, tunes on a seeded subsample of this many
	// rows (dataset.Subsample with Seed) and refits on all of them: the
	// lambda that is best at n_sub rows is used at n (solvers' lambda is
	// per row, so the absolute regulariser grows with n).
	Rows int
	// Solver is how k-fold and split paths are solved: SolverEig, SolverCholesky,
	// or "" to choose by cost (SolverEig from as many lambdas as one
	// eigendecomposition costs Cholesky factorisations on the backend).
	// LOO and GCV always use the eigendecomposition.
	Solver Solver
	// Workers bounds the folds evaluated in parallel (each with its own
	// eigendecomposition, within MemoryBudget); 0 means GOMAXPROCS.
	Workers int
	// Intercept is how the fits get their constant: solvers.InterceptMean
	// ("" too; the targets' mean) or solvers.InterceptFitted (fitted with
	// the expansion, unpenalised, as solvers.FalkonOptions.Intercept). The
	// fitted intercept is scored for MethodExact and MethodFalkon by the
	// closed forms only (CriterionLOO or CriterionGCV; see
	// loo.withFittedIntercept), without Refit; anything else is a
	// *zonal.ParamError. With LossLogistic it is
	// solvers.LogisticOptions.Intercept of every fold's path and of the
	// refit (InterceptMean: no constant; InterceptFitted: an unpenalised
	// one per output).
	Intercept solvers.Intercept
	// BothIntercepts, with the mean intercept, also scores the fitted one
	// at the best setting's sigma and size (Result.Fitted), from the kernel
	// or feature matrix the search builds there: the search keeps a copy of
	// the best group's matrix so far (two, the best and the one being
	// evaluated, when they fit MemoryBudget next to the working arrays;
	// else the group is built again at the end) and centres it, one more
	// eigendecomposition. The method and criterion must be those a fitted
	// Intercept is scored with (MethodExact or MethodFalkon, CriterionLOO
	// or CriterionGCV, LossSquared); anything else is a *zonal.ParamError.
	BothIntercepts bool
	// Weights are per-row weights (nil: all 1), validated by
	// solvers.CheckWeights: every fit of the search minimises the weighted
	// objective of the solvers package (lambda times the training rows'
	// weight sum), the scores are weighted (accuracy: the weight of the
	// rows predicted right over the total; RMSE: the square root of the
	// weighted mean squared error; every Metric is weighted, and so are the
	// log loss's calibrators), the leave-one-out and GCV closed forms
	// are the weighted ones (see the package doc), and the refit gets the
	// weights. Rows of weight zero are left out of the search (folds,
	// subsample and refit); equal weights are the unweighted search.
	Weights []float64
}

// Setting is one point of the grid.
type Setting struct {
	Sigma  float64 `json:"sigma"`
	Lambda float64 `json:"lambda"`
	// Size is the centre count (falkon) or feature count (ridge); 0 for krr.
	Size int `json:"size,omitempty"`
}

// Row is the score of one setting.
type Row struct {
	Setting
	// Mean and Std are the mean and the standard deviation (over folds,
	// divided by k-1; 0 for one split, LOO and GCV) of the score.
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	// Scores are the per-fold scores (one for a split, LOO or GCV).
	Scores []float64 `json:"scores"`
	// TaskScore is the mean of the task's metric (accuracy or RMSE, or
	// the Metric asked for) of the same predictions: Mean itself unless
	// Score is ScoreSquared (GCV: Mean).
	TaskScore float64 `json:"task_score"`
	// Seconds is the wall time of the setting's sigma-size group (kernel or
	// features, eigendecompositions, every lambda) divided by the number of
	// lambdas: what the setting cost with the lambda path shared.
	Seconds float64 `json:"seconds"`
}

// Result is the table of a search and its best setting.
type Result struct {
	Method Method
	// Loss is the training loss of the fits scored (LossSquared or
	// LossLogistic).
	Loss      Loss
	Map       Map
	Criterion Criterion
	// Metric is what Mean scores: the name of the SearchOptions.Metric
	// resolved for the task ("accuracy" or "rmse" for NameAuto, else
	// "balanced_accuracy", "auc", "logloss", "f1", "mae" or "r2"),
	// "squared_error" (ScoreSquared) or "gcv"; only HigherIsBetter tells
	// the direction.
	Metric   string
	Encoding solvers.Encoding
	// Rows are every evaluated setting, in evaluation order (sigma, size,
	// then lambda, the grid's order; for Golden, in the search's order).
	Rows []Row
	// Best is the best row (the first of equal ones).
	Best Row
	// Groups is the number of (sigma, size) groups evaluated: each one
	// kernel matrix or feature matrix and one eigendecomposition per fold.
	Groups int
	// Elapsed is the wall time of the search without the refit.
	Elapsed time.Duration
	// Fitted is, with SearchOptions.BothIntercepts, the scores of the
	// fitted intercept (solvers.InterceptFitted) at Best's sigma and size
	// over every lambda: the Result of a Search with Intercept
	// InterceptFitted, Sigmas {Best.Sigma} and Sizes {Best.Size} (one
	// group, no Model), taken from the kernel or feature matrix this
	// search built for Best when it could keep it. Nil without
	// BothIntercepts, and when the fitted intercept could not be scored:
	// FittedErr then says why (a search that was canceled returns the
	// context's error instead).
	Fitted    *Result
	FittedErr error
	// Model is the best setting fitted on all rows when Refit is set.
	Model *solvers.Pipeline
	// RefitNote is non-empty when the refit differs from the method asked
	// for: a FALKON whose CG did not converge is refitted as ridge on the
	// Nystrom map of the same centres (the predictor the tuner scored).
	RefitNote string
}

// HigherIsBetter reports whether larger scores are better: accuracy,
// balanced_accuracy, auc, f1 and r2 (metrics.Name.Maximize).
func (r *Result) HigherIsBetter() bool {
	n, err := metrics.ParseName(r.Metric)
	return err == nil && n.Maximize()
}

// searcher holds the validated inputs of a search.
type searcher struct {
	opts   SearchOptions
	be     backend.Backend
	x      mat.Matrix // the rows tuned on (all, or a subsample): *mat.Dense or *dataset.CSR
	labels []float64
	t      *mat.Dense // n x k encoded targets
	fullX  mat.Matrix // every row and its targets, for the refit
	fullT  *mat.Dense
	w      []float64 // weights of the rows of x (all positive); nil: unweighted
	fullW  []float64 // weights of the rows of fullX; nil: unweighted
	enc    solvers.Encoding
	folds  []dataset.Fold
	metric string
	// by is the metric of ScoreTask resolved for the task (NameAuto with
	// ScoreSquared and GCV, whose scores are lower-is-better).
	by metrics.Name
	// calParts are the row sets whose log-loss calibrators are fitted on
	// the others (the k folds' test rows, or parts of the held-out rows).
	calParts [][]int
	// dec holds, for log loss, the held-out outputs [lambda] (n x k) of
	// the group being evaluated.
	dec []*mat.Dense
	// alt holds, with ScoreSquared, the task metric's scores
	// [lambda][fold] of the group being evaluated (Row.TaskScore).
	alt     [][]float64
	kernel  func(float64) (kernels.Kernel, error)
	lambdas []float64
	done    int
	total   int
	// bestSoFar is the best mean score of the settings done (NaN first).
	bestSoFar float64
	// kept is, with BothIntercepts, the scaled matrix of the best group
	// so far (nil when it was not kept), cand the copy of the group being
	// evaluated and spare an array for the next copy (see retain).
	kept, cand *keptGroup
	spare      *mat.Dense
}

// Search evaluates every setting of Sigmas x Lambdas (x Sizes) for
// opts.Method and returns the table, the best setting and, with Refit, the
// best model fitted on all rows. The rows of x are the training data (n x d,
// already scaled as the model will see them; a *mat.Dense, or a
// *dataset.CSR that is never densified) and y holds n labels (n x 1).
// Per (sigma, size) group one kernel matrix (krr) or feature matrix (ridge,
// falkon) is built on all rows, and per fold one eigendecomposition gives
// every lambda, or one Cholesky factorisation per lambda where that is
// cheaper (Solver; the package doc). Folds run in parallel (Workers) as far
// as MemoryBudget allows. The result depends only on the inputs, Seed and
// Solver (the two solvers agree to rounding). A lambda whose system cannot
// be factored even with jitter scores NaN and is never chosen.
//
// Errors wrap zonal.ErrParam for bad options and grids (an empty non-nil
// grid, a sigma or lambda that is not positive and finite, a size < 1 or
// > n, an odd Fourier size, unknown method, map, criterion or solver, bad
// Folds, Validation or Rows, a Metric that does not apply to the task or
// comes with ScoreSquared or CriterionGCV, and for balanced accuracy, AUC,
// log loss and F1 a class with fewer rows than folds or missing from the
// held-out rows), zonal.ErrShape / zonal.ErrEmpty / zonal.ErrNonFinite for bad
// data, zonal.ErrTooLarge when one group does not fit MemoryBudget, and the
// context's error when canceled.
func Search(ctx context.Context, x mat.Matrix, y *mat.Dense, opts SearchOptions) (*Result, error) {
	s, err := newSearcher(x, y, &opts)
	if err != nil {
		return nil, err
	}
	sigmas, err := s.sigmaGrid()
	if err != nil {
		return nil, err
	}
	sizes, err := s.sizeGrid()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := s.newResult()
	s.total = len(sigmas) * len(sizes) * len(s.lambdas)
	for _, sg := range sigmas {
		for _, sz := range sizes {
			rows, err := s.group(ctx, sg, sz)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, rows...)
			res.Groups++
		}
	}
	return s.finish(ctx, res, start)
}

func (s *searcher) newResult() *Result {
	return &Result{Method: s.opts.Method, Loss: s.opts.Loss, Map: s.opts.Map, Criterion: s.opts.Criterion, Metric: s.metric, Encoding: s.enc}
}

// finish picks the best row and refits it.
func (s *searcher) finish(ctx context.Context, res *Result, start time.Time) (*Result, error) {
	res.Elapsed = time.Since(start)
	if err := s.pickBest(res); err != nil {
		return nil, err
	}
	if s.opts.BothIntercepts {
		if err := s.scoreFitted(ctx, res); err != nil {
			return nil, err
		}
	}
	if !s.opts.Refit {
		return res, nil
	}
	m, note, err := refit(ctx, s, res.Best.Setting)
	res.RefitNote = note
	if err != nil {
		return nil, fmt.Errorf("tune: refit of the best setting: %w", err)
	}
	if res.Model, err = solvers.NewPipeline(nil, s.enc, m); err != nil {
		return nil, err
	}
	return res, nil
}

// pickBest sets res.Best to the best of res.Rows (the first of equal ones).
func (s *searcher) pickBest(res *Result) error {
	best := -1
	for i, r := range res.Rows {
		if best < 0 || s.better(r.Mean, res.Rows[best].Mean) {
			best = i
		}
	}
	if best < 0 {
		return fmt.Errorf("%w: no setting was evaluated", zonal.ErrParam)
	}
	res.Best = res.Rows[best]
	if math.IsNaN(res.Best.Mean) {
		return fmt.Errorf("%w: every setting scored NaN", zonal.ErrNonFinite)
	}
	return nil
}

// better reports whether score a beats b (NaN never wins).
func (s *searcher) better(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	if s.by.Maximize() {
		return a > b
	}
	return a < b
}

// loss is the score as a quantity to minimise.
func (s *searcher) loss(score float64) float64 {
	if math.IsNaN(score) {
		return math.Inf(1)
	}
	if s.by.Maximize() {
		return -score
	}
	return score
}

func newSearcher(x mat.Matrix, y *mat.Dense, opts *SearchOptions) (*searcher, error) {
	switch v := x.(type) {
	case *mat.Dense:
		if v == nil {
			x = nil
		}
	case *dataset.CSR:
		if v == nil {
			x = nil
		}
	case nil:
	default:
		return nil, fmt.Errorf("%w: x is a %T; tune takes a *mat.Dense or a *dataset.CSR", zonal.ErrShape, x)
	}
	if x == nil || y == nil {
		return nil, fmt.Errorf("%w: nil data", zonal.ErrShape)
	}
	n, _, err := checkRows(x)
	if err != nil {
		return nil, err
	}
	if yn, yk := y.Dims(); yn != n || yk != 1 {
		return nil, fmt.Errorf("%w: labels are %dx%d, want %dx1", zonal.ErrShape, yn, yk, n)
	}
	if n < 3 {
		return nil, fmt.Errorf("%w: tuning needs at least 3 rows, got %d", zonal.ErrEmpty, n)
	}
	labels := mat.Col(nil, 0, y)
	if _, err := solvers.CheckWeights(opts.Weights, n); err != nil {
		return nil, err
	}
	var weights []float64
	methodGiven := opts.Method != ""
	x, labels, weights, n = positiveRows(x, labels, opts.Weights)
	if n < 3 {
		return nil, fmt.Errorf("%w: tuning needs at least 3 rows of positive weight, got %d", zonal.ErrEmpty, n)
	}
	switch opts.Method {
	case "":
		opts.Method = MethodExact
	case MethodExact, MethodRidge, MethodFalkon, MethodParK:
	default:
		return nil, fmt.Errorf("%w: unknown method %q (krr, ridge, falkon, park)", zonal.ErrParam, opts.Method)
	}
	switch {
	case opts.Method != MethodRidge:
		opts.Map = ""
	case opts.NewMap != nil:
		opts.Map = MapCustom
	case opts.Map == "":
		opts.Map = MapFourier
	case opts.Map != MapFourier && opts.Map != MapNystrom:
		return nil, fmt.Errorf("%w: unknown feature map %q (fourier, nystrom)", zonal.ErrParam, opts.Map)
	}
	if opts.Criterion == "" {
		opts.Criterion = CriterionCV
	}
	switch opts.Solver {
	case "", SolverEig, SolverCholesky:
	default:
		return nil, fmt.Errorf("%w: unknown solver %q (eig, cholesky)", zonal.ErrParam, opts.Solver)
	}
	s := &searcher{opts: *opts, be: opts.Backend, x: x, labels: labels, w: weights, fullW: weights, kernel: opts.Kernel, bestSoFar: math.NaN()}
	if s.be == nil {
		s.be = backend.Default()
	}
	if s.kernel == nil {
		s.kernel = func(sigma float64) (kernels.Kernel, error) { return kernels.NewGaussian(sigma) }
	}
	task := opts.Task
	if task == solvers.TaskAuto {
		task = solvers.DetectTask(labels)
	}
	if s.enc, err = solvers.NewEncoding(labels, task); err != nil {
		return nil, err
	}
	if s.t, err = s.enc.Targets(labels); err != nil {
		return nil, err
	}
	s.fullX, s.fullT = x, s.t
	if opts.Rows < 0 || (opts.Rows > 0 && opts.Rows < 3) {
		return nil, fmt.Errorf("%w: Rows must be 0 (all) or at least 3, got %d", zonal.ErrParam, opts.Rows)
	}
	if opts.Rows > 0 && opts.Rows < n {
		idx, err := dataset.Subsample(n, opts.Rows, opts.Seed)
		if err != nil {
			return nil, err
		}
		s.x, s.t = dataset.MustSelectRows(x, idx), dataset.MustSelectRows(s.t, idx)
		s.labels = make([]float64, len(idx))
		for r, i := range idx {
			s.labels[r] = labels[i]
		}
		s.w = s.weightsOf(idx)
		n = opts.Rows
	}
	if err := s.checkLoss(opts, methodGiven); err != nil {
		return nil, err
	}
	if err := s.setMetric(); err != nil {
		return nil, err
	}
	switch opts.Score {
	case ScoreTask:
	case ScoreSquared:
		s.metric, s.by = "squared_error", metrics.NameAuto
	default:
		return nil, &zonal.ParamError{Param: "Score", Value: opts.Score, Reason: "unknown score (task, squared)", Err: zonal.ErrUnknown}
	}
	switch opts.Criterion {
	case CriterionCV:
		if opts.Validation != 0 {
			if !(opts.Validation > 0 && opts.Validation < 1) {
				return nil, fmt.Errorf("%w: validation fraction must be in (0, 1), got %g", zonal.ErrParam, opts.Validation)
			}
			train, test := dataset.Split(n, 1-opts.Validation, opts.Seed)
			s.folds = []dataset.Fold{{Train: train, Test: test}}
		} else {
			k := opts.Folds
			if k == 0 {
				k = 5
			}
			if s.folds, err = s.kFolds(n, k); err != nil {
				return nil, err
			}
		}
	case CriterionLOO:
	case CriterionGCV:
		s.metric, s.by = "gcv", metrics.NameAuto
	default:
		return nil, fmt.Errorf("%w: unknown criterion %q (cv, loo, gcv)", zonal.ErrParam, opts.Criterion)
	}
	if err := checkIntercept(opts); err != nil {
		return nil, err
	}
	if err := checkBoth(opts); err != nil {
		return nil, err
	}
	if err := s.checkHeldOut(); err != nil {
		return nil, err
	}
	if opts.Lambdas == nil {
		for e := -10; e <= -1; e++ {
			s.lambdas = append(s.lambdas, math.Pow(10, float64(e)))
		}
	} else {
		if len(opts.Lambdas) == 0 {
			return nil, fmt.Errorf("%w: empty lambda grid", zonal.ErrParam)
		}
		for _, l := range opts.Lambdas {
			if !(l > 0) || math.IsInf(l, 0) {
				return nil, fmt.Errorf("%w: lambda must be positive and finite, got %g", zonal.ErrParam, l)
			}
		}
		s.lambdas = slices.Clone(opts.Lambdas)
	}
	return s, nil
}

func (s *searcher) sigmaGrid() ([]float64, error) {
	if s.opts.Sigmas == nil {
		med, err := MedianSigma(s.x, 0, s.opts.Seed)
		if err != nil {
			return nil, err
		}
		return []float64{med / 4, med / 2, med, 2 * med, 4 * med}, nil
	}
	if len(s.opts.Sigmas) == 0 {
		return nil, fmt.Errorf("%w: empty sigma grid", zonal.ErrParam)
	}
	for _, v := range s.opts.Sigmas {
		if err := checkSigma(v); err != nil {
			return nil, err
		}
	}
	return slices.Clone(s.opts.Sigmas), nil
}

func checkSigma(v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: sigma must be positive and finite, got %g", zonal.ErrParam, v)
	}
	return nil
}

func (s *searcher) sizeGrid() ([]int, error) {
	sizes, err := s.sizeList()
	if err == nil && s.opts.Method == MethodParK {
		err = s.checkPark(sizes)
	}
	return sizes, err
}

func (s *searcher) sizeList() ([]int, error) {
	if s.opts.Method == MethodExact {
		return []int{0}, nil
	}
	n, _ := s.x.Dims()
	if s.opts.Sizes == nil {
		m := AutoCenters(n, s.opts.MemoryBudget, zonal.Float64)
		if s.opts.Map == MapFourier && m%2 == 1 {
			m++
		}
		return []int{m}, nil
	}
	if len(s.opts.Sizes) == 0 {
		return nil, fmt.Errorf("%w: empty size grid", zonal.ErrParam)
	}
	for _, m := range s.opts.Sizes {
		switch {
		case m < 1:
			return nil, fmt.Errorf("%w: sizes must be >= 1, got %d", zonal.ErrParam, m)
		case s.opts.Map == MapFourier && m%2 == 1:
			return nil, fmt.Errorf("%w: Fourier feature counts must be even (cos/sin pairs), got %d", zonal.ErrParam, m)
		case (s.opts.Method == MethodFalkon || s.opts.Method == MethodParK || s.opts.Map == MapNystrom) && m > n:
			return nil, fmt.Errorf("%w: %d centres but only %d rows", zonal.ErrParam, m, n)
		}
	}
	return slices.Clone(s.opts.Sizes), nil
}

// mapFor builds the feature map of a ridge or FALKON group on the rows of x.
func (s *searcher) mapFor(k kernels.Kernel, size int, x mat.Matrix, basis bool) (kernels.FeatureMap, error) {
	if s.opts.Map == MapCustom {
		fm, err := s.opts.NewMap(k, size)
		if err == nil && fm == nil {
			err = fmt.Errorf("%w: NewMap returned no map", zonal.ErrParam)
		}
		return fm, err
	}
	n, _ := x.Dims()
	var idx []int
	switch {
	case s.opts.Method == MethodFalkon:
		idx = falkonCenters(n, size, s.opts.Seed)
	case s.opts.Map == MapNystrom:
		var err error
		if idx, err = dataset.Subsample(n, size, s.opts.Seed); err != nil {
			return nil, err
		}
	}
	return featureMap(s.be, k, x, s.opts.Map, size, idx, s.opts.Seed, basis)
}

// scoreBasis makes the ridge and FALKON groups score the Nystrom map in
// K_CC's eigenbasis (kernels.NewNystromBasis): Rank() features instead of
// size, the same hat matrix and so the same scores up to rounding. The
// m-column map is kept for the refits (their model files). A variable so
// that TestScoreBasisSameScores can compare the two.
var scoreBasis = true

// group evaluates every lambda for one sigma and size and reports the
// progress.
func (s *searcher) group(ctx context.Context, sigma float64, size int) ([]Row, error) {
	rows, err := s.evalGroup(ctx, sigma, size, s.fitted())
	if err != nil {
		return nil, err
	}
	s.keepBest(sigma, size, rows)
	s.done += len(s.lambdas)
	for _, r := range rows {
		if s.better(r.Mean, s.bestSoFar) {
			s.bestSoFar = r.Mean
		}
	}
	s.opts.Progress.Report(zonal.Progress{Stage: "tune", Done: s.done, Total: s.total, Residual: s.bestSoFar})
	return rows, nil
}

// evalGroup evaluates every lambda for one sigma and size, the closed
// forms with the fitted intercept when fitted (the mean one otherwise).
func (s *searcher) evalGroup(ctx context.Context, sigma float64, size int, fitted bool) ([]Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	k, err := s.kernel(sigma)
	if err != nil {
		return nil, err
	}
	n, _ := s.x.Dims()
	_, kout := s.t.Dims()
	limit := s.opts.MemoryBudget
	nf := len(s.folds)
	var scores [][]float64 // [lambda][fold]
	s.newAlt()
	s.newPooled()
	if s.logistic() {
		scores, err = s.logisticScores(ctx, k, size)
	} else if s.opts.Method == MethodParK {
		scores, err = s.parkScores(ctx, k, size)
	} else if s.opts.Method == MethodExact {
		ntr := n
		if nf > 0 {
			ntr = len(s.folds[0].Train)
		}
		shared := budget.Floats(n, n) + s.pooledBytes()
		perFold := budget.Floats(ntr, 2*ntr+2*(n-ntr)+2*kout) // K_tr (and its factor), K_te,tr, A, B
		w := s.workers(shared, perFold)
		used := shared + int64(w)*perFold
		if err := budget.Check(fmt.Sprintf("tuning exact KRR on %d rows (tune on fewer: SearchOptions.Rows)", n), used, limit); err != nil {
			return nil, err
		}
		keep := !fitted && nf == 0 && s.planKeep(used, n, n)
		kfull := mat.NewDense(n, n, nil)
		if err := kernelMatrix(ctx, s.be, k, kfull, s.x, s.x); err != nil {
			return nil, err
		}
		if nf == 0 {
			sw := sqrtOf(s.w)
			scaleSym(kfull, sw) // the scaled problem's D K D (see loo)
			if keep {
				s.retain(kfull, true)
			}
			scores, err = s.looScores(ctx, kfull, sw, true, fitted)
		} else {
			scores, err = s.cv(ctx, w, func(f dataset.Fold) (lambdaPath, error) {
				sy, err := krrSystem(kfull, s.t, s.weightsOf(f.Train), f.Train, f.Test)
				if err != nil {
					return nil, err
				}
				return s.pathOf(sy)
			})
		}
	} else {
		var w int
		var used int64
		check := func(D int) error {
			shared := budget.Floats(n+2*D+kout+1, D) + s.pooledBytes() // features, Gram, map, pooled outputs
			perFold := budget.Floats(2*D+2*n/max(nf, 1)+kout, D)
			w = s.workers(shared, perFold)
			used = shared + int64(w)*perFold
			what := fmt.Sprintf("tuning %s with %d features on %d rows (tune on fewer: SearchOptions.Rows)", s.opts.Method, D, n)
			return budget.Check(what, used, limit)
		}
		if err := check(size); err != nil {
			return nil, err
		}
		// Scored in K_CC's eigenbasis (kernels.NewNystromBasis): the
		// same hat matrix, so the same scores up to rounding, from Rank()
		// features instead of size.
		fm, err := s.mapFor(k, size, s.x, scoreBasis)
		if err != nil {
			return nil, err
		}
		_, d := s.x.Dims()
		if fm.InputDim() != d {
			return nil, fmt.Errorf("%w: feature map takes %d inputs, data has %d columns", zonal.ErrShape, fm.InputDim(), d)
		}
		D := fm.Dim()
		if D != size {
			if err := check(D); err != nil {
				return nil, err
			}
		}
		keep := !fitted && nf == 0 && s.planKeep(used, n, D)
		z := mat.NewDense(n, D, nil)
		if err := fm.Transform(z, s.x); err != nil {
			return nil, err
		}
		if nf == 0 {
			sw := sqrtOf(s.w)
			scaleRowsBy(z, sw) // the scaled problem's D Z (see loo)
			if keep {
				s.retain(z, false)
			}
			scores, err = s.looScores(ctx, z, sw, false, fitted)
		} else {
			fs := newFeatureStats(s.be, z, s.t, s.w)
			scores, err = s.cv(ctx, w, func(f dataset.Fold) (lambdaPath, error) {
				sy, err := ridgeSystem(s.be, fs, s.t, f.Train, f.Test)
				if err != nil {
					return nil, err
				}
				return s.pathOf(sy)
			})
		}
	}
	if err != nil {
		return nil, err
	}
	return s.rowsOf(scores, sigma, size, start), nil
}

// newAlt makes the task metric's score arrays of a group (s.alt) when the
// search scores the squared error, and clears them otherwise.
func (s *searcher) newAlt() {
	s.alt = nil
	if s.metric == "squared_error" {
		s.alt = make([][]float64, len(s.lambdas))
		for i := range s.alt {
			s.alt[i] = make([]float64, max(len(s.folds), 1))
		}
	}
}

// rowsOf is the table rows of a group's scores [lambda][fold] at sigma and
// size, the group having started at start.
func (s *searcher) rowsOf(scores [][]float64, sigma float64, size int, start time.Time) []Row {
	if s.pooled() {
		s.logLossScores(scores)
		s.dec = nil
	}
	per := time.Since(start).Seconds() / float64(len(s.lambdas))
	rows := make([]Row, len(s.lambdas))
	for li, lam := range s.lambdas {
		m, sd := meanStd(scores[li])
		rows[li] = Row{Setting: Setting{Sigma: sigma, Lambda: lam, Size: size}, Mean: m, Std: sd, Scores: scores[li], Seconds: per, TaskScore: m}
		if s.alt != nil {
			rows[li].TaskScore, _ = meanStd(s.alt[li])
		}
	}
	return rows
}

// looScores scores every lambda by LOO or GCV on all rows from the scaled
// kernel matrix (orth, exact KRR) or the scaled features m (ridge and
// FALKON), which it overwrites with the eigenbasis; with the fitted
// intercept when fitted, the basis centred first (see
// loo.withFittedIntercept).
func (s *searcher) looScores(ctx context.Context, m *mat.Dense, sw []float64, orth, fitted bool) ([][]float64, error) {
	n, r := m.Dims()
	if fitted {
		if orth {
			centerSym(m, unitWeights(sw, n))
		} else {
			centerCols(m, unitWeights(sw, n))
		}
	}
	sym := m // the matrix eigendecomposed: K, or Z^T Z
	var fs *featureStats
	if !orth {
		fs = newFeatureStats(s.be, m, s.t, nil)
		sym = fs.g
	}
	ev := make([]float64, r)
	if err := s.be.SymEig(sym.RawMatrix(), ev, true); err != nil {
		return nil, err
	}
	clampEig(ev)
	if !orth {
		mulRightInPlace(s.be, m, fs.g) // Z <- Q = Z U
	}
	l := newLOO(s.be, m, ev, s.t, sw, orth)
	if fitted {
		l = l.withFittedIntercept()
	}
	return s.closedForm(ctx, l)
}

// Solver is how the k-fold lambda paths are solved (SearchOptions.Solver).
type Solver string

// Solvers of the k-fold lambda paths.
const (
	SolverEig      Solver = "eig"      // one eigendecomposition per fold, every lambda by a product
	SolverCholesky Solver = "cholesky" // one Cholesky factorisation per fold and lambda
)

func (s Solver) String() string { return string(s) }

// ParseSolver parses eig or cholesky.
func ParseSolver(s string) (Solver, error) {
	return zonal.ParseSetting("Solver", s, SolverEig, SolverCholesky)
}

// eigBreakEven is the number of lambdas from which SolverEig is chosen
// automatically: a symmetric eigendecomposition with vectors cost about 12
// to 15 Cholesky factorisations of the same size with OpenBLAS (dsyevd) and
// about 150 to 165 with the pure-Go backend (gonum's tridiagonal reduction;
// one run each at n = 1000 and 2000 on the project's shared 2-core machine).
func eigBreakEven(be backend.Backend) int {
	if be.Name() == "netlib" {
		return 14
	}
	return 150
}

// pathOf turns a fold system into its lambda path by the configured solver.
func (s *searcher) pathOf(sy *system) (lambdaPath, error) {
	switch s.opts.Solver {
	case SolverEig:
		return sy.eigPath(s.be)
	case SolverCholesky:
		return sy.directPath(), nil
	}
	if len(s.lambdas) >= eigBreakEven(s.be) {
		return sy.eigPath(s.be)
	}
	return sy.directPath(), nil
}

// workers is how many folds run at once: Workers (or GOMAXPROCS), at most
// the folds, and at most what the budget holds after the shared arrays.
func (s *searcher) workers(shared, perFold int64) int {
	w := s.opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = max(1, min(w, len(s.folds)))
	if perFold > 0 {
		room := (budget.Or(s.opts.MemoryBudget) - shared) / perFold
		w = int(max(1, min(int64(w), room)))
	}
	return w
}

// cv scores every lambda on every fold, folds in parallel (w at a time).
func (s *searcher) cv(ctx context.Context, w int, build func(dataset.Fold) (lambdaPath, error)) ([][]float64, error) {
	return s.eachFold(ctx, w, func(fi int, f dataset.Fold, pred *mat.Dense, truth []float64, scores [][]float64) error {
		p, err := build(f)
		if err != nil {
			return err
		}
		for li, lam := range s.lambdas {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := p.predict(s.be, pred, lam); err != nil {
				// G + c I not positive definite even with jitter: this
				// lambda scores NaN (never chosen, visible in the table).
				scores[li][fi] = math.NaN()
				continue
			}
			scores[li][fi] = s.scoreAt(li, fi, pred, truth, s.weightsOf(f.Test), f.Test)
		}
		return nil
	})
}

// eachFold runs score on every fold, w at a time, with the fold's
// prediction matrix (its test rows x outputs) and true labels, and returns
// the scores [lambda][fold] it filled in; the first error (or the context's)
// ends the search.
func (s *searcher) eachFold(ctx context.Context, w int, score func(fi int, f dataset.Fold, pred *mat.Dense, truth []float64, scores [][]float64) error) ([][]float64, error) {
	nf := len(s.folds)
	scores := make([][]float64, len(s.lambdas))
	for i := range scores {
		scores[i] = make([]float64, nf)
	}
	errs := make([]error, nf)
	sem := make(chan struct{}, w)
	var wg sync.WaitGroup
	_, kout := s.t.Dims()
	for fi, f := range s.folds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[fi] = err
				return
			}
			pred := mat.NewDense(len(f.Test), kout, nil)
			truth := make([]float64, len(f.Test))
			for r, i := range f.Test {
				truth[r] = s.labels[i]
			}
			errs[fi] = score(fi, f, pred, truth, scores)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return scores, nil
}

// closedForm scores every lambda by LOO or GCV on all rows.
func (s *searcher) closedForm(ctx context.Context, l *loo) ([][]float64, error) {
	n, kout := s.t.Dims()
	pred := mat.NewDense(n, kout, nil)
	scores := make([][]float64, len(s.lambdas))
	if s.opts.Criterion == CriterionGCV {
		for li, lam := range s.lambdas {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			scores[li] = []float64{l.gcv(s.be, lam)}
		}
		return scores, nil
	}
	chunk := looChunk(n, kout)
	for c0 := 0; c0 < len(s.lambdas); c0 += chunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c1 := min(c0+chunk, len(s.lambdas))
		l.evalAll(s.be, s.lambdas[c0:c1])
		for li := c0; li < c1; li++ {
			l.predictAt(pred, li-c0)
			scores[li] = []float64{s.scoreAt(li, 0, pred, s.labels, s.w, nil)}
		}
	}
	return scores, nil
}

// scoreAt is score of the held-out outputs out of the rows idx (nil: every
// row), and with ScoreSquared it also records the task's metric of the same
// predictions in s.alt[li][fi]. For log loss it keeps the outputs (s.dec)
// and returns 0, or NaN for outputs that are not finite: the score is
// computed once every fold is done (logLossScores).
func (s *searcher) scoreAt(li, fi int, out *mat.Dense, truth, w []float64, idx []int) float64 {
	if s.pooled() {
		if !finiteMatrix(out) {
			return math.NaN()
		}
		s.keep(li, out, idx)
		return 0
	}
	v := s.score(out, truth, w)
	if s.alt != nil {
		s.alt[li][fi] = s.taskScore(out, truth, w)
	}
	return v
}

// score returns the Metric of the outputs against truth (weighted by w
// when w is not nil; metricScore), or (ScoreSquared) the (weighted) mean
// squared error of the outputs against truth's encoded targets.
func (s *searcher) score(out *mat.Dense, truth, w []float64) float64 {
	if s.metric == "squared_error" {
		return squaredError(s.enc, out, truth, w)
	}
	return s.metricScore(out, truth, w)
}

// taskScore is the accuracy or RMSE of the outputs against truth, weighted
// by w when w is not nil.
func (s *searcher) taskScore(out *mat.Dense, truth, w []float64) float64 {
	pred := make([]float64, len(truth))
	s.enc.Decode(pred, out)
	for _, v := range pred {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	if w != nil {
		return weightedScore(pred, truth, w, s.enc.Task == solvers.TaskClassification)
	}
	if s.enc.Task == solvers.TaskClassification {
		return solvers.Accuracy(pred, truth)
	}
	return solvers.RMSE(pred, truth)
}

// squaredError is the mean over rows of |out_i - t_i|^2 (weighted by w when
// w is not nil), t_i the encoded target of truth_i (NaN when an output is
// not finite or a label not encodable).
func squaredError(enc solvers.Encoding, out *mat.Dense, truth, w []float64) float64 {
	t, err := enc.Targets(truth)
	if err != nil {
		return math.NaN()
	}
	n, k := t.Dims()
	sum, total := 0.0, 0.0
	for i := 0; i < n; i++ {
		o, y := out.RawRowView(i), t.RawRowView(i)
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		for j := 0; j < k; j++ {
			d := o[j] - y[j]
			sum += wi * d * d
		}
		total += wi
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) || !(total > 0) {
		return math.NaN()
	}
	return sum / total
}

// meanStd returns the mean and the sample standard deviation (0 for one value).
func meanStd(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) < 2 {
		return m, 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

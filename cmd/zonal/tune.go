package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

const tuneSynopsis = "-train FILE|- [-test FILE|- | -split 0.8] [-format csv|libsvm] [-sparse auto|yes|no] [-standardize=false] [-task auto|regression|classification] " +
	"[-method exact|ridge|falkon|park] [-loss squared|logistic] [-intercept mean|fitted] [-map fourier|nystrom] [-features LIST] [-centers LIST] [-cells Q] [-partition NAME] [-sigmas auto|LIST] [-lambdas auto|LIST] " +
	"[-folds K | -criterion kfold|split|loo|gcv] [-metric auto|accuracy|balanced_accuracy|auc|logloss|f1|rmse|mae|r2] [-golden N] [-rows N] [-weights FILE | -weight-column NAME] [-class-weight none|balanced|LABEL:W,...] [-seed N] [-memory 2G] [-model out.zonal] [-json]"

func init() {
	addCommand(command{name: "tune", summary: "choose sigma, lambda and centres by cross-validation, refit the best and report its test metric", run: tuneCommand})
}

// tuneCriteria map -criterion to tune's criteria.
var tuneCriteria = []string{"kfold", "split", "loo", "gcv"}

// tuneConfig is a validated `zonal tune` command line.
type tuneConfig struct {
	data        dataFlags
	train, test string
	split       float64
	standardize bool
	scale       float64
	task        solvers.Task
	kernel      string
	method      tune.Method
	loss        tune.Loss         // -loss squared|logistic
	intercept   solvers.Intercept // -intercept mean|fitted (logistic loss)
	mapName     tune.Map
	sparse      string            // -sparse auto|yes|no
	cells       int               // -method park
	partition   solvers.Partition // -method park
	sigmas      []float64         // nil: auto
	lambdas     []float64         // nil: auto
	sizes       []int             // nil: auto
	criterion   string            // -criterion value
	metric      metrics.Name
	folds       int
	validation  float64
	golden      int
	rows        int
	seed        uint64
	memory      int64
	workers     int
	model       string
	json        bool
	weights     weightFlags
}

// tuneResult is the -json object of `zonal tune`.
type tuneResult struct {
	Method      string        `json:"method"`
	Loss        string        `json:"loss"`
	Intercept   string        `json:"intercept"`
	Map         *string       `json:"map"`
	Kernel      string        `json:"kernel"`
	Criterion   string        `json:"criterion"`
	Folds       *int          `json:"folds"`
	Metric      string        `json:"metric"`           // what the best setting was chosen by
	Higher      bool          `json:"higher_is_better"` // the direction of Metric
	Task        string        `json:"task"`
	Standardize bool          `json:"standardize"`
	Seed        uint64        `json:"seed"`
	Backend     string        `json:"backend"`
	NTrain      int           `json:"n_train"`
	NTest       int           `json:"n_test"`
	D           int           `json:"d"`
	TuneRows    int           `json:"tune_rows"`
	Settings    []tuneRowJSON `json:"settings"`
	Best        tuneRowJSON   `json:"best"`
	Groups      int           `json:"groups"`
	TuneSeconds float64       `json:"tune_seconds"`
	RefitNote   string        `json:"refit_note,omitempty"`
	RefitSecs   float64       `json:"refit_seconds"`
	evaluation
}

// tuneOutcome is what runTune hands to reportTune.
type tuneOutcome struct {
	res        tuneResult
	table      *tune.Result
	modelSaved bool
}

func tuneCommand(ctx context.Context, e *env, args []string) error {
	cfg, err := parseTune(e.stderr, args)
	if err != nil {
		return err
	}
	out, err := runTune(ctx, e, cfg)
	if err != nil {
		return err
	}
	return reportTune(e.stdout, cfg, out)
}

// parseTune parses and validates the flags of `zonal tune`: the flags it
// shares with `zonal fit` (sharedFlags), and its grids.
func parseTune(stderr io.Writer, args []string) (tuneConfig, error) {
	var c tuneConfig
	var sh sharedFlags
	var sigmas, lambdas, centers, features string
	fs := newFlagSet("tune", tuneSynopsis, stderr)
	sh.register(fs)
	fs.StringVar(&features, "features", autoValue, "feature counts D of -method ridge: a comma-separated list, or auto (ceil(sqrt(n) ln n))")
	fs.StringVar(&centers, "centers", autoValue, "centre counts M of -method falkon (total over the cells for park): a comma-separated list, or auto (ceil(sqrt(n) ln n))")
	fs.StringVar(&sigmas, "sigmas", autoValue, "bandwidths: a comma-separated list, or auto (the median heuristic times 1/4, 1/2, 1, 2, 4)")
	fs.StringVar(&lambdas, "lambdas", autoValue, "ridge parameters (as in fit -lambda): a comma-separated list, or auto (1e-10, 1e-9, ..., 1e-1)")
	fs.StringVar(&c.criterion, "criterion", "kfold", "score of a setting: kfold (-folds K), split (one -validation hold-out), loo (closed-form leave-one-out) or gcv")
	fs.IntVar(&c.folds, "folds", 5, "k of k-fold cross-validation, at least 2")
	fs.TextVar(&c.metric, "metric", metrics.NameAuto, "what the search chooses by, from each setting's held-out predictions: auto (accuracy or rmse; logloss with -loss logistic), "+
		"accuracy, balanced_accuracy, auc, logloss or f1 (classification), rmse, mae or r2 (regression); not with -criterion gcv (see `zonal help tune`)")
	fs.Float64Var(&c.validation, "validation", 0.2, "fraction held out by -criterion split, in (0, 1)")
	fs.IntVar(&c.golden, "golden", 0, "golden-section search on log sigma with this many evaluations (at least 2) instead of the -sigmas grid (see `zonal help tune`)")
	fs.IntVar(&c.rows, "rows", 0, "tune on a seeded subsample of this many training rows (the refit uses all); 0 = all")
	intercept := fs.String("intercept", string(solvers.InterceptMean), "-loss logistic: the logits' constant, none (mean) or one fitted unpenalised per logit (fitted), in every fold's fit and the refit")
	if err := sh.parse(fs, args); err != nil {
		return c, err
	}
	c.data, c.train, c.test, c.split = sh.data, sh.train, sh.test, sh.split
	c.standardize = sh.standardizeMode() != estimator.StandardizeOff
	c.scale, c.kernel, c.sparse, c.cells = sh.scale, sh.kernel, sh.sparse, sh.cells
	c.seed, c.workers, c.model, c.json = sh.seed, sh.workers, sh.model, sh.json
	c.weights = sh.weights
	task, memory, method, mapName := sh.task, sh.memory, sh.method, sh.mapName
	var err error
	if c.intercept, err = solvers.ParseIntercept(*intercept); err != nil {
		return c, flagError(err)
	}
	if loss, err := estimator.ParseLoss(sh.loss); err != nil {
		return c, flagError(err)
	} else if c.loss, err = tune.ParseLoss(loss.String()); err != nil {
		return c, flagError(err)
	}
	if c.task, err = solvers.ParseTask(task); err != nil {
		return c, usageError{err}
	}
	if c.memory, err = parseBytes(memory); err != nil {
		return c, usageError{err}
	}
	if c.method, err = tune.ParseMethod(method); err != nil {
		return c, flagError(err)
	}
	if c.mapName, err = tune.ParseMap(mapName); err != nil {
		return c, flagError(err)
	}
	if c.loss == tune.LossLogistic {
		if c.method != tune.MethodFalkon {
			return c, usagef("-loss logistic is fitted by logistic FALKON: use -method falkon, not %s", c.method)
		}
		if c.criterion == "loo" || c.criterion == "gcv" {
			return c, usagef("-loss logistic is scored by -criterion kfold or split: the logistic fit has no closed-form %s", c.criterion)
		}
	}
	if k, err := lookupKernel(c.kernel); err != nil {
		return c, err
	} else if !k.bandwidth {
		return c, usagef("-kernel %s has no bandwidth to tune (gaussian, laplacian)", c.kernel)
	}
	if !slices.Contains(tuneCriteria, c.criterion) {
		return c, usagef("unknown -criterion %q (%s)", c.criterion, strings.Join(tuneCriteria, ", "))
	}
	if c.metric != metrics.NameAuto && c.criterion == "gcv" {
		return c, usagef("-metric %s: -criterion gcv scores every setting by the GCV criterion, not by a metric (use -criterion kfold, split or loo)", c.metric)
	}
	if c.sigmas, err = parseFloatList("sigmas", sigmas); err != nil {
		return c, err
	}
	if c.lambdas, err = parseFloatList("lambdas", lambdas); err != nil {
		return c, err
	}
	if c.method == tune.MethodParK {
		if c.partition, err = solvers.ParsePartition(sh.partition); err != nil {
			return c, flagError(err)
		}
		if c.criterion == "loo" || c.criterion == "gcv" {
			return c, usagef("-method park is scored by -criterion kfold or split (no closed-form %s for a partitioned model)", c.criterion)
		}
		if err := countAtLeast("cells", c.cells, 1); err != nil {
			return c, err
		}
	}
	switch c.method {
	case tune.MethodFalkon, tune.MethodParK:
		c.sizes, err = parseCountList("centers", centers)
	case tune.MethodRidge:
		c.sizes, err = parseCountList("features", features)
		if err == nil && c.mapName == tune.MapFourier {
			for _, D := range c.sizes {
				if D%2 != 0 {
					return c, usagef("-features %d: random Fourier features come in cos/sin pairs, give an even count", D)
				}
			}
		}
	}
	if err != nil {
		return c, err
	}
	if c.golden != 0 && c.golden < 2 {
		return c, usagef("-golden must be 0 (grid) or at least 2 evaluations, got %d", c.golden)
	}
	if c.golden > 0 && len(c.sigmas) == 1 {
		return c, usagef("-golden needs a bracket: give -sigmas lo,hi (or auto), not one value")
	}
	if c.criterion == "kfold" && (c.folds < 2 || c.folds > maxCount) {
		return c, usagef("-folds must be at least 2, got %d", c.folds)
	}
	if !(c.validation > 0 && c.validation < 1) {
		return c, usagef("-validation must be in (0, 1), got %g", c.validation)
	}
	if !(c.split > 0 && c.split < 1) {
		return c, usagef("-split must be in (0, 1), got %g", c.split)
	}
	if c.sparse != "auto" && c.sparse != "yes" && c.sparse != "no" {
		return c, usagef("-sparse %q: want auto, yes or no", c.sparse)
	}
	return c, countAtLeast("rows", c.rows, 0)
}

// parseFloatList parses "auto" (nil) or a comma-separated list of positive,
// finite numbers.
func parseFloatList(flagName, s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == autoValue {
		return nil, nil
	}
	if s == "" {
		return nil, usagef("-%s is empty: give auto or a comma-separated list of positive numbers", flagName)
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, usagef("-%s: %q is not a number (want auto or a comma-separated list of positive numbers)", flagName, f)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, usagef("-%s: every value must be positive and finite, got %g", flagName, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseCountList parses "auto" (nil) or a comma-separated list of counts >= 1.
func parseCountList(flagName, s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == autoValue {
		return nil, nil
	}
	if s == "" {
		return nil, usagef("-%s is empty: give auto or a comma-separated list of counts", flagName)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, usagef("-%s: %q is not a whole number", flagName, f)
		}
		if err := countAtLeast(flagName, v, 1); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// searchOptions are the tune options of c, reporting to progress.
func (c tuneConfig) searchOptions(be backend.Backend, progress zonal.ProgressFunc) tune.SearchOptions {
	o := tune.SearchOptions{
		Options: tune.Options{Backend: be, Progress: progress, MemoryBudget: c.memory},
		Method:  c.method, Loss: c.loss, Sigmas: c.sigmas, Lambdas: c.lambdas, Sizes: c.sizes,
		Task: c.task, Seed: c.seed, Rows: c.rows, Workers: c.workers, Metric: c.metric, Intercept: c.intercept,
	}
	if c.method == tune.MethodRidge {
		o.Map = c.mapName
	}
	if c.method == tune.MethodParK {
		o.Cells, o.Partition = c.cells, c.partition
	}
	name := c.kernel
	o.Kernel = func(sigma float64) (kernels.Kernel, error) {
		return newKernel(kernelParams{Name: name, Sigma: sigma})
	}
	switch c.criterion {
	case "kfold":
		o.Criterion, o.Folds = tune.CriterionCV, c.folds
	case "split":
		o.Criterion, o.Validation = tune.CriterionCV, c.validation
	case "loo":
		o.Criterion = tune.CriterionLOO
	case "gcv":
		o.Criterion = tune.CriterionGCV
	}
	return o
}

// runTune reads the data, searches the grid (or golden-section), refits the
// best setting on every training row, evaluates it on the test rows and
// writes the model.
func runTune(ctx context.Context, e *env, c tuneConfig) (*tuneOutcome, error) {
	if err := checkOutputPath("model", c.model); err != nil {
		return nil, err
	}
	be, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	train, test, weights, err := loadTrainTest(e, dataSpec{data: c.data, train: c.train, test: c.test, split: c.split, seed: c.seed, weights: c.weights})
	if err != nil {
		return nil, err
	}
	if err := keepOrDensify(e, c.sparse, train, test); err != nil {
		return nil, err
	}
	sparse := train.X == nil
	if sparse {
		if c.scale != 1 {
			return nil, usagef("-scale is not supported for sparse input (use -sparse no)")
		}
		if c.standardize {
			fmt.Fprintln(e.stderr, "standardize off for sparse input (centering would make every row dense)")
			c.standardize = false
		}
	}
	ntr, d := train.Dims()
	nte, _ := test.Dims()
	tuneRows := ntr
	if c.rows > 0 {
		tuneRows = min(ntr, c.rows)
	}
	for _, m := range c.sizes {
		if m > tuneRows {
			what := "-centers"
			if c.method == tune.MethodRidge {
				if c.mapName == tune.MapFourier {
					continue // Fourier features are not rows
				}
				what = "-features"
			}
			return nil, usagef("%s %d is more than the %d rows tuned on (Nystrom centres are training rows)", what, m, tuneRows)
		}
	}
	if c.task == solvers.TaskClassification {
		if _, err := estimator.Encoding(train.Y, c.task); err != nil {
			return nil, fmt.Errorf("%s: %w", c.train, err)
		}
	}
	enc, err := solvers.NewEncoding(train.Y, c.task)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.train, err)
	} else if err := c.metric.CheckTask(enc.Task == solvers.TaskClassification); err != nil {
		return nil, usagef("-metric %s does not apply to a %s task (classification: accuracy, balanced_accuracy, auc, logloss, f1; regression: rmse, mae, r2)", c.metric, enc.Task)
	} else if c.loss == tune.LossLogistic && enc.Task != solvers.TaskClassification {
		return nil, usagef("-loss logistic needs class labels, and %s reads as a %s target (give -task classification if its values are classes)", c.train, enc.Task)
	}
	// The row weights: -weights or -weight-column times -class-weight,
	// validated against the labels as estimator.Fit does.
	var classWeights []estimator.LabelWeight
	if weights, classWeights, err = estimator.RowWeights(train.Y, enc, weights, c.weights.cw); err != nil {
		return nil, flagError(err)
	}
	var st *dataset.Standardizer
	var xtr mat.Matrix = train.Sparse
	if !sparse {
		if st, err = estimator.InputScaler(train.X, c.scale, c.standardize); err != nil {
			return nil, err
		}
		xd, err := estimator.Scaled(st, train.X)
		if err != nil {
			return nil, err
		}
		if err := checkMagnitude(c.train, xd); err != nil {
			return nil, err
		}
		xtr = xd
	}
	progress := newTuneProgress(e.stderr)
	opts := c.searchOptions(be, progress.report)
	opts.Refit = true
	opts.Weights = weights
	y := mat.NewDense(ntr, 1, train.Y)
	var tr *tune.Result
	if c.golden > 0 {
		g := tune.GoldenOptions{SearchOptions: opts, Evaluations: c.golden}
		if len(c.sigmas) > 0 {
			g.Lo, g.Hi = slices.Min(c.sigmas), slices.Max(c.sigmas)
			g.Sigmas = nil
			if !(g.Lo < g.Hi) {
				return nil, usagef("-golden needs -sigmas with two different values for its bracket")
			}
		}
		tr, err = tune.Golden(ctx, xtr, y, g)
	} else {
		tr, err = tune.Search(ctx, xtr, y, opts)
	}
	if err != nil {
		return nil, err
	}
	refitSecs := time.Since(progress.start).Seconds() - tr.Elapsed.Seconds()
	var scaler *solvers.Scaler
	if st != nil {
		if scaler, err = solvers.NewScaler(st.Mean, st.Scale); err != nil {
			return nil, err
		}
	}
	pipe, err := solvers.NewPipeline(scaler, tr.Model.Encoding, tr.Model.Model)
	if err != nil {
		return nil, err
	}
	if weights != nil {
		// The model file records the weights of the refit (version 4).
		tw, err := estimator.TrainingWeights(weights, classWeights)
		if err == nil {
			pipe, err = pipe.WithWeights(tw)
		}
		if err != nil {
			return nil, err
		}
	}
	var xte mat.Matrix = test.X
	if sparse {
		xte = test.Sparse
	}
	_, ev, err := evaluate(pipe, xte, test.Y, thresholdFlag{})
	if err != nil {
		return nil, err
	}
	res := tuneResult{Method: tr.Method.String(), Loss: tr.Loss.String(), Intercept: c.intercept.String(), Kernel: c.kernel, Criterion: c.criterion, Metric: tr.Metric, Higher: tr.HigherIsBetter(),
		Task: tr.Encoding.Task.String(), Standardize: c.standardize, Seed: c.seed, Backend: be.Name(),
		NTrain: ntr, NTest: nte, D: d, TuneRows: tuneRows, Best: newTuneRowJSON(tr.Best), Groups: tr.Groups,
		TuneSeconds: tr.Elapsed.Seconds(), RefitNote: tr.RefitNote, RefitSecs: max(0, refitSecs)}
	if c.method == tune.MethodRidge {
		res.Map = ptr(c.mapName.String())
	}
	if c.criterion == "kfold" {
		res.Folds = &c.folds
	}
	res.evaluation = ev
	for _, r := range tr.Rows {
		res.Settings = append(res.Settings, newTuneRowJSON(r))
	}
	out := &tuneOutcome{res: res, table: tr}
	if c.model != "" {
		if err := saveModel(e, c.model, pipe); err != nil {
			return nil, err
		}
		out.modelSaved = true
	}
	return out, nil
}

// tuneRowJSON is one setting in -json: a score that is NaN (a lambda whose
// system could not be solved) is null, as JSON has no NaN.
type tuneRowJSON struct {
	tune.Setting
	Mean    *float64   `json:"mean"`
	Std     *float64   `json:"std"`
	Scores  []*float64 `json:"scores"`
	Seconds float64    `json:"seconds"`
}

func newTuneRowJSON(r tune.Row) tuneRowJSON {
	j := tuneRowJSON{Setting: r.Setting, Mean: finite(&r.Mean), Std: finite(&r.Std), Seconds: r.Seconds}
	for i := range r.Scores {
		j.Scores = append(j.Scores, finite(&r.Scores[i]))
	}
	return j
}

// reportTune prints the table and the refitted model's test metric, or one
// JSON object.
func reportTune(w io.Writer, c tuneConfig, out *tuneOutcome) error {
	res := out.res
	if c.json {
		return json.NewEncoder(w).Encode(res)
	}
	desc := res.Method
	if res.Loss == tune.LossLogistic.String() {
		desc += " (logistic loss)"
	}
	if res.Map != nil {
		desc += " on " + *res.Map + " features"
	}
	how := c.criterion
	if res.Folds != nil {
		how = fmt.Sprintf("%d-fold cross-validation", *res.Folds)
	}
	fmt.Fprintf(w, "tune %s, %s kernel, %s on %d of %d training rows (task %s, %d features), backend %s, chosen by %s\n",
		desc, c.kernel, how, res.TuneRows, res.NTrain, res.Task, res.D, res.Backend, res.Metric)
	if err := out.table.WriteTable(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d settings in %.3f s (%d kernel or feature matrices); refit on all %d rows %.3f s\n",
		len(res.Settings), res.TuneSeconds, res.Groups, res.NTrain, res.RefitSecs)
	if res.RefitNote != "" {
		fmt.Fprintf(w, "note: %s\n", res.RefitNote)
	}
	fmt.Fprintf(w, "on the %d test rows:\n", res.NTest)
	writeEvaluation(w, res.evaluation)
	if out.modelSaved {
		fmt.Fprintf(w, "model written to %s\n", c.model)
	}
	return nil
}

// tuneProgress prints one line on stderr per finished group of settings:
// settings done of the total and the best mean score so far.
type tuneProgress struct {
	w     io.Writer
	start time.Time
}

func newTuneProgress(w io.Writer) *tuneProgress { return &tuneProgress{w: w, start: time.Now()} }

func (p *tuneProgress) report(pr zonal.Progress) {
	best := "-"
	if !math.IsNaN(pr.Residual) {
		best = fmt.Sprintf("%.6g", pr.Residual)
	}
	fmt.Fprintf(p.w, "tune: %d/%d settings, best so far %s, %.1f s\n", pr.Done, pr.Total, best, time.Since(p.start).Seconds())
}

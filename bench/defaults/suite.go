package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// The two runs of the suite.
const (
	runDefaults = "defaults"
	runTune     = "tune"
)

// variants are the runs that fit the defaults with one rule of the
// estimator's policy replaced by a fixed choice: how the suite checks that
// each rule helps on data it was not shaped on (the synthetic sets). The
// defaults should be within margin of the best of them.
var variants = []struct {
	Run  string
	Doc  string
	Opts estimator.Options
}{
	{"defaults-mean", "Intercept mean (no fitted intercept)", estimator.Options{Intercept: estimator.InterceptMean}},
	{"defaults-fitted", "Intercept fitted", estimator.Options{Intercept: estimator.InterceptFitted}},
	{"defaults-std", "Standardize on", estimator.Options{Standardize: estimator.StandardizeOn}},
	{"defaults-raw", "Standardize off", estimator.Options{Standardize: estimator.StandardizeOff}},
}

// partitions are the runs that compare ParK's two partition rules on the
// suite (issue 25: which should be the default): the defaults with method
// ParK and the partition fixed, everything else (Q = 4 cells, sigma,
// lambda, centres) chosen as the defaults choose it.
var partitions = []struct {
	Run  string
	Doc  string
	Opts estimator.Options
}{
	{"park-kmeans", "method ParK, kernel k-means++ partition", estimator.Options{Method: estimator.MethodParK, Partition: solvers.PartitionKMeans}},
	{"park-greedy", "method ParK, the paper's greedy partition", estimator.Options{Method: estimator.MethodParK, Partition: solvers.PartitionGreedy}},
}

// variantRuns is the run names of variants, in order.
func variantRuns() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.Run
	}
	return out
}

// partitionRuns is the run names of partitions, in order.
func partitionRuns() []string {
	out := make([]string, len(partitions))
	for i, v := range partitions {
		out[i] = v.Run
	}
	return out
}

// fixedOpts is the options of a variant or partition run.
func fixedOpts(run string) estimator.Options {
	if i := slices.Index(variantRuns(), run); i >= 0 {
		return variants[i].Opts
	}
	return partitions[slices.Index(partitionRuns(), run)].Opts
}

// config is one invocation of the suite.
type config struct {
	Sets []dataSet
	// Runs says which runs to do (runDefaults, runTune).
	Runs map[string]bool
	// Splits is the number of seeded splits (seeds 1..Splits) of a set
	// with fewer than SmallRows rows; larger sets get one split (seed 1),
	// sets with their own test file their own test rows.
	Splits, SmallRows int
	// TuneAbove and TuneRows: the tune run tunes on a seeded subsample of
	// TuneRows rows of a training set of more than TuneAbove rows (and
	// refits on all of them).
	TuneAbove, TuneRows int
	// TuneInputs are the input transforms the tune run searches for a
	// dense set ("std": standardized on the training rows, "raw"); the best
	// CV score among them is kept. Sparse sets are searched raw only.
	TuneInputs []string
	// DumpDir, when set, receives one NAME.json per set with the rows of
	// every split and the grid, for sklearn_defaults.py.
	DumpDir string
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// Default values of the flags.
const (
	defaultSplits    = 5
	defaultSmallRows = 5000
	defaultTuneAbove = 50000
	defaultTuneRows  = 10000
)

// record is one run on one split: a JSON line of the output file.
type record struct {
	Set       string `json:"set"`
	Task      string `json:"task"` // the data README's task
	Run       string `json:"run"`  // "defaults" or "tune"
	Seed      uint64 `json:"seed"`
	TrainRows int    `json:"train_rows"`
	TestRows  int    `json:"test_rows"`
	Cols      int    `json:"cols"`
	// Metric is "accuracy" or "rmse", Score its value on the test rows;
	// AUC is the ROC AUC of the one output score (binary sets only).
	Metric string   `json:"metric"`
	Score  float64  `json:"score"`
	AUC    *float64 `json:"auc,omitempty"`
	// Seconds is the whole run (defaults: Report.Seconds; tune: every
	// search and refit), ChooseSeconds the part that chose the settings
	// (defaults: Report.Chosen.TuneSeconds; tune: the searches without
	// their refits).
	Seconds       float64 `json:"seconds"`
	ChooseSeconds float64 `json:"choose_seconds"`
	// The model's settings.
	Method      string  `json:"method"`
	Sigma       float64 `json:"sigma"`
	Lambda      float64 `json:"lambda"`
	Centers     int     `json:"centers"`
	Standardize bool    `json:"standardize"`
	// FitTask is the task the model was fitted as (defaults: read from
	// the labels by estimator.Fit).
	FitTask string `json:"fit_task"`
	// Chosen is the defaults run's estimator.Report.Chosen.
	Chosen *estimator.Chosen `json:"chosen,omitempty"`
	// CG of a FALKON model: iterations, the last relative residual of its
	// history and whether every column met the tolerance.
	CGIterations *int     `json:"cg_iterations,omitempty"`
	CGResidual   *float64 `json:"cg_residual,omitempty"`
	CGConverged  *bool    `json:"cg_converged,omitempty"`
	// CGSolved is estimator.Report.Solved (converged, or stalled below
	// estimator.SolveFloor), CGCondition the solve's condition estimate
	// (solvers.Diagnostics.Condition; 0 when unknown).
	CGSolved    *bool   `json:"cg_solved,omitempty"`
	CGCondition float64 `json:"cg_condition,omitempty"`
	// The tune run's search: rows tuned on, the CV metric and best mean
	// score, and a note when the refit is not FALKON.
	TuneRows  int     `json:"tune_rows,omitempty"`
	CVMetric  string  `json:"cv_metric,omitempty"`
	CVScore   float64 `json:"cv_score,omitempty"`
	RefitNote string  `json:"refit_note,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// finite replaces a NaN or infinite number of r (which JSON cannot hold)
// by 0 and says so in r.Error, so one odd fit cannot end the suite.
func (r *record) finite() {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"score", &r.Score}, {"seconds", &r.Seconds}, {"choose_seconds", &r.ChooseSeconds}, {"sigma", &r.Sigma},
		{"lambda", &r.Lambda}, {"cv_score", &r.CVScore}, {"auc", r.AUC}, {"cg_residual", r.CGResidual}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			r.Error = strings.TrimPrefix(r.Error+fmt.Sprintf("; %s was %g", f.name, *f.v), "; ")
			*f.v = 0
		}
	}
}

// split is one train/test partition of a set; Own says the test rows
// are the set's own test file (Train then is every row of the first).
type split struct {
	Seed        uint64
	Train, Test []int
	Own         bool
}

// runSuite runs cfg, writing each record as a JSON line to jsonl as soon
// as it is made (a crash keeps what was done), and returns the records.
// A set that cannot be read or a fit that fails is recorded with its
// error and the suite goes on; only a write error or the context ends it.
func runSuite(ctx context.Context, cfg config, jsonl io.Writer) ([]record, error) {
	enc := json.NewEncoder(jsonl)
	var all []record
	emit := func(r record) error {
		r.finite()
		all = append(all, r)
		if cfg.Log != nil {
			msg := fmt.Sprintf("%s = %.4g in %.2f s", r.Metric, r.Score, r.Seconds)
			if r.Error != "" {
				msg = "error: " + r.Error
			}
			fmt.Fprintf(cfg.Log, "%s seed %d %s: %s\n", r.Set, r.Seed, r.Run, msg)
		}
		return enc.Encode(r)
	}
	for _, ds := range cfg.Sets {
		if err := ctx.Err(); err != nil {
			return all, err
		}
		if err := runSet(ctx, cfg, ds, emit); err != nil {
			return all, err
		}
	}
	return all, nil
}

// runSet runs every split of one set; the error is a write error or the
// context's (failures of the set itself are records).
func runSet(ctx context.Context, cfg config, ds dataSet, emit func(record) error) error {
	fail := func(err error) error {
		return emit(record{Set: ds.Name, Task: ds.Task.String(), Run: "load", Error: err.Error()})
	}
	for _, f := range ds.files {
		if _, err := os.Stat(f); err != nil {
			return fail(fmt.Errorf("skipped: %w", err))
		}
	}
	rows, test, err := ds.load()
	if err != nil {
		return fail(err)
	}
	splits := splitsOf(rows, test, ds.Task, cfg)
	if cfg.DumpDir != "" {
		if err := dumpSplits(cfg, ds, rows, test, splits); err != nil {
			return fail(fmt.Errorf("dumping the splits: %w", err))
		}
	}
	for _, sp := range splits {
		tr, te, err := partition(rows, test, sp)
		if err != nil {
			return fail(err)
		}
		for _, run := range slices.Concat([]string{runDefaults, runTune}, variantRuns(), partitionRuns()) {
			if !cfg.Runs[run] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			var r record
			switch run {
			case runDefaults:
				r = fitDefaults(ctx, ds, run, sp.Seed, tr, te, estimator.Options{})
			case runTune:
				r = fitTuned(ctx, cfg, ds, sp.Seed, tr, te)
			default:
				r = fitDefaults(ctx, ds, run, sp.Seed, tr, te, fixedOpts(run))
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// splitsOf returns the splits of a set: its own test file, else
// cfg.Splits stratified 80/20 splits (seeds 1..Splits) below
// cfg.SmallRows rows and one (seed 1) from there on.
func splitsOf(rows, test *dataset.Data, task solvers.Task, cfg config) []split {
	n, _ := rows.Dims()
	if test != nil {
		m, _ := test.Dims()
		return []split{{Seed: 1, Train: iota(n), Test: iota(m), Own: true}}
	}
	k := 1
	if n < cfg.SmallRows {
		k = cfg.Splits
	}
	out := make([]split, k)
	for i := range out {
		seed := uint64(i + 1)
		tr, te := stratifiedSplit(rows.Y, task, trainFraction, seed)
		out[i] = split{Seed: seed, Train: tr, Test: te}
	}
	return out
}

func iota(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// partition returns the training and test rows of sp.
func partition(rows, test *dataset.Data, sp split) (tr, te *dataset.Data, err error) {
	if sp.Own {
		return rows, test, nil
	}
	if tr, err = rows.Subset(sp.Train); err != nil {
		return nil, nil, err
	}
	te, err = rows.Subset(sp.Test)
	return tr, te, err
}

// base is the part of a record every run fills in.
func base(ds dataSet, run string, seed uint64, tr, te *dataset.Data) record {
	ntr, d := tr.Dims()
	nte, _ := te.Dims()
	r := record{Set: ds.Name, Task: ds.Task.String(), Run: run, Seed: seed, TrainRows: ntr, TestRows: nte, Cols: d, Metric: "rmse"}
	if ds.Task == solvers.TaskClassification {
		r.Metric = "accuracy"
	}
	return r
}

// fitDefaults is the defaults run: estimator.Fit with nothing but the
// seed, which is what `zonal fit` does without flags; or, for a variant
// run, with the variant's options (opts, the seed added).
func fitDefaults(ctx context.Context, ds dataSet, run string, seed uint64, tr, te *dataset.Data, opts estimator.Options) record {
	r := base(ds, run, seed, tr, te)
	opts.Seed = seed
	pipe, rep, err := estimator.Fit(ctx, tr.Matrix(), tr.Y, opts)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Seconds, r.ChooseSeconds = rep.Seconds, rep.Chosen.TuneSeconds
	r.Method, r.Sigma, r.Lambda, r.Centers, r.Standardize = rep.Method.String(), rep.Kernel.Sigma, rep.Lambda, rep.Centers, rep.Standardize
	r.FitTask, r.Chosen = rep.Task.String(), &rep.Chosen
	r.CGIterations, r.CGResidual, r.CGConverged = cgOf(pipe.Model)
	if d := rep.Diagnostics; d.Known() {
		solved := rep.Solved
		r.CGSolved, r.CGCondition = &solved, d.Condition
		if r.CGIterations != nil {
			it, res := d.Iterations, d.Residual
			r.CGIterations, r.CGResidual = &it, &res
		}
	}
	if err := r.evaluate(pipe, te.Matrix(), te.Y, ds.Task); err != nil {
		r.Error = err.Error()
	}
	return r
}

// cgOf returns a FALKON model's CG report (nils for other models); the
// defaults run replaces the iterations and residual with the estimator's
// Diagnostics (the true final residual of the returned iterate).
func cgOf(m solvers.Model) (*int, *float64, *bool) {
	c, ok := m.(interface{ CG() solvers.CGResult })
	if !ok {
		return nil, nil, nil
	}
	res := c.CG()
	it, conv := res.Iterations, res.Converged
	var resid *float64
	if len(res.History) > 0 {
		v := res.History[len(res.History)-1]
		resid = &v
	}
	return &it, resid, &conv
}

// fitTuned is the tune run: the best setting of 5-fold CV over tune's
// default FALKON grid (median heuristic sigma times 2^-2..2^2, lambda
// 1e-10..1e-1, AutoCenters centres), searched on each input transform of
// cfg.TuneInputs, the best CV score kept and its refit on all training
// rows scored on the test rows.
func fitTuned(ctx context.Context, cfg config, ds dataSet, seed uint64, tr, te *dataset.Data) record {
	r := base(ds, runTune, seed, tr, te)
	r.Method = "falkon"
	start := time.Now()
	var (
		best    *tune.Result
		bestStd bool
		bestX   mat.Matrix
	)
	var errs []error
	for _, in := range inputsOf(cfg, ds) {
		std := in == "std"
		xtr, xte, err := prepared(tr, te, std)
		if err == nil {
			var res *tune.Result
			res, err = tune.Search(ctx, xtr, mat.NewDense(len(tr.Y), 1, slices.Clone(tr.Y)), tuneOptions(cfg, ds, seed, len(tr.Y)))
			if err == nil {
				r.ChooseSeconds += res.Elapsed.Seconds()
				if best == nil || better(res, res.Best.Mean, best.Best.Mean) {
					best, bestStd, bestX = res, std, xte
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s inputs: %w", in, err))
		}
	}
	r.Seconds = time.Since(start).Seconds()
	if best == nil {
		r.Error = errors.Join(errs...).Error()
		return r
	}
	r.Sigma, r.Lambda, r.Centers, r.Standardize = best.Best.Sigma, best.Best.Lambda, best.Best.Size, bestStd
	r.FitTask, r.CVMetric, r.CVScore, r.RefitNote = best.Encoding.Task.String(), best.Metric, best.Best.Mean, best.RefitNote
	if o := tuneOptions(cfg, ds, seed, len(tr.Y)); o.Rows > 0 {
		r.TuneRows = o.Rows
	} else {
		r.TuneRows = len(tr.Y)
	}
	r.CGIterations, r.CGResidual, r.CGConverged = cgOf(best.Model.Model)
	if err := r.evaluate(best.Model, bestX, te.Y, ds.Task); err != nil {
		r.Error = err.Error()
	}
	return r
}

// better reports whether score a beats b in res's metric.
func better(res *tune.Result, a, b float64) bool {
	if res.HigherIsBetter() {
		return a > b
	}
	return a < b
}

// inputsOf returns the input transforms the tune run searches on ds.
func inputsOf(cfg config, ds dataSet) []string {
	if ds.Sparse {
		return []string{"raw"} // centring would make every row dense
	}
	return cfg.TuneInputs
}

// tuneOptions are the tune.Search options of the tune run on n training
// rows: FALKON, tune's default grids and 5 folds, the set's task, refit
// on all rows; above cfg.TuneAbove rows tuned on cfg.TuneRows of them.
func tuneOptions(cfg config, ds dataSet, seed uint64, n int) tune.SearchOptions {
	o := tune.SearchOptions{Method: tune.MethodFalkon, Folds: 5, Task: ds.Task, Seed: seed, Refit: true}
	if n > cfg.TuneAbove && cfg.TuneRows < n {
		o.Rows = cfg.TuneRows
	}
	return o
}

// prepared returns the training and test rows as the tune run sees them:
// standardized with the training rows' means and standard deviations
// (std, dense rows only), else as read.
func prepared(tr, te *dataset.Data, std bool) (xtr, xte mat.Matrix, err error) {
	if !std || tr.X == nil {
		return tr.Matrix(), te.Matrix(), nil
	}
	st, err := dataset.FitStandardizer(tr.X)
	if err != nil {
		return nil, nil, err
	}
	a, b := mat.DenseCopyOf(tr.X), mat.DenseCopyOf(te.X)
	if err := st.Apply(a); err != nil {
		return nil, nil, err
	}
	if err := st.Apply(b); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// evaluate scores pipe on the test rows x, y: accuracy or RMSE by the
// set's task, and for two classes the ROC AUC of the model's one output
// (the class-1 score, larger meaning class 1).
func (r *record) evaluate(pipe *solvers.Pipeline, x mat.Matrix, y []float64, task solvers.Task) error {
	n := len(y)
	pred := make([]float64, n)
	if err := pipe.PredictLabels(pred, x); err != nil {
		return err
	}
	var err error
	if task == solvers.TaskClassification {
		r.Score, err = metrics.Accuracy(pred, y, nil)
	} else {
		r.Score, err = metrics.RMSE(pred, y, nil)
	}
	if err != nil || task != solvers.TaskClassification || distinct(y) != 2 || pipe.Outputs() != 1 {
		return err
	}
	out := mat.NewDense(n, 1, nil)
	if err := pipe.PredictOutputs(out, x); err != nil {
		return err
	}
	auc, err := metrics.ROCAUC(out.RawMatrix().Data, y, nil)
	if err == nil && !math.IsNaN(auc) {
		r.AUC = &auc
	}
	return err
}

func distinct(y []float64) int {
	s := slices.Clone(y)
	slices.Sort(s)
	return len(slices.Compact(s))
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/bench/internal/benchsplit"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// trainFraction is the share of rows every set trains on (80/20 splits).
const trainFraction = 0.8

// minPrecision is the precision of the recall-at-precision metric.
const minPrecision = 0.9

// The models fitted on every set; the balanced ones on the synthetic set
// only. sklearn_probs.py uses the first two names for its counterparts.
const (
	modelLogistic           = "logistic"
	modelCalibrated         = "calibrated"
	modelLogisticBalanced   = "logistic_balanced"
	modelCalibratedBalanced = "calibrated_balanced"
)

// model is one fit of a set: its name and the estimator options.
type model struct {
	Name string
	Opts estimator.Options
}

// modelsOf returns the fits of a set: logistic FALKON (with the logistic
// intercept ic, -logistic-intercept) and the default calibrated
// squared-loss classifier, and on the synthetic set both again with
// ClassWeight balanced; only those named in only (-models; nil: all).
// Everything else is estimator's default.
func modelsOf(set string, seed uint64, ic estimator.Intercept, only []string) []model {
	ms := []model{
		{modelLogistic, estimator.Options{Loss: estimator.LossLogistic, Intercept: ic, Seed: seed}},
		{modelCalibrated, estimator.Options{Seed: seed}},
	}
	if set == synthName {
		bal := estimator.ClassWeight{Balanced: true}
		ms = append(ms,
			model{modelLogisticBalanced, estimator.Options{Loss: estimator.LossLogistic, Intercept: ic, ClassWeight: bal, Seed: seed}},
			model{modelCalibratedBalanced, estimator.Options{ClassWeight: bal, Seed: seed}})
	}
	if only != nil {
		ms = slices.DeleteFunc(ms, func(m model) bool { return !slices.Contains(only, m.Name) })
	}
	return ms
}

// record is one fit on one set: a JSON line of the output file.
type record struct {
	Set       string `json:"set"`
	Model     string `json:"model"`
	Seed      uint64 `json:"seed"`
	TrainRows int    `json:"train_rows"`
	TestRows  int    `json:"test_rows"`
	Cols      int    `json:"cols"`
	// PositiveRate is the share of positive (larger-label) test rows.
	PositiveRate float64 `json:"positive_rate"`
	// Test metrics of the positive class's probability: ROC AUC, log-loss,
	// Brier score, the accuracy of the pipeline's labels, and the recall at
	// 90% precision (metrics.RecallAtPrecision).
	AUC         float64 `json:"auc"`
	LogLoss     float64 `json:"log_loss"`
	Brier       float64 `json:"brier"`
	Accuracy    float64 `json:"accuracy"`
	RecallAtP90 float64 `json:"recall_at_p90"`
	// Seconds is the wall time of estimator.Fit (Report.Seconds: choosing
	// sigma and lambda, the fit and the calibration), CalibrationSeconds
	// the calibration's part.
	Seconds            float64 `json:"seconds"`
	CalibrationSeconds float64 `json:"calibration_seconds"`
	// The fitted model's settings.
	Centers     int     `json:"centers"`
	Sigma       float64 `json:"sigma"`
	Lambda      float64 `json:"lambda"`
	Standardize bool    `json:"standardize"`
	Calibration string  `json:"calibration"`
	// CalibrationPlatt and CalibrationIsotonic are the cross-validated
	// log-losses on the out-of-fold scores the automatic calibration
	// chose by (estimator.Chosen; absent for the logistic models).
	CalibrationPlatt    float64 `json:"calibration_platt_logloss,omitempty"`
	CalibrationIsotonic float64 `json:"calibration_isotonic_logloss,omitempty"`
	Intercept           string  `json:"intercept"`
	// TuneScore is the tuning score of the chosen setting (the logistic
	// models: the held-out log-loss of the chosen lambda), and the Newton
	// steps and CG iterations of choosing (estimator.Chosen) and of the
	// final fit (Report.Diagnostics): the fit's cost, counted.
	TuneScore        float64 `json:"tune_score"`
	TuneNewtonSteps  int     `json:"tune_newton_steps"`
	TuneCGIterations int     `json:"tune_cg_iterations"`
	NewtonSteps      int     `json:"newton_steps"`
	CGIterations     int     `json:"cg_iterations"`
	Solved           bool    `json:"solved"`
	Weighted         bool    `json:"weighted"`
	Error            string  `json:"error,omitempty"`
}

// run fits every set of cfg, writing each record as a JSON line to out as
// soon as it is made, and the table to w. A set that cannot be read or a
// fit that fails is recorded with its error and the run goes on.
func run(ctx context.Context, cfg config, out string, w io.Writer) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	var recs []record
	for _, set := range cfg.Sets {
		if err = ctx.Err(); err != nil {
			break
		}
		var rs []record
		rs, err = runSet(ctx, cfg, set)
		for _, r := range rs {
			if cfg.Log != nil {
				fmt.Fprintf(cfg.Log, "%s %s: %s\n", r.Set, r.Model, r.line())
			}
			if e := enc.Encode(r); e != nil && err == nil {
				err = e
			}
		}
		recs = append(recs, rs...)
		if err != nil {
			break
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if werr := writeTable(w, recs); err == nil {
		err = werr
	}
	return err
}

// line is a record's progress line.
func (r record) line() string {
	if r.Error != "" {
		return "error: " + r.Error
	}
	return fmt.Sprintf("AUC %.4f, log-loss %.4f, %d centres, %.2f s", r.AUC, r.LogLoss, r.Centers, r.Seconds)
}

// loadSet returns the rows of a set and, for a shared set, the file read.
func loadSet(cfg config, set string) (*dataset.Data, string, error) {
	if set == synthName {
		d, err := synthetic(cfg.Synth, cfg.Seed)
		return d, "", err
	}
	path := filepath.Join(cfg.Data, set+".csv.gz")
	d, err := dataset.ReadFile(path, dataset.Options{})
	return d, path, err
}

// runSet splits one set and fits its models. The error is the context's
// or a dump's; a set's own failures are records.
func runSet(ctx context.Context, cfg config, set string) ([]record, error) {
	rows, path, err := loadSet(cfg, set)
	if err == nil && distinct(rows.Y) != 2 {
		err = fmt.Errorf("%s has %d classes, want 2", set, distinct(rows.Y))
	}
	var keep []int // the file's rows kept (-positive-rate; nil: all)
	if err == nil && cfg.PositiveRate > 0 && path != "" {
		set = fmt.Sprintf("%s_pos%g", set, cfg.PositiveRate)
		if keep, err = fewerPositives(rows.Y, cfg.PositiveRate, cfg.Seed); err == nil {
			rows, err = rows.Subset(keep)
		}
	}
	if err != nil {
		return []record{{Set: set, Model: "load", Seed: cfg.Seed, Error: err.Error()}}, nil
	}
	trIdx, teIdx := benchsplit.Stratified(rows.Y, trainFraction, cfg.Seed)
	tr, err := rows.Subset(trIdx)
	var te *dataset.Data
	if err == nil {
		te, err = rows.Subset(teIdx)
	}
	if err != nil {
		return []record{{Set: set, Model: "split", Seed: cfg.Seed, Error: err.Error()}}, nil
	}
	var (
		recs  []record
		reps  = map[string]*estimator.Report{}
		proba = probaFile{Tool: "zonal", Set: set, Y: te.Y, Proba: map[string][]float64{}}
	)
	for _, m := range modelsOf(set, cfg.Seed, cfg.Intercept, cfg.Models) {
		r, rep, p := fitOne(ctx, set, m, tr, te)
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		recs = append(recs, r)
		if r.Error == "" {
			reps[m.Name], proba.Proba[m.Name] = rep, p
		}
	}
	if cfg.Dump == "" {
		return recs, nil
	}
	if err := os.MkdirAll(cfg.Dump, 0o755); err != nil {
		return recs, err
	}
	if err := writeJSON(filepath.Join(cfg.Dump, set+".zonal_proba.json"), proba); err != nil {
		return recs, err
	}
	if path == "" {
		return recs, nil // the synthetic set has no file for scikit-learn
	}
	fileRows := func(idx []int) []int { // indices into the file's rows
		if keep == nil {
			return idx
		}
		out := make([]int, len(idx))
		for i, j := range idx {
			out[i] = keep[j]
		}
		return out
	}
	d, err := newDump(set, path, cfg.Seed, fileRows(trIdx), fileRows(teIdx), reps)
	if err != nil {
		return recs, err
	}
	return recs, writeJSON(filepath.Join(cfg.Dump, set+".json"), d)
}

// fitOne fits m on tr and scores it on te; it returns the record, the
// fit's report and the positive class's test probabilities (nil report
// and probabilities when the record has an error).
func fitOne(ctx context.Context, set string, m model, tr, te *dataset.Data) (record, *estimator.Report, []float64) {
	ntr, d := tr.Dims()
	nte, _ := te.Dims()
	r := record{Set: set, Model: m.Name, Seed: m.Opts.Seed, TrainRows: ntr, TestRows: nte, Cols: d}
	fail := func(err error) (record, *estimator.Report, []float64) {
		r.Error = err.Error()
		return r, nil, nil
	}
	start := time.Now()
	pipe, rep, err := estimator.Fit(ctx, tr.Matrix(), tr.Y, m.Opts)
	if err != nil {
		return fail(err)
	}
	wall := time.Since(start).Seconds()
	r.Seconds, r.CalibrationSeconds = rep.Seconds, rep.CalibrationSeconds
	if r.Seconds <= 0 {
		r.Seconds = wall
	}
	r.Centers, r.Sigma, r.Lambda, r.Standardize = rep.Centers, rep.Kernel.Sigma, rep.Lambda, rep.Standardize
	r.Calibration, r.Solved, r.Weighted, r.Intercept = rep.Calibration.String(), rep.Solved, rep.Weighted, rep.Intercept.String()
	r.CalibrationPlatt, r.CalibrationIsotonic = rep.Chosen.CalibrationPlatt, rep.Chosen.CalibrationIsotonic
	r.TuneScore, r.TuneNewtonSteps, r.TuneCGIterations = rep.Chosen.TuneScore, rep.Chosen.TuneNewtonSteps, rep.Chosen.TuneCGIterations
	r.NewtonSteps, r.CGIterations = rep.Diagnostics.NewtonSteps, rep.Diagnostics.Iterations
	if m.Opts.Loss == estimator.LossLogistic {
		r.Calibration = "logits"
	}
	p, err := scoreOne(&r, pipe, te)
	if err != nil {
		return fail(err)
	}
	return r, rep, p
}

// scoreOne fills r's test metrics from pipe's predictions on te and
// returns the positive class's probabilities.
func scoreOne(r *record, pipe *solvers.Pipeline, te *dataset.Data) ([]float64, error) {
	n := len(te.Y)
	if pipe.Classes() != 2 {
		return nil, fmt.Errorf("the pipeline has %d classes, want 2", pipe.Classes())
	}
	pr := mat.NewDense(n, 2, nil)
	if err := pipe.PredictProba(pr, te.Matrix()); err != nil {
		return nil, err
	}
	p := mat.Col(nil, 1, pr) // the larger label's column (Encoding.Classes is sorted)
	pred := make([]float64, n)
	if err := pipe.PredictLabels(pred, te.Matrix()); err != nil {
		return nil, err
	}
	pos := pipe.Encoding.Classes[1]
	for _, v := range te.Y {
		if v == pos {
			r.PositiveRate++
		}
	}
	r.PositiveRate /= float64(n)
	var err error
	steps := []func() error{
		func() error { r.AUC, err = metrics.ROCAUC(p, te.Y, nil); return err },
		func() error { r.LogLoss, err = metrics.BinaryLogLoss(p, te.Y, nil); return err },
		func() error { r.Brier, err = metrics.BinaryBrier(p, te.Y, nil); return err },
		func() error { r.Accuracy, err = metrics.Accuracy(pred, te.Y, nil); return err },
		func() error {
			r.RecallAtP90, _, err = metrics.RecallAtPrecision(p, te.Y, nil, minPrecision)
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	for _, v := range []float64{r.AUC, r.LogLoss, r.Brier, r.Accuracy, r.RecallAtP90, r.Seconds, r.Sigma, r.Lambda} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("a metric or setting is %g", v)
		}
	}
	return p, nil
}

// distinct is the number of distinct values of y.
func distinct(y []float64) int {
	seen := map[float64]bool{}
	for _, v := range y {
		seen[v] = true
	}
	return len(seen)
}

// fewerPositives is the rows kept of a binary set to bring its positive
// (larger) label to the share rate of them (-positive-rate): every
// negative row and a seeded random subset of the positive rows, in the
// file's order. rate must be positive and below the set's own share.
func fewerPositives(y []float64, rate float64, seed uint64) ([]int, error) {
	pos := slices.Max(y)
	var p, keep []int
	for i, v := range y {
		if v == pos {
			p = append(p, i)
		} else {
			keep = append(keep, i)
		}
	}
	neg := len(keep)
	want := int(math.Round(rate / (1 - rate) * float64(neg)))
	if !(rate > 0 && rate < 1) || want >= len(p) || want < 2 {
		return nil, fmt.Errorf("%w: -positive-rate %g: the set has %d positive and %d negative rows, so %d positives would be kept (want at least 2 and fewer than it has)",
			zonal.ErrParam, rate, len(p), neg, want)
	}
	rng := rand.New(rand.NewPCG(seed, 0x706f73))
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	keep = append(keep, p[:want]...)
	slices.Sort(keep)
	return keep, nil
}

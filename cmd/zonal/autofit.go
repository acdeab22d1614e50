package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// Values of -sigma, -lambda and -centers that ask `zonal fit` to choose.
const (
	autoValue  = "auto"
	scaleValue = "scale" // -sigma only: scikit-learn's gamma = 'scale'
)

// parseAutoFloat parses a flag that takes "auto" (and the extra words given)
// or a number: it returns the word, or "" and the number. The number is
// checked by the caller.
func parseAutoFloat(flagName, s string, words ...string) (string, float64, error) {
	s = strings.TrimSpace(s)
	if s == autoValue {
		return s, 0, nil
	}
	for _, w := range words {
		if s == w {
			return s, 0, nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		want := append([]string{autoValue}, words...)
		return "", 0, usagef("-%s %q: want %s or a number", flagName, s, strings.Join(want, ", "))
	}
	return "", v, nil
}

// parseAutoCount parses "auto" (0) or a count >= 1.
func parseAutoCount(flagName, s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == autoValue {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, usagef("-%s %q: want auto or a whole number", flagName, s)
	}
	return v, countAtLeast(flagName, v, 1)
}

// fitChoices says how `zonal fit` chose the values it was not given (the
// -json "chosen" object; a field is empty when the flag gave the value).
type fitChoices struct {
	Sigma   string `json:"sigma,omitempty"`
	Lambda  string `json:"lambda,omitempty"`
	Centers string `json:"centers,omitempty"`
	// TuneRows is the number of training rows lambda was chosen on, and
	// TuneSeconds the time it took (0 when lambda was given).
	TuneRows    int     `json:"tune_rows,omitempty"`
	TuneSeconds float64 `json:"tune_seconds"`
	// Standardize says how the default -standardize was settled (the
	// raw features tuned too, the better kept).
	Standardize string `json:"standardize,omitempty"`
	// TuneMetric and TuneScore are the tuner's score of the chosen setting
	// (on the tuning rows; "" and 0 when lambda was given).
	TuneMetric string  `json:"tune_metric,omitempty"`
	TuneScore  float64 `json:"tune_score,omitempty"`
}

// rawMargin is how much lower (relatively) the tuning loss of the raw
// features must be for them to replace the standardized ones: on a few
// hundred rows leave-one-out scores differ by noise at this level.
const rawMargin = 0.05

// clearlyBeats reports whether f's tuning loss (the error rate 1 - accuracy,
// or the RMSE) is below (1 - rawMargin) times g's.
func (f fitChoices) clearlyBeats(g fitChoices) bool {
	lf, lg := f.TuneScore, g.TuneScore
	if f.TuneMetric == "accuracy" {
		lf, lg = 1-lf, 1-lg
	}
	return lf < (1-rawMargin)*lg
}

// line is the "chose ..." line of the text report, "" when nothing was chosen.
func (f fitChoices) line(c fitConfig) string {
	var parts []string
	if f.Sigma != "" {
		parts = append(parts, fmt.Sprintf("sigma %.3g (%s)", c.kernel.Sigma, f.Sigma))
	}
	if f.Lambda != "" {
		parts = append(parts, fmt.Sprintf("lambda %.3g (%s)", c.lambda, f.Lambda))
	}
	if f.Centers != "" {
		parts = append(parts, fmt.Sprintf("centres %d (%s)", c.centers, f.Centers))
	}
	if f.Standardize != "" {
		parts = append(parts, fmt.Sprintf("standardize %v (%s)", c.standardize, f.Standardize))
	}
	if len(parts) == 0 {
		return ""
	}
	return "chose " + strings.Join(parts, ", ")
}

// The bracket and evaluations of the golden-section search on log sigma when
// -sigma and -lambda are both auto (as tune.Auto).
const (
	goldenSpread      = 8
	goldenEvaluations = 6
)

// exactLOORows is the most tuning rows exact KRR is scored on by closed-form
// leave-one-out (one n x n eigendecomposition per sigma); above it one 80/20
// split (a Cholesky factorisation per lambda) is cheaper, and with that many
// rows less noisy than on a few hundred.
const exactLOORows = 1000

// autoTuneRows is the subsample lambda is chosen on: tune.AutoRows for the
// methods scored in closed form, fewer for exact KRR, whose split path
// factors an n x n matrix per lambda.
func autoTuneRows(method string) int {
	if method == "exact" {
		return 2000
	}
	return tune.AutoRows
}

// autoFit fills in the values of c that are "auto" from the scaled training
// rows x (a *mat.Dense, or a *dataset.CSR, never densified) and their
// labels, and returns the completed config and how each value was chosen:
//
//   - sigma: the median heuristic m (tune.MedianSigma), or scikit-learn's
//     'scale' rule sqrt(d var(X) / 2) (tune.ScaleSigma);
//   - the centre count: tune.AutoCenters, ceil(sqrt(n) ln n) capped by n and
//     -memory;
//   - lambda: the best of autoLambdas (the whole path from one
//     eigendecomposition, see package tune) on a seeded subsample of at most
//     autoTuneRows rows, scored by closed-form leave-one-out (ridge, FALKON,
//     ParK tuned as FALKON with the same centre count, and exact KRR on at
//     most exactLOORows rows) or an 80/20 validation split (exact KRR on
//     more). When sigma is auto too (the median
//     heuristic, and a map tune builds itself), sigma is chosen with it: a
//     golden-section search on log sigma over m x [1/8, 8] with 6
//     evaluations (tune.Golden), each scoring the whole lambda path.
func autoFit(ctx context.Context, c fitConfig, x mat.Matrix, labels []float64, task solvers.Task, be backend.Backend, progress zonal.ProgressFunc) (fitConfig, fitChoices, error) {
	var ch fitChoices
	n, _ := x.Dims()
	kk, err := lookupKernel(c.kernel.Name)
	if err != nil {
		return c, ch, err
	}
	if kk.bandwidth {
		switch c.sigmaMode {
		case autoValue:
			if c.kernel.Sigma, err = tune.MedianSigma(x, 0, c.seed); err != nil {
				return c, ch, fmt.Errorf("-sigma auto: %w", err)
			}
			ch.Sigma = "median heuristic"
		case scaleValue:
			if c.kernel.Sigma, err = tune.ScaleSigma(x); err != nil {
				return c, ch, fmt.Errorf("-sigma scale: %w", err)
			}
			ch.Sigma = "scale rule, sqrt(d var(X) / 2)"
		}
		if ch.Sigma != "" {
			if _, err := checkKernel(c.kernel, false); err != nil {
				return c, ch, fmt.Errorf("-sigma %s chose %g: %w", c.sigmaMode, c.kernel.Sigma, err)
			}
		}
	}
	if c.centers == 0 && (c.method == "falkon" || c.method == "park") {
		c.centers = tune.AutoCenters(n, c.memory, c.precision)
		ch.Centers = "auto, ceil(sqrt(n) ln n)"
		if c.method == "park" {
			// ParK's centres are shared by its cells: at least one each.
			c.centers = max(c.centers, c.cells)
		}
	}
	if c.lambda != 0 {
		return c, ch, nil
	}
	start := time.Now()
	opts, err := autoLambdaOptions(ctx, c, x, be)
	if err != nil {
		return c, ch, err
	}
	opts.Task = task
	opts.Progress = progress
	y := mat.NewDense(n, 1, labels)
	var res *tune.Result
	golden := c.sigmaMode == autoValue && kk.bandwidth && opts.NewMap == nil
	if golden {
		med := c.kernel.Sigma
		res, err = tune.Golden(ctx, x, y, tune.GoldenOptions{SearchOptions: opts, Lo: med / goldenSpread, Hi: med * goldenSpread, Evaluations: goldenEvaluations})
	} else {
		res, err = tune.Search(ctx, x, y, opts)
	}
	if err != nil {
		return c, ch, fmt.Errorf("-lambda auto: %w", err)
	}
	rows := min(n, opts.Rows)
	// lambda was chosen on rows of the n training rows. The objective
	// (1/n)|f(X)-y|^2 + lambda |f|^2 weighs the data more as n grows, and the
	// lambda that is best on rows rows is too strong on n: keep the balance
	// of the sums, i.e. scikit-learn's alpha = lambda n, which scales lambda
	// by rows/n (MNIST: 1e-4 on 4000 rows gives 6.7e-6 on 60000, where a
	// 10000-row grid search finds 1e-5).
	c.lambda = res.Best.Lambda * float64(rows) / float64(n)
	if golden {
		c.kernel.Sigma = res.Best.Sigma
		ch.Sigma = fmt.Sprintf("golden-section search on log sigma over the median heuristic %.3g x [1/%d, %d], %d evaluations", opts.Sigmas[0], goldenSpread, goldenSpread, goldenEvaluations)
	}
	how := "leave-one-out"
	if opts.Validation > 0 {
		how = fmt.Sprintf("%.0f/%.0f validation split", 100*(1-opts.Validation), 100*opts.Validation)
	}
	ch.Lambda = fmt.Sprintf("%s over %d values on %d rows", how, len(opts.Lambdas), rows)
	if rows < n {
		ch.Lambda += fmt.Sprintf(" (%.3g there, times %d/%d for all rows: the same lambda n)", res.Best.Lambda, rows, n)
	}
	ch.TuneRows, ch.TuneSeconds = rows, time.Since(start).Seconds()
	ch.TuneMetric, ch.TuneScore = res.Metric, res.Best.Mean
	return c, ch, nil
}

// scaleAndChoose applies -scale / -standardize to the training rows and
// fills in the auto values (autoFit). When neither flag was given and sigma
// and lambda are both auto, it also tunes on the raw features and keeps them
// only when their tuning loss is clearly lower (by rawMargin); otherwise, and
// when the raw features fail, the standardized ones. Standardizing helps
// features of unlike units and hurts pixels or counts that share one scale,
// where rare features are blown up.
func scaleAndChoose(ctx context.Context, c fitConfig, train *dataset.Data, task solvers.Task, be backend.Backend, progress zonal.ProgressFunc) (fitConfig, *dataset.Standardizer, *mat.Dense, fitChoices, error) {
	type candidate struct {
		c  fitConfig
		st *dataset.Standardizer
		x  *mat.Dense
		ch fitChoices
	}
	try := func(standardize bool) (candidate, error) {
		cc := c
		cc.standardize = standardize
		st, err := inputScaler(train.X, cc.scale, standardize)
		if err != nil {
			return candidate{}, err
		}
		x, err := scaled(st, train.X)
		if err != nil {
			return candidate{}, err
		}
		if err := checkMagnitude(c.train, x); err != nil {
			return candidate{}, err
		}
		cc, ch, err := autoFit(ctx, cc, x, train.Y, task, be, progress)
		return candidate{cc, st, x, ch}, err
	}
	best, err := try(c.standardize)
	if err != nil {
		return c, nil, nil, fitChoices{}, err
	}
	if c.standardizeAuto && c.standardize && c.sigmaMode == autoValue && c.lambda == 0 {
		raw, err := try(false)
		if ctx.Err() != nil {
			return c, nil, nil, fitChoices{}, ctx.Err()
		}
		if err == nil && raw.ch.clearlyBeats(best.ch) {
			raw.ch.Standardize = fmt.Sprintf("raw features tuned better: %s %.4g vs %.4g standardized", raw.ch.TuneMetric, raw.ch.TuneScore, best.ch.TuneScore)
			best = raw
		} else if err == nil {
			best.ch.Standardize = fmt.Sprintf("%s %.4g vs %.4g on the raw features", best.ch.TuneMetric, best.ch.TuneScore, raw.ch.TuneScore)
		}
		best.ch.TuneSeconds += raw.ch.TuneSeconds
	}
	return best.c, best.st, best.x, best.ch, nil
}

// autoLambdaOptions are the tune.Search options that choose lambda for the
// method of c at its sigma and size.
func autoLambdaOptions(ctx context.Context, c fitConfig, x mat.Matrix, be backend.Backend) (tune.SearchOptions, error) {
	n, _ := x.Dims()
	kp := c.kernel
	opts := tune.SearchOptions{
		Options: tune.Options{Backend: be, MemoryBudget: c.memory},
		Kernel: func(sigma float64) (kernels.Kernel, error) {
			p := kp
			p.Sigma = sigma
			return newKernel(p)
		},
		Sigmas:    []float64{tuneSigma(kp)},
		Lambdas:   autoLambdas(),
		Criterion: tune.CriterionLOO,
		Seed:      c.seed,
		Rows:      autoTuneRows(c.method),
	}
	sub := min(n, opts.Rows)
	switch c.method {
	case "exact":
		opts.Method = tune.MethodKRR
		if sub > exactLOORows {
			opts.Criterion, opts.Validation = tune.CriterionCV, 0.2
		}
	case "falkon", "park":
		opts.Method, opts.Sizes = tune.MethodFalkon, []int{min(c.centers, sub)}
	case "ridge":
		opts.Method = tune.MethodRidge
		switch c.mapName {
		case "fourier":
			opts.Map, opts.Sizes = tune.MapFourier, []int{c.features + c.features%2}
		case "nystrom":
			opts.Map, opts.Sizes = tune.MapNystrom, []int{min(c.features, sub)}
		default:
			// Any other map is built as `zonal fit` builds it, on every
			// training row, and tuned as a custom map.
			opts.Sizes = []int{c.features}
			opts.NewMap = func(k kernels.Kernel, size int) (kernels.FeatureMap, error) {
				return buildMap(ctx, mapSpec{Method: c.mapName, Kernel: k, KernelID: kp.Name, Sigma: kp.Sigma, Gamma: kp.Gamma,
					Coef0: kp.Coef0, Degree: kp.Degree, Features: size, Lambda: 1e-6, Seed: c.seed, Backend: be}, x)
			}
		}
	}
	return opts, nil
}

// autoLambdas is the lambda path of -lambda auto: 1e-10, 1e-9, ..., 1e-1.
func autoLambdas() []float64 {
	l := make([]float64, 10)
	for i := range l {
		l[i] = math.Pow(10, float64(i-10))
	}
	return l
}

// tuneSigma is the sigma tune.Search is given for kernel p: its bandwidth, or
// 1 for a kernel without one (the Kernel function ignores it then).
func tuneSigma(p kernelParams) float64 {
	if kk, _ := lookupKernel(p.Name); kk.bandwidth {
		return p.Sigma
	}
	return 1
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/zonal-ml/zonal/bench/internal/benchsplit"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// The lambda curves (-lambda-curves N) ask whether another
// cross-validation rule would choose the logistic lambda better than
// zonal's held-out folds do. On N seeded splits of each set, at the sigma,
// input transform and intercept the default logistic fit chose, the
// logistic model is fitted on the training rows at every lambda of
// curveLambdas and scored on the test rows (the test curve), and on the
// training rows' folds of each plan of curvePlans (the cross-validated
// curves; each fold fitted at lambda n/n_fold, zonal's scaling). Each rule
// of curveRules picks a lambda from the cross-validated curves; its test
// log-loss there is its score, averaged over the splits, against the
// plain 5-fold rule's with the paired standard error. The oracle rule
// picks by the test curve itself: the best any rule could do on that grid.

// curveLambdas is the grid of the curves: quarter decades from 1e-2 to
// 10^-6.5.
func curveLambdas() []float64 {
	var l []float64
	for e := -2.0; e >= -6.501; e -= 0.25 {
		l = append(l, math.Pow(10, e))
	}
	return l
}

// curvePlan is a plan of folds of the training rows: k stratified folds
// with seed offset seed.
type curvePlan struct {
	Name string
	K    int
	Seed uint64
}

var curvePlans = []curvePlan{{"5a", 5, 99}, {"5b", 5, 199}, {"5c", 5, 299}, {"10", 10, 399}}

// curveRule picks the index of a lambda from a split's curves.
type curveRule struct {
	Name string
	Pick func(c curveSplit) int
}

// argmin is the index of the least of f(i) over n indices, the first on
// ties (the larger lambda).
func argmin(n int, f func(int) float64) int {
	best := 0
	for i := 1; i < n; i++ {
		if f(i) < f(best) {
			best = i
		}
	}
	return best
}

var curveRules = []curveRule{
	{"5-fold (zonal's rule, other folds)", func(c curveSplit) int {
		return argmin(len(c.Lambdas), func(i int) float64 { return c.CV["5a"][i] })
	}},
	{"3 x 5-fold, mean curve", func(c curveSplit) int {
		return argmin(len(c.Lambdas), func(i int) float64 { return c.CV["5a"][i] + c.CV["5b"][i] + c.CV["5c"][i] })
	}},
	{"10-fold", func(c curveSplit) int {
		return argmin(len(c.Lambdas), func(i int) float64 { return c.CV["10"][i] })
	}},
	{"5-fold, curve smoothed over 3 neighbours", func(c curveSplit) int {
		cv := c.CV["5a"]
		return argmin(len(cv), func(i int) float64 {
			lo, hi := max(i-1, 0), min(i+1, len(cv)-1)
			s := 0.0
			for j := lo; j <= hi; j++ {
				s += cv[j]
			}
			return s / float64(hi-lo+1)
		})
	}},
	{"oracle (the test curve's least)", func(c curveSplit) int {
		return argmin(len(c.Lambdas), func(i int) float64 { return c.Test[i] })
	}},
}

// curveSplit is one split's curves: a JSON line of -out.
type curveSplit struct {
	Set       string  `json:"set"`
	Seed      uint64  `json:"seed"`
	Sigma     float64 `json:"sigma"`
	Intercept string  `json:"intercept"`
	// ZonalLambda and ZonalLogLoss are the default fit's chosen lambda and
	// its test log-loss.
	ZonalLambda  float64              `json:"zonal_lambda"`
	ZonalLogLoss float64              `json:"zonal_log_loss"`
	Lambdas      []float64            `json:"lambdas"`
	Test         []float64            `json:"test"`
	CV           map[string][]float64 `json:"cv"`
}

// runCurves computes the curves of splits seeds from cfg.Seed on every
// set of cfg, writes each split as a JSON line to out and the rules'
// table to w.
func runCurves(ctx context.Context, cfg config, splits int, out string, w io.Writer) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	var all []curveSplit
	for _, set := range cfg.Sets {
		rows, _, err := loadSet(cfg, set)
		if err != nil {
			return err
		}
		for s := range uint64(splits) {
			c, err := splitCurves(ctx, cfg, set, rows, cfg.Seed+s)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", set, cfg.Seed+s, err)
			}
			if cfg.Log != nil {
				fmt.Fprintf(cfg.Log, "%s seed %d: curves over %d lambdas\n", set, c.Seed, len(c.Lambdas))
			}
			if err := enc.Encode(c); err != nil {
				return err
			}
			all = append(all, c)
		}
	}
	return writeCurveTable(w, all)
}

// splitCurves fits the default logistic model on one split for its
// settings, then the test and cross-validated curves at them.
func splitCurves(ctx context.Context, cfg config, set string, rows *dataset.Data, seed uint64) (curveSplit, error) {
	c := curveSplit{Set: set, Seed: seed, Lambdas: curveLambdas(), CV: map[string][]float64{}}
	trIdx, teIdx := benchsplit.Stratified(rows.Y, trainFraction, seed)
	tr, err := rows.Subset(trIdx)
	if err != nil {
		return c, err
	}
	te, err := rows.Subset(teIdx)
	if err != nil {
		return c, err
	}
	opts := estimator.Options{Loss: estimator.LossLogistic, Intercept: cfg.Intercept, Seed: seed}
	pipe, rep, err := estimator.Fit(ctx, tr.Matrix(), tr.Y, opts)
	if err != nil {
		return c, err
	}
	if c.ZonalLogLoss, err = testLogLoss(pipe, te); err != nil {
		return c, err
	}
	c.Sigma, c.ZonalLambda, c.Intercept = rep.Kernel.Sigma, rep.Lambda, rep.Intercept.String()
	fixed := opts
	fixed.Sigma = rep.Kernel.Sigma
	fixed.Standardize = estimator.StandardizeOff
	if rep.Standardize {
		fixed.Standardize = estimator.StandardizeOn
	}
	fixed.Intercept = estimator.InterceptMean
	if rep.Intercept == solvers.InterceptFitted {
		fixed.Intercept = estimator.InterceptFitted
	}
	fitScore := func(a, b *dataset.Data, lambda float64) (float64, error) {
		o := fixed
		o.Lambda = lambda
		p, _, err := estimator.Fit(ctx, a.Matrix(), a.Y, o)
		if err != nil {
			return 0, err
		}
		return testLogLoss(p, b)
	}
	ntr := len(tr.Y)
	for _, l := range c.Lambdas {
		v, err := fitScore(tr, te, l)
		if err != nil {
			return c, err
		}
		c.Test = append(c.Test, v)
	}
	for _, p := range curvePlans {
		folds, err := calibrate.StratifiedFolds(tr.Y, p.K, seed+p.Seed)
		if err != nil {
			return c, err
		}
		cv := make([]float64, len(c.Lambdas))
		for _, fo := range folds {
			a, err := tr.Subset(fo.Train)
			if err != nil {
				return c, err
			}
			b, err := tr.Subset(fo.Test)
			if err != nil {
				return c, err
			}
			for i, l := range c.Lambdas {
				v, err := fitScore(a, b, l*float64(ntr)/float64(len(fo.Train)))
				if err != nil {
					return c, err
				}
				cv[i] += v * float64(len(fo.Test)) / float64(ntr)
			}
		}
		c.CV[p.Name] = cv
	}
	return c, nil
}

// testLogLoss is the log-loss of pipe's probabilities on te's rows.
func testLogLoss(pipe interface {
	PredictProba(*mat.Dense, mat.Matrix) error
}, te *dataset.Data) (float64, error) {
	pr := mat.NewDense(len(te.Y), 2, nil)
	if err := pipe.PredictProba(pr, te.Matrix()); err != nil {
		return 0, err
	}
	return metrics.BinaryLogLoss(mat.Col(nil, 1, pr), te.Y, nil)
}

// curveScores is, per set and rule, the test log-loss at the rule's pick
// on every split (in the order of all), and zonal's own.
func curveScores(all []curveSplit) (sets []string, scores map[string]map[string][]float64) {
	scores = map[string]map[string][]float64{}
	for _, c := range all {
		if scores[c.Set] == nil {
			sets = append(sets, c.Set)
			scores[c.Set] = map[string][]float64{}
		}
		for _, r := range curveRules {
			scores[c.Set][r.Name] = append(scores[c.Set][r.Name], c.Test[r.Pick(c)])
		}
		scores[c.Set]["zonal"] = append(scores[c.Set]["zonal"], c.ZonalLogLoss)
	}
	return sets, scores
}

// writeCurveTable writes per set and rule the mean test log-loss over the
// splits and the mean paired difference to the first rule's, with its
// standard error.
func writeCurveTable(w io.Writer, all []curveSplit) error {
	sets, scores := curveScores(all)
	fmt.Fprintln(w, "| set | splits | rule | mean test log-loss | minus 5-fold's (paired, ± s.e.) |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|")
	names := []string{"zonal"}
	for _, r := range curveRules {
		names = append(names, r.Name)
	}
	for _, s := range sets {
		base := scores[s][curveRules[0].Name]
		for _, name := range names {
			v := scores[s][name]
			d := make([]float64, len(v))
			for i := range v {
				d[i] = v[i] - base[i]
			}
			m, se := meanSE(d)
			label := name
			if name == "zonal" {
				label = "zonal's default fit (its own folds and grid)"
			}
			if _, err := fmt.Fprintf(w, "| %s | %d | %s | %.4f | %+.4f ± %.4f |\n", s, len(v), label, stat.Mean(v, nil), m, se); err != nil {
				return err
			}
		}
	}
	return nil
}

// meanSE is the mean of v and its standard error (NaN below 2 values).
func meanSE(v []float64) (float64, float64) {
	m, sd := stat.MeanStdDev(v, nil)
	return m, stat.StdErr(sd, float64(len(v)))
}

package tune

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// binData returns n rows of two uniform(-2, 2) inputs and labels 0/1, the
// sign of sin(x_1) + x_2^2/2 - 0.6 plus noise: about a third positive, not
// separable.
func binData(n int, seed uint64) (*mat.Dense, *mat.Dense) {
	x, f := regData(n, 2, seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		if f.At(i, 0)-0.6+0.5*rng.NormFloat64() > 0 {
			y.Set(i, 0, 1)
		}
	}
	return x, y
}

// pairAUC is the weighted AUC by counting every positive-negative pair.
func pairAUC(score, y, w []float64) float64 {
	num, den := 0.0, 0.0
	for i := range score {
		for j := range score {
			if y[i] != 1 || y[j] != 0 {
				continue
			}
			p := w[i] * w[j]
			den += p
			switch {
			case score[i] > score[j]:
				num += p
			case score[i] == score[j]:
				num += p / 2
			}
		}
	}
	return num / den
}

// TestSearchAUCBruteForce: Search by AUC and by log loss over a 3 x 3 grid
// (3 stratified folds, with and without weights) scores each setting with
// the mean over folds of the held-out AUC computed pair by pair from
// solvers fits on the fold's training rows, and of the log loss of a Platt
// calibrator fitted on the other folds' held-out scores; the best setting
// has the highest AUC and the lowest log loss of that brute force.
func TestSearchAUCBruteForce(t *testing.T) {
	ctx := context.Background()
	x, y := binData(90, 21)
	n, _ := x.Dims()
	labels := mat.Col(nil, 0, y)
	sigmas, lambdas := []float64{0.3, 1, 3}, []float64{1e-4, 1e-2, 1}
	enc, err := solvers.NewEncoding(labels, solvers.TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := enc.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	folds, err := calibrate.StratifiedFolds(labels, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	for _, w := range [][]float64{nil, randWeights(n, 22)} {
		ww := w
		if w == nil {
			ww = ones
		}
		// Brute force: held-out decision values of every setting.
		wantAUC := map[Setting]float64{}
		wantLL := map[Setting]float64{}
		for _, sg := range sigmas {
			for _, lam := range lambdas {
				oof := make([]float64, n)
				for _, f := range folds {
					m, err := solvers.FitKRR(ctx, kernels.Gaussian{Sigma: sg}, dataset.MustSelectRows(x, f.Train), dataset.MustSelectRows(tg, f.Train), lam, solvers.Options{Weights: subsetWeights(w, f.Train)})
					if err != nil {
						t.Fatal(err)
					}
					out := mat.NewDense(len(f.Test), 1, nil)
					if err := m.Predict(out, dataset.MustSelectRows(x, f.Test)); err != nil {
						t.Fatal(err)
					}
					for r, i := range f.Test {
						oof[i] = out.At(r, 0)
					}
				}
				auc, ll := 0.0, 0.0
				for fi, f := range folds {
					auc += pairAUC(pick(oof, f.Test), pick(labels, f.Test), pick(ww, f.Test))
					var rest []int
					for fj, g := range folds {
						if fj != fi {
							rest = append(rest, g.Test...)
						}
					}
					cal, err := calibrate.FitPlatt(pick(oof, rest), pick(labels, rest), subsetWeights(w, rest))
					if err != nil {
						t.Fatal(err)
					}
					num, den := 0.0, 0.0
					for _, i := range f.Test {
						p := min(max(cal.Apply(oof[i]), metrics.LogLossEps), 1-metrics.LogLossEps)
						if labels[i] == 0 {
							p = 1 - p
						}
						num -= ww[i] * math.Log(p)
						den += ww[i]
					}
					ll += num / den
				}
				s := Setting{Sigma: sg, Lambda: lam}
				wantAUC[s], wantLL[s] = auc/3, ll/3
			}
		}
		for _, c := range []struct {
			metric metrics.Name
			want   map[Setting]float64
		}{{metrics.NameAUC, wantAUC}, {metrics.NameLogLoss, wantLL}} {
			res, err := Search(ctx, x, y, SearchOptions{Sigmas: sigmas, Lambdas: lambdas, Folds: 3, Seed: 4, Metric: c.metric, Weights: w, Task: solvers.TaskClassification})
			if err != nil {
				t.Fatal(err)
			}
			if res.Metric != c.metric.String() || res.HigherIsBetter() != c.metric.Maximize() {
				t.Fatalf("%s: Result.Metric %q, HigherIsBetter %v", c.metric, res.Metric, res.HigherIsBetter())
			}
			var bestSet Setting
			first := true
			for _, sg := range sigmas {
				for _, lam := range lambdas {
					s := Setting{Sigma: sg, Lambda: lam}
					if first || c.metric.Better(c.want[s], c.want[bestSet]) {
						bestSet, first = s, false
					}
				}
			}
			for _, r := range res.Rows {
				if !relClose(r.Mean, c.want[r.Setting], 1e-6) || r.TaskScore != r.Mean {
					t.Errorf("%s weighted=%v %+v: Search %.10g (task score %.10g), brute force %.10g", c.metric, w != nil, r.Setting, r.Mean, r.TaskScore, c.want[r.Setting])
				}
			}
			if !relClose(c.want[res.Best.Setting], c.want[bestSet], 1e-9) {
				t.Errorf("%s weighted=%v: chose %+v (%.10g), brute force best %+v (%.10g)", c.metric, w != nil, res.Best.Setting, c.want[res.Best.Setting], bestSet, c.want[bestSet])
			}
			t.Logf("%s weighted=%v: best %+v %.4f", c.metric, w != nil, res.Best.Setting, res.Best.Mean)
		}
	}
}

func pick(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for r, i := range idx {
		out[r] = v[i]
	}
	return out
}

// TestSearchMetricDirection: for every metric of the task (binary,
// multiclass and regression; k-fold, split and leave-one-out) Result.Metric
// names it, HigherIsBetter follows metrics.Name.Maximize, the best row is
// the extreme of the table in that direction, and the scores lie in the
// metric's range.
func TestSearchMetricDirection(t *testing.T) {
	ctx := context.Background()
	bx, by := binData(80, 31)
	dx, dy := digits(t, 150)
	rx, ry := regData(60, 2, 32)
	cls := []metrics.Name{metrics.NameAuto, metrics.NameAccuracy, metrics.NameBalancedAccuracy, metrics.NameAUC, metrics.NameLogLoss, metrics.NameF1}
	reg := []metrics.Name{metrics.NameAuto, metrics.NameRMSE, metrics.NameMAE, metrics.NameR2}
	for _, c := range []struct {
		name  string
		x, y  *mat.Dense
		names []metrics.Name
	}{{"binary", bx, by, cls}, {"digits", dx, dy, cls}, {"regression", rx, ry, reg}} {
		for _, crit := range []struct {
			name string
			o    SearchOptions
		}{{"kfold", SearchOptions{Folds: 3}}, {"split", SearchOptions{Validation: 0.5}}, {"loo", SearchOptions{Criterion: CriterionLOO}}} {
			for _, m := range c.names {
				o := crit.o
				o.Sigmas, o.Lambdas, o.Seed, o.Metric = []float64{0.5, 2}, []float64{1e-6, 1e-2, 10}, 3, m
				res, err := Search(ctx, c.x, c.y, o)
				if err != nil {
					t.Fatalf("%s %s %s: %v", c.name, crit.name, m, err)
				}
				r := m.Resolve(c.name != "regression")
				if res.Metric != r.String() || res.HigherIsBetter() != r.Maximize() {
					t.Fatalf("%s %s %s: Metric %q, HigherIsBetter %v", c.name, crit.name, m, res.Metric, res.HigherIsBetter())
				}
				for _, row := range res.Rows {
					v := row.Mean
					if math.IsNaN(v) || r.Better(v, res.Best.Mean) {
						t.Errorf("%s %s %s: row %+v scores %g, better than the best %g", c.name, crit.name, m, row.Setting, v, res.Best.Mean)
					}
					bounded := r != metrics.NameRMSE && r != metrics.NameMAE && r != metrics.NameLogLoss && r != metrics.NameR2
					if bounded && (v < 0 || v > 1) || !bounded && r != metrics.NameR2 && v < 0 {
						t.Errorf("%s %s %s: score %g out of range", c.name, crit.name, m, v)
					}
				}
			}
		}
	}
}

// TestGoldenMetricDirection: Golden minimises the metric's loss in its
// direction: by AUC (maximised) and log loss (minimised) its best row is
// the extreme of every row it evaluated, and ScoreSquared and GCV are
// lower-is-better.
func TestGoldenMetricDirection(t *testing.T) {
	ctx := context.Background()
	x, y := binData(80, 61)
	for _, m := range []metrics.Name{metrics.NameAUC, metrics.NameLogLoss} {
		res, err := Golden(ctx, x, y, GoldenOptions{SearchOptions: SearchOptions{Lambdas: []float64{1e-4, 1e-1}, Folds: 3, Seed: 2, Metric: m}, Lo: 0.1, Hi: 10, Evaluations: 4})
		if err != nil {
			t.Fatal(err)
		}
		if res.Metric != m.String() || res.HigherIsBetter() != m.Maximize() || len(res.Rows) != 8 {
			t.Fatalf("%s: Metric %q, HigherIsBetter %v, %d rows", m, res.Metric, res.HigherIsBetter(), len(res.Rows))
		}
		for _, r := range res.Rows {
			if m.Better(r.Mean, res.Best.Mean) {
				t.Errorf("%s: row %+v scores %g, better than the best %g", m, r.Setting, r.Mean, res.Best.Mean)
			}
		}
	}
	for _, o := range []SearchOptions{{Score: ScoreSquared}, {Criterion: CriterionGCV}} {
		o.Sigmas, o.Lambdas, o.Folds = []float64{1}, []float64{1e-2}, 3
		res, err := Search(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.HigherIsBetter() {
			t.Errorf("%s: higher is better", res.Metric)
		}
	}
}

// TestSearchMetricWeighted: on a split, the AUC, F1, balanced accuracy and
// MAE of a weighted search are the weighted metrics of the held-out
// predictions of weighted solvers fits, and differ from the unweighted
// search's.
func TestSearchMetricWeighted(t *testing.T) {
	ctx := context.Background()
	bx, by := binData(70, 41)
	rx, ry := regData(70, 2, 42)
	n, _ := bx.Dims()
	w := randWeights(n, 43)
	train, test := dataset.Split(n, 0.6, 5)
	for _, c := range []struct {
		m    metrics.Name
		x, y *mat.Dense
		task solvers.Task
	}{{metrics.NameAUC, bx, by, solvers.TaskClassification}, {metrics.NameF1, bx, by, solvers.TaskClassification},
		{metrics.NameBalancedAccuracy, bx, by, solvers.TaskClassification}, {metrics.NameMAE, rx, ry, solvers.TaskRegression}} {
		o := SearchOptions{Sigmas: []float64{1}, Lambdas: []float64{1e-3}, Validation: 0.4, Seed: 5, Metric: c.m, Task: c.task}
		plain, err := Search(ctx, c.x, c.y, o)
		if err != nil {
			t.Fatal(err)
		}
		o.Weights = w
		res, err := Search(ctx, c.x, c.y, o)
		if err != nil {
			t.Fatal(err)
		}
		labels := mat.Col(nil, 0, c.y)
		enc, _ := solvers.NewEncoding(labels, c.task)
		tg, _ := enc.Targets(labels)
		m, err := solvers.FitKRR(ctx, kernels.Gaussian{Sigma: 1}, dataset.MustSelectRows(c.x, train), dataset.MustSelectRows(tg, train), 1e-3, solvers.Options{Weights: pick(w, train)})
		if err != nil {
			t.Fatal(err)
		}
		out := mat.NewDense(len(test), 1, nil)
		if err := m.Predict(out, dataset.MustSelectRows(c.x, test)); err != nil {
			t.Fatal(err)
		}
		yt, wt, s := pick(labels, test), pick(w, test), mat.Col(nil, 0, out)
		var want float64
		switch c.m {
		case metrics.NameAUC:
			want = pairAUC(s, yt, wt)
		case metrics.NameMAE:
			for i := range s {
				want += wt[i] * math.Abs(s[i]-yt[i])
			}
			want /= weightSum(t, wt, len(wt))
		default:
			var tp, fp, fn, tn float64
			for i := range s {
				switch {
				case s[i] > 0 && yt[i] == 1:
					tp += wt[i]
				case s[i] > 0:
					fp += wt[i]
				case yt[i] == 1:
					fn += wt[i]
				default:
					tn += wt[i]
				}
			}
			want = 2 * tp / (2*tp + fp + fn)
			if c.m == metrics.NameBalancedAccuracy {
				want = (tp/(tp+fn) + tn/(tn+fp)) / 2
			}
		}
		if got := res.Best.Mean; !relClose(got, want, 1e-9) {
			t.Errorf("%s: weighted search %.12g, weighted refit %.12g", c.m, got, want)
		}
		if plain.Best.Mean == res.Best.Mean {
			t.Errorf("%s: weights did not change the score %g", c.m, res.Best.Mean)
		}
	}
}

// TestSearchMetricErrors: a metric of the other task, a metric with GCV or
// ScoreSquared, an invalid Name, and a class-weighing metric where a fold
// or the held-out rows cannot hold every class are ErrParam.
func TestSearchMetricErrors(t *testing.T) {
	ctx := context.Background()
	bx, by := binData(40, 51)
	rx, ry := regData(40, 2, 52)
	// A class of 3 rows: 5 stratified folds cannot all hold it.
	rare := mat.DenseCopyOf(by)
	for i := 0; i < 40; i++ {
		rare.Set(i, 0, 0)
	}
	for _, i := range []int{1, 7, 30} {
		rare.Set(i, 0, 1)
	}
	base := SearchOptions{Sigmas: []float64{1}, Lambdas: []float64{1e-2}, Seed: 1}
	for _, c := range []struct {
		name string
		x, y *mat.Dense
		mod  func(*SearchOptions)
	}{
		{"auc for regression", rx, ry, func(o *SearchOptions) { o.Metric = metrics.NameAUC }},
		{"rmse for classification", bx, by, func(o *SearchOptions) { o.Metric = metrics.NameRMSE }},
		{"gcv", bx, by, func(o *SearchOptions) { o.Metric, o.Criterion = metrics.NameF1, CriterionGCV }},
		{"squared", bx, by, func(o *SearchOptions) { o.Metric, o.Score = metrics.NameAUC, ScoreSquared }},
		{"invalid", bx, by, func(o *SearchOptions) { o.Metric = metrics.Name(200) }},
		{"auc rare class", bx, rare, func(o *SearchOptions) { o.Metric = metrics.NameAUC }},
		{"logloss rare class", bx, rare, func(o *SearchOptions) { o.Metric = metrics.NameLogLoss }},
		{"f1 rare class", bx, rare, func(o *SearchOptions) { o.Metric = metrics.NameF1 }},
		{"balanced split without a class", bx, onePositive(rare), func(o *SearchOptions) { o.Metric, o.Validation = metrics.NameBalancedAccuracy, 0.2 }},
		{"logloss loo one row", bx, onePositive(rare), func(o *SearchOptions) { o.Metric, o.Criterion = metrics.NameLogLoss, CriterionLOO }},
	} {
		o := base
		c.mod(&o)
		_, err := Search(ctx, c.x, c.y, o)
		if !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: got %v, want ErrParam", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// onePositive keeps only the first positive label of y.
func onePositive(y *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(y)
	seen := false
	n, _ := y.Dims()
	for i := 0; i < n; i++ {
		if out.At(i, 0) == 1 {
			if seen {
				out.Set(i, 0, 0)
			}
			seen = true
		}
	}
	return out
}

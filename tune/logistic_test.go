package tune

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// logisticBruteTol is the relative agreement of a LossLogistic search's
// held-out log-loss with brute-force fits: the search's fold models stop at
// relative gradient LogisticPathGradTol (1e-4) along a warm-started path,
// the brute-force ones at 1e-10 from alpha = 0, so the two logits differ by
// what the last Newton steps change. On these data they agree to 4e-5
// relative (measured, unweighted 2.1e-5, weighted 3.6e-5); 1e-3 leaves a
// margin of 25 for other backends' rounding, and is still far below the
// differences between neighbouring lambdas that the search ranks.
const logisticBruteTol = 1e-3

// TestSearchLogisticBruteForce: with LossLogistic every row's per-fold
// score is the weighted held-out log-loss (solvers.LogisticLoss of the
// logits) of solvers.FitLogistic fitted afresh on the fold's training rows
// at that sigma and lambda with the same centres; the lambdas are given
// unordered and are mapped back; the best row is the brute force's least;
// the refit is a logistic model at the best lambda on all rows.
func TestSearchLogisticBruteForce(t *testing.T) {
	ctx := context.Background()
	x, y := binData(90, 21)
	n, _ := x.Dims()
	labels := mat.Col(nil, 0, y)
	sigmas, lambdas, size := []float64{0.5, 2}, []float64{1e-2, 1e-1, 1e-3}, 30
	enc, err := solvers.NewEncoding(labels, solvers.TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := enc.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 4
	folds, err := calibrate.StratifiedFolds(labels, 3, seed)
	if err != nil {
		t.Fatal(err)
	}
	for ti, w := range [][]float64{nil, randWeights(n, 22), nil} {
		ic := solvers.InterceptMean
		if ti == 2 {
			ic = solvers.InterceptFitted // unweighted, with the fitted intercept
		}
		res, err := Search(ctx, x, y, SearchOptions{Loss: LossLogistic, Sigmas: sigmas, Lambdas: lambdas, Sizes: []int{size},
			Folds: 3, Seed: seed, Weights: w, Refit: true, Intercept: ic})
		if err != nil {
			t.Fatal(err)
		}
		if res.Method != MethodFalkon || res.Loss != LossLogistic || res.Metric != "logloss" || res.HigherIsBetter() {
			t.Fatalf("method %s loss %s metric %s higher %v, want falkon logistic logloss lower", res.Method, res.Loss, res.Metric, res.HigherIsBetter())
		}
		if len(res.Rows) != len(sigmas)*len(lambdas) {
			t.Fatalf("%d rows, want %d", len(res.Rows), len(sigmas)*len(lambdas))
		}
		var best Setting
		bestLoss := math.Inf(1)
		worst := 0.0
		for _, r := range res.Rows {
			mean := 0.0
			for fi, f := range folds {
				m, err := solvers.FitLogistic(ctx, kernels.Gaussian{Sigma: r.Sigma}, dataset.MustSelectRows(x, f.Train), dataset.MustSelectRows(tg, f.Train), r.Lambda,
					solvers.LogisticOptions{Options: solvers.Options{Weights: subsetWeights(w, f.Train)}, Centers: size, Seed: seed, GradTol: 1e-10, Intercept: ic})
				if err != nil {
					t.Fatal(err)
				}
				out := mat.NewDense(len(f.Test), 1, nil)
				if err := m.Predict(out, dataset.MustSelectRows(x, f.Test)); err != nil {
					t.Fatal(err)
				}
				ll, err := solvers.LogisticLoss(out, dataset.MustSelectRows(tg, f.Test), subsetWeights(w, f.Test))
				if err != nil {
					t.Fatal(err)
				}
				worst = math.Max(worst, math.Abs(r.Scores[fi]-ll)/ll)
				if !relClose(r.Scores[fi], ll, logisticBruteTol) {
					t.Errorf("%s, weighted %v sigma %g lambda %g fold %d: search log-loss %.8g, brute force %.8g", ic, w != nil, r.Sigma, r.Lambda, fi, r.Scores[fi], ll)
				}
				mean += ll / float64(len(folds))
			}
			if mean < bestLoss {
				best, bestLoss = r.Setting, mean
			}
		}
		t.Logf("%s, weighted %v: largest relative difference %.2g", ic, w != nil, worst)
		if res.Best.Setting != best {
			t.Errorf("%s, weighted %v: best %+v, brute force %+v", ic, w != nil, res.Best.Setting, best)
		}
		lm, ok := res.Model.Model.(*solvers.Logistic)
		if !ok {
			t.Fatalf("refit is a %T, want *solvers.Logistic", res.Model.Model)
		}
		if lm.Lambda() != res.Best.Lambda || len(lm.CenterIndices()) != size {
			t.Errorf("refit lambda %g with %d centres, want %g and %d", lm.Lambda(), len(lm.CenterIndices()), res.Best.Lambda, size)
		}
		if b := lm.Intercept()[0]; (b != 0) != (ic == solvers.InterceptFitted) {
			t.Errorf("intercept %s: the refit's b is %g", ic, b)
		}
	}
}

// TestSearchLogisticMetrics: the logistic loss is scored by the other
// classification metrics too (each in its direction and range), a split
// works, and Golden goes through the same groups.
func TestSearchLogisticMetrics(t *testing.T) {
	ctx := context.Background()
	x, y := binData(80, 31)
	base := SearchOptions{Loss: LossLogistic, Sigmas: []float64{0.5, 2}, Lambdas: []float64{1e-3, 1e-1}, Sizes: []int{20}, Folds: 3, Seed: 2}
	for _, m := range []metrics.Name{metrics.NameAccuracy, metrics.NameBalancedAccuracy, metrics.NameAUC, metrics.NameF1} {
		o := base
		o.Metric = m
		res, err := Search(ctx, x, y, o)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if res.Metric != m.String() || !res.HigherIsBetter() {
			t.Errorf("%s: metric %s higher %v", m, res.Metric, res.HigherIsBetter())
		}
		for _, r := range res.Rows {
			if !(r.Mean >= 0 && r.Mean <= 1) || r.Mean > res.Best.Mean {
				t.Errorf("%s: row %+v beside best %g", m, r, res.Best.Mean)
			}
		}
	}
	o := base
	o.Validation = 0.3
	if res, err := Search(ctx, x, y, o); err != nil || len(res.Rows[0].Scores) != 1 {
		t.Fatalf("split: %v", err)
	}
	g, err := Golden(ctx, x, y, GoldenOptions{SearchOptions: base, Lo: 0.3, Hi: 3, Evaluations: 3})
	if err != nil {
		t.Fatal(err)
	}
	if g.Loss != LossLogistic || len(g.Rows) != 3*len(base.Lambdas) {
		t.Errorf("golden: loss %s, %d rows", g.Loss, len(g.Rows))
	}
	// Auto scores the logistic loss on a split (no closed-form LOO) and
	// refits it.
	a, err := Auto(ctx, x, y, GoldenOptions{SearchOptions: SearchOptions{Loss: LossLogistic, Lambdas: base.Lambdas, Sizes: base.Sizes}, Evaluations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Model.Model.(*solvers.Logistic); !ok || a.Criterion != CriterionCV || len(a.Rows[0].Scores) != 1 {
		t.Errorf("auto: model %T, criterion %s, %d scores", a.Model.Model, a.Criterion, len(a.Rows[0].Scores))
	}
	// A budget too small for the fold fits is an error, not a panic.
	o = base
	o.MemoryBudget = 1000
	if _, err := Search(ctx, x, y, o); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("tiny budget: %v, want ErrTooLarge", err)
	}
}

// TestSearchLogisticErrors: the logistic loss refuses what it cannot
// score or fit, with a *zonal.ParamError.
func TestSearchLogisticErrors(t *testing.T) {
	ctx := context.Background()
	x, y := binData(40, 5)
	rx, ry := regData(40, 2, 6)
	base := SearchOptions{Loss: LossLogistic, Sigmas: []float64{1}, Lambdas: []float64{1e-2}, Sizes: []int{10}, Folds: 3}
	for name, tc := range map[string]struct {
		x, y *mat.Dense
		edit func(*SearchOptions)
	}{
		"loo":        {x, y, func(o *SearchOptions) { o.Criterion = CriterionLOO }},
		"gcv":        {x, y, func(o *SearchOptions) { o.Criterion = CriterionGCV }},
		"regression": {rx, ry, func(o *SearchOptions) {}},
		"exact":      {x, y, func(o *SearchOptions) { o.Method = MethodExact }},
		"ridge":      {x, y, func(o *SearchOptions) { o.Method = MethodRidge }},
		"squared":    {x, y, func(o *SearchOptions) { o.Score = ScoreSquared }},
		"unknown":    {x, y, func(o *SearchOptions) { o.Loss = "hinge" }},
	} {
		o := base
		tc.edit(&o)
		_, err := Search(ctx, tc.x, tc.y, o)
		var pe *zonal.ParamError
		if !errors.Is(err, zonal.ErrParam) || !errors.As(err, &pe) || pe.Param != "Loss" {
			t.Errorf("%s: error %v, want a *zonal.ParamError of Loss", name, err)
		}
		if testing.Verbose() {
			t.Log(err)
		}
	}
	if l, err := ParseLoss("logistic"); err != nil || l != LossLogistic {
		t.Errorf("ParseLoss(logistic) = %v, %v", l, err)
	}
	if l, err := ParseLoss(""); err != nil || l != LossSquared || Loss("").String() != "squared" {
		t.Errorf("ParseLoss(\"\") = %v, %v", l, err)
	}
	if _, err := ParseLoss("hinge"); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("ParseLoss(hinge): %v", err)
	}
}

package tune

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// randWeights returns n weights in [0.2, 3].
func randWeights(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.2 + 2.8*rng.Float64()
	}
	return w
}

// weightSum is the weight sum of w over n rows (n for nil w), the one
// solvers.CheckWeights computes; bad weights fail the test.
func weightSum(t testing.TB, w []float64, n int) float64 {
	t.Helper()
	s, err := solvers.CheckWeights(w, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustSystem returns a function taking krrSystem's or ridgeSystem's
// results that fails the test on an error.
func mustSystem(t testing.TB) func(*system, error) *system {
	return func(sy *system, err error) *system {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return sy
	}
}

// TestFoldSystemWeights: a fold whose training weights solvers.CheckWeights
// refuses (all zero, a negative or NaN weight, the wrong count) is an error
// of krrSystem and ridgeSystem, a *zonal.ParamError on Weights naming the
// fold's rows, not a system with a zero or NaN weight sum; a valid fold's
// sum is CheckWeights' (the weights' sum exactly: the same additions).
func TestFoldSystemWeights(t *testing.T) {
	ctx := context.Background()
	be := backend.Default()
	x, y := regData(12, 2, 3)
	tg := twoOutputs(y)
	n, _ := x.Dims()
	kf := mat.NewDense(n, n, nil)
	if err := kernelMatrix(ctx, be, kernels.Gaussian{Sigma: 1}, kf, x, x); err != nil {
		t.Fatal(err)
	}
	train, test := []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{8, 9, 10, 11}
	w := randWeights(n, 2)
	sy := mustSystem(t)(krrSystem(kf, tg, subsetWeights(w, train), train, test))
	if want := weightSum(t, subsetWeights(w, train), len(train)); sy.nTrain != want {
		t.Errorf("KRR fold weight sum %v, want %v", sy.nTrain, want)
	}
	for name, bad := range map[string][]float64{
		"all zero":     make([]float64, len(train)),
		"negative":     {1, 1, 1, -1, 1, 1, 1, 1},
		"NaN":          {1, 1, math.NaN(), 1, 1, 1, 1, 1},
		"wrong length": {1, 1, 1},
	} {
		_, err := krrSystem(kf, tg, bad, train, test)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != "Weights" || !strings.Contains(err.Error(), "a fold's 8 training rows") {
			t.Errorf("KRR fold, %s weights: %v, want a ParamError on Weights naming the fold", name, err)
		}
	}
	// ridgeSystem takes its weights from the feature statistics: all zero
	// on the training rows, positive on the test rows.
	_, z := fourierFeatures(t, be, kernels.Gaussian{Sigma: 1}, x, 6, 5)
	wz := make([]float64, n)
	for _, i := range test {
		wz[i] = 1
	}
	_, err := ridgeSystem(be, newFeatureStats(be, z, tg, wz), tg, train, test)
	var pe *zonal.ParamError
	if !errors.As(err, &pe) || pe.Param != "Weights" || !strings.Contains(pe.Reason, "all weights are zero") {
		t.Errorf("ridge fold of all-zero training weights: %v, want a ParamError on Weights", err)
	}
	if sy := mustSystem(t)(ridgeSystem(be, newFeatureStats(be, z, tg, w), tg, train, test)); sy.nTrain != weightSum(t, subsetWeights(w, train), len(train)) {
		t.Errorf("ridge fold weight sum %v, want CheckWeights'", sy.nTrain)
	}
}

// TestLOOWeightedMatchesRefits: with weights, the closed-form left-out
// prediction of row i equals a weighted solvers refit on the other n-1
// rows (their weights, the same absolute regulariser: lambda' = lambda
// sum(w) / (sum(w) - w_i)) predicting row i; tolerance closedTol as for the
// unweighted identity (the weights in [0.2, 3] change the conditioning by
// at most their ratio, 15).
func TestLOOWeightedMatchesRefits(t *testing.T) { looMatchesRefits(t, randWeights(30, 5)) }

// TestGCVWeightedMatchesSmoother: the weighted GCV equals its definition
// from the smoother of one weighted fit.
func TestGCVWeightedMatchesSmoother(t *testing.T) { gcvMatchesSmoother(t, randWeights(30, 6)) }

// TestPathWeightedMatchesFits: the weighted k-fold paths predict what
// weighted solvers fits on the fold's training rows predict.
func TestPathWeightedMatchesFits(t *testing.T) { pathMatchesFits(t, randWeights(40, 7)) }

// TestSearchWeights: Search with weights scores by the weighted metric
// (checked against a weighted refit's held-out predictions for a split),
// equal weights are the unweighted search, zero-weight rows are left out,
// and bad weights are a ParamError on "Weights".
func TestSearchWeights(t *testing.T) {
	ctx := context.Background()
	x, y := regData(60, 2, 11)
	n, _ := x.Dims()
	w := randWeights(n, 12)
	w[3], w[10] = 0, 0
	base := SearchOptions{Sigmas: []float64{1}, Lambdas: []float64{1e-3, 1e-1}, Validation: 0.25, Seed: 2, Task: solvers.TaskRegression}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 2
	}
	for _, crit := range []Criterion{CriterionCV, CriterionLOO, CriterionGCV} {
		for _, m := range []Method{MethodExact, MethodRidge} {
			o := base
			o.Criterion, o.Method = crit, m
			if m == MethodRidge {
				o.Sizes = []int{20}
			}
			plain, err := Search(ctx, x, y, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Weights = ones
			eq, err := Search(ctx, x, y, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range plain.Rows {
				if plain.Rows[i].Mean != eq.Rows[i].Mean {
					t.Errorf("%s %s: equal weights score %g, unweighted %g", crit, m, eq.Rows[i].Mean, plain.Rows[i].Mean)
				}
			}
			o.Weights = w
			o.Refit = true
			wr, err := Search(ctx, x, y, o)
			if err != nil {
				t.Fatal(err)
			}
			if wr.Model == nil || math.IsNaN(wr.Best.Mean) {
				t.Fatalf("%s %s: weighted search: %+v", crit, m, wr.Best)
			}
		}
	}

	// The weighted split score is the weighted RMSE of a weighted fit on
	// the split's training rows (zero-weight rows left out first).
	var kept []int
	for i, v := range w {
		if v > 0 {
			kept = append(kept, i)
		}
	}
	xk, yk, wk := dataset.MustSelectRows(x, kept), dataset.MustSelectRows(y, kept), subsetWeights(w, kept)
	train, test := dataset.Split(len(kept), 0.75, 2)
	o := base
	o.Weights, o.Lambdas = w, []float64{1e-2}
	res, err := Search(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := solvers.FitKRR(ctx, kernels.Gaussian{Sigma: 1}, dataset.MustSelectRows(xk, train), dataset.MustSelectRows(yk, train), 1e-2, solvers.Options{Weights: subsetWeights(wk, train)})
	if err != nil {
		t.Fatal(err)
	}
	pred := mat.NewDense(len(test), 1, nil)
	if err := m.Predict(pred, dataset.MustSelectRows(xk, test)); err != nil {
		t.Fatal(err)
	}
	num, den := 0.0, 0.0
	for r, i := range test {
		d := pred.At(r, 0) - yk.At(i, 0)
		num += wk[i] * d * d
		den += wk[i]
	}
	if want := math.Sqrt(num / den); !relClose(res.Best.Mean, want, 1e-9) {
		t.Errorf("weighted split score %.15g, weighted RMSE of the weighted fit %.15g", res.Best.Mean, want)
	}

	for _, bad := range [][]float64{make([]float64, n-1), make([]float64, n), {math.NaN()}} {
		o := base
		o.Weights = bad
		if len(bad) == 1 {
			o.Weights = append([]float64{math.NaN()}, ones[1:]...)
		}
		var pe *zonal.ParamError
		if _, err := Search(ctx, x, y, o); !errors.As(err, &pe) || pe.Param != "Weights" {
			t.Errorf("bad weights %v...: %v", o.Weights[:1], err)
		} else if len(bad) == n && !strings.Contains(pe.Reason, "all weights are zero") {
			t.Errorf("all-zero weights: %v, want the reason to say all weights are zero", err)
		}
	}
}

// TestWeightedScore: weighted accuracy and RMSE by their definitions.
func TestWeightedScore(t *testing.T) {
	pred, truth, w := []float64{1, 0, 1, 1}, []float64{1, 1, 1, 0}, []float64{1, 2, 3, 4}
	if got := weightedScore(pred, truth, w, true); got != 0.4 {
		t.Errorf("weighted accuracy %g, want (1+3)/10", got)
	}
	if got, want := weightedScore(pred, truth, w, false), math.Sqrt(6.0/10); math.Abs(got-want) > 1e-15 {
		t.Errorf("weighted RMSE %g, want %g", got, want)
	}
}

// ParK's search fits every fold with its training rows' weights and scores
// by the weighted metric: its split score is the weighted RMSE of a
// weighted FitParK on the split's training rows (recomputed here with the
// same options).
func TestSearchParKWeights(t *testing.T) {
	ctx := context.Background()
	x, y := regData(80, 2, 13)
	n, _ := x.Dims()
	w := randWeights(n, 14)
	o := SearchOptions{Method: MethodParK, Cells: 2, Sizes: []int{20}, Sigmas: []float64{1}, Lambdas: []float64{1e-3},
		Validation: 0.25, Seed: 3, Task: solvers.TaskRegression, Weights: w}
	res, err := Search(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	train, test := dataset.Split(n, 0.75, 3)
	s, err := newSearcher(x, y, &o)
	if err != nil {
		t.Fatal(err)
	}
	po := s.parkOptions(20, 0, 1)
	po.Weights = subsetWeights(w, train)
	m, err := solvers.FitParK(ctx, kernels.Gaussian{Sigma: 1}, dataset.MustSelectRows(x, train), dataset.MustSelectRows(y, train), 1e-3, po)
	if err != nil {
		t.Fatal(err)
	}
	pred := mat.NewDense(len(test), 1, nil)
	if err := m.Predict(pred, dataset.MustSelectRows(x, test)); err != nil {
		t.Fatal(err)
	}
	num, den := 0.0, 0.0
	for r, i := range test {
		d := pred.At(r, 0) - y.At(i, 0)
		num += w[i] * d * d
		den += w[i]
	}
	if want := math.Sqrt(num / den); !relClose(res.Best.Mean, want, 1e-9) {
		t.Errorf("weighted ParK split score %.15g, weighted RMSE of the weighted fit %.15g", res.Best.Mean, want)
	}
}

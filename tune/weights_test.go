package tune

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
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

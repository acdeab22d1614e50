package tune

import (
	"context"
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// TestSearchParK: the ParK table's every score is what FitParK on that
// fold, with that setting, scores on the held-out rows (recomputed here
// independently for the best row); the search picks a setting that
// classifies digits well, and the refit reloads and predicts identically.
func TestSearchParK(t *testing.T) {
	x, y := digits(t, 360)
	opts := SearchOptions{Method: MethodParK, Cells: 3, Sizes: []int{90}, Folds: 3, Seed: 5, Refit: true,
		Lambdas: []float64{1e-6, 1e-3}}
	res, err := Search(context.Background(), x, y, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 5*2 || res.Groups != 5 {
		t.Fatalf("%d rows in %d groups, want 10 in 5", len(res.Rows), res.Groups)
	}
	if res.Best.Mean < 0.85 {
		t.Fatalf("best CV accuracy %.3f < 0.85 on digits (table %+v)", res.Best.Mean, res.Rows)
	}
	// Recompute the best row's fold scores by hand.
	folds, err := dataset.KFold(360, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := kernels.NewGaussian(res.Best.Sigma)
	enc, _ := solvers.NewEncoding(mat.Col(nil, 0, y), solvers.TaskAuto)
	tt, _ := enc.Targets(mat.Col(nil, 0, y))
	for fi, f := range folds {
		m, err := solvers.FitParK(context.Background(), k, dataset.MustSelectRows(x, f.Train), dataset.MustSelectRows(tt, f.Train), res.Best.Lambda,
			solvers.ParKOptions{Cells: 3, Centers: 90, Iterations: parkIterations, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		out := mat.NewDense(len(f.Test), 10, nil)
		if err := m.Predict(out, dataset.MustSelectRows(x, f.Test)); err != nil {
			t.Fatal(err)
		}
		pred := make([]float64, len(f.Test))
		enc.Decode(pred, out)
		truth := make([]float64, len(f.Test))
		for r, i := range f.Test {
			truth[r] = y.At(i, 0)
		}
		if got, want := res.Best.Scores[fi], solvers.Accuracy(pred, truth); got != want {
			t.Fatalf("fold %d: table says %.4f, a ParK fit scores %.4f", fi, got, want)
		}
	}
	if res.Model == nil {
		t.Fatal("no refit model")
	}
	reloadsIdentically(t, res.Model, x)
	if res.Model.Model.Kind() != solvers.KindParK {
		t.Fatalf("refit kind %q, want park", res.Model.Model.Kind())
	}
}

func TestSearchParKBadOptions(t *testing.T) {
	x, y := regData(40, 2, 3)
	for name, o := range map[string]SearchOptions{
		"loo":                 {Method: MethodParK, Criterion: CriterionLOO, Sizes: []int{8}},
		"gcv":                 {Method: MethodParK, Criterion: CriterionGCV, Sizes: []int{8}},
		"fewer centres":       {Method: MethodParK, Cells: 5, Sizes: []int{4}},
		"negative cells":      {Method: MethodParK, Cells: -1, Sizes: []int{8}},
		"centres beyond fold": {Method: MethodParK, Sizes: []int{35}},
	} {
		if _, err := Search(context.Background(), x, y, o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: err = %v, want zonal.ErrParam", name, err)
		}
	}
}

package tune

import (
	"context"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// TestAutoSharedData: Auto with FALKON (no other setting) on each small
// shared data set, standardized on an 80% training split, scored on the
// other 20%. The floors are well below the logged results: they catch a
// tuner that picks a useless sigma or lambda (as an earlier tuner did:
// accuracy 0.084 on digits, R^2 -0.016 on BostonHousing), not a change of a
// point or two.
func TestAutoSharedData(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, c := range []struct {
		name  string
		floor float64 // accuracy, or R^2 for regression
	}{
		{"BostonHousing", 0.7}, {"diabetes", 0.3}, {"Ozone", 0.6},
		{"breast_cancer", 0.93}, {"digits", 0.95}, {"spam", 0.9},
	} {
		d := sharedSet(t, c.name)
		n, _ := d.Dims()
		tr, te := dataset.Split(n, 0.8, 1)
		a, b := subset(t, d, tr), subset(t, d, te)
		standardize(t, a.X, b.X)
		start := time.Now()
		res, err := Auto(context.Background(), a.X, mat.NewDense(len(tr), 1, a.Y), GoldenOptions{SearchOptions: SearchOptions{Method: MethodFalkon, Seed: 1}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pred := make([]float64, len(te))
		if err := res.Model.PredictLabels(pred, b.X); err != nil {
			t.Fatal(err)
		}
		m := res.Encoding.Evaluate(pred, b.Y)
		got := 0.0
		if m.Accuracy != nil {
			got = *m.Accuracy
		} else {
			got = *m.R2
		}
		t.Logf("%-14s %-14s best %+v (LOO %s %.4f), test %s %.4f, %v", c.name, res.Encoding.Task, res.Best.Setting, res.Metric, res.Best.Mean,
			map[bool]string{true: "accuracy", false: "R^2"}[m.Accuracy != nil], got, time.Since(start).Round(time.Millisecond))
		if got < c.floor {
			t.Errorf("%s: test %.4f below %.2f", c.name, got, c.floor)
		}
		if wantCls := c.name == "breast_cancer" || c.name == "digits" || c.name == "spam"; wantCls != (res.Encoding.Task == solvers.TaskClassification) {
			t.Errorf("%s: task %v", c.name, res.Encoding.Task)
		}
	}
}

package tune

import (
	"context"
	"math"
	"testing"

	"github.com/zonal-ml/zonal/solvers"
)

// TestScoreBasisSameScores: scoring the FALKON and Nystrom-ridge groups on
// the eigenbasis map (scoreBasis, Rank() features) gives the scores of the
// m-column map: leave-one-out and GCV on all rows, 3-fold CV, with weights
// and with both intercepts, over a sigma grid whose widest kernel makes the
// tuning centres' K_CC numerically singular (rank below the centre count).
// Both maps have the same hat matrix; tolerance 1e-7 relative: they differ
// by the rounding of the two feature products and of two
// eigendecompositions of different size, amplified where lambda n is
// small against the floored eigenvalues (measured below 1e-9 here); a map
// that dropped or mis-scaled a direction moves the scores at 1e-2 or more.
func TestScoreBasisSameScores(t *testing.T) {
	x, y := regData(300, 3, 9)
	w := make([]float64, 300)
	for i := range w {
		w[i] = 0.5 + float64(i%4)
	}
	cases := []struct {
		name string
		o    SearchOptions
	}{
		{"falkon loo", SearchOptions{Method: MethodFalkon, Criterion: CriterionLOO}},
		{"falkon gcv", SearchOptions{Method: MethodFalkon, Criterion: CriterionGCV}},
		{"falkon cv", SearchOptions{Method: MethodFalkon, Criterion: CriterionCV, Folds: 3}},
		{"falkon loo weighted, both intercepts", SearchOptions{Method: MethodFalkon, Criterion: CriterionLOO, Weights: w, BothIntercepts: true}},
		{"falkon loo fitted intercept", SearchOptions{Method: MethodFalkon, Criterion: CriterionLOO, Intercept: solvers.InterceptFitted}},
		{"nystrom ridge loo", SearchOptions{Method: MethodRidge, Map: MapNystrom, Criterion: CriterionLOO}},
	}
	// The widest sigma's K_CC on the 80 tuning centres is numerically
	// singular, so the two maps differ in width there.
	s, err := newSearcher(x, y, &SearchOptions{Method: MethodFalkon, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := s.kernel(20)
	fm, err := s.mapFor(k, 80, x, true)
	if err != nil {
		t.Fatal(err)
	}
	if fm.Dim() >= 80 {
		t.Fatalf("sigma 20: the eigenbasis map has %d features, want fewer than 80", fm.Dim())
	}
	t.Logf("sigma 20: %d of 80 features", fm.Dim())
	defer func() { scoreBasis = true }()
	for _, c := range cases {
		o := c.o
		o.Sizes, o.Seed = []int{80}, 4
		o.Sigmas = []float64{0.7, 3, 20}
		o.Lambdas = []float64{1e-9, 1e-6, 1e-3}
		run := func(basis bool) *Result {
			scoreBasis = basis
			r, err := Search(context.Background(), x, y, o)
			if err != nil {
				t.Fatalf("%s (basis %v): %v", c.name, basis, err)
			}
			return r
		}
		full, basis := run(false), run(true)
		if len(full.Rows) != len(basis.Rows) {
			t.Fatalf("%s: %d rows against %d", c.name, len(full.Rows), len(basis.Rows))
		}
		worst := 0.0
		for i := range full.Rows {
			a, b := full.Rows[i], basis.Rows[i]
			if a.Setting != b.Setting {
				t.Fatalf("%s: row %d settings %+v against %+v", c.name, i, a.Setting, b.Setting)
			}
			if !relClose(a.Mean, b.Mean, 1e-7) {
				t.Fatalf("%s: %+v: score %.12g with the m-column map, %.12g in the eigenbasis", c.name, a.Setting, a.Mean, b.Mean)
			}
			worst = max(worst, relDiff(a.Mean, b.Mean))
		}
		t.Logf("%s: largest relative difference %.3g", c.name, worst)
	}
}

// relDiff is |a-b| / max(1, |a|, |b|), relClose's measure.
func relDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

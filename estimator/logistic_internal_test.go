package estimator

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// refineLambdas puts LogisticRefine-1 log-even values strictly between
// the best grid value and each neighbour, none at the grid's own values,
// and only on the sides the grid has.
func TestRefineLambdas(t *testing.T) {
	grid := []float64{1e-1, 1e-2, 1e-3, 1e-4}
	for _, tc := range []struct {
		best   int
		lo, hi float64
	}{{0, 1e-2, 1e-1}, {2, 1e-4, 1e-2}, {3, 1e-4, 1e-3}} {
		fine := refineLambdas(grid, tc.best)
		sides := 2
		if tc.best == 0 || tc.best == len(grid)-1 {
			sides = 1
		}
		if len(fine) != sides*(LogisticRefine-1) {
			t.Fatalf("best %d: %d values %v, want %d", tc.best, len(fine), fine, sides*(LogisticRefine-1))
		}
		for i, l := range fine {
			if !(l > tc.lo && l < tc.hi) || slices.ContainsFunc(grid, func(g float64) bool { return math.Abs(g-l) < 1e-12*g }) ||
				i > 0 && !(l < fine[i-1]) {
				t.Errorf("best %d: refined %v, want decreasing values strictly inside (%g, %g) off the grid", tc.best, fine, tc.lo, tc.hi)
				break
			}
		}
		if want := grid[max(tc.best-1, 0)] * math.Pow(10, -0.25); math.Abs(fine[0]-want) > 1e-12*want {
			t.Errorf("best %d: first refined value %g, want a quarter decade below the upper neighbour %g", tc.best, fine[0], want)
		}
	}
	if fine := refineLambdas([]float64{1e-3}, 0); len(fine) != 0 {
		t.Errorf("a one-value grid refined to %v, want nothing", fine)
	}
	l, c := mergeCurves([]float64{1, 0.1, 0.01}, []float64{3, 1, 2}, []float64{0.5, 0.05}, []float64{4, 5})
	if !slices.Equal(l, []float64{1, 0.5, 0.1, 0.05, 0.01}) || !slices.Equal(c, []float64{3, 4, 1, 5, 2}) {
		t.Errorf("mergeCurves: %v %v", l, c)
	}
}

// pathEnded ends a path after LogisticPatience losses in a row more than
// LogisticPatienceRise above the least: not on a plateau whose losses wander
// by less (the fitted intercept's held-out log-losses at lambda 0.1, 0.01,
// 1e-3 on a 1%-positive set, where the path must go on), and not when a
// loss within the rise, or a new least, breaks the run.
func TestPathEnded(t *testing.T) {
	for _, tc := range []struct {
		losses []float64
		want   bool
	}{
		{[]float64{0.056002, 0.056009, 0.056084}, false},
		{[]float64{0.056002, 0.056009, 0.056084, 0.05666, 0.05059}, false},
		{[]float64{0.0304, 0.0223, 0.0248, 0.0453}, true},
		{[]float64{0.0304, 0.0223, 0.0248, 0.0224, 0.0453}, false}, // 0.0224 is within 1% of 0.0223
		{[]float64{0.5, 0.4, 0.6, 0.3, 0.7}, false},                // a new least after one rise
		{[]float64{0.5, 0.4, 0.6, 0.3, 0.7, 0.8}, true},
		{[]float64{0.1}, false},
		{nil, false},
	} {
		if got := pathEnded(tc.losses, LogisticPatience); got != tc.want {
			t.Errorf("pathEnded(%v, %d) = %v, want %v", tc.losses, LogisticPatience, got, tc.want)
		}
	}
	if pathEnded([]float64{0.1, 0.2, 0.3, 0.4}, 0) {
		t.Error("patience 0 ended a path")
	}
}

// logisticBlobs is n rows of two overlapping classes in 2-D: label 1 when
// sin(2 x1) + x2 + 0.3 e > 0, x, e standard normal; a smooth boundary with
// little noise, so the best lambda is small.
func logisticBlobs(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		if math.Sin(2*a)+b+0.3*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return x, y
}

// blobsTuning is the plan (lambdas its grid, nil: AutoLambdas), kernel at
// sigma 1 and tuning folds of the logistic lambda choice on the 300 rows
// x, y of logisticBlobs, seed seed.
func blobsTuning(t *testing.T, x *mat.Dense, y []float64, seed uint64, lambdas []float64) (Options, *Plan, KernelSpec, *logisticTuning) {
	t.Helper()
	o := Options{Loss: LossLogistic, Sigma: 1, Seed: seed}
	p, err := NewPlan(Shape{Rows: 300, Cols: 2}, o)
	if err != nil {
		t.Fatal(err)
	}
	if lambdas != nil {
		p.Lambdas = lambdas
	}
	ks := p.Kernel
	ks.Sigma = 1
	tun, err := newLogisticTuning(p, o, ks, x, y, nil, tuneCentres(p))
	if err != nil {
		t.Fatal(err)
	}
	return o, p, ks, tun
}

// The lambda chooseLogisticLambda picks is the best of a quarter-decade
// grid over the whole range of the plan's lambdas (an oracle on the same
// folds and centres, 4x the values): its held-out log-loss within 0.1%
// of the oracle's and the lambda within a factor 1.1 of it, less than the
// quarter-decade step (1.78), so the decade grid alone (before
// LogisticRefine), whose best here is a quarter decade off, fails it. The
// held-out curve of one log-loss minimum has its least quarter-decade
// value next to its least decade value, which the refinement scores.
func TestChooseLogisticLambdaNearFineOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 2 x 25 logistic paths")
	}
	ctx := context.Background()
	x, y := logisticBlobs(300, 5)
	o, p, ks, tun := blobsTuning(t, x, y, 2, []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7})
	pick, err := chooseLogisticLambda(ctx, p, o, tun)
	if err != nil {
		t.Fatal(err)
	}
	lambda, loss, desc := pick.lambda, pick.loss, pick.desc
	var fine []float64
	for e := -1.0; e >= -7.001; e -= 0.25 {
		fine = append(fine, math.Pow(10, e))
	}
	cv, tun2, err := logisticHeldOut(ctx, p, o, ks, x, y, nil, fine, tuneCentres(p))
	if err != nil {
		t.Fatal(err)
	}
	best := leastLoss(cv.loss)
	oracle := fine[best] * tun2.trsum / 300 // on all rows, as chooseLogisticLambda scales
	decade := math.Inf(1)
	for i := 0; i < len(fine); i += 4 {
		decade = min(decade, cv.loss[i])
	}
	t.Logf("chosen lambda %.3g (held-out log-loss %.4f), quarter-decade oracle %.3g (%.4f), decade grid's best %.4f; %s",
		lambda, loss, oracle, cv.loss[best], decade, desc)
	if !(loss <= 1.001*cv.loss[best]) {
		t.Errorf("chosen lambda's held-out log-loss %.4f, want within 0.1%% of the quarter-decade oracle's %.4f", loss, cv.loss[best])
	}
	if r := lambda / oracle; !(r < 1.1 && r > 1/1.1) {
		t.Errorf("chosen lambda %.3g, want within a factor 1.1 of the quarter-decade oracle's %.3g", lambda, oracle)
	}
	if oracle > 1e-3 {
		t.Errorf("oracle lambda %.3g: the problem was meant to want a small lambda", oracle)
	}
}

// Ending each fold's grid path LogisticPatience lambdas past its best
// chooses what the whole grid chooses (the same lambda, its held-out
// log-loss to 1e-9) at fewer Newton steps, and the refinement
// warm-started from the grid models reaches the cold refinement's curve
// (to 1e-3 of its log-losses: both stop at LogisticTuneGradTol).
func TestLogisticPatienceAndWarmRefinement(t *testing.T) {
	if testing.Short() {
		t.Skip("fits logistic paths on 5 folds three times")
	}
	ctx := context.Background()
	x, y := logisticBlobs(300, 7)
	o, p, _, tun := blobsTuning(t, x, y, 3, nil)
	short, err := chooseLogisticLambda(ctx, p, o, tun)
	if err != nil {
		t.Fatal(err)
	}
	tun.patience = 0
	whole, err := chooseLogisticLambda(ctx, p, o, tun)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("patience %d: lambda %.4g, held-out log-loss %.6f, %d Newton steps, %d CG; whole grid: %.4g, %.6f, %d, %d; %s",
		LogisticPatience, short.lambda, short.loss, short.cost.steps, short.cost.cg, whole.lambda, whole.loss, whole.cost.steps, whole.cost.cg, short.desc)
	if short.lambda != whole.lambda || math.Abs(short.loss-whole.loss) > 1e-9 {
		t.Errorf("patience chose %g (%.6f), the whole grid %g (%.6f)", short.lambda, short.loss, whole.lambda, whole.loss)
	}
	if !(short.cost.steps < whole.cost.steps) {
		t.Errorf("patience took %d Newton steps, the whole grid %d", short.cost.steps, whole.cost.steps)
	}
	// The warm refinement against the cold one, on the same folds.
	grid := slices.Clone(p.Lambdas)
	slices.Sort(grid)
	slices.Reverse(grid)
	cv, paths, err := tun.curve(ctx, p, o, grid, -1, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	best := leastLoss(cv.loss)
	fine := refineLambdas(grid, best)
	warm, _, err := tun.curve(ctx, p, o, fine, max(best-1, 0), paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	cold, _, err := tun.curve(ctx, p, o, fine, -1, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("refinement: warm %d Newton steps %d CG, cold %d, %d", warm.cost.steps, warm.cost.cg, cold.cost.steps, cold.cost.cg)
	for i := range fine {
		if math.Abs(warm.loss[i]-cold.loss[i]) > 1e-3*cold.loss[i] {
			t.Errorf("lambda %g: warm refinement's held-out log-loss %.6f, cold %.6f", fine[i], warm.loss[i], cold.loss[i])
		}
	}
	if !(warm.cost.steps < cold.cost.steps) {
		t.Errorf("warm refinement took %d Newton steps, cold %d", warm.cost.steps, cold.cost.steps)
	}
}

// The logistic lambda is scored on enough held-out rows of every class:
// on 4000 balanced rows the first of the 5 folds (800 held-out rows, 400
// of each class) is enough, and on 4000 rows with 2% positives (80 of
// them, 16 a fold) folds are added until 50 held-out positives are in
// (LogisticHeldOutClassRows): 4 folds, not the first fold's 16, whose
// log-loss on the rare class rests on a handful of rows.
func TestLogisticTuningHeldOutPerClass(t *testing.T) {
	const n = 4000
	x := mat.NewDense(n, 2, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
	}
	for _, c := range []struct {
		every     int // a positive every so many rows
		wantFolds int
	}{{2, 1}, {50, 4}} {
		y := make([]float64, n)
		for i := range y {
			if i%c.every == 0 {
				y[i] = 1
			}
		}
		o := Options{Loss: LossLogistic, Sigma: 1, Seed: 1}
		p, err := NewPlan(Shape{Rows: n, Cols: 2}, o)
		if err != nil {
			t.Fatal(err)
		}
		ks := p.Kernel
		ks.Sigma = 1
		tun, err := newLogisticTuning(p, o, ks, x, y, nil, tuneCentres(p))
		if err != nil {
			t.Fatal(err)
		}
		pos := 0 // held-out rows of label 1 (the binary target column is +1 there)
		for _, f := range tun.folds {
			for i := 0; i < f.tte.RawMatrix().Rows; i++ {
				if f.tte.At(i, 0) > 0 {
					pos++
				}
			}
		}
		if want := min(LogisticHeldOutClassRows, n/c.every); pos < want {
			t.Errorf("positive every %d rows: %d held-out positives, want at least %d", c.every, pos, want)
		}
		if len(tun.sub) != n {
			t.Fatalf("positive every %d rows: %d tuning rows, want all %d", c.every, len(tun.sub), n)
		}
		if len(tun.folds) != c.wantFolds {
			t.Errorf("positive every %d rows: %d folds, want %d", c.every, len(tun.folds), c.wantFolds)
		}
		t.Logf("positive every %d rows: %d folds (%s), %d held-out positives", c.every, len(tun.folds), tun.how, pos)
	}
}

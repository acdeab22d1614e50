package tune

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

func TestSearchDigitsAllMethods(t *testing.T) {
	x, y := digits(t, 400)
	for _, c := range []SearchOptions{
		{Method: MethodExact},
		{Method: MethodRidge, Map: MapFourier, Sizes: []int{200}},
		{Method: MethodRidge, Map: MapNystrom, Sizes: []int{150}},
		{Method: MethodFalkon, Sizes: []int{150}},
		{Method: MethodExact, Criterion: CriterionLOO},
		{Method: MethodFalkon, Criterion: CriterionGCV, Sizes: []int{100}},
		{Method: MethodExact, Validation: 0.25},
	} {
		c.Seed = 7
		c.Refit = true
		var last zonal.Progress
		c.Progress = func(p zonal.Progress) { last = p }
		res, err := Search(context.Background(), x, y, c)
		if err != nil {
			t.Fatalf("%s/%s/%s: %v", c.Method, c.Map, c.Criterion, err)
		}
		if res.Encoding.Task != solvers.TaskClassification || len(res.Encoding.Classes) != 10 {
			t.Fatalf("digits read as %v with %d classes", res.Encoding.Task, len(res.Encoding.Classes))
		}
		if want := 5 * 10 * max(1, len(c.Sizes)); len(res.Rows) != want || res.Groups != 5*max(1, len(c.Sizes)) {
			t.Fatalf("%d rows, %d groups, want %d rows", len(res.Rows), res.Groups, want)
		}
		if last.Stage != "tune" || last.Done != last.Total || last.Total != len(res.Rows) {
			t.Fatalf("last progress %+v for %d rows", last, len(res.Rows))
		}
		t.Logf("%s %s %s: best %+v (%s %.4f +- %.4f), %d groups in %v", c.Method, c.Map, res.Criterion,
			res.Best.Setting, res.Metric, res.Best.Mean, res.Best.Std, res.Groups, res.Elapsed)
		// The refit model reloads and predicts identically.
		p1 := reloadsIdentically(t, res.Model, x)
		if res.Metric == "accuracy" && res.Best.Mean < 0.9 {
			t.Fatalf("best CV accuracy %.3f < 0.9 on digits", res.Best.Mean)
		}
		if acc := solvers.Accuracy(p1, mat.Col(nil, 0, y)); acc < 0.95 {
			t.Fatalf("refit training accuracy %.3f", acc)
		}
	}
}

// TestSearchDeterministic: the same seed gives the same table, whatever the
// number of parallel fold workers; another seed another one.
func TestSearchDeterministic(t *testing.T) {
	x, y := regData(120, 3, 4)
	run := func(seed uint64, workers int, solver Solver) *Result {
		res, err := Search(context.Background(), x, y, SearchOptions{Method: MethodRidge, Sizes: []int{40}, Seed: seed, Workers: workers, Solver: solver})
		if err != nil {
			t.Fatal(err)
		}
		if res.Metric != "rmse" {
			t.Fatalf("metric %q for a continuous target", res.Metric)
		}
		return res
	}
	a, b, c := run(1, 1, ""), run(1, 3, ""), run(2, 1, "")
	// Both solvers of the fold paths give the same scores to 1e-8 for
	// lambda >= 1e-6; below, c = lambda n_tr meets eigenvalues of Z^T Z near
	// 0 (condition numbers past 1e8) and the two factorisations part at the
	// level of cond * 2^-52.
	e, ch := run(1, 2, SolverEig), run(1, 2, SolverCholesky)
	for i := range e.Rows {
		if e.Rows[i].Lambda < 1e-6 {
			continue
		}
		for f := range e.Rows[i].Scores {
			if !relClose(e.Rows[i].Scores[f], ch.Rows[i].Scores[f], 1e-8) {
				t.Fatalf("row %d fold %d: eig %.15g, cholesky %.15g", i, f, e.Rows[i].Scores[f], ch.Rows[i].Scores[f])
			}
		}
	}
	for i := range a.Rows {
		if !reflect.DeepEqual(a.Rows[i].Scores, b.Rows[i].Scores) || a.Rows[i].Setting != b.Rows[i].Setting {
			t.Fatalf("row %d differs between 1 and 3 workers: %+v vs %+v", i, a.Rows[i], b.Rows[i])
		}
	}
	if reflect.DeepEqual(a.Rows[0].Scores, c.Rows[0].Scores) {
		t.Fatal("seeds 1 and 2 gave the same scores")
	}
}

// TestFalkonCentersMatch: the tuned FALKON path uses the centres the refit
// by solvers.FitFalkon draws, and the refit predicts like the path's
// closed-form solution (FALKON's CG converges to it).
func TestFalkonCentersMatch(t *testing.T) {
	x, y := regData(150, 2, 5)
	res, err := Search(context.Background(), x, y, SearchOptions{
		Method: MethodFalkon, Sizes: []int{30}, Seed: 11, Refit: true,
		Sigmas: []float64{1}, Lambdas: []float64{1e-3},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Model.Model.(*solvers.Falkon)
	n, _ := x.Dims()
	if got, want := f.CenterIndices(), falkonCenters(n, 30, 11); !reflect.DeepEqual(got, want) {
		t.Fatalf("FitFalkon centres %v, tuned path used %v", got, want)
	}
	// The same setting as ridge on the Nystrom map of those centres, fitted
	// exactly: its predictions match FALKON's to CG's accuracy.
	s, err := newSearcher(x, y, &SearchOptions{Method: MethodFalkon, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := s.kernel(1)
	// Both forms of the map: the m-column one of the refits and the
	// eigenbasis one the groups are scored on.
	for _, basis := range []bool{false, true} {
		fm, err := s.mapFor(k, 30, x, basis)
		if err != nil {
			t.Fatal(err)
		}
		r, err := solvers.FitRidge(context.Background(), fm, x, y, 1e-3, solvers.RidgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, b := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
		if err := f.Predict(a, x); err != nil {
			t.Fatal(err)
		}
		if err := r.Predict(b, x); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			// 1e-6: FALKON stops CG at relative residual 1e-9 on a system whose
			// preconditioned condition number is modest but not 1.
			if !relClose(a.At(i, 0), b.At(i, 0), 1e-6) {
				t.Fatalf("basis %v, row %d: FALKON %.12g, Nystrom ridge %.12g", basis, i, a.At(i, 0), b.At(i, 0))
			}
		}
	}
}

// TestGoldenBeatsGrid: golden-section search on log sigma with the lambda
// path inside finds a CV error no worse than a 13-point sigma grid over the
// same bracket, with 8 evaluations instead of 13.
func TestGoldenBeatsGrid(t *testing.T) {
	x, y := regData(150, 2, 6)
	// A wigglier target than regData's, so that the best sigma is inside
	// the bracket (with a smooth one, the largest sigma and the smallest
	// lambda win at the edge, where golden-section search never looks).
	for i := 0; i < 150; i++ {
		y.Set(i, 0, math.Sin(3*x.At(i, 0))+0.3*x.At(i, 1)+0.1*math.Cos(float64(7*i)))
	}
	lo, hi := 0.05, 20.0
	grid := make([]float64, 13)
	for i := range grid {
		grid[i] = lo * math.Pow(hi/lo, float64(i)/12)
	}
	base := SearchOptions{Method: MethodExact, Seed: 3}
	gs := base
	gs.Sigmas = grid
	gr, err := Search(context.Background(), x, y, gs)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Golden(context.Background(), x, y, GoldenOptions{SearchOptions: base, Lo: lo, Hi: hi, Evaluations: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("grid: %d groups, best %+v rmse %.5f; golden: %d groups, best %+v rmse %.5f",
		gr.Groups, gr.Best.Setting, gr.Best.Mean, g.Groups, g.Best.Setting, g.Best.Mean)
	if g.Groups != 8 || gr.Groups != 13 {
		t.Fatalf("groups: golden %d, grid %d", g.Groups, gr.Groups)
	}
	if g.Best.Mean > gr.Best.Mean*(1+1e-3) {
		t.Fatalf("golden best RMSE %.6f worse than the grid's %.6f", g.Best.Mean, gr.Best.Mean)
	}
}

func TestBadGrids(t *testing.T) {
	x, y := regData(20, 2, 7)
	nan := math.NaN()
	for name, o := range map[string]SearchOptions{
		"empty sigmas":        {Sigmas: []float64{}},
		"zero sigma":          {Sigmas: []float64{1, 0}},
		"negative sigma":      {Sigmas: []float64{-1}},
		"NaN sigma":           {Sigmas: []float64{nan}},
		"Inf sigma":           {Sigmas: []float64{math.Inf(1)}},
		"empty lambdas":       {Lambdas: []float64{}},
		"zero lambda":         {Lambdas: []float64{0}},
		"NaN lambda":          {Lambdas: []float64{1e-3, nan}},
		"negative lambda":     {Lambdas: []float64{-1e-3}},
		"more centres":        {Method: MethodFalkon, Sizes: []int{21}},
		"more Nystrom":        {Method: MethodRidge, Map: MapNystrom, Sizes: []int{50}},
		"zero centres":        {Method: MethodFalkon, Sizes: []int{0}},
		"empty sizes":         {Method: MethodFalkon, Sizes: []int{}},
		"odd Fourier":         {Method: MethodRidge, Sizes: []int{7}},
		"one fold":            {Folds: 1},
		"more folds than n":   {Folds: 21},
		"validation 1":        {Validation: 1},
		"validation negative": {Validation: -0.2},
		"unknown method":      {Method: "svm"},
		"unknown map":         {Method: MethodRidge, Map: "sketch"},
		"unknown criterion":   {Criterion: "aic"},
		"unknown solver":      {Solver: "qr"},
	} {
		_, err := Search(context.Background(), x, y, o)
		if !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: err = %v, want zonal.ErrParam", name, err)
		}
	}
	for name, o := range map[string]GoldenOptions{
		"lo > hi":        {Lo: 2, Hi: 1},
		"negative lo":    {Lo: -1, Hi: 1},
		"NaN hi":         {Lo: 1, Hi: nan},
		"one evaluation": {Evaluations: 1},
	} {
		if _, err := Golden(context.Background(), x, y, o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("golden %s: err = %v, want zonal.ErrParam", name, err)
		}
	}
	// Bad data.
	bad := mat.DenseCopyOf(x)
	bad.Set(3, 1, nan)
	if _, err := Search(context.Background(), bad, y, SearchOptions{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in x: %v", err)
	}
	if _, err := Search(context.Background(), x, mat.NewDense(19, 1, nil), SearchOptions{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short y: %v", err)
	}
	// A budget too small for the kernel matrix.
	if _, err := Search(context.Background(), x, y, SearchOptions{Options: Options{MemoryBudget: 1000}}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("tiny budget: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Search(ctx, x, y, SearchOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// TestAutoAndRows: Auto on a subsample (Rows) picks a setting that scores
// well and refits on every row.
func TestAutoAndRows(t *testing.T) {
	x, y := digits(t, 600)
	res, err := Auto(context.Background(), x, y, GoldenOptions{SearchOptions: SearchOptions{Method: MethodFalkon, Rows: 300, Seed: 2}})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Model.Model.(*solvers.Falkon)
	if got := len(f.CenterIndices()); got != AutoCenters(300, 0, zonal.Float64) {
		t.Fatalf("refit has %d centres, want AutoCenters(300) = %d", got, AutoCenters(300, 0, zonal.Float64))
	}
	pred := make([]float64, 600)
	if err := res.Model.PredictLabels(pred, x); err != nil {
		t.Fatal(err)
	}
	// Rows 300..599 were not all tuned on; the refit saw all 600.
	acc := solvers.Accuracy(pred, mat.Col(nil, 0, y))
	t.Logf("auto: %+v, LOO accuracy %.4f on 300 rows, %d groups, training accuracy %.4f", res.Best.Setting, res.Best.Mean, res.Groups, acc)
	if res.Criterion != CriterionLOO || res.Groups != 6 || res.Best.Mean < 0.9 || acc < 0.95 {
		t.Fatalf("criterion %s, %d groups, LOO accuracy %.3f, training accuracy %.3f", res.Criterion, res.Groups, res.Best.Mean, acc)
	}
	if _, err := Search(context.Background(), x, y, SearchOptions{Rows: 2}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("Rows 2: %v", err)
	}
}

func TestWriteTable(t *testing.T) {
	x, y := regData(40, 2, 9)
	res, err := Search(context.Background(), x, y, SearchOptions{Sigmas: []float64{0.5, 1}, Lambdas: []float64{1e-3, 1e-1}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 || strings.Count(b.String(), "*") != 1 || !strings.HasPrefix(lines[5], "best: sigma ") {
		t.Fatalf("table:\n%s", b.String())
	}
	t.Log("\n" + b.String())
}

// TestCustomMap: NewMap tunes ridge on any map; here Fourier features built
// by the caller, which must reproduce the built-in Fourier search.
func TestCustomMap(t *testing.T) {
	x, y := regData(80, 2, 10)
	base := SearchOptions{Method: MethodRidge, Sizes: []int{30}, Sigmas: []float64{0.7, 1.4}, Seed: 4}
	want, err := Search(context.Background(), x, y, base)
	if err != nil {
		t.Fatal(err)
	}
	custom := base
	custom.NewMap = func(k kernels.Kernel, size int) (kernels.FeatureMap, error) {
		return kernels.NewFourierMap(k, 2, kernels.FourierOptions{Options: kernels.Options{Backend: backend.Default()}, Features: size, Seed: 4})
	}
	custom.Refit = true
	got, err := Search(context.Background(), x, y, custom)
	if err != nil {
		t.Fatal(err)
	}
	if got.Map != MapCustom || got.Best.Setting != want.Best.Setting || !reflect.DeepEqual(got.Rows[3].Scores, want.Rows[3].Scores) {
		t.Fatalf("custom map: %s %+v, built-in %+v", got.Map, got.Best, want.Best)
	}
	bad := base
	bad.NewMap = func(k kernels.Kernel, size int) (kernels.FeatureMap, error) {
		return kernels.NewFourierMap(k, 3, kernels.FourierOptions{Options: kernels.Options{Backend: backend.Default()}, Features: size})
	}
	if _, err := Search(context.Background(), x, y, bad); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("map for 3 inputs on 2 columns: %v", err)
	}
}

// TestFalkonRefitIsExact: whatever FALKON's CG reaches, the refitted model
// predicts what the tuner scored (the exact solution with those centres,
// ridge on their Nystrom map): on digits at lambda 1e-3, where CG
// converges; at lambda 1e-10, where its true residual stays near 6e-9,
// above Tol 1e-9, so the refit falls back to the direct solve; and on
// standardized spam at lambda 1e-9, where its residual stalls (the case
// that dropped the test accuracy from 0.93 to 0.70) and the refit falls
// back too.
func TestFalkonRefitIsExact(t *testing.T) {
	x, y := digits(t, 400)
	checkFalkonRefit(t, x, y, 30, 1e-10, 150, true)
	checkFalkonRefit(t, x, y, 6, 1e-3, 150, false)
	sub := subset(t, sharedSet(t, "spam"), seqRows(2000))
	standardize(t, sub.X)
	checkFalkonRefit(t, sub.X, mat.NewDense(2000, 1, sub.Y), 8, 1e-9, 400, true)
}

func seqRows(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func checkFalkonRefit(t *testing.T, x, y *mat.Dense, sigma, lambda float64, size int, wantFallback bool) {
	t.Helper()
	n, _ := x.Dims()
	res, err := Search(context.Background(), x, y, SearchOptions{
		Method: MethodFalkon, Sizes: []int{size}, Sigmas: []float64{sigma}, Lambdas: []float64{lambda}, Seed: 3, Refit: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if (res.RefitNote != "") != wantFallback {
		t.Fatalf("sigma %g lambda %g: note %q, want a fallback: %v", sigma, lambda, res.RefitNote, wantFallback)
	}
	if wantFallback && res.Model.Model.Kind() != solvers.KindRidge {
		t.Fatalf("note %q but model kind %s", res.RefitNote, res.Model.Model.Kind())
	}
	s, err := newSearcher(x, y, &SearchOptions{Method: MethodFalkon, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := s.kernel(sigma)
	fm, err := s.mapFor(k, size, x, false)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := solvers.FitRidge(context.Background(), fm, x, s.t, lambda, solvers.RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, kout := s.t.Dims()
	a, b := mat.NewDense(n, kout, nil), mat.NewDense(n, kout, nil)
	if err := res.Model.PredictOutputs(a, x); err != nil {
		t.Fatal(err)
	}
	if err := exact.Predict(b, x); err != nil {
		t.Fatal(err)
	}
	var d mat.Dense
	d.Sub(a, b)
	// 1e-4 of |F|: CG's stopping rule (1e-9 on the preconditioned
	// residual) bounds the error of a converged FALKON well below that.
	rel := mat.Norm(&d, 2) / mat.Norm(b, 2)
	t.Logf("sigma %g lambda %g: kind %s, |refit - exact| / |exact| = %.3g, note %q", sigma, lambda, res.Model.Model.Kind(), rel, res.RefitNote)
	if rel > 1e-4 {
		t.Fatalf("sigma %g lambda %g: refit differs from the exact solution by %.3g relative", sigma, lambda, rel)
	}
}

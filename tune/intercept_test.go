package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// ridgeFittedAt fits sum_{j != i} w_j (phi_j^T beta + b - y_j)^2 + c |beta|^2
// (beta penalised, b not) by its dense normal equations on every row but
// i, and returns the prediction at row i for each target column.
func ridgeFittedAt(t *testing.T, phi, y *mat.Dense, w []float64, c float64, i int) []float64 {
	t.Helper()
	n, D := phi.Dims()
	_, k := y.Dims()
	lhs := mat.NewDense(D+1, D+1, nil)
	rhs := mat.NewDense(D+1, k, nil)
	a := make([]float64, D+1)
	for r := 0; r < n; r++ {
		if r == i {
			continue
		}
		wr := 1.0
		if w != nil {
			wr = w[r]
		}
		copy(a, phi.RawRowView(r))
		a[D] = 1
		for p := 0; p <= D; p++ {
			for q := 0; q <= D; q++ {
				lhs.Set(p, q, lhs.At(p, q)+wr*a[p]*a[q])
			}
			for j := 0; j < k; j++ {
				rhs.Set(p, j, rhs.At(p, j)+wr*a[p]*y.At(r, j))
			}
		}
	}
	for p := 0; p < D; p++ {
		lhs.Set(p, p, lhs.At(p, p)+c)
	}
	var z mat.Dense
	if err := z.Solve(lhs, rhs); err != nil {
		t.Fatal(err)
	}
	copy(a, phi.RawRowView(i))
	a[D] = 1
	out := make([]float64, k)
	for j := range out {
		for p := 0; p <= D; p++ {
			out[j] += a[p] * z.At(p, j)
		}
	}
	return out
}

// TestLOOFittedInterceptMatchesRefits: the fitted-intercept closed forms
// (KRR on the centred scaled kernel, ridge on centred scaled features)
// equal refits on the other n-1 rows with the same absolute regulariser c
// and an unpenalised intercept, solved by dense normal equations; KRR's
// refit is ridge on features Phi = V S^(1/2) of the kernel (K = Phi Phi^T,
// so |beta|^2 is the RKHS norm), unweighted and weighted. Tolerance:
// closedTol, as for the mean intercept (the same conditioning).
func TestLOOFittedInterceptMatchesRefits(t *testing.T) {
	be := backend.Default()
	ctx := context.Background()
	x, y := regData(30, 3, 11)
	tg := twoOutputs(y)
	for i := 0; i < 30; i++ { // an offset the mean and fitted intercepts treat differently
		tg.Set(i, 0, tg.At(i, 0)+2)
	}
	n, _ := x.Dims()
	wts := make([]float64, n)
	for i := range wts {
		wts[i] = 0.5 + float64(i%4)/3
	}
	k := kernels.Gaussian{Sigma: 0.8}
	for _, w := range [][]float64{nil, wts} {
		sw := sqrtOf(w)
		u := unitWeights(sw, n)
		S := weightSum(t, w, n)
		// KRR: Phi from the unscaled kernel; the closed form from C D K D C.
		kf := mat.NewDense(n, n, nil)
		if err := kernelMatrix(ctx, be, k, kf, x, x); err != nil {
			t.Fatal(err)
		}
		phiK := mat.NewDense(n, n, nil)
		{
			kc := mat.DenseCopyOf(kf)
			ev := make([]float64, n)
			if err := be.SymEig(kc.RawMatrix(), ev, true); err != nil {
				t.Fatal(err)
			}
			clampEig(ev)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					phiK.Set(i, j, kc.At(i, j)*math.Sqrt(ev[j]))
				}
			}
		}
		scaleSym(kf, sw)
		centerSym(kf, u)
		ev := make([]float64, n)
		if err := be.SymEig(kf.RawMatrix(), ev, true); err != nil {
			t.Fatal(err)
		}
		clampEig(ev)
		krr := newLOO(be, kf, ev, tg, sw, true).withFittedIntercept()
		// Ridge: Fourier features, the closed form from C D Z.
		_, z := fourierFeatures(t, be, k, x, 16, 3)
		phiZ := mat.DenseCopyOf(z)
		scaleRowsBy(z, sw)
		centerCols(z, u)
		fs := newFeatureStats(be, z, tg, nil)
		evz := make([]float64, 16)
		if err := be.SymEig(fs.g.RawMatrix(), evz, true); err != nil {
			t.Fatal(err)
		}
		clampEig(evz)
		mulRightInPlace(be, z, fs.g)
		ridge := newLOO(be, z, evz, tg, sw, false).withFittedIntercept()
		for _, c := range []struct {
			name string
			l    *loo
			phi  *mat.Dense
		}{{"krr", krr, phiK}, {"ridge", ridge, phiZ}} {
			for _, lambda := range []float64{1e-4, 1e-2} {
				pred := mat.NewDense(n, 2, nil)
				c.l.predict(be, pred, lambda)
				worst := 0.0
				for i := 0; i < n; i++ {
					want := ridgeFittedAt(t, c.phi, tg, w, lambda*S, i)
					for j := range want {
						if !relClose(pred.At(i, j), want[j], closedTol) {
							t.Fatalf("%s weighted %v lambda %g row %d output %d: closed form %.15g, refit %.15g", c.name, w != nil, lambda, i, j, pred.At(i, j), want[j])
						}
						worst = max(worst, math.Abs(pred.At(i, j)-want[j]))
					}
				}
				t.Logf("%s weighted %v lambda %g: largest |closed form - refit| = %.3g", c.name, w != nil, lambda, worst)
			}
		}
	}
}

// TestSearchFittedIntercept: the search takes the fitted intercept with
// leave-one-out for krr and falkon and refuses it where it has no closed
// form; on data with a constant offset and a narrow kernel, exact KRR's
// best left-out error is lower with the fitted intercept than with the mean.
func TestSearchFittedIntercept(t *testing.T) {
	ctx := context.Background()
	x, y := regData(120, 3, 5)
	for i := 0; i < 120; i++ {
		y.Set(i, 0, 5+y.At(i, 0))
	}
	base := SearchOptions{Criterion: CriterionLOO, Sigmas: []float64{0.3}}
	for _, m := range []Method{MethodExact, MethodFalkon} {
		o := base
		o.Method = m
		if m == MethodFalkon {
			o.Sizes = []int{60}
		}
		mean, err := Search(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		o.Intercept = solvers.InterceptFitted
		fit, err := Search(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case math.IsNaN(fit.Best.Mean) || fit.Best.Mean == mean.Best.Mean:
			t.Fatalf("%s: fitted intercept's left-out RMSE %.6g, mean's %.6g: the option did not reach the closed form", m, fit.Best.Mean, mean.Best.Mean)
		case m == MethodExact && !(fit.Best.Mean < mean.Best.Mean):
			// Every row a centre and sigma 0.3 on [-2,2]^3: away from the rows the
			// expansion decays to the intercept, and the fitted one does better.
			t.Fatalf("%s: fitted intercept's left-out RMSE %.4g, mean's %.4g: want lower", m, fit.Best.Mean, mean.Best.Mean)
		}
	}
	for _, o := range []SearchOptions{
		{Method: MethodRidge, Criterion: CriterionLOO},
		{Method: MethodExact, Criterion: CriterionCV},
		{Method: MethodExact, Criterion: CriterionLOO, Refit: true},
		{Method: MethodExact, Criterion: CriterionLOO, Intercept: "lsq"},
	} {
		if o.Intercept == "" {
			o.Intercept = solvers.InterceptFitted
		}
		o.Sigmas = []float64{1}
		_, err := Search(ctx, x, y, o)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != "Intercept" || !errors.Is(err, zonal.ErrParam) {
			t.Fatalf("%+v: %v, want a ParamError on Intercept", o, err)
		}
	}
}

// TestGoldenReuse: Golden with 6 evaluations reusing a 2-evaluation run
// evaluates 4 sigmas and returns the same rows and best setting as a
// 6-evaluation run from scratch.
func TestGoldenReuse(t *testing.T) {
	ctx := context.Background()
	x, y := regData(80, 3, 9)
	calls := 0
	so := SearchOptions{Criterion: CriterionLOO, Kernel: func(s float64) (kernels.Kernel, error) {
		calls++
		return kernels.Gaussian{Sigma: s}, nil
	}}
	g := GoldenOptions{SearchOptions: so, Lo: 0.1, Hi: 10, Evaluations: 6}
	full, err := Golden(ctx, x, y, g)
	if err != nil {
		t.Fatal(err)
	}
	fullCalls := calls
	g.Evaluations = 2
	early, err := Golden(ctx, x, y, g)
	if err != nil {
		t.Fatal(err)
	}
	calls = 0
	g.Evaluations, g.Reuse = 6, early
	again, err := Golden(ctx, x, y, g)
	if err != nil {
		t.Fatal(err)
	}
	if calls != fullCalls-2 || fullCalls != 6 {
		t.Fatalf("kernels built: %d from scratch, %d reusing 2 evaluations; want 6 and 4", fullCalls, calls)
	}
	if again.Best.Setting != full.Best.Setting || again.Best.Mean != full.Best.Mean || len(again.Rows) != len(full.Rows) {
		t.Fatalf("reusing: best %+v (%d rows), from scratch %+v (%d rows)", again.Best.Setting, len(again.Rows), full.Best.Setting, len(full.Rows))
	}
}

// sameRows fails unless got and want have the same settings and their
// scores agree to tol relative (NaN where the other is NaN).
func sameRows(t *testing.T, what string, got, want []Row, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	rel := func(a, b float64) bool {
		return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
	}
	for i, g := range got {
		w := want[i]
		ok := g.Setting == w.Setting && rel(g.Mean, w.Mean) && rel(g.TaskScore, w.TaskScore) && len(g.Scores) == len(w.Scores)
		for j := 0; ok && j < len(g.Scores); j++ {
			ok = rel(g.Scores[j], w.Scores[j])
		}
		if !ok {
			t.Fatalf("%s row %d: %+v, want %+v", what, i, g, w)
		}
	}
}

// TestBothIntercepts: a search with BothIntercepts returns the rows of the
// search without it and, in Fitted, those of a second search with the
// fitted intercept at its best sigma and size (to 1e-10 relative), for
// exact KRR and FALKON, LOO and GCV, weighted or not, on a subsample, by
// Search over a sigma grid and Golden, without building a kernel more
// than the search does. Where the best group's matrix is not at hand (a
// Golden that reuses the best sigma, or a budget without room for the
// copy) the fitted intercept's group is built again, with the same
// result. Options the fitted intercept is not scored with are refused.
func TestBothIntercepts(t *testing.T) {
	ctx := context.Background()
	x, y := regData(90, 3, 5)
	for i := 0; i < 90; i++ {
		y.Set(i, 0, 5+y.At(i, 0))
	}
	wts := make([]float64, 90)
	for i := range wts {
		wts[i] = 0.5 + float64(i%4)/3
	}
	calls := 0
	kern := func(s float64) (kernels.Kernel, error) {
		calls++
		return kernels.Gaussian{Sigma: s}, nil
	}
	// search is Search with o, or Golden with golden's bracket and o.
	search := func(o SearchOptions, golden *GoldenOptions) *Result {
		t.Helper()
		var r *Result
		var err error
		if golden != nil {
			g := *golden
			g.SearchOptions = o
			r, err = Golden(ctx, x, y, g)
		} else {
			r, err = Search(ctx, x, y, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// twoSearches is the result without BothIntercepts and the separate
	// search of the fitted intercept at its best.
	twoSearches := func(o SearchOptions, golden *GoldenOptions) (*Result, *Result) {
		t.Helper()
		mean := search(o, golden)
		o.Intercept, o.Sigmas, o.Sizes = solvers.InterceptFitted, []float64{mean.Best.Sigma}, nil
		if mean.Best.Size > 0 {
			o.Sizes = []int{mean.Best.Size}
		}
		return mean, search(o, nil)
	}
	check := func(name string, o SearchOptions, golden *GoldenOptions, groups, extra int) {
		t.Helper()
		mean, fit := twoSearches(o, golden)
		o.BothIntercepts = true
		calls = 0
		got := search(o, golden)
		if calls != groups+extra {
			t.Fatalf("%s: %d kernels built, want %d", name, calls, groups+extra)
		}
		sameRows(t, name+" mean", got.Rows, mean.Rows, 0)
		if got.Fitted == nil {
			t.Fatalf("%s: no fitted scores (%v)", name, got.FittedErr)
		}
		sameRows(t, name+" fitted", got.Fitted.Rows, fit.Rows, 1e-10)
		if got.Fitted.Best.Setting != fit.Best.Setting || got.Best.Setting != mean.Best.Setting {
			t.Fatalf("%s: best %+v and fitted %+v, want %+v and %+v", name, got.Best.Setting, got.Fitted.Best.Setting, mean.Best.Setting, fit.Best.Setting)
		}
		if fit.Best.Mean == mean.Best.Mean {
			t.Fatalf("%s: the fitted and mean intercepts score the same: the test cannot tell them apart", name)
		}
	}
	sigmas := []float64{0.3, 0.6, 1.2}
	for _, m := range []Method{MethodExact, MethodFalkon} {
		for _, c := range []Criterion{CriterionLOO, CriterionGCV} {
			for _, w := range [][]float64{nil, wts} {
				for _, rows := range []int{0, 70} {
					o := SearchOptions{Method: m, Criterion: c, Score: ScoreSquared, Weights: w, Rows: rows, Sigmas: sigmas, Kernel: kern, Seed: 3}
					if c == CriterionGCV {
						o.Score = ScoreTask
					}
					if m == MethodFalkon {
						o.Sizes = []int{30, 45}
					}
					name := fmt.Sprintf("%s %s weighted %v rows %d", m, c, w != nil, rows)
					check(name, o, nil, len(sigmas)*max(1, len(o.Sizes)), 0)
				}
			}
		}
	}
	// Golden: from scratch, and reusing a shorter run, on [0.05, 20] (the
	// best is a new sigma) and [0.05, 400] (the best is a reused sigma,
	// rebuilt once).
	for _, m := range []Method{MethodExact, MethodFalkon} {
		o := SearchOptions{Method: m, Criterion: CriterionLOO, Score: ScoreSquared, Kernel: kern}
		if m == MethodFalkon {
			o.Sizes = []int{40}
		}
		reused := false
		for _, hi := range []float64{20, 400} {
			g := GoldenOptions{Lo: 0.05, Hi: hi, Evaluations: 6}
			if hi == 20 {
				check(fmt.Sprintf("golden %s", m), o, &g, 6, 0)
			}
			short := g
			short.SearchOptions, short.Evaluations = o, 2
			early, err := Golden(ctx, x, y, short)
			if err != nil {
				t.Fatal(err)
			}
			g.Reuse = early
			full, _ := twoSearches(o, &g)
			extra := 0
			if full.Best.Sigma == early.Best.Sigma {
				extra, reused = 1, true
			}
			check(fmt.Sprintf("golden %s on [0.05, %g] reusing (best reused: %v)", m, hi, extra == 1), o, &g, 4, extra)
		}
		if !reused {
			t.Fatalf("golden %s: no bracket had its best at a reused sigma", m)
		}
	}
	// A budget the search fits in but not the copy of its kernel matrix:
	// used by exact KRR's group on n rows, n x n plus n x (2n + 2).
	n, _ := x.Dims()
	used := 8 * int64(n) * int64(n+2*n+2)
	o := SearchOptions{Method: MethodExact, Criterion: CriterionLOO, Score: ScoreSquared, Sigmas: sigmas, Kernel: kern,
		Options: Options{MemoryBudget: used + 4*int64(n)*int64(n)}}
	check("no room for the copy", o, nil, len(sigmas), 1)

	for _, o := range []SearchOptions{
		{Method: MethodRidge, Criterion: CriterionLOO},
		{Method: MethodExact, Criterion: CriterionCV},
		{Method: MethodExact, Criterion: CriterionLOO, Intercept: solvers.InterceptFitted},
		{Method: MethodFalkon, Criterion: CriterionCV, Loss: LossLogistic},
	} {
		o.BothIntercepts, o.Sigmas = true, []float64{1}
		labels := y
		if o.Loss == LossLogistic {
			labels = mat.NewDense(n, 1, nil)
			for i := 0; i < n; i++ {
				labels.Set(i, 0, float64(i%2))
			}
		}
		_, err := Search(ctx, x, labels, o)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != "BothIntercepts" || !errors.Is(err, zonal.ErrParam) {
			t.Fatalf("%+v: %v, want a ParamError on BothIntercepts", o, err)
		}
	}
}

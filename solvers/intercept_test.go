package solvers

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// denseFittedIntercept solves the fitted-intercept FALKON objective
// (1/sum w) sum_i w_i (K_nM alpha + b - y_i)^2 + lambda alpha^T K_MM alpha
// by its (M+1) x (M+1) normal equations and returns the predictions at xt.
func denseFittedIntercept(t *testing.T, k kernels.Kernel, x, y *mat.Dense, w []float64, idx []int, lambda float64, xt *mat.Dense) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	M := len(idx)
	c := mat.DenseCopyOf(subsetRows(x, idx))
	knm, err := kernels.Matrix(context.Background(), k, x, c, kernels.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kmm, err := kernels.Matrix(context.Background(), k, c, c, kernels.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A = [K_nM 1]; normal equations (A^T W A / sw + lambda blkdiag(K_MM, 0)) z = A^T W y / sw.
	a := mat.NewDense(n, M+1, nil)
	sw := 0.0
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sw += wi
		for j := 0; j < M; j++ {
			a.Set(i, j, knm.At(i, j))
		}
		a.Set(i, M, 1)
	}
	wa := mat.DenseCopyOf(a)
	for i := 0; i < n; i++ {
		if w != nil {
			for j := range wa.RawRowView(i) {
				wa.RawRowView(i)[j] *= w[i]
			}
		}
	}
	var lhs, rhs mat.Dense
	lhs.Mul(wa.T(), a)
	lhs.Scale(1/sw, &lhs)
	for i := 0; i < M; i++ {
		for j := 0; j < M; j++ {
			lhs.Set(i, j, lhs.At(i, j)+lambda*kmm.At(i, j))
		}
	}
	rhs.Mul(wa.T(), y)
	rhs.Scale(1/sw, &rhs)
	var z mat.Dense
	if err := z.Solve(&lhs, &rhs); err != nil {
		t.Fatal(err)
	}
	kt, err := kernels.Matrix(context.Background(), k, xt, c, kernels.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nt, _ := xt.Dims()
	at := mat.NewDense(nt, M+1, nil)
	for i := 0; i < nt; i++ {
		copy(at.RawRowView(i), kt.RawRowView(i))
		at.Set(i, M, 1)
	}
	var p mat.Dense
	p.Mul(at, &z)
	return &p
}

// offsetData is synth's 240 rows with the targets offset by 3, which the
// kernel cannot carry far from the data (the fitted and the mean intercept
// differ), and 50 test rows.
func offsetData() (x, y, xt *mat.Dense) {
	x, y = synth(240, 3, 7)
	for i := 0; i < 240; i++ {
		y.Set(i, 0, y.At(i, 0)+3)
	}
	xt, _ = synth(50, 3, 8)
	return x, y, xt
}

func TestFalkonFittedInterceptMatchesNormalEquations(t *testing.T) {
	ctx := context.Background()
	x, y, xt := offsetData()
	k := testGauss{sigma: 0.7}
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]float64, 240)
	for i := range w {
		w[i] = 0.2 + rng.Float64()
	}
	const lambda = 1e-4
	for _, tc := range []struct {
		name   string
		w      []float64
		budget int64
	}{{"unweighted", nil, 0}, {"weighted", w, 0}, {"streamed", w, 60 * 1024}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := FalkonOptions{Options: Options{Weights: tc.w, MemoryBudget: tc.budget}, Centers: 40, Seed: 5, Intercept: InterceptFitted}
			f, err := FitFalkon(ctx, k, x, y, lambda, opts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.budget > 0 && f.CachedKnM() {
				t.Fatal("the small budget should stream K_nM")
			}
			want := denseFittedIntercept(t, k, x, y, tc.w, f.CenterIndices(), lambda, xt)
			got := predictAll(t, f, xt)
			// CG to its 1e-9 tolerance on a system of condition about
			// 1e4: the predictions agree to about 1e-6 of their scale (3).
			if d := maxAbsDiff(got, want); d > 1e-5 {
				t.Fatalf("fitted intercept: max |FALKON - normal equations| = %.3g", d)
			}
			opts.Intercept = InterceptMean
			fm, err := FitFalkon(ctx, k, x, y, lambda, opts)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(predictAll(t, fm, xt), want); d < 1e-3 {
				t.Fatalf("the mean intercept fits the same model (%.3g apart): the test cannot tell them apart", d)
			}
		})
	}
}

func TestInterceptSetting(t *testing.T) {
	for _, s := range []string{"mean", "fitted"} {
		c, err := ParseIntercept(s)
		if err != nil || c.String() != s {
			t.Fatalf("ParseIntercept(%q) = %v, %v", s, c, err)
		}
	}
	if Intercept("").String() != "mean" {
		t.Fatal("the zero Intercept should read mean")
	}
	if _, err := ParseIntercept("lsq"); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("ParseIntercept(lsq) = %v, want a ErrParam", err)
	}
	x, y := synth(50, 2, 1)
	_, err := FitFalkon(context.Background(), testGauss{sigma: 1}, x, y, 1e-3, FalkonOptions{Centers: 10, Intercept: InterceptFitted, Precision: zonal.Float32})
	var pe *zonal.ParamError
	if !errors.As(err, &pe) || pe.Param != "Intercept" {
		t.Fatalf("fitted intercept at float32: %v, want a ParamError on Intercept", err)
	}
	_, err = FitFalkon(context.Background(), testGauss{sigma: 1}, x, y, 1e-3, FalkonOptions{Centers: 10, Intercept: "nope"})
	if !errors.As(err, &pe) || pe.Param != "Intercept" {
		t.Fatalf("unknown intercept: %v, want a ParamError on Intercept", err)
	}
}

// countingGauss is testGauss counting its evaluations (every kernel entry
// FALKON computes).
type countingGauss struct {
	testGauss
	n *atomic.Int64
}

func (g countingGauss) Eval(x, y []float64) float64 {
	g.n.Add(1)
	return g.testGauss.Eval(x, y)
}

// TestFalkonFittedInterceptOnePass: with K_nM streamed, the fitted
// intercept computes no kernel entry the mean intercept does not: its
// column means come from the right-hand side's pass over K_nM (both fits
// capped at the same CG iterations, so they make the same passes); with
// K_nM cached both compute it once. The model is the same streamed and
// cached, to rounding.
func TestFalkonFittedInterceptOnePass(t *testing.T) {
	ctx := context.Background()
	x, y, xt := offsetData()
	w := make([]float64, 240)
	for i := range w {
		w[i] = 0.5 + float64(i%5)/4
	}
	const n, M, lambda = 240, 40, 1e-3
	count := func(budget int64, ic Intercept, iters int) (int64, *Falkon) {
		t.Helper()
		k := countingGauss{testGauss{sigma: 0.7}, new(atomic.Int64)}
		f, err := FitFalkon(ctx, k, x, y, lambda, FalkonOptions{Options: Options{Weights: w, MemoryBudget: budget}, Centers: M, Seed: 5, Intercept: ic, Iterations: iters, Tol: 1e-14})
		if err != nil {
			t.Fatal(err)
		}
		if f.CachedKnM() != (budget == 0) {
			t.Fatalf("budget %d: cached K_nM %v", budget, f.CachedKnM())
		}
		return k.n.Load(), f
	}
	for _, budget := range []int64{0, 60 * 1024} {
		cm, fm := count(budget, InterceptMean, 4)
		cf, ff := count(budget, InterceptFitted, 4)
		if fm.CG().Iterations != 4 || ff.CG().Iterations != 4 {
			t.Fatalf("budget %d: CG iterations %d (mean) and %d (fitted), want both at the cap 4", budget, fm.CG().Iterations, ff.CG().Iterations)
		}
		if cf != cm {
			t.Errorf("budget %d: the fitted intercept computed %d kernel entries, the mean one %d (%+.3g passes over K_nM)", budget, cf, cm, float64(cf-cm)/(n*M))
		}
	}
	_, cached := count(0, InterceptFitted, 0)
	_, streamed := count(60*1024, InterceptFitted, 0)
	a, b := predictAll(t, cached, xt), predictAll(t, streamed, xt)
	// The same sums but for the blocking of K_nM^T (.) (the column means
	// are summed row by row either way), amplified by CG on a system of
	// condition about 1e3.
	d := maxAbsDiff(a, b) / mat.Norm(a, math.Inf(1))
	if d > 1e-12 {
		t.Fatalf("cached and streamed fitted-intercept FALKON differ by %.3g relative", d)
	}
	t.Logf("cached and streamed: %.3g relative", d)
}

// A fitted intercept on a wide kernel (every entry of K_nM near 1, so
// K^T K is nearly wsum mu mu^T) and a tiny lambda: the centred normal
// operator must stay positive definite in floating point. Formed as
// K^T W K - wsum mu mu^T it cancels to rounding noise and CG met a
// negative curvature (seen on a smooth 15000-row regression with
// -intercept fitted); the operator centres K_b v in the pass instead.
func TestFalkonFittedInterceptWideKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n, d = 3000, 3
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.Float64()
			x.Set(i, j, v)
			s += math.Sin(3 * v)
		}
		y.Set(i, 0, 50+s+0.01*rng.NormFloat64())
	}
	k, _ := kernels.NewGaussian(8) // 8 times the unit cube's side: K entries within 1e-2 of 1
	for _, stream := range []bool{false, true} {
		opts := FalkonOptions{Centers: 300, Seed: 1, Intercept: InterceptFitted}
		if stream {
			opts.MemoryBudget = 6 << 20 // K_nM (7.2 MB) does not fit: recomputed in blocks
		}
		m, err := FitFalkon(context.Background(), k, x, y, 1e-10, opts)
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		pred := mat.NewDense(n, 1, nil)
		if err := m.Predict(pred, x); err != nil {
			t.Fatal(err)
		}
		se := 0.0
		for i := 0; i < n; i++ {
			e := pred.At(i, 0) - y.At(i, 0)
			se += e * e
		}
		// The target's smooth part is well within reach of 300 centres:
		// the training RMSE is near the noise (0.01), far below the
		// target's spread (about 0.9).
		if rmse := math.Sqrt(se / n); rmse > 0.05 {
			t.Errorf("stream %v: training RMSE %.4f, want at most 0.05", stream, rmse)
		}
	}
}

package solvers

import (
	"context"
	"errors"
	"math/rand/v2"
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

func TestFalkonFittedInterceptMatchesNormalEquations(t *testing.T) {
	ctx := context.Background()
	x, y := synth(240, 3, 7)
	// A target offset the kernel cannot carry far from the data: the
	// fitted and the mean intercept differ.
	for i := 0; i < 240; i++ {
		y.Set(i, 0, y.At(i, 0)+3)
	}
	xt, _ := synth(50, 3, 8)
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

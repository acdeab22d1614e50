package estimator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// TestInterceptOptions: a fitted intercept is refused where no solver
// fits one, and the plan says what Fit will do.
func TestInterceptOptions(t *testing.T) {
	for _, o := range []estimator.Options{
		{Intercept: estimator.InterceptFitted, Method: estimator.MethodExact},
		{Intercept: estimator.InterceptFitted, Method: estimator.MethodParK},
		{Intercept: estimator.InterceptFitted, Precision: zonal.Float32},
		{Intercept: estimator.Intercept(9)},
	} {
		var pe *zonal.ParamError
		if err := o.Validate(); !errors.As(err, &pe) || pe.Param != "Intercept" {
			t.Errorf("%+v: %v, want a ParamError on Intercept", o, err)
		}
	}
	for _, tc := range []struct {
		o    estimator.Options
		want string
	}{
		{estimator.Options{}, "intercept: the targets' mean, or fitted"},
		{estimator.Options{Intercept: estimator.InterceptFitted}, "intercept: fitted with the expansion"},
		{estimator.Options{Intercept: estimator.InterceptMean}, "intercept: the targets' mean\n"},
		{estimator.Options{Lambda: 1e-3}, "intercept: the targets' mean\n"}, // nothing to score it with
		{estimator.Options{Method: estimator.MethodExact}, "intercept: the targets' mean\n"},
		{estimator.Options{Loss: estimator.LossLogistic}, "intercept: none, or fitted with the expansion (unpenalised, one per logit) when"},
		{estimator.Options{Loss: estimator.LossLogistic, Lambda: 1e-3}, "intercept: none"},
		{estimator.Options{Loss: estimator.LossLogistic, Intercept: estimator.InterceptFitted}, "intercept: fitted with the expansion (unpenalised, one per logit)\n"},
		{estimator.Options{Loss: estimator.LossLogistic, Intercept: estimator.InterceptMean}, "intercept: none"},
	} {
		p, err := estimator.NewPlan(estimator.Shape{Rows: 500, Cols: 4}, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.String(), tc.want) {
			t.Errorf("%+v: plan\n%s\nwant the line %q", tc.o, p, tc.want)
		}
	}
	for _, s := range estimator.Intercepts() {
		c, err := estimator.ParseIntercept(s)
		if err != nil || c.String() != s {
			t.Errorf("ParseIntercept(%q) = %v, %v", s, c, err)
		}
	}
}

// TestFitInterceptFitted: Fit with InterceptFitted fits solvers.FitFalkon
// with the fitted intercept at the reported settings (same predictions),
// and InterceptAuto says which it chose and why.
func TestFitInterceptFitted(t *testing.T) {
	ctx := context.Background()
	x, y := smooth(300, 3, 0.05, 4)
	for i := range y {
		y[i] += 4
	}
	xt, _ := smooth(100, 3, 0, 5)
	o := estimator.Options{Sigma: 0.4, Lambda: 1e-4, Centers: 80, Standardize: estimator.StandardizeOff, Intercept: estimator.InterceptFitted, Seed: 2}
	pipe, rep, err := estimator.Fit(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Intercept != solvers.InterceptFitted {
		t.Fatalf("report intercept %v, want fitted", rep.Intercept)
	}
	got := make([]float64, 100)
	if err := pipe.PredictLabels(got, xt); err != nil {
		t.Fatal(err)
	}
	f, err := solvers.FitFalkon(ctx, kernels.Gaussian{Sigma: 0.4}, x, mat.NewDense(300, 1, y), 1e-4,
		solvers.FalkonOptions{Centers: 80, Seed: 2, Intercept: solvers.InterceptFitted})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(100, 1, nil)
	if err := f.Predict(want, xt); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		// The same solver on the same rows: only summation order differs.
		if d := got[i] - want.At(i, 0); d > 1e-9 || d < -1e-9 {
			t.Fatalf("row %d: Fit %.12g, FitFalkon %.12g", i, got[i], want.At(i, 0))
		}
	}
	_, auto, err := estimator.Fit(ctx, x, y, estimator.Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	words := map[solvers.Intercept]string{solvers.InterceptFitted: "fitted:", solvers.InterceptMean: "the targets' mean:"}[auto.Intercept]
	if words == "" || !strings.HasPrefix(auto.Chosen.Intercept, words) || !strings.Contains(auto.Line(), "intercept "+auto.Intercept.String()) {
		t.Fatalf("auto chose %v, explained %q; line %q", auto.Intercept, auto.Chosen.Intercept, auto.Line())
	}
}

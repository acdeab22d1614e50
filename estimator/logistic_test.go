package estimator_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

func TestLossSetting(t *testing.T) {
	for _, l := range []estimator.Loss{estimator.LossSquared, estimator.LossLogistic} {
		if got, err := estimator.ParseLoss(l.String()); err != nil || got != l {
			t.Errorf("ParseLoss(%q) = %v, %v", l, got, err)
		}
	}
	var pe *zonal.ParamError
	if _, err := estimator.ParseLoss("hinge"); !errors.As(err, &pe) || pe.Param != "Loss" {
		t.Errorf("ParseLoss(hinge): %v", err)
	}
	if (estimator.Options{}).Loss != estimator.LossSquared {
		t.Error("the zero Loss is not squared")
	}
}

// The logistic loss refuses the settings it does not combine with, naming
// Loss.
func TestLogisticLossRefuses(t *testing.T) {
	l := estimator.LossLogistic
	for _, o := range []estimator.Options{
		{Loss: l, Method: estimator.MethodExact},
		{Loss: l, Method: estimator.MethodParK},
		{Loss: l, Task: solvers.TaskRegression},
		{Loss: l, Precision: zonal.Float32},
		{Loss: l, Sampling: solvers.SamplingRLS},
		{Loss: l, Calibration: estimator.CalibrationPlatt},
		{Loss: estimator.Loss(7)},
	} {
		var pe *zonal.ParamError
		if err := o.Validate(); !errors.As(err, &pe) || pe.Param != "Loss" {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// A target read as regression (continuous values) is refused by Fit.
	x := mat.NewDense(50, 1, nil)
	y := make([]float64, 50)
	for i := range y {
		x.Set(i, 0, float64(i)/50)
		y[i] = math.Sin(float64(i) / 7)
	}
	_, _, err := estimator.Fit(context.Background(), x, y, estimator.Options{Loss: l, Lambda: 1e-3, Sigma: 1})
	var pe *zonal.ParamError
	if !errors.As(err, &pe) || pe.Param != "Loss" || !strings.Contains(err.Error(), "regression") || !strings.Contains(err.Error(), "is not an integer") {
		t.Errorf("logistic on a regression target: %v", err)
	}
	// Integer labels with a class seen fewer than 5 times read as
	// regression too: the error names the rare value and the way out.
	for i := range y {
		y[i] = float64(i % 2)
	}
	y[7], y[8] = 2, 2
	_, _, err = estimator.Fit(context.Background(), x, y, estimator.Options{Loss: l, Lambda: 1e-3, Sigma: 1})
	if !errors.As(err, &pe) || pe.Param != "Loss" || !strings.Contains(err.Error(), "2 is seen 2 times") || !strings.Contains(err.Error(), "Task = classification") {
		t.Errorf("logistic on labels 0, 1 and two 2s: %v", err)
	}
	_, _, err = estimator.Fit(context.Background(), x, y, estimator.Options{Loss: l, Lambda: 1e-3, Sigma: 1, Task: solvers.TaskClassification, Calibration: estimator.CalibrationNone})
	if err != nil {
		t.Errorf("logistic on labels 0, 1 and two 2s as classes: %v", err)
	}
}

// Fit with the logistic loss chooses lambda by held-out log-loss, gives
// an uncalibrated pipeline with probabilities, and classifies digits about
// as well as the squared loss.
func TestFitLogisticDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes and fits digits (seconds); skipped with -short")
	}
	train, test := digitsSplit(t)
	// 300 centres: the default (all 1437 rows) costs ten times as much
	// for a test of the wiring.
	pipe, rep, err := estimator.Fit(context.Background(), train.X, train.Y, estimator.Options{Loss: estimator.LossLogistic, Centers: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if pipe.Model.Kind() != solvers.KindLogistic || pipe.Calibration != nil || !pipe.HasProbabilities() {
		t.Fatalf("model %s, calibration %v, probabilities %v", pipe.Model.Kind(), pipe.Calibration, pipe.HasProbabilities())
	}
	if rep.Loss != estimator.LossLogistic || rep.Calibration != estimator.CalibrationNone || rep.Lambda <= 0 ||
		rep.Chosen.TuneMetric != "logloss" || !strings.Contains(rep.Chosen.Lambda, "log-loss") || !rep.Solved ||
		rep.Diagnostics.Solver != solvers.SolverNewton {
		t.Errorf("report: %+v", rep)
	}
	// 1438 tuning rows hold out 288 a fold: 3 folds reach
	// LogisticHeldOutRows (864 rows), each fitted on 4/5 of the rows.
	if !strings.Contains(rep.Chosen.Lambda, "3 of 5 stratified folds of 1438 rows") || rep.Chosen.TuneRows < 1140 || rep.Chosen.TuneRows > 1160 {
		t.Errorf("lambda chosen %q on %d rows, want 3 folds of about 1150 training rows", rep.Chosen.Lambda, rep.Chosen.TuneRows)
	}
	// The decades of AutoLambdas, then LogisticRefine's quarter decades
	// on both sides of the best (3 on one side at the grid's ends).
	// The grid may end early (LogisticPatience), after at least
	// LogisticPatience+1 values.
	if !regexp.MustCompile(`\(([3-9]|10) on the grid, [36] refining around its best\)`).MatchString(rep.Chosen.Lambda) {
		t.Errorf("lambda chosen %q, want the grid refined around its best", rep.Chosen.Lambda)
	}
	if !strings.Contains(rep.Plan.String(), "logistic loss") {
		t.Errorf("plan does not say the loss:\n%s", rep.Plan)
	}
	m := len(test.Y)
	prob := mat.NewDense(m, pipe.Classes(), nil)
	if err := pipe.PredictProba(prob, test.X); err != nil {
		t.Fatal(err)
	}
	rowSums(t, prob)
	pred := make([]float64, m)
	if err := pipe.PredictLabels(pred, test.X); err != nil {
		t.Fatal(err)
	}
	// The squared loss's defaults reach 0.95 on this split
	// (TestFitDigits); the logistic loss must too.
	if acc := solvers.Accuracy(pred, test.Y); acc < 0.95 {
		t.Errorf("logistic digits accuracy %.4f, want >= 0.95", acc)
	}
}

// Equal weights are the unweighted logistic fit (the objective divides by
// their sum), bit for bit (the files differing by the record of the
// weights); zero weights are accepted.
func TestFitLogisticWeights(t *testing.T) {
	x, y := blobs(200, 2, 3, 0.1, 5)
	o := estimator.Options{Loss: estimator.LossLogistic, Centers: 40, Seed: 3}
	plain, _, err := estimator.Fit(context.Background(), x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Weights = make([]float64, len(y))
	for i := range o.Weights {
		o.Weights[i] = 2
	}
	twice, _, err := estimator.Fit(context.Background(), x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	if twice.Weights == nil || twice.Weights.Sum != 400 {
		t.Fatalf("weighted fit's record %+v, want a sum of 400", twice.Weights)
	}
	// The files differ by the record of the weights only.
	unrecorded, err := twice.WithWeights(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := solvers.MarshalPipeline(plain)
	b, _ := solvers.MarshalPipeline(unrecorded)
	if string(a) != string(b) {
		t.Error("weights all 2 changed the logistic model")
	}
	for i := range o.Weights {
		o.Weights[i] = float64(i % 3)
	}
	if _, rep, err := estimator.Fit(context.Background(), x, y, o); err != nil || !rep.Weighted {
		t.Errorf("weights with zeros: %v, weighted %v", err, rep != nil && rep.Weighted)
	}
}

// The logistic loss fits its intercept when asked (InterceptFitted) and
// reports it; InterceptMean is the fit without one, and so is
// InterceptAuto with lambda given (nothing to score the intercept with):
// the same logits as solvers.FitLogistic with the reported settings and
// each intercept. With lambda tuned, InterceptAuto scores both and says
// which it kept.
func TestFitLogisticIntercept(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(200, 2, 2, 0.5, 6)
	for i := range y {
		if i%4 != 0 {
			y[i] = 0 // 3 of 4 rows in class 0: a shifted prior
		}
	}
	for _, tc := range []struct {
		o    estimator.Intercept
		want solvers.Intercept
	}{{estimator.InterceptAuto, solvers.InterceptMean}, {estimator.InterceptFitted, solvers.InterceptFitted}, {estimator.InterceptMean, solvers.InterceptMean}} {
		o := estimator.Options{Loss: estimator.LossLogistic, Sigma: 1, Lambda: 1e-3, Centers: 40, Standardize: estimator.StandardizeOff, Intercept: tc.o, Seed: 3}
		pipe, rep, err := estimator.Fit(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Intercept != tc.want {
			t.Fatalf("%s: report intercept %v, want %v", tc.o, rep.Intercept, tc.want)
		}
		b := pipe.Model.(*solvers.Logistic).Intercept()[0]
		if (b != 0) != (tc.want == solvers.InterceptFitted) {
			t.Errorf("%s: b = %g", tc.o, b)
		}
		tg, err := pipe.Encoding.Targets(y)
		if err != nil {
			t.Fatal(err)
		}
		m, err := solvers.FitLogistic(ctx, kernels.Gaussian{Sigma: 1}, x, tg, 1e-3, solvers.LogisticOptions{Centers: 40, Seed: 3, Intercept: tc.want})
		if err != nil {
			t.Fatal(err)
		}
		got, want := mat.NewDense(200, 1, nil), mat.NewDense(200, 1, nil)
		if err := pipe.Model.Predict(got, x); err != nil {
			t.Fatal(err)
		}
		if err := m.Predict(want, x); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(got, want, 1e-9) {
			t.Errorf("%s: Fit and FitLogistic differ", tc.o)
		}
	}
	pipe, rep, err := estimator.Fit(ctx, x, y, estimator.Options{Loss: estimator.LossLogistic, Sigma: 1, Centers: 40, Standardize: estimator.StandardizeOff, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	words := map[solvers.Intercept]string{solvers.InterceptFitted: "fitted: held-out log-loss", solvers.InterceptMean: "none: held-out log-loss"}[rep.Intercept]
	b := pipe.Model.(*solvers.Logistic).Intercept()[0]
	if words == "" || !strings.HasPrefix(rep.Chosen.Intercept, words) || (b != 0) != (rep.Intercept == solvers.InterceptFitted) {
		t.Errorf("auto chose %v (b = %g), explained %q", rep.Intercept, b, rep.Chosen.Intercept)
	}
	if name := map[bool]string{true: "fitted", false: "none"}[b != 0]; !strings.Contains(rep.Line(), "intercept "+name+" (") {
		t.Errorf("line %q does not say intercept %s", rep.Line(), name)
	}
	t.Logf("auto: %s", rep.Chosen.Intercept)
}

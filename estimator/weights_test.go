package estimator_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

func TestClassWeightRoundTrip(t *testing.T) {
	for _, s := range []string{"none", "balanced", "0:0.5,1:2", "-1:3,1:1.5"} {
		c, err := estimator.ParseClassWeight(s)
		if err != nil {
			t.Fatalf("ParseClassWeight(%q): %v", s, err)
		}
		if c.String() != s {
			t.Errorf("ParseClassWeight(%q).String() = %q", s, c.String())
		}
	}
	if c, err := estimator.ParseClassWeight(""); err != nil || !c.IsZero() {
		t.Errorf(`ParseClassWeight("") = %v, %v`, c, err)
	}
	if c, _ := estimator.ParseClassWeight("1:2, 0:3"); c.String() != "0:3,1:2" {
		t.Errorf("labels not sorted: %q", c.String())
	}
	for _, bad := range []string{"balance", "1", "a:2", "1:x", "1:-1", "1:NaN", "1:Inf", "1:2,1:3"} {
		_, err := estimator.ParseClassWeight(bad)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != "ClassWeight" {
			t.Errorf("ParseClassWeight(%q): %v, want a ParamError on ClassWeight", bad, err)
		}
	}
}

// given is a fit that chooses nothing from the data (sigma, lambda,
// scaling given, exact KRR, no calibration), so that two fits differ only
// by their rows and weights.
func given() estimator.Options {
	return estimator.Options{Method: estimator.MethodExact, Sigma: 0.8, Lambda: 1e-3, Standardize: estimator.StandardizeOff, Calibration: estimator.CalibrationNone}
}

// Integer sample weights are the fit on repeated rows (the solvers'
// identity, through the estimator boundary), and an explicit class weight
// is the sample weight of that factor on every row of the class. Both
// sides solve the same direct systems in another order: 1e-9 relative.
func TestFitWeights(t *testing.T) {
	ctx := context.Background()
	x, y := smooth(50, 3, 0.05, 4)
	xt, _ := smooth(20, 3, 0, 5)
	w := make([]float64, 50)
	var rows []int
	for i := range w {
		w[i] = float64(i % 3) // 0, 1, 2
		for c := 0; c < int(w[i]); c++ {
			rows = append(rows, i)
		}
	}
	xr := mat.NewDense(len(rows), 3, nil)
	yr := make([]float64, len(rows))
	for r, i := range rows {
		copy(xr.RawRowView(r), x.RawRowView(i))
		yr[r] = y[i]
	}
	o := given()
	o.Weights = w
	pw, rep, err := estimator.Fit(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Weighted || rep.WeightSum != float64(len(rows)) || rep.ClassWeights != nil {
		t.Errorf("report: weighted %v, sum %g, class weights %v", rep.Weighted, rep.WeightSum, rep.ClassWeights)
	}
	o.Weights = nil
	pr, rep2, err := estimator.Fit(ctx, xr, yr, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Weighted {
		t.Error("unweighted fit reported as weighted")
	}
	a, b := mat.NewDense(20, 1, nil), mat.NewDense(20, 1, nil)
	if err := pw.PredictOutputs(a, xt); err != nil {
		t.Fatal(err)
	}
	if err := pr.PredictOutputs(b, xt); err != nil {
		t.Fatal(err)
	}
	var d mat.Dense
	d.Sub(a, b)
	if diff := mat.Norm(&d, math.Inf(1)) / math.Max(1, mat.Norm(b, math.Inf(1))); diff > 1e-9 {
		t.Errorf("weighted fit vs repeated rows differ by %g", diff)
	}
}

func TestFitClassWeights(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(60, 2, 2, 0, 3)
	// Make the classes unequal: 45 rows of class 0.
	for i := range y {
		y[i] = 0
		if i%4 == 0 {
			y[i] = 1
		}
	}
	n0, n1 := 45.0, 15.0
	xt, _ := blobs(10, 2, 2, 0, 4)
	fit := func(o estimator.Options) (*mat.Dense, *estimator.Report) {
		t.Helper()
		p, rep, err := estimator.Fit(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		out := mat.NewDense(10, p.Outputs(), nil)
		if err := p.PredictOutputs(out, xt); err != nil {
			t.Fatal(err)
		}
		return out, rep
	}
	o := given()
	o.ClassWeight = estimator.ClassWeight{Balanced: true}
	bal, rep := fit(o)
	want := []float64{60 / (2 * n0), 60 / (2 * n1)} // n / (k n_c)
	if len(rep.ClassWeights) != 2 || rep.ClassWeights[0].Weight != want[0] || rep.ClassWeights[1].Weight != want[1] {
		t.Fatalf("balanced class weights %v, want %v", rep.ClassWeights, want)
	}
	if math.Abs(rep.WeightSum-60) > 1e-12 {
		t.Errorf("balanced weight sum %g, want n = 60 (n/k per class)", rep.WeightSum)
	}
	// The same as sample weights with those factors.
	o.ClassWeight = estimator.ClassWeight{}
	o.Weights = make([]float64, 60)
	for i, v := range y {
		o.Weights[i] = want[int(v)]
	}
	same, _ := fit(o)
	var d mat.Dense
	d.Sub(bal, same)
	if diff := mat.Norm(&d, math.Inf(1)); diff > 1e-9 {
		t.Errorf("balanced class weights vs the same sample weights: %g", diff)
	}
	// Sample weights times explicit class weights: 3 x class 1 on top of
	// sample weights 2 is sample weights 2 and 6.
	o.ClassWeight, _ = estimator.ParseClassWeight("1:3")
	for i := range o.Weights {
		o.Weights[i] = 2
	}
	prod, rep := fit(o)
	if rep.ClassWeights[0].Weight != 1 || rep.ClassWeights[1].Weight != 3 || rep.WeightSum != 2*n0+6*n1 {
		t.Errorf("explicit: class weights %v, sum %g", rep.ClassWeights, rep.WeightSum)
	}
	o.ClassWeight = estimator.ClassWeight{}
	for i, v := range y {
		o.Weights[i] = 2 + 4*v
	}
	flat, _ := fit(o)
	d.Sub(prod, flat)
	if diff := mat.Norm(&d, math.Inf(1)); diff > 1e-9 {
		t.Errorf("sample x class weights vs their product: %g", diff)
	}
	// Unweighted differs (the weights do something).
	plain, _ := fit(given())
	d.Sub(bal, plain)
	if mat.Norm(&d, math.Inf(1)) < 1e-6 {
		t.Error("balanced class weights changed nothing")
	}
}

// Weights reach the tuning and the calibration: a fit that tunes lambda
// and calibrates with class weights works and reports both.
func TestFitWeightsTunedCalibrated(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(300, 2, 3, 0.05, 8)
	o := estimator.Options{Method: estimator.MethodFalkon, ClassWeight: estimator.ClassWeight{Balanced: true}, Calibration: estimator.CalibrationPlatt, Seed: 1}
	p, rep, err := estimator.Fit(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Weighted || rep.Chosen.Lambda == "" || rep.Calibration != estimator.CalibrationPlatt {
		t.Fatalf("report: weighted %v, lambda %q, calibration %v", rep.Weighted, rep.Chosen.Lambda, rep.Calibration)
	}
	prob := mat.NewDense(300, 3, nil)
	if err := p.PredictProba(prob, x); err != nil {
		t.Fatal(err)
	}
	rowSums(t, prob)
}

func TestFitWeightsBad(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(30, 2, 2, 0, 3)
	xr, yr := smooth(30, 3, 0.1, 1)
	cw3, _ := estimator.ParseClassWeight("3:2")
	cases := []struct {
		name  string
		x     *mat.Dense
		y     []float64
		o     estimator.Options
		param string
	}{
		{"short weights", x, y, estimator.Options{Weights: make([]float64, 29)}, "Weights"},
		{"negative weight", x, y, estimator.Options{Weights: append([]float64{-1}, make([]float64, 29)...)}, "Weights"},
		{"zero weights", x, y, estimator.Options{Weights: make([]float64, 30)}, "Weights"},
		{"class weight on regression", xr, yr, estimator.Options{ClassWeight: estimator.ClassWeight{Balanced: true}}, "ClassWeight"},
		{"class weight of no class", x, y, estimator.Options{ClassWeight: cw3}, "ClassWeight"},
		{"class weights zeroing every row", x, y, estimator.Options{ClassWeight: estimator.ClassWeight{Explicit: []estimator.LabelWeight{{Label: 0, Weight: 0}, {Label: 1, Weight: 0}}}}, "ClassWeight"},
		{"class weight 0 on one class", x, y, estimator.Options{ClassWeight: estimator.ClassWeight{Explicit: []estimator.LabelWeight{{Label: 1, Weight: 0}}}}, "ClassWeight"},
		{"sample weights 0 on all of one class", x, y, estimator.Options{Weights: zeroOnClass(y, 1)}, "Weights"},
		{"sample and class weights 0 on one class", x, y, estimator.Options{Weights: zeroOnClass(y, 0), ClassWeight: estimator.ClassWeight{Balanced: true}}, "Weights"},
		{"invalid explicit", x, y, estimator.Options{ClassWeight: estimator.ClassWeight{Explicit: []estimator.LabelWeight{{Label: 0, Weight: math.NaN()}}}}, "ClassWeight"},
	}
	for _, c := range cases {
		_, _, err := estimator.Fit(ctx, c.x, c.y, c.o)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%s: %v, want a ParamError on %s", c.name, err, c.param)
		} else if strings.Contains(c.name, "one class") && !strings.Contains(pe.Reason, "class 1") && !strings.Contains(pe.Reason, "class 0") {
			t.Errorf("%s: %v, want the class named", c.name, err)
		}
	}
}

// zeroOnClass is weight 1 on every row but those of label c, 0 there.
func zeroOnClass(y []float64, c float64) []float64 {
	w := make([]float64, len(y))
	for i, v := range y {
		if v != c {
			w[i] = 1
		}
	}
	return w
}

// TestFitWeightsZeroFold: positive weights on one row of each class, all
// in one calibration fold, are valid, but the calibration fold holding
// those rows out trains on rows of weight zero only: Fit returns
// solvers.CheckWeights' *zonal.ParamError on Weights (all weights zero)
// naming the fold, not a model of a division by zero; all-zero weights
// are refused the same way before any fit.
func TestFitWeightsZeroFold(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(30, 2, 2, 0, 3)
	folds, err := calibrate.StratifiedFolds(y, estimator.CalibrationFolds, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 30)
	seen := map[float64]bool{}
	for _, i := range folds[0].Test {
		if !seen[y[i]] {
			seen[y[i]], w[i] = true, 1
		}
	}
	if len(seen) != 2 {
		t.Fatalf("calibration fold 0 holds classes %v, want both", seen)
	}
	o := given()
	o.Calibration, o.Weights = estimator.CalibrationPlatt, w
	_, _, err = estimator.Fit(ctx, x, y, o)
	var pe *zonal.ParamError
	if !errors.As(err, &pe) || pe.Param != "Weights" || !strings.Contains(pe.Reason, "all weights are zero") ||
		!strings.Contains(err.Error(), "calibration fold") || !strings.Contains(err.Error(), "training rows") {
		t.Errorf("one row of positive weight, calibrated: %v, want a ParamError on Weights naming the calibration fold", err)
	}
	o.Weights = make([]float64, 30)
	if _, _, err := estimator.Fit(ctx, x, y, o); !errors.As(err, &pe) || pe.Param != "Weights" || !strings.Contains(pe.Reason, "all weights are zero") {
		t.Errorf("all-zero weights: %v, want a ParamError on Weights saying all weights are zero", err)
	}
}

// The calibrator is fitted on the held-out rows' weights: with class 1
// weighted 1/20 its share of the weighted distribution falls from about
// 0.7 (this data) to about 0.1, and the mean calibrated probability of
// class 1 must follow it (below 0.25). A calibrator fitted on the
// unweighted held-out scores brings it back to the unweighted share
// (measured: 0.685 against 0.689 unweighted).
func TestFitWeightedCalibration(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(400, 2, 2, 0.3, 21)
	meanP1 := func(cw string) float64 {
		t.Helper()
		c, err := estimator.ParseClassWeight(cw)
		if err != nil {
			t.Fatal(err)
		}
		o := given()
		o.Calibration, o.ClassWeight = estimator.CalibrationPlatt, c
		p, _, err := estimator.Fit(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		prob := mat.NewDense(400, 2, nil)
		if err := p.PredictProba(prob, x); err != nil {
			t.Fatal(err)
		}
		return mat.Sum(prob.ColView(1)) / 400
	}
	plain, weighted := meanP1("none"), meanP1("1:0.05")
	t.Logf("mean P(class 1): unweighted %.3f, class 1 weighted 0.05: %.3f", plain, weighted)
	if !(plain > 0.35 && weighted < 0.25) {
		t.Errorf("mean P(class 1) unweighted %.3f (want above 0.35), weighted %.3f (want below 0.25)", plain, weighted)
	}
}

// Fit records the weights of a weighted fit on the pipeline (the values
// of the report), its model file keeps them, and the loaded model reports
// the fit's WeightSum; an unweighted fit records nothing and its file is
// of version 3 or lower.
func TestFitRecordsWeights(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(60, 2, 2, 0, 3)
	o := given()
	o.ClassWeight = estimator.ClassWeight{Balanced: true}
	o.Weights = make([]float64, 60)
	for i := range o.Weights {
		o.Weights[i] = float64(i % 3) // 20 rows of weight 0
	}
	p, rep, err := estimator.Fit(ctx, x, y, o)
	if err != nil {
		t.Fatal(err)
	}
	tw := p.Weights
	if tw == nil || tw.Sum != rep.WeightSum || tw.Rows != 40 || len(tw.ClassFactors) != len(rep.ClassWeights) {
		t.Fatalf("record %+v, report sum %g, class weights %v", tw, rep.WeightSum, rep.ClassWeights)
	}
	for c, lw := range rep.ClassWeights {
		if tw.ClassFactors[c] != lw.Weight {
			t.Errorf("class %g: recorded factor %g, reported %g", lw.Label, tw.ClassFactors[c], lw.Weight)
		}
	}
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := solvers.UnmarshalPipeline(b, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Weights, tw) {
		t.Errorf("loaded record %+v, want %+v", q.Weights, tw)
	}
	if got := q.Model.(*solvers.KRR).WeightSum(); got != rep.WeightSum {
		t.Errorf("loaded WeightSum %g, fitted with %g", got, rep.WeightSum)
	}
	plain, _, err := estimator.Fit(ctx, x, y, given())
	if err != nil {
		t.Fatal(err)
	}
	if plain.Weights != nil {
		t.Errorf("unweighted fit records %+v", plain.Weights)
	}
	if b, err = solvers.MarshalPipeline(plain); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v > 3 {
		t.Errorf("unweighted file has version %d", v)
	}
	if tw, err := estimator.TrainingWeights(nil, nil); tw != nil || err != nil {
		t.Errorf("TrainingWeights(nil) = %v, %v", tw, err)
	}
}

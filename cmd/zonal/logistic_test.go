package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// zonal fit -loss logistic writes a logistic model without a calibration
// whose -json report says the loss and the Newton solve and gives the
// probability metrics, and whose labels are the argmax of its
// probabilities (TestPredictProbaAndThreshold checks predict -proba and
// -threshold on such models).
func TestFitLogisticReport(t *testing.T) {
	dir := t.TempDir()
	data := writeClassLIBSVM(t, dir, "three.libsvm", 120, 3)
	model := filepath.Join(dir, "m.zonal")
	obj := fitJSON(t, "-train", data, "-format", "libsvm", "-loss", "logistic", "-model", model, "-seed", "1")
	solve, _ := obj["solve"].(map[string]any)
	if obj["loss"] != "logistic" || obj["calibration"] != "none" || solve["solver"] != solvers.SolverNewton || !(solve["newton_steps"].(float64) > 0) {
		t.Errorf("report: loss %v, calibration %v, solve %v", obj["loss"], obj["calibration"], solve)
	}
	if v, ok := obj["logloss"].(float64); !ok || !(v > 0) {
		t.Errorf("test log loss %v, want a number", obj["logloss"])
	}
	pipe := loadModel(t, model)
	if pipe.Model.Kind() != solvers.KindLogistic || pipe.Calibration != nil || !pipe.HasProbabilities() {
		t.Fatalf("model %s, calibration %v", pipe.Model.Kind(), pipe.Calibration)
	}
	d, err := dataset.ReadFile(data, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := d.Dims()
	prob := mat.NewDense(n, pipe.Classes(), nil)
	if err := pipe.PredictProba(prob, d.Matrix()); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCmd("predict", "-model", model, "-data", data, "-format", "libsvm")
	if code != 0 {
		t.Fatal(errs)
	}
	for i, l := range parseRows(t, strings.Split(strings.TrimSuffix(out, "\n"), "\n"), ",") {
		row := prob.RawRowView(i)
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if pipe.Encoding.Classes[best] != l[0] {
			t.Fatalf("row %d: label %v, probabilities %v", i, l[0], row)
		}
	}
}

// -loss is checked: an unknown loss, a method other than falkon, a
// regression, and zonal tune with another method or a closed-form
// criterion are refused with usage errors naming -loss.
func TestLossFlagErrors(t *testing.T) {
	dir := t.TempDir()
	data := writeBinaryCSV(t, dir, 60)
	reg := writeRegressionCSV(t, dir, "reg.csv", 60, 3)
	for _, args := range [][]string{
		{"fit", "-train", data, "-loss", "hinge"},
		{"fit", "-train", data, "-loss", "logistic", "-method", "exact"},
		{"fit", "-train", data, "-loss", "logistic", "-calibration", "platt"},
		{"fit", "-train", reg, "-loss", "logistic", "-task", "regression"},
		{"tune", "-train", data, "-loss", "logistic", "-method", "exact"},
		{"tune", "-train", data, "-loss", "logistic", "-criterion", "loo"},
		{"tune", "-train", data, "-loss", "logistic", "-criterion", "gcv"},
		{"tune", "-train", reg, "-loss", "logistic", "-task", "regression"},
	} {
		_, errs, code := runCmd(args...)
		if code != exitUsage || !strings.Contains(errs, "-loss") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	// A target read as regression is refused at fit time, naming -loss.
	for _, cmd := range []string{"fit", "tune"} {
		if _, errs, code := runCmd(cmd, "-train", reg, "-loss", "logistic"); code == 0 || !strings.Contains(errs, "-loss") {
			t.Errorf("%s: logistic on a regression target: exit %d, %q", cmd, code, errs)
		}
	}
}

// zonal tune -loss logistic searches logistic FALKON by held-out log-loss
// (k folds and a split, on three classes), reports the loss, the metric
// and the table, and writes a logistic model with probabilities and no
// calibration.
func TestTuneLogistic(t *testing.T) {
	dir := t.TempDir()
	data := writeClassLIBSVM(t, dir, "three.libsvm", 150, 3)
	model := filepath.Join(dir, "m.zonal")
	args := []string{"tune", "-train", data, "-format", "libsvm", "-loss", "logistic", "-sigmas", "0.5,2", "-lambdas", "1e-3,1e-1", "-centers", "20", "-folds", "3", "-model", model}
	out, errs, code := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "falkon (logistic loss)") || !strings.Contains(out, "chosen by logloss") || strings.Count(out, "\n*") != 1 {
		t.Errorf("report:\n%s", out)
	}
	for _, extra := range [][]string{nil, {"-criterion", "split"}} {
		obj := runJSON(t, append(append(append([]string{}, args...), "-json"), extra...)...)
		if obj["loss"] != "logistic" || obj["method"] != "falkon" || obj["metric"] != "logloss" || obj["higher_is_better"] != false {
			t.Errorf("%v: loss %v method %v metric %v higher %v", extra, obj["loss"], obj["method"], obj["metric"], obj["higher_is_better"])
		}
		if s, _ := obj["settings"].([]any); len(s) != 4 {
			t.Errorf("%v: %d settings, want 4", extra, len(s))
		}
		ll, _ := obj["logloss"].(float64)
		if !(ll > 0) {
			t.Fatalf("%v: test log loss %v", extra, obj["logloss"])
		}
		pipe := loadModel(t, model)
		if pipe.Model.Kind() != solvers.KindLogistic || pipe.Calibration != nil || !pipe.HasProbabilities() {
			t.Fatalf("%v: model %s, calibration %v", extra, pipe.Model.Kind(), pipe.Calibration)
		}
	}
	// -intercept fitted: every fold's fit and the refit have the
	// constant, -json says so; an unknown value is a usage error.
	obj := runJSON(t, append(append([]string{}, args...), "-json", "-intercept", "fitted")...)
	if obj["intercept"] != "fitted" {
		t.Errorf("-intercept fitted: json intercept %v", obj["intercept"])
	}
	b := loadModel(t, model).Model.(*solvers.Logistic).Intercept()
	if b[0] == 0 && b[1] == 0 {
		t.Errorf("-intercept fitted: the model's b is %v", b)
	}
	if _, errs, code := runCmd(append(append([]string{}, args...), "-intercept", "lsq")...); code != exitUsage || !strings.Contains(errs, "ntercept") {
		t.Errorf("-intercept lsq: exit %d, %q", code, errs)
	}
}

// zonal serve answers the probabilities of a logistic model file: rows
// summing to 1, the pipeline's own.
func TestServeLogistic(t *testing.T) {
	dir := t.TempDir()
	data := writeClassLIBSVM(t, dir, "three.libsvm", 90, 3)
	model := filepath.Join(dir, "m.zonal")
	if _, errs, code := runCmd("fit", "-train", data, "-format", "libsvm", "-loss", "logistic", "-lambda", "1e-3", "-sigma", "1", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	pipe := loadModel(t, model)
	url, stop := startServe(t, []string{"-model", model, "-addr", "127.0.0.1:0"}, regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`))
	defer stop()
	rows := [][]float64{{0, 0, 0}, {1, 0.5, 0}, {2, 1, 0}, {0.4, 0.9, 0.5}} // d = 3: the file names column 3
	body, _ := json.Marshal(map[string]any{"rows": rows, "probabilities": true})
	resp, err := http.Post(url+"/v1/predict", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var a struct {
		Predictions   []float64
		Probabilities [][]float64
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &a) != nil || len(a.Probabilities) != len(rows) {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	x := mat.NewDense(len(rows), 3, nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	want := mat.NewDense(len(rows), 3, nil)
	if err := pipe.PredictProba(want, x); err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Probabilities {
		s := 0.0
		for j, v := range p {
			// JSON carries the shortest round-trip decimal: exact.
			if v != want.At(i, j) {
				t.Fatalf("row %d class %d: served %v, PredictProba %v", i, j, v, want.At(i, j))
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
}

// -intercept: an unknown value and a fitted intercept where no solver fits
// one are usage errors naming the flag; a fitted intercept is reported in
// -json, for the logistic loss too, and none for its mean.
func TestInterceptFlag(t *testing.T) {
	dir := t.TempDir()
	data := writeBinaryCSV(t, dir, 60)
	for _, args := range [][]string{
		{"fit", "-train", data, "-intercept", "lsq"},
		{"fit", "-train", data, "-intercept", "fitted", "-method", "exact"},
	} {
		_, errs, code := runCmd(args...)
		if code != exitUsage || !strings.Contains(errs, "ntercept") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-intercept", "fitted", "-sigma", "1", "-lambda", "1e-3"}, `"intercept":"fitted"`},
		{[]string{"-intercept", "mean", "-sigma", "1", "-lambda", "1e-3"}, `"intercept":"mean"`},
		{[]string{"-loss", "logistic", "-sigma", "1", "-lambda", "1e-3"}, `"intercept":"none"`}, // auto: nothing to score it with
		{[]string{"-loss", "logistic", "-intercept", "fitted", "-sigma", "1", "-lambda", "1e-3"}, `"intercept":"fitted"`},
		{[]string{"-loss", "logistic", "-intercept", "mean", "-sigma", "1", "-lambda", "1e-3"}, `"intercept":"none"`},
	} {
		out, errs, code := runCmd(append([]string{"fit", "-train", data, "-split", "0.8", "-json"}, tc.args...)...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %s in\n%s%s", tc.args, code, tc.want, out, errs)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// writeBinaryCSV writes n rows of two features and a noisy binary label
// (1 when a + b plus a deterministic wiggle exceeds 1): the classes
// overlap, so probabilities are between 0 and 1 and thresholds matter.
func writeBinaryCSV(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("y,a,b\n")
	for i := 0; i < n; i++ {
		a := 0.5 + 0.5*math.Sin(float64(i)*1.3)
		c := 0.5 + 0.5*math.Cos(float64(i)*0.7)
		y := 0
		if a+c+0.4*math.Sin(float64(i)*12.9898) > 1 {
			y = 1
		}
		fmt.Fprintf(&b, "%d,%g,%g\n", y, a, c)
	}
	p := filepath.Join(dir, "binary.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fitJSON runs zonal fit -json with args and decodes its object.
func fitJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := runCmd(append([]string{"fit", "-json"}, args...)...)
	if code != 0 {
		t.Fatalf("fit %v: exit %d: %s", args, code, errs)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return obj
}

// zonal fit -json carries every metric that applies (null for the others),
// the calibration and the threshold; the text report shows the confusion
// matrix; a higher -threshold predicts fewer positives.
func TestFitReportsEveryMetric(t *testing.T) {
	dir := t.TempDir()
	train := writeBinaryCSV(t, dir, 300)
	obj := fitJSON(t, "-train", train, "-seed", "1")
	for _, k := range []string{"accuracy", "balanced_accuracy", "f1", "auc", "logloss", "brier", "precision_score", "recall_score", "threshold", "calibration_rows"} {
		if v, ok := obj[k].(float64); !ok || !(v >= 0) {
			t.Errorf("binary fit: %s = %v, want a number", k, obj[k])
		}
	}
	for _, k := range []string{"rmse", "mae", "r2", "poisson_deviance"} {
		if v, ok := obj[k]; !ok || v != nil {
			t.Errorf("binary fit: %s = %v, want null", k, obj[k])
		}
	}
	if (obj["calibration"] != "platt" && obj["calibration"] != "isotonic") || obj["threshold"] != 0.5 || obj["calibration_rows"] != obj["n_train"] {
		t.Errorf("calibration %v on %v rows (n_train %v), threshold %v", obj["calibration"], obj["calibration_rows"], obj["n_train"], obj["threshold"])
	}
	// -calibration auto: "chosen" gives the reason and both methods'
	// cross-validated log-losses.
	chosen, _ := obj["chosen"].(map[string]any)
	pl, _ := chosen["calibration_platt_logloss"].(float64)
	iso, _ := chosen["calibration_isotonic_logloss"].(float64)
	if reason, _ := chosen["calibration"].(string); !(pl > 0) || !(iso > 0) || !strings.Contains(reason, "CV log-loss") {
		t.Errorf("chosen calibration %q, log-losses platt %v, isotonic %v", chosen["calibration"], chosen["calibration_platt_logloss"], chosen["calibration_isotonic_logloss"])
	}
	high := fitJSON(t, "-train", train, "-seed", "1", "-threshold", "0.9")
	if high["threshold"] != 0.9 || !(high["recall_score"].(float64) <= obj["recall_score"].(float64)) || high["auc"] != obj["auc"] {
		t.Errorf("-threshold 0.9: threshold %v, recall %v (0.5: %v), auc %v (0.5: %v)", high["threshold"], high["recall_score"], obj["recall_score"], high["auc"], obj["auc"])
	}
	out, errs, code := runCmd("fit", "-train", train, "-seed", "1")
	if code != 0 || !strings.Contains(out, "confusion matrix") || !strings.Contains(out, "AUC") || !strings.Contains(out, "platt calibration") {
		t.Errorf("text report: exit %d %s\n%s", code, errs, out)
	}

	reg := fitJSON(t, "-train", writeRegressionCSV(t, dir, "reg.csv", 150, 3), "-method", "exact")
	for _, k := range []string{"rmse", "mae", "r2"} {
		if _, ok := reg[k].(float64); !ok {
			t.Errorf("regression: %s = %v", k, reg[k])
		}
	}
	if reg["auc"] != nil || reg["accuracy"] != nil || reg["threshold"] != nil || reg["calibration"] != "none" {
		t.Errorf("regression: auc %v, accuracy %v, threshold %v, calibration %v", reg["auc"], reg["accuracy"], reg["threshold"], reg["calibration"])
	}
	if _, errs, code := runCmd("fit", "-train", train, "-threshold", "1.5"); code != exitUsage {
		t.Errorf("-threshold 1.5: exit %d: %s", code, errs)
	}
	if _, errs, code := runCmd("fit", "-train", train, "-threshold", "0.3", "-calibration", "none"); code != exitUsage {
		t.Errorf("-threshold with -calibration none: exit %d: %s", code, errs)
	}
}

// loadModel reads the model file at path.
func loadModel(t *testing.T, path string) *solvers.Pipeline {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pipe, err := solvers.Load(f, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pipe
}

// parseRows parses lines of sep-separated numbers.
func parseRows(t *testing.T, lines []string, sep string) [][]float64 {
	t.Helper()
	var rows [][]float64
	for _, l := range lines {
		var row []float64
		for _, f := range strings.Split(l, sep) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// zonal predict -proba prints a header of the class labels and one
// probability per class a row, summing to 1, the pipeline's PredictProba
// bit for bit (shortest round-trip decimals); -json carries the same; and
// -threshold T predicts the larger label exactly when its probability
// exceeds T, 0.5 being the default decision. The same holds for the
// logistic loss's models, whose probabilities are their own (no
// calibration).
func TestPredictProbaAndThreshold(t *testing.T) {
	dir := t.TempDir()
	logistic := []string{"-loss", "logistic"}
	for _, c := range []struct {
		name    string
		args    []string
		classes string
		fit     []string
	}{
		{"binary", nil, "0,1", nil},
		{"3 classes", []string{"-format", "libsvm"}, "0,1,2", nil},
		{"binary logistic", nil, "0,1", logistic},
		{"3 classes logistic", []string{"-format", "libsvm"}, "0,1,2", logistic},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := writeBinaryCSV(t, dir, 200)
			if c.classes != "0,1" {
				data = writeClassLIBSVM(t, dir, "three.libsvm", 150, 3)
			}
			model := filepath.Join(t.TempDir(), "m.zonal")
			if _, errs, code := runCmd(append(append([]string{"fit", "-train", data, "-model", model, "-seed", "1"}, c.args...), c.fit...)...); code != 0 {
				t.Fatal(errs)
			}
			out, errs, code := runCmd(append([]string{"predict", "-model", model, "-data", data, "-proba"}, c.args...)...)
			if code != 0 {
				t.Fatal(errs)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if lines[0] != c.classes {
				t.Fatalf("header %q, want %q", lines[0], c.classes)
			}
			prob := parseRows(t, lines[1:], ",")
			pipe := loadModel(t, model)
			d, err := dataset.ReadFile(data, dataset.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := d.Dims()
			want := mat.NewDense(n, pipe.Classes(), nil)
			if err := pipe.PredictProba(want, d.Matrix()); err != nil {
				t.Fatal(err)
			}
			if len(prob) != n {
				t.Fatalf("%d rows of probabilities for %d rows", len(prob), n)
			}
			for i, row := range prob {
				s := 0.0
				for j, v := range row {
					if v != want.At(i, j) || !(v >= 0 && v <= 1) {
						t.Fatalf("row %d class %d: printed %v, PredictProba %v", i, j, v, want.At(i, j))
					}
					s += v
				}
				// k probabilities summed in float64: a few ulps.
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("row %d sums to %v", i, s)
				}
			}
			jout, errs, code := runCmd(append([]string{"predict", "-model", model, "-data", data, "-proba", "-json"}, c.args...)...)
			var res predictResult
			if code != 0 || json.Unmarshal([]byte(jout), &res) != nil {
				t.Fatalf("-json: exit %d %s", code, errs)
			}
			if len(res.Probabilities) != n || fmt.Sprint(res.Classes) != "["+strings.ReplaceAll(c.classes, ",", " ")+"]" {
				t.Fatalf("-json: %d probability rows, classes %v", len(res.Probabilities), res.Classes)
			}
			for i := range prob {
				if fmt.Sprint(res.Probabilities[i]) != fmt.Sprint(prob[i]) {
					t.Fatalf("-json row %d %v, CSV %v", i, res.Probabilities[i], prob[i])
				}
			}
			if c.classes != "0,1" {
				if _, errs, code := runCmd(append([]string{"predict", "-model", model, "-data", data, "-threshold", "0.3"}, c.args...)...); code == 0 || !strings.Contains(errs, "a classifier of 3 classes") {
					t.Errorf("-threshold on 3 classes: exit %d %s, want an error naming the 3 classes", code, errs)
				}
				return
			}
			def, _, _ := runCmd("predict", "-model", model, "-data", data)
			prevPos := n + 1
			for _, th := range []string{"0.2", "0.5", "0.8"} {
				out, errs, code := runCmd("predict", "-model", model, "-data", data, "-threshold", th)
				if code != 0 {
					t.Fatal(errs)
				}
				tv, _ := strconv.ParseFloat(th, 64)
				labels := parseRows(t, strings.Split(strings.TrimSuffix(out, "\n"), "\n"), ",")
				pos := 0
				for i, l := range labels {
					if wantPos := prob[i][1] > tv; (l[0] == 1) != wantPos {
						t.Fatalf("threshold %s row %d: label %v, probability %v", th, i, l[0], prob[i][1])
					}
					if l[0] == 1 {
						pos++
					}
				}
				if pos > prevPos {
					t.Errorf("threshold %s: %d positives, more than at a lower threshold (%d)", th, pos, prevPos)
				}
				prevPos = pos
				if th == "0.5" && out != def {
					t.Error("-threshold 0.5 differs from the default decision")
				}
				if th == "0.2" && pos == n || th == "0.8" && pos == 0 {
					t.Errorf("threshold %s: %d of %d positive: the probabilities do not spread", th, pos, n)
				}
			}
		})
	}
}

// -proba and -threshold need a calibrated classifier; -proba excludes
// -scores.
func TestPredictProbaErrors(t *testing.T) {
	dir := t.TempDir()
	reg := writeRegressionCSV(t, dir, "reg.csv", 60, 3)
	model := filepath.Join(dir, "reg.zonal")
	if _, errs, code := runCmd("fit", "-train", reg, "-method", "exact", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"-proba"}, {"-threshold", "0.4"}} {
		out, errs, code := runCmd(append([]string{"predict", "-model", model, "-data", reg}, args...)...)
		if code == 0 || out != "" || !strings.Contains(errs, "regression model") {
			t.Errorf("%v on a regression model: exit %d, %q", args, code, errs)
		}
	}
	if _, _, code := runCmd("predict", "-model", model, "-data", reg, "-proba", "-scores"); code != exitUsage {
		t.Errorf("-proba -scores: exit %d, want %d", code, exitUsage)
	}
}

// zonal tune -metric chooses by any metric of the task: -json names it and
// its best setting is the table's best in the metric's direction, the text
// report says "chosen by"; a metric of the other task, an unknown one and
// any metric with -criterion gcv are usage errors; its report carries
// every test metric.
func TestTuneMetric(t *testing.T) {
	dir := t.TempDir()
	train := writeBinaryCSV(t, dir, 160)
	base := []string{"tune", "-train", train, "-method", "exact", "-sigmas", "0.5,2", "-lambdas", "1e-3,1e-1", "-folds", "3"}
	reg := writeRegressionCSV(t, dir, "reg.csv", 80, 3)
	regBase := []string{"tune", "-train", reg, "-method", "exact", "-sigmas", "0.5,2", "-lambdas", "1e-3,1e-1", "-criterion", "loo"}
	for _, c := range []struct {
		args   []string
		metric string
		higher bool
	}{
		{base, "accuracy", true}, {base, "balanced_accuracy", true}, {base, "auc", true}, {base, "logloss", false}, {base, "f1", true},
		{append(slices.Clone(base), "-criterion", "split"), "logloss", false},
		{regBase, "rmse", false}, {regBase, "mae", false}, {regBase, "r2", true},
	} {
		res := runJSON(t, append(slices.Clone(c.args), "-metric", c.metric, "-json")...)
		if res["metric"] != c.metric || res["higher_is_better"] != c.higher {
			t.Errorf("-metric %s: -json metric %v, higher_is_better %v", c.metric, res["metric"], res["higher_is_better"])
		}
		best, _ := res["best"].(map[string]any)["mean"].(float64)
		for _, r := range res["settings"].([]any) {
			m, ok := r.(map[string]any)["mean"].(float64)
			if !ok || (c.higher && m > best) || (!c.higher && m < best) {
				t.Errorf("-metric %s: setting %v beats the best %g", c.metric, r, best)
			}
		}
		if c.metric == "accuracy" && (res["balanced_accuracy"] == nil || res["f1"] == nil) {
			t.Errorf("-metric accuracy: balanced_accuracy %v, f1 %v", res["balanced_accuracy"], res["f1"])
		}
	}
	out, errs, code := runCmd(append(slices.Clone(base), "-metric", "auc")...)
	if code != 0 || !strings.Contains(out, "chosen by auc") || !strings.Contains(out, "higher is better") {
		t.Errorf("-metric auc text report: exit %d %s\n%s", code, errs, out)
	}
	for _, args := range [][]string{
		append(slices.Clone(base), "-metric", "rmse"),
		append(slices.Clone(base), "-metric", "nope"),
		append(slices.Clone(base), "-metric", "auc", "-criterion", "gcv"),
		append(slices.Clone(regBase), "-metric", "auc"),
		append(slices.Clone(regBase), "-metric", "logloss"),
	} {
		_, errs, code := runCmd(args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(errs), "\n") > 3 {
			t.Errorf("%v: exit %d, want %d: %s", args[len(args)-4:], code, exitUsage, errs)
		}
		t.Logf("%v: %s", args[len(args)-2:], strings.TrimSpace(errs))
	}
}

// A class of 3 training rows is calibrated by Platt scaling on 3 folds, and
// the fit says so: a note on standard error (after the fit) and in -json
// "notes", "calibration_folds" 3, and the saved model's probabilities. A
// class of one row leaves the model without probabilities, with a note.
func TestFitTinyClassCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, positives int) string {
		var b strings.Builder
		b.WriteString("y,a,b\n")
		for i := range 200 {
			a, c := math.Sin(float64(i)*1.3), math.Cos(float64(i)*0.7)
			y := 0
			if i%67 == 5 && i/67 < positives {
				y, a = 1, a+3 // rows 5, 72, 139: apart from the rest
			}
			fmt.Fprintf(&b, "%d,%g,%g\n", y, a, c)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	three := write("three.csv", 3)
	model := filepath.Join(dir, "m.zonal")
	// -split 0.999 keeps all 3 positives among the training rows (the
	// held-out row of a 200-row set is one row), -task since 1 is seen
	// only 3 times.
	args := []string{"-train", three, "-task", "classification", "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-split", "0.999", "-model", model}
	obj := fitJSON(t, args...)
	notes, _ := obj["notes"].([]any)
	if obj["calibration"] != "platt" || obj["calibration_folds"] != 3.0 || len(notes) != 1 || !strings.Contains(fmt.Sprint(notes[0]), "3 folds") {
		t.Errorf("3 positives: calibration %v on %v folds, notes %v", obj["calibration"], obj["calibration_folds"], obj["notes"])
	}
	out, _, code := runCmd("predict", "-model", model, "-data", three, "-proba")
	if code != 0 {
		t.Fatalf("predict -proba: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 201 {
		t.Fatalf("predict -proba: %d lines, want a header and 200 rows", len(lines))
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		p0, err0 := strconv.ParseFloat(f[0], 64)
		p1, err1 := strconv.ParseFloat(f[1], 64)
		if err0 != nil || err1 != nil || math.Abs(p0+p1-1) > 1e-12 || p0 < 0 || p1 < 0 {
			t.Fatalf("row %d: %q", i, l)
		}
	}
	_, errs, code := runCmd(append([]string{"fit"}, args...)...)
	if code != 0 || !strings.Contains(errs, "note: platt calibration on 3 folds") {
		t.Errorf("text fit: exit %d, stderr %s", code, errs)
	}

	one := write("one.csv", 1)
	obj = fitJSON(t, "-train", one, "-task", "classification", "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-split", "0.999")
	notes, _ = obj["notes"].([]any)
	if obj["calibration"] != "none" || len(notes) != 1 || !strings.Contains(fmt.Sprint(notes[0]), "no calibration") {
		t.Errorf("1 positive: calibration %v, notes %v", obj["calibration"], obj["notes"])
	}
	if _, errs, code := runCmd("fit", "-train", three, "-task", "classification", "-method", "exact", "-split", "0.999", "-calibration", "isotonic"); code == 0 || !strings.Contains(errs, "-calibration isotonic: class 1 has 3 training rows") {
		t.Errorf("-calibration isotonic with 3 positives: exit %d: %s", code, errs)
	}
}

// Test labels that are not classes of the model are counted as errors and
// named: -json "unseen_test_labels" and "unseen_test_rows", a line of the
// text report, and no probability metrics (their columns are the training
// classes).
func TestFitUnseenTestLabels(t *testing.T) {
	dir := t.TempDir()
	train := writeBinaryCSV(t, dir, 200)
	raw, err := os.ReadFile(train)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var b strings.Builder
	b.WriteString(lines[0] + "\n")
	for i, l := range lines[1:41] {
		if i%4 == 0 {
			l = "5" + l[1:] // 10 rows of label 5, which training has not
		}
		b.WriteString(l + "\n")
	}
	test := filepath.Join(dir, "test.csv")
	if err := os.WriteFile(test, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-train", train, "-test", test, "-method", "exact", "-sigma", "0.5", "-lambda", "1e-3"}
	obj := fitJSON(t, args...)
	unseen, _ := obj["unseen_test_labels"].([]any)
	if len(unseen) != 1 || unseen[0] != 5.0 || obj["unseen_test_rows"] != 10.0 || obj["auc"] != nil || obj["logloss"] != nil {
		t.Errorf("unseen labels %v on %v rows, auc %v, logloss %v", obj["unseen_test_labels"], obj["unseen_test_rows"], obj["auc"], obj["logloss"])
	}
	if acc, _ := obj["accuracy"].(float64); !(acc <= 0.75) {
		t.Errorf("accuracy %v with 10 of 40 rows of an unseen label: they must count as errors", obj["accuracy"])
	}
	out, errs, code := runCmd(append([]string{"fit"}, args...)...)
	if code != 0 || !strings.Contains(out, "10 test rows have labels the model has no class for (5)") {
		t.Errorf("text report: exit %d %s\n%s", code, errs, out)
	}
	// Without them, no such field.
	obj = fitJSON(t, "-train", train, "-method", "exact", "-sigma", "0.5", "-lambda", "1e-3")
	if _, ok := obj["unseen_test_labels"]; ok {
		t.Errorf("unseen_test_labels %v on a test split of the training file", obj["unseen_test_labels"])
	}
}

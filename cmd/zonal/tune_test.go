package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/dataset"
)

// writeDigitsCSV writes the embedded digits set (label first) to dir as a
// seeded 80/20 split: digits_train.csv and digits_test.csv.
func writeDigitsCSV(t *testing.T, dir string) (train, test string) {
	t.Helper()
	d, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	n, c := d.X.Dims()
	tr, te := dataset.Split(n, 0.8, 1)
	write := func(name string, rows []int) string {
		var b strings.Builder
		for _, i := range rows {
			b.WriteString(strconv.FormatFloat(d.Y[i], 'g', -1, 64))
			for j := 0; j < c; j++ {
				b.WriteByte(',')
				b.WriteString(strconv.FormatFloat(d.X.At(i, j), 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("digits_train.csv", tr), write("digits_test.csv", te)
}

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := runCmd(args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return obj
}

// The goal of the automatic defaults, on the embedded digits set: `zonal fit` with no flag but
// the data (80/20 split) is within 0.5 accuracy points of the best setting
// `zonal tune` finds for the same method (FALKON) by 5-fold CV over its
// default 5 x 10 grid, both evaluated on the same held-out 20%. The chosen
// values are in -json and the model file holds them: reloaded, it predicts
// as the fit reported.
func TestDefaultFitNearTunedBestDigits(t *testing.T) {
	if testing.Short() {
		t.Skip("fits and tunes digits three times (minutes under -race); skipped with -short")
	}
	dir := t.TempDir()
	train, test := writeDigitsCSV(t, dir)
	fitModel, tuneModel := filepath.Join(dir, "fit.zonal"), filepath.Join(dir, "tune.zonal")
	fit := runJSON(t, "fit", "-train", train, "-test", test, "-json", "-model", fitModel)
	tuned := runJSON(t, "tune", "-train", train, "-test", test, "-json", "-method", "falkon", "-model", tuneModel)
	fa, ta := fit["accuracy"].(float64), tuned["accuracy"].(float64)
	t.Logf("default fit accuracy %.4f (sigma %v, lambda %v, centers %v), tuned best %.4f (%v)", fa, fit["sigma"], fit["lambda"], fit["centers"], ta, tuned["best"])
	if fa < ta-0.005 || fa < 0.95 {
		t.Errorf("default fit accuracy %.4f, tuned best %.4f: want within 0.005 (and >= 0.95)", fa, ta)
	}
	if fit["task"] != "classification" || fit["method"] != "falkon" {
		t.Errorf("task %v, method %v: want classification, falkon", fit["task"], fit["method"])
	}
	// Neither -standardize nor -scale: both scalings were tuned and the
	// choice is explained.
	chosen, _ := fit["chosen"].(map[string]any)
	for _, k := range []string{"sigma", "lambda", "centers", "standardize"} {
		if s, _ := chosen[k].(string); s == "" {
			t.Errorf("chosen.%s missing: %v", k, chosen)
		}
	}
	if s, _ := fit["sigma"].(float64); !(s > 0) {
		t.Errorf("sigma %v", fit["sigma"])
	}
	if l, _ := fit["lambda"].(float64); !(l > 0 && l < 1) {
		t.Errorf("lambda %v", fit["lambda"])
	}
	// 1438 training rows: the floor ceil(sqrt(1438) ln 1438) = 276 is
	// below min(n, estimator.MinCenters), so every row is a centre.
	if m, _ := fit["centers"].(float64); m != 1438 {
		t.Errorf("centers %v, want 1438", fit["centers"])
	}
	// The text report names the choices on one line.
	out, _, code := runCmd("fit", "-train", train, "-test", test)
	if code != 0 || !strings.Contains(out, "chose sigma ") || !strings.Contains(out, "lambda ") || !strings.Contains(out, "centres 1438 (auto") {
		t.Errorf("text report (exit %d):\n%s", code, out)
	}
	// Both models (sigma, lambda, scaler and classes stored) reload and
	// predict the test file with exactly the accuracy reported.
	for m, want := range map[string]float64{fitModel: fa, tuneModel: ta} {
		pout, perr, code := runCmd("predict", "-model", m, "-data", test, "-json")
		if code != 0 {
			t.Fatalf("predict %s: exit %d: %s", m, code, perr)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(pout), &p); err != nil {
			t.Fatalf("predict -json: %v", err)
		}
		if got, _ := p["accuracy"].(float64); got != want {
			t.Errorf("%s reloaded: accuracy %v, the command reported %v", m, p["accuracy"], want)
		}
	}
}

// zonal tune prints a table row per setting with the best marked, the test
// metric of the refit, and progress on stderr; -json has every setting and
// a reloaded model predicts exactly what was evaluated.
func TestTuneTableAndModel(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 160, 3)
	test := writeRegressionCSV(t, dir, "test.csv", 60, 3)
	for _, method := range [][]string{{"-method", "exact"}, {"-method", "ridge", "-map", "fourier", "-features", "40,80"}, {"-method", "falkon", "-centers", "20,40"}, {"-method", "park", "-cells", "2", "-centers", "20,40"}} {
		model := filepath.Join(dir, method[1]+".zonal")
		args := append([]string{"tune", "-train", train, "-test", test, "-sigmas", "0.5,1,2", "-lambdas", "1e-6,1e-3", "-folds", "3", "-model", model}, method...)
		out, errs, code := runCmd(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		want := 3 * 2
		if method[1] != "exact" {
			want *= 2
		}
		if n := strings.Count(out, "\n   ") + strings.Count(out, "\n*  "); n < want {
			t.Errorf("%s: %d table rows, want %d:\n%s", method[1], n, want, out)
		}
		if strings.Count(out, "\n*") != 1 || !strings.Contains(out, "test RMSE") || !strings.Contains(out, "model written") {
			t.Errorf("%s: report:\n%s", method[1], out)
		}
		if !strings.Contains(errs, fmt.Sprintf("%d/%d settings, best so far", want, want)) {
			t.Errorf("%s: progress on stderr:\n%s", method[1], errs)
		}
		obj := runJSON(t, append(args, "-json")...)
		if s, _ := obj["settings"].([]any); len(s) != want {
			t.Errorf("%s: %d settings in -json, want %d", method[1], len(s), want)
		}
		rmse, _ := obj["rmse"].(float64)
		if !(rmse > 0 && rmse < 0.5) {
			t.Errorf("%s: test RMSE %v", method[1], obj["rmse"])
		}
		// The reloaded model's predictions give the same RMSE.
		pout, perr, code := runCmd("predict", "-model", model, "-data", test, "-json")
		if code != 0 {
			t.Fatalf("predict: exit %d: %s", code, perr)
		}
		var p map[string]any
		if err := json.Unmarshal([]byte(pout), &p); err != nil {
			t.Fatalf("predict -json: %v\n%s", err, pout)
		}
		if got, _ := p["rmse"].(float64); got != rmse {
			t.Errorf("%s: reloaded model RMSE %v, tune reported %v", method[1], p["rmse"], rmse)
		}
	}
}

// Each auto value is chosen only when asked for, and says how: -sigma auto
// with a fixed lambda is the median heuristic alone, -sigma scale the
// 'scale' rule; an explicit -standardize (or -scale) is kept as given.
func TestFitAutoModes(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 200, 3)
	cases := []struct {
		args                 []string
		sigma, lambda, stdzd string // substrings of chosen.*; "" = absent
		standardize          bool
	}{
		{[]string{"-lambda", "1e-4"}, "median heuristic", "", "", true},
		{[]string{"-sigma", "scale", "-lambda", "1e-4"}, "scale rule", "", "", true},
		{[]string{"-sigma", "2"}, "", "leave-one-out", "", true},
		{[]string{"-standardize"}, "golden-section", "leave-one-out", "", true},
		{[]string{"-scale", "0.5"}, "golden-section", "leave-one-out", "", false},
		{[]string{"-method", "exact"}, "golden-section", "leave-one-out", "raw features", true},
		{[]string{"-sigma", "2", "-lambda", "1e-4", "-centers", "30"}, "", "", "", true},
	}
	for _, c := range cases {
		args := append([]string{"fit", "-train", train, "-split", "0.8", "-json"}, c.args...)
		obj := runJSON(t, args...)
		chosen, _ := obj["chosen"].(map[string]any)
		for k, want := range map[string]string{"sigma": c.sigma, "lambda": c.lambda, "standardize": c.stdzd} {
			got, _ := chosen[k].(string)
			if want == "" && got != "" || !strings.Contains(got, want) {
				t.Errorf("%v: chosen.%s = %q, want %q", c.args, k, got, want)
			}
		}
		if obj["standardize"] != c.standardize {
			t.Errorf("%v: standardize %v, want %v", c.args, obj["standardize"], c.standardize)
		}
		if c.args[0] == "-sigma" && c.args[1] == "2" && obj["sigma"] != 2.0 {
			t.Errorf("%v: sigma %v, want 2", c.args, obj["sigma"])
		}
		if r2, _ := obj["r2"].(float64); !(r2 > 0.5) {
			t.Errorf("%v: R^2 %v", c.args, obj["r2"])
		}
	}
}

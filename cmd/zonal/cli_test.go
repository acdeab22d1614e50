package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/zonal-ml/zonal"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func runCmdIn(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runMainIO(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// stripHeader returns the CSV text of path without its first line.
func stripHeader(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	return rest
}

// A headerless CSV keeps all its rows (the first is data); standard input
// works with -format and is refused without it; -header no on a file with a
// header is an error at line 1.
func TestFitHeaderlessAndStdin(t *testing.T) {
	dir := t.TempDir()
	withHeader := writeRegressionCSV(t, dir, "train.csv", 100, 3)
	body := stripHeader(t, withHeader)
	noHeader := filepath.Join(dir, "nohdr.csv")
	os.WriteFile(noHeader, []byte(body), 0o644)
	nTrain := func(out string) float64 {
		var obj map[string]any
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		return obj["n_train"].(float64) + obj["n_test"].(float64)
	}
	args := []string{"-method", "exact", "-sigma", "1", "-lambda", "1e-4", "-json"}
	for _, c := range []struct {
		stdin string
		args  []string
		rows  float64
	}{
		{"", []string{"-train", withHeader}, 100},
		{"", []string{"-train", noHeader}, 100},
		{"", []string{"-train", noHeader, "-header", "no"}, 100},
		{body, []string{"-train", "-", "-format", "csv"}, 100},
	} {
		out, errs, code := runCmdIn(c.stdin, append(append([]string{"fit"}, c.args...), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		if got := nTrain(out); got != c.rows {
			t.Errorf("%v: %g rows read, want %g", c.args, got, c.rows)
		}
	}
	if _, errs, code := runCmd(append([]string{"fit", "-train", withHeader, "-header", "no"}, args...)...); code != 1 || !strings.Contains(errs, "line 1") {
		t.Errorf("-header no on a header: exit %d, %q", code, errs)
	}
	if _, errs, code := runCmdIn(body, "fit", "-train", "-"); code != 2 || !strings.Contains(errs, "-format") {
		t.Errorf("stdin without -format: exit %d, %q", code, errs)
	}
	if _, errs, code := runCmdIn(body, "fit", "-train", "-", "-test", "-", "-format", "csv"); code != 2 || !strings.Contains(errs, "standard input") {
		t.Errorf("stdin twice: exit %d, %q", code, errs)
	}
	if _, errs, code := runCmd("fit", "-train", filepath.Join(dir, "data.txt")); code != 2 || !strings.Contains(errs, "-format csv") || strings.Contains(errs, "Options.") {
		t.Errorf("unknown extension: exit %d, %q", code, errs)
	}
}

// fit -json names the kernel, sigma, lambda, seed and backend used.
func TestFitJSONSettings(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 80, 3)
	out, errs, code := runCmd("fit", "-train", train, "-method", "exact", "-kernel", "laplacian", "-sigma", "2.5", "-lambda", "1e-3", "-seed", "7", "-json")
	if code != 0 {
		t.Fatal(errs)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	if obj["kernel"] != "laplacian" || obj["sigma"] != 2.5 || obj["lambda"] != 1e-3 || obj["seed"] != 7.0 || obj["backend"] == "" || obj["degree"] != nil {
		t.Errorf("settings: %v", obj)
	}
}

// predict -scores prints one raw output per class (three classes: three
// numbers per line, the largest at the predicted label), and the raw value
// of a regression model.
func TestPredictScores(t *testing.T) {
	dir := t.TempDir()
	train := writeClassLIBSVM(t, dir, "train.libsvm", 120, 5)
	model := filepath.Join(dir, "m.zonal")
	if _, errs, code := runCmd("fit", "-train", train, "-method", "exact", "-sigma", "1", "-lambda", "1e-6", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	labels, _, _ := runCmd("predict", "-model", model, "-data", train)
	scores, errs, code := runCmd("predict", "-model", model, "-data", train, "-scores")
	if code != 0 {
		t.Fatal(errs)
	}
	ll := strings.Split(strings.TrimSpace(labels), "\n")
	sl := strings.Split(strings.TrimSpace(scores), "\n")
	if len(ll) != 120 || len(sl) != 120 {
		t.Fatalf("%d label lines, %d score lines", len(ll), len(sl))
	}
	for i := range sl {
		f := strings.Fields(sl[i])
		if len(f) != 3 {
			t.Fatalf("line %d: %q, want 3 scores", i, sl[i])
		}
		best, bestV := 0, math.Inf(-1)
		for j, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			if v > bestV {
				best, bestV = j, v
			}
		}
		if strconv.Itoa(best) != ll[i] { // classes are 0, 1, 2
			t.Fatalf("row %d: argmax %d, label %s", i, best, ll[i])
		}
	}
	out, _, code := runCmd("predict", "-model", model, "-data", train, "-scores", "-json")
	var pr predictResult
	if code != 0 || json.Unmarshal([]byte(out), &pr) != nil || len(pr.Scores) != 120 || len(pr.Scores[0]) != 3 {
		t.Fatalf("-scores -json: exit %d, %q", code, out)
	}
	// Regression: the score is the prediction itself.
	reg := writeRegressionCSV(t, dir, "reg.csv", 60, 2)
	if _, errs, code := runCmd("fit", "-train", reg, "-method", "exact", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	a, _, _ := runCmd("predict", "-model", model, "-data", reg)
	b, _, _ := runCmd("predict", "-model", model, "-data", reg, "-scores")
	if a != b || a == "" {
		t.Errorf("regression scores differ from predictions")
	}
}

// A bad -model path fails before the fit and leaves no file behind; a
// good one leaves exactly the model.
func TestModelPathCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 60, 2)
	sub := filepath.Join(dir, "out")
	os.Mkdir(sub, 0o755)
	for _, p := range []string{sub, filepath.Join(sub, "missing", "m.zonal")} {
		_, errs, code := runCmd("fit", "-train", train, "-method", "exact", "-model", p)
		if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("-model %s: exit %d, %q", p, code, errs)
		}
	}
	if ents, _ := os.ReadDir(sub); len(ents) != 0 {
		t.Errorf("files left in %s: %v", sub, ents)
	}
	if _, errs, code := runCmd("fit", "-train", train, "-method", "exact", "-model", filepath.Join(sub, "m.zonal")); code != 0 {
		t.Fatal(errs)
	}
	if ents, _ := os.ReadDir(sub); len(ents) != 1 || ents[0].Name() != "m.zonal" {
		t.Errorf("after a fit %s holds %v, want m.zonal only", sub, ents)
	}
}

// Help texts: no backquoted argument names, gzip detected by content.
func TestHelpTexts(t *testing.T) {
	_, errs, _ := runCmd("predict", "-h")
	if strings.Contains(errs, "-model zonal fit") {
		t.Errorf("predict -h: %q", errs)
	}
	_, errs, _ = runCmd("approx", "-h")
	if strings.Contains(errs, "by extension") || !strings.Contains(errs, "content") {
		t.Errorf("approx -h: %q", errs)
	}
}

// Library option names never reach the user.
func TestCLIMessage(t *testing.T) {
	for in, want := range map[string]string{
		"dense 3 x 4 matrix exceeds MaxDenseElements = 9 (use Options.NoDense)": "exceeds the limit of 9",
		"CSV has 5 feature columns, want at most MaxCols = 3":                   "want at most 3",
	} {
		got := cliMessage(errString(in))
		if !strings.Contains(got, want) || strings.Contains(got, "Options.") {
			t.Errorf("cliMessage(%q) = %q, want %q", in, got, want)
		}
	}
	// Structured errors are rewritten from their fields, wherever they are
	// wrapped: the option becomes its flag, the budget -memory.
	tl := fmt.Errorf("train.csv: %w", &zonal.TooLargeError{What: "5000 centres", Setting: "MemoryBudget", Need: 3 << 30, Budget: 2 << 30, Param: "Centers", Value: 5000})
	if got := cliMessage(tl); !strings.Contains(got, "train.csv: -centers 5000: 5000 centres needs 3.0 GiB") || !strings.Contains(got, "(raise it with -memory)") || strings.Contains(got, "MemoryBudget") {
		t.Errorf("cliMessage(TooLargeError) = %q", got)
	}
	pe := fmt.Errorf("fit: %w", &zonal.ParamError{Param: "Lambda", Value: -1.0, Reason: "must be positive and finite"})
	if got := cliMessage(pe); got != "fit: -lambda -1: must be positive and finite" {
		t.Errorf("cliMessage(ParamError) = %q", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// The scaler of -scale and of -standardize is stored in the model: predict
// on the raw test rows reproduces the test RMSE fit reported (to 1e-12
// relative; the same arithmetic runs in both).
func TestScalerStoredInModel(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 100, 3)
	test := writeRegressionCSV(t, dir, "test.csv", 40, 3)
	for _, opt := range [][]string{{"-scale", "0.25"}, {"-standardize"}} {
		model := filepath.Join(dir, "m.zonal")
		args := append([]string{"fit", "-train", train, "-test", test, "-method", "exact", "-sigma", "2", "-lambda", "1e-4", "-json", "-model", model}, opt...)
		out, errs, code := runCmd(args...)
		if code != 0 {
			t.Fatal(errs)
		}
		var fit struct{ RMSE float64 }
		json.Unmarshal([]byte(out), &fit)
		out, errs, code = runCmd("predict", "-model", model, "-data", test, "-json")
		if code != 0 {
			t.Fatal(errs)
		}
		var pr struct{ RMSE float64 }
		json.Unmarshal([]byte(out), &pr)
		if !(fit.RMSE > 0) || math.Abs(pr.RMSE-fit.RMSE) > 1e-12*fit.RMSE {
			t.Errorf("%v: fit RMSE %g, predict RMSE %g", opt, fit.RMSE, pr.RMSE)
		}
	}
}

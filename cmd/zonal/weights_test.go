package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// weightedCSV writes train.csv (n rows of y and 2 features), train_w.csv
// (the same with a weight column "w" between the features), weights.txt
// (the weights i % 3, one a line), repeated.csv (row i repeated w_i times)
// and test.csv, and returns their paths and the weight sum.
func weightedCSV(t *testing.T, dir string, n int) (train, trainW, weights, repeated, test string, sum float64) {
	t.Helper()
	row := func(i int) (float64, float64, float64) {
		x0, x1 := math.Sin(float64(i)*0.7), math.Cos(float64(i)*1.3)
		return math.Sin(2*x0) + x1/2, x0, x1
	}
	var tr, trw, wt, rep, te strings.Builder
	tr.WriteString("y,x0,x1\n")
	trw.WriteString("y,x0,w,x1\n")
	rep.WriteString("y,x0,x1\n")
	te.WriteString("y,x0,x1\n")
	for i := 0; i < n; i++ {
		y, x0, x1 := row(i)
		w := i % 3
		sum += float64(w)
		fmt.Fprintf(&tr, "%g,%g,%g\n", y, x0, x1)
		fmt.Fprintf(&trw, "%g,%g,%d,%g\n", y, x0, w, x1)
		fmt.Fprintf(&wt, "%d\n", w)
		for c := 0; c < w; c++ {
			fmt.Fprintf(&rep, "%g,%g,%g\n", y, x0, x1)
		}
		y, x0, x1 = row(1000 + i)
		fmt.Fprintf(&te, "%g,%g,%g\n", y, x0, x1)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("train.csv", tr.String()), write("train_w.csv", trw.String()), write("weights.txt", wt.String()),
		write("repeated.csv", rep.String()), write("test.csv", te.String()), sum
}

// The test RMSE of a weighted exact fit equals that of the fit on the rows
// repeated by their integer weights, whichever flag gives the weights:
// both solve the same direct systems (1e-9 relative, rounding only).
func TestFitWeightsFlags(t *testing.T) {
	dir := t.TempDir()
	train, trainW, weights, repeated, test, sum := weightedCSV(t, dir, 45)
	common := []string{"-test", test, "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-standardize=false"}
	rep := fitJSON(t, append([]string{"-train", repeated}, common...)...)
	if rep["weights"] != nil {
		t.Errorf("unweighted fit reports weights %v", rep["weights"])
	}
	want := rep["rmse"].(float64)
	for _, args := range [][]string{
		{"-train", train, "-weights", weights},
		{"-train", trainW, "-weight-column", "w"},
	} {
		got := fitJSON(t, append(args, common...)...)
		if r := got["rmse"].(float64); math.Abs(r-want) > 1e-9*want {
			t.Errorf("%v: test RMSE %.15g, fit on repeated rows %.15g", args, r, want)
		}
		w, _ := got["weights"].(map[string]any)
		if w == nil || w["sum"].(float64) != sum {
			t.Errorf("%v: weights %v, want sum %g", args, got["weights"], sum)
		}
		if got["d"].(float64) != 2 {
			t.Errorf("%v: d = %v, want 2 features (the weight column is not one)", args, got["d"])
		}
	}
	// A -test file with the weight column has it dropped too.
	got := fitJSON(t, "-train", trainW, "-weight-column", "w", "-test", trainW, "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-standardize=false")
	if got["n_test"].(float64) != 45 {
		t.Errorf("test rows %v", got["n_test"])
	}
	// With -split the weights follow their rows: the text report says the
	// weights of the training part.
	out, errs, code := runCmd("fit", "-train", train, "-weights", weights, "-split", "0.7", "-method", "exact", "-sigma", "1", "-lambda", "1e-3")
	if code != 0 || !strings.Contains(out, "weighted fit: row weights sum to") {
		t.Errorf("split: exit %d, %s%s", code, out, errs)
	}
}

func TestFitClassWeightFlag(t *testing.T) {
	dir := t.TempDir()
	train := writeClassLIBSVM(t, dir, "c.libsvm", 90, 5)
	// Make class 2 rarer: keep one row in three of it.
	data, err := os.ReadFile(train)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	n2 := 0
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "2 ") {
			if i%9 != 2 {
				continue
			}
			n2++
		}
		kept = append(kept, l)
	}
	if err := os.WriteFile(train, []byte(strings.Join(kept, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(kept)
	common := []string{"-train", train, "-test", train, "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-calibration", "none"}
	got := fitJSON(t, append(common, "-class-weight", "balanced")...)
	cw := got["weights"].(map[string]any)["class_weights"].([]any)
	if len(cw) != 3 {
		t.Fatalf("class weights %v", cw)
	}
	if w := cw[2].(map[string]any)["weight"].(float64); math.Abs(w-float64(n)/(3*float64(n2))) > 1e-12 {
		t.Errorf("balanced weight of class 2: %g, want n / (k n_c) = %d / (3 * %d)", w, n, n2)
	}
	got = fitJSON(t, append(common, "-class-weight", "2:4")...)
	cw = got["weights"].(map[string]any)["class_weights"].([]any)
	if cw[0].(map[string]any)["weight"].(float64) != 1 || cw[2].(map[string]any)["weight"].(float64) != 4 {
		t.Errorf("explicit class weights %v", cw)
	}
	// A malformed setting is a usage error (2); a label that is not a
	// class is found with the data (1); both name the flag in one line.
	for _, c := range []struct {
		value string
		code  int
	}{{"bogus", 2}, {"1:-2", 2}, {"7:2", 1}} {
		_, errs, code := runCmd(append([]string{"fit"}, append(common, "-class-weight", c.value)...)...)
		if code != c.code || !strings.Contains(errs, "-class-weight") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("-class-weight %s: exit %d (want %d), stderr %q", c.value, code, c.code, errs)
		}
	}
	reg := writeRegressionCSV(t, dir, "r.csv", 40, 2)
	if _, errs, code := runCmd("fit", "-train", reg, "-class-weight", "balanced", "-sigma", "1", "-lambda", "1e-3"); code != 1 || !strings.Contains(errs, "-class-weight balanced: class weights apply to classification only") {
		t.Errorf("class weight on regression: exit %d, %q", code, errs)
	}
}

// Bad weight inputs are one-line errors naming the flag, never a panic or
// a silent unweighted fit.
func TestWeightsBadInput(t *testing.T) {
	dir := t.TempDir()
	train, trainW, _, _, _, _ := weightedCSV(t, dir, 20)
	lib := writeClassLIBSVM(t, dir, "c.libsvm", 30, 5)
	file := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ones := strings.Repeat("1\n", 20)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"word", []string{"-train", train, "-weights", file("a", "1\nabc\n"+strings.Repeat("1\n", 18))}, 1, `line 2: "abc" is not a number`},
		{"negative", []string{"-train", train, "-weights", file("b", "-1\n"+strings.Repeat("1\n", 19))}, 1, "line 1: weight -1"},
		{"NaN", []string{"-train", train, "-weights", file("c", "NaN\n"+strings.Repeat("1\n", 19))}, 1, "line 1: weight NaN"},
		{"empty line", []string{"-train", train, "-weights", file("d", "1\n\n"+strings.Repeat("1\n", 18))}, 1, "line 2 is empty"},
		{"too few", []string{"-train", train, "-weights", file("e", strings.Repeat("1\n", 19))}, 1, "has 19 weights, -train"},
		{"too many", []string{"-train", train, "-weights", file("f", ones+"1\n")}, 1, "has 21 weights"},
		{"all zero", []string{"-train", train, "-weights", file("g", strings.Repeat("0\n", 20))}, 1, "all weights are zero"},
		{"missing file", []string{"-train", train, "-weights", filepath.Join(dir, "nope")}, 1, "-weights"},
		{"both", []string{"-train", trainW, "-weights", file("h", ones), "-weight-column", "w"}, 2, "not both"},
		{"no column", []string{"-train", trainW, "-weight-column", "nope"}, 2, "-weight-column nope"},
		{"target column", []string{"-train", trainW, "-weight-column", "y"}, 2, "target column"},
		{"libsvm column", []string{"-train", lib, "-weight-column", "w"}, 2, "no CSV header"},
	}
	for _, c := range cases {
		for _, cmd := range []string{"fit", "tune"} {
			args := append([]string{cmd}, c.args...)
			args = append(args, "-sigma"+map[string]string{"fit": "", "tune": "s"}[cmd], "1", "-lambda"+map[string]string{"fit": "", "tune": "s"}[cmd], "1e-3")
			_, errs, code := runCmd(args...)
			if code != c.code || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("%s %s: exit %d (want %d), stderr %q (want one line with %q)", cmd, c.name, code, c.code, errs, c.want)
			}
		}
	}
}

// zonal tune takes the same flags: a weighted search runs, reports its
// weighted choice, and differs from the unweighted one in its scores.
func TestTuneWeights(t *testing.T) {
	dir := t.TempDir()
	train, _, weights, _, _, _ := weightedCSV(t, dir, 60)
	base := []string{"tune", "-train", train, "-method", "exact", "-sigmas", "0.5,1", "-lambdas", "1e-4,1e-2", "-criterion", "loo", "-json"}
	plain, errs, code := runCmd(base...)
	if code != 0 {
		t.Fatalf("unweighted tune: %d %s", code, errs)
	}
	weighted, errs, code := runCmd(append(base, "-weights", weights)...)
	if code != 0 {
		t.Fatalf("weighted tune: %d %s", code, errs)
	}
	if plain == weighted {
		t.Error("the weights changed nothing in the tune output")
	}
	lib := writeClassLIBSVM(t, dir, "c.libsvm", 60, 5)
	if _, errs, code := runCmd("tune", "-train", lib, "-method", "exact", "-sigmas", "1", "-lambdas", "1e-3", "-class-weight", "0:2"); code != 0 {
		t.Errorf("tune -class-weight: exit %d, %s", code, errs)
	}
}

// A weighted fit's model file records its weights: `zonal predict -json`
// shows them (null for an unweighted model), `zonal serve` names them, and
// `zonal tune -model` records them too.
func TestModelFileWeights(t *testing.T) {
	dir := t.TempDir()
	train := writeClassLIBSVM(t, dir, "c.libsvm", 60, 5)
	common := []string{"-train", train, "-test", train, "-method", "exact", "-sigma", "1", "-lambda", "1e-3", "-calibration", "none"}
	predictWeights := func(model string) map[string]any {
		t.Helper()
		out, errs, code := runCmd("predict", "-model", model, "-data", train, "-json")
		if code != 0 {
			t.Fatalf("predict: exit %d, %s", code, errs)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		w, _ := res["weights"].(map[string]any)
		if _, ok := res["weights"]; !ok {
			t.Fatal(`predict -json has no "weights" key`)
		}
		return w
	}
	weighted := filepath.Join(dir, "w.zonal")
	fit := fitJSON(t, append(common, "-class-weight", "2:4", "-model", weighted)...)
	fw := fit["weights"].(map[string]any)
	if fw["rows"].(float64) != 60 {
		t.Errorf("fit -json weights %v, want 60 rows", fw)
	}
	pw := predictWeights(weighted)
	if pw == nil || pw["sum"] != fw["sum"] || pw["rows"] != fw["rows"] || fmt.Sprint(pw["class_weights"]) != fmt.Sprint(fw["class_weights"]) {
		t.Errorf("predict -json weights %v, fit -json %v", pw, fw)
	}
	plain := filepath.Join(dir, "p.zonal")
	fitJSON(t, append(common, "-model", plain)...)
	if w := predictWeights(plain); w != nil {
		t.Errorf("unweighted model: weights %v", w)
	}
	sum, stop := startServe(t, []string{"-model", weighted, "-addr", "127.0.0.1:0"},
		regexp.MustCompile(`weighted fit: row weights sum to (\S+) over 60 rows of positive weight, class weights 0:1, 1:1, 2:4`))
	stop()
	if s, err := strconv.ParseFloat(sum, 64); err != nil || math.Abs(s-fw["sum"].(float64)) > 1e-5*s {
		t.Errorf("serve's weight sum %q, fit's %v", sum, fw["sum"])
	}
	tuned := filepath.Join(dir, "t.zonal")
	if _, errs, code := runCmd("tune", "-train", train, "-test", train, "-method", "exact", "-sigmas", "1", "-lambdas", "1e-3", "-class-weight", "2:4", "-model", tuned); code != 0 {
		t.Fatalf("tune -model: exit %d, %s", code, errs)
	}
	if tw := predictWeights(tuned); tw == nil || tw["sum"] != fw["sum"] || tw["rows"] != fw["rows"] {
		t.Errorf("tune's model weights %v, fit's %v", tw, fw)
	}
}

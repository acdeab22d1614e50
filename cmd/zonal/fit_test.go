package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
)

// writeRegressionCSV writes n rows of y = sin(x1) + x2/2 (+ small
// deterministic wiggle) with d columns to a CSV file and returns its path.
func writeRegressionCSV(t *testing.T, dir, name string, n, d int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("y")
	for j := 0; j < d; j++ {
		fmt.Fprintf(&b, ",x%d", j)
	}
	b.WriteString("\n")
	for i := 0; i < n; i++ {
		x := make([]float64, d)
		for j := range x {
			x[j] = math.Sin(float64(i*(j+3)) * 0.7)
		}
		y := math.Sin(2*x[0]) + x[min(1, d-1)]/2
		fmt.Fprintf(&b, "%g", y)
		for _, v := range x {
			fmt.Fprintf(&b, ",%g", v)
		}
		b.WriteString("\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeClassLIBSVM writes a 3-class LIBSVM file whose highest index is maxIdx.
func writeClassLIBSVM(t *testing.T, dir, name string, n, maxIdx int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := i % 3
		fmt.Fprintf(&b, "%d 1:%g 2:%g", c, float64(c)+0.3*math.Sin(float64(i)), float64(c)*0.5+0.3*math.Cos(float64(i)))
		if i == 0 {
			fmt.Fprintf(&b, " %d:0.5", maxIdx)
		}
		b.WriteString("\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCmd(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestFitJSONKeysEveryMethod(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 150, 3)
	for _, m := range [][]string{
		{"-method", "exact"},
		{"-method", "ridge", "-map", "nystrom", "-features", "40"},
		{"-method", "falkon", "-centers", "40"},
		{"-method", "park", "-cells", "3", "-centers", "45"},
	} {
		args := append([]string{"fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4", "-json", "-standardize"}, m...)
		out, errs, code := runCmd(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", m, code, errs)
		}
		if errs != "" {
			t.Errorf("%v: stderr not empty without a terminal: %q", m, errs)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%v: %v in %q", m, err, out)
		}
		for _, k := range []string{"method", "map", "task", "n_train", "n_test", "d", "features", "centers", "cells", "rmse", "mae", "r2", "accuracy", "fit_seconds", "predict_seconds"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("%v: key %q missing", m, k)
			}
		}
		if obj["task"] != "regression" || obj["accuracy"] != nil || obj["n_train"].(float64) != 120 || obj["n_test"].(float64) != 30 {
			t.Errorf("%v: %v", m, obj)
		}
		// A smooth target of 3 inputs: R^2 well above 0.5 for every method.
		if r2, _ := obj["r2"].(float64); r2 < 0.5 {
			t.Errorf("%v: test R^2 %v", m, obj["r2"])
		}
	}
}

// TestFitParKPartitionJSON: -json reports the partition of ParK (strategy,
// cap, sizes summing to n_train, cell reports with validation RMSE when
// -cell-validation asks for it) and null for the other methods; a capped
// model file loads and predicts.
func TestFitParKPartitionJSON(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 200, 3)
	model := filepath.Join(dir, "park.zonal")
	out, errs, code := runCmd("fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4", "-json",
		"-method", "park", "-cells", "4", "-centers", "60", "-partition", "kmeans", "-cell-cap", "1.2", "-cell-validation", "0.2", "-model", model)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var obj struct {
		NTrain    int `json:"n_train"`
		Partition *struct {
			Strategy  string  `json:"strategy"`
			Cap       float64 `json:"cap"`
			Sizes     []int   `json:"sizes"`
			Imbalance float64 `json:"largest_over_mean"`
			Cells     []struct {
				Rows           int      `json:"rows"`
				ValidationRows int      `json:"validation_rows"`
				ValidationRMSE *float64 `json:"validation_rmse"`
			} `json:"cells"`
		} `json:"partition"`
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	p := obj.Partition
	if p == nil || p.Strategy != "kmeans" || p.Cap != 1.2 || len(p.Sizes) != 4 || len(p.Cells) != 4 {
		t.Fatalf("partition %+v", p)
	}
	total, largest := 0, 0
	for q, s := range p.Sizes {
		total += s
		largest = max(largest, s)
		c := p.Cells[q]
		if c.Rows != s || c.ValidationRows != int(0.2*float64(s)) || c.ValidationRMSE == nil || !(*c.ValidationRMSE < 1) {
			t.Fatalf("cell %d: %+v (size %d)", q, c, s)
		}
	}
	if total != obj.NTrain || largest > int(math.Ceil(1.2*float64(total)/4)) {
		t.Fatalf("sizes %v for %d rows, cap 1.2", p.Sizes, obj.NTrain)
	}
	if math.Abs(p.Imbalance-float64(largest)*4/float64(total)) > 1e-12 {
		t.Fatalf("largest_over_mean %g", p.Imbalance)
	}
	out, errs, code = runCmd("fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4", "-json", "-method", "falkon", "-centers", "40")
	if code != 0 || !strings.Contains(out, `"partition":null`) {
		t.Fatalf("falkon: exit %d, %s %s", code, out, errs)
	}
	out, errs, code = runCmd("fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4",
		"-method", "park", "-cells", "4", "-centers", "60", "-partition", "greedy", "-cell-validation", "0.2")
	if code != 0 || !strings.Contains(out, "partition greedy (cap 0, centres by size): largest cell / (n/Q) = ") || !strings.Contains(out, "cell validation RMSE: min ") {
		t.Fatalf("text report: exit %d, %s %s", code, out, errs)
	}
	if _, errs, code := runCmd("predict", "-model", model, "-data", train); code != 0 {
		t.Fatalf("predict with the capped ParK model: exit %d: %s", code, errs)
	}
}

// TestFitPredictRoundTrip: the model file serves the same predictions, and
// LIBSVM test data below the model's d is padded while an index beyond it
// is an error.
func TestFitPredictRoundTrip(t *testing.T) {
	dir := t.TempDir()
	train := writeClassLIBSVM(t, dir, "train.libsvm", 120, 5)
	test := writeClassLIBSVM(t, dir, "test.libsvm", 30, 4) // highest index 4 < d = 5
	model := filepath.Join(dir, "m.zonal")
	out, errs, code := runCmd("fit", "-train", train, "-test", test, "-method", "falkon", "-centers", "30", "-sigma", "1", "-lambda", "1e-6", "-model", model, "-json")
	if code != 0 {
		t.Fatalf("fit: %s", errs)
	}
	var fit map[string]any
	if err := json.Unmarshal([]byte(out), &fit); err != nil {
		t.Fatal(err)
	}
	if fit["task"] != "classification" || fit["rmse"] != nil || fit["d"].(float64) != 5 {
		t.Fatalf("fit: %v", fit)
	}
	out, errs, code = runCmd("predict", "-model", model, "-data", test, "-json")
	if code != 0 {
		t.Fatalf("predict: %s", errs)
	}
	var pr struct {
		Predictions []float64
		Accuracy    *float64
	}
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Predictions) != 30 || pr.Accuracy == nil || *pr.Accuracy != fit["accuracy"].(float64) {
		t.Fatalf("predict: %d predictions, accuracy %v vs fit %v", len(pr.Predictions), pr.Accuracy, fit["accuracy"])
	}
	// Text mode: one label per line on stdout, the metric on stderr.
	out, errs, code = runCmd("predict", "-model", model, "-data", test)
	if code != 0 || strings.Count(out, "\n") != 30 || !strings.Contains(errs, "accuracy") {
		t.Fatalf("text predict: code %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errs)
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if want := fmt.Sprint(pr.Predictions[i]); line != want {
			t.Fatalf("line %d: %q vs %q", i, line, want)
		}
	}
	// Index beyond d.
	bad := writeClassLIBSVM(t, dir, "bad.libsvm", 10, 9)
	if _, errs, code := runCmd("predict", "-model", model, "-data", bad); code != 1 || !strings.Contains(errs, "9") {
		t.Fatalf("index beyond d: code %d, %q", code, errs)
	}
	if _, errs, code := runCmd("fit", "-train", train, "-test", bad, "-method", "exact"); code != 1 || !strings.Contains(errs, "exceeds") {
		t.Fatalf("fit with index beyond d: code %d, %q", code, errs)
	}
	// Corrupted model file.
	b, _ := os.ReadFile(model)
	b[len(b)/2] ^= 1
	os.WriteFile(model, b, 0o644)
	if _, errs, code := runCmd("predict", "-model", model, "-data", test); code != 1 || !strings.Contains(errs, "corrupted") {
		t.Fatalf("corrupted model: code %d, %q", code, errs)
	}
}

func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 60, 3)
	other := writeRegressionCSV(t, dir, "other.csv", 20, 4)
	nan := filepath.Join(dir, "nan.csv")
	os.WriteFile(nan, []byte("y,a,b\n1,2,3\n2,NaN,1\n3,1,1\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-lambda", "0", "-method", "exact"}, 2, "lambda"},
		{[]string{"-lambda", "-1", "-method", "falkon"}, 2, "lambda"},
		{[]string{"-lambda", "NaN"}, 2, "lambda"},
		{[]string{"-sigma", "0"}, 2, "sigma"},
		{[]string{"-sigma", "1e-160", "-method", "park"}, 2, "sigma"},
		{[]string{"-iterations", "0"}, 2, "iterations"},
		{[]string{"-iterations", "-1"}, 2, "iterations"},
		{[]string{"-subsample", "-1"}, 2, "subsample"},
		{[]string{"-workers", "-1"}, 2, "workers"},
		{[]string{"-features", "0", "-method", "ridge"}, 2, "features"},
		{[]string{"-method", "ridge", "-map", "fourier", "-features", "1000000000"}, 2, "-features 1000000000"},
		{[]string{"-method", "falkon", "-centers", "1000000000"}, 2, "-centers"},
		{[]string{"-kernel", "polynomial", "-degree", "0"}, 2, "degree"},
		{[]string{"-scale", "NaN"}, 2, "scale"},
		{[]string{"-format", "xml"}, 2, "format"},
		{[]string{"-header", "maybe"}, 2, "header"},
		{[]string{"-task", "classification"}, 1, "looks continuous"},
		{[]string{"-model", dir}, 1, "is a directory"},
		{[]string{"-model", filepath.Join(dir, "no", "such", "m.zonal")}, 1, "cannot be written"},
		{[]string{"-method", "falkon", "-centers", "1000"}, 1, "centres"},
		{[]string{"-method", "park", "-cells", "100", "-centers", "40"}, 1, "cells"},
		{[]string{"-method", "bogus"}, 2, "method"},
		{[]string{"-method", "park", "-partition", "best"}, 2, "-partition"},
		{[]string{"-method", "park", "-cell-cap", "0.5"}, 2, "-cell-cap"},
		{[]string{"-method", "park", "-cell-centers", "rows"}, 2, "-cell-centers"},
		{[]string{"-method", "park", "-cell-validation", "0.9"}, 2, "-cell-validation"},
		{[]string{"-task", "bogus"}, 2, "task"},
		{[]string{"-split", "1.5"}, 2, "split"},
		{[]string{"-test", other, "-method", "exact"}, 1, "column"},
		{[]string{"-method", "ridge", "-map", "nope"}, 2, "nope"},
		{[]string{"-method", "exact", "-memory", "1K"}, 1, "budget"},
		{[]string{"-precision", "float16"}, 2, "-precision \"float16\": want float64 or float32"},
		{[]string{"-precision", ""}, 2, "-precision"},
		{[]string{"-precision", "float32", "-method", "exact"}, 2, "-precision float32: applies to the ridge, falkon and park methods only, not exact (exact KRR factors the full n x n kernel matrix, which stays float64)"},
	} {
		args := append([]string{"fit", "-train", train}, c.args...)
		_, errs, code := runCmd(args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errs, c.want)
		}
	}
	if _, errs, code := runCmd("fit", "-train", nan); code != 1 || !strings.Contains(strings.ToLower(errs), "nan") {
		t.Errorf("NaN feature: exit %d, %q", code, errs)
	}
	if _, _, code := runCmd("fit"); code != 2 {
		t.Errorf("no -train: exit %d", code)
	}
	if _, _, code := runCmd("predict", "-model", "x"); code != 2 {
		t.Errorf("predict without -data: exit %d", code)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "512": 512, "1K": 1024, "8G": 8 << 30, "1.5M": 3 << 19, "2GiB": 2 << 30} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"x", "-1G", "0"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	if isTerminal(&b) {
		t.Fatal("a buffer is not a terminal")
	}
	p := newProgressBar(&b)
	p.report(zonal.Progress{Stage: "cg", Done: 1, Total: 2})
	p.done()
	if b.Len() != 0 {
		t.Fatalf("progress written to a non-terminal: %q", b.String())
	}
	s := renderProgress(zonal.Progress{Stage: "cg", Done: 5, Total: 20, Residual: 1e-3}, 20)
	if !strings.Contains(s, "[#####...............]") || !strings.Contains(s, " 25%") || !strings.Contains(s, "residual 1.00e-03") {
		t.Fatalf("render %q", s)
	}
}

// TestFitPrecision: -precision float32 fits FALKON, ParK and ridge (Fourier
// and Nystrom maps) in float32, reports it in -json and the text summary,
// writes a model that predicts (and records float32: the file is format
// 2); exact KRR reports null.
func TestFitPrecision(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 200, 3)
	base := []string{"fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4", "-json"}
	for _, c := range []struct {
		args []string
		want any
	}{
		{[]string{"-method", "falkon", "-centers", "40", "-precision", "float32"}, "float32"},
		{[]string{"-method", "park", "-cells", "2", "-centers", "40", "-precision", "float32"}, "float32"},
		{[]string{"-method", "falkon", "-centers", "40"}, "float64"},
		{[]string{"-method", "ridge", "-map", "fourier", "-features", "200", "-precision", "float32"}, "float32"},
		{[]string{"-method", "ridge", "-map", "nystrom", "-features", "60", "-precision", "float32"}, "float32"},
		{[]string{"-method", "ridge", "-map", "fourier", "-features", "200"}, "float64"},
		{[]string{"-method", "exact"}, nil},
	} {
		model := filepath.Join(dir, "m.zonal")
		out, errs, code := runCmd(append(append(base, c.args...), "-model", model)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%v: %v in %q", c.args, err, out)
		}
		if p, ok := obj["precision"]; !ok || p != c.want {
			t.Errorf("%v: precision %v (present %v), want %v", c.args, p, ok, c.want)
		}
		if r2, _ := obj["r2"].(float64); r2 < 0.5 {
			t.Errorf("%v: test R^2 %v", c.args, obj["r2"])
		}
		if pout, perr, code := runCmd("predict", "-model", model, "-data", train); code != 0 || len(strings.Fields(pout)) != 200 {
			t.Errorf("%v: predict exit %d, %d lines: %s", c.args, code, len(strings.Fields(pout)), perr)
		}
		if b, err := os.ReadFile(model); err != nil || len(b) < 10 || (b[8] == 2) != (c.want == "float32") {
			t.Errorf("%v: model file format %v (%v), want 2 exactly for float32", c.args, b[8:10], err)
		}
	}
	out, errs, code := runCmd("fit", "-train", train, "-sigma", "1", "-lambda", "1e-4", "-method", "falkon", "-centers", "40", "-precision", "float32")
	if code != 0 || !strings.Contains(out, "float32 K_nM") {
		t.Errorf("text summary without the precision (exit %d): %q %s", code, out, errs)
	}
	out, errs, code = runCmd("fit", "-train", train, "-sigma", "1", "-lambda", "1e-4", "-method", "ridge", "-map", "fourier", "-features", "100", "-precision", "float32")
	if code != 0 || !strings.Contains(out, "D = 100, float32 features") {
		t.Errorf("ridge text summary without the precision (exit %d): %q %s", code, out, errs)
	}
}

// TestFitRows32: zonal fit -precision float32 (FALKON, standardized rows)
// holds the training rows in float32 and says so in -json (rows_precision
// "float32", row_bytes 4 n d for the 160 training rows of 3 features);
// float64 holds 8 n d.
func TestFitRows32(t *testing.T) {
	dir := t.TempDir()
	train := writeRegressionCSV(t, dir, "train.csv", 200, 3)
	base := []string{"fit", "-train", train, "-split", "0.8", "-sigma", "1", "-lambda", "1e-4", "-json", "-standardize", "-method", "falkon", "-centers", "40"}
	for _, c := range []struct {
		prec  string
		bytes float64
	}{{"float32", 4 * 160 * 3}, {"float64", 8 * 160 * 3}} {
		out, errs, code := runCmd(append(base, "-precision", c.prec)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.prec, code, errs)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%s: %v in %q", c.prec, err, out)
		}
		if obj["rows_precision"] != c.prec || obj["row_bytes"] != c.bytes || obj["n_train"] != 160.0 {
			t.Errorf("-precision %s: rows_precision %v, row_bytes %v, n_train %v; want %s, %v, 160", c.prec, obj["rows_precision"], obj["row_bytes"], obj["n_train"], c.prec, c.bytes)
		}
	}
}

package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCountsLIBSVM writes n rows of word counts over d = 300 columns in 3
// classes: each row has 6 nonzeros (density 2%), 5 of them in its class's
// block of 100 columns and one anywhere.
func writeCountsLIBSVM(t *testing.T, dir string, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := i % 3
		cols := map[int]int{}
		for len(cols) < 5 {
			cols[1+100*c+rng.IntN(100)] = 1 + rng.IntN(4)
		}
		for len(cols) < 6 {
			cols[1+rng.IntN(300)] = 1
		}
		fmt.Fprintf(&b, "%d", c)
		for j := 1; j <= 300; j++ {
			if v, ok := cols[j]; ok {
				fmt.Fprintf(&b, " %d:%d", j, v)
			}
		}
		b.WriteString("\n")
	}
	p := filepath.Join(dir, "counts.libsvm")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFitTextTransformStoredInModel(t *testing.T) {
	dir := t.TempDir()
	data := writeCountsLIBSVM(t, dir, 240)
	model := filepath.Join(dir, "m.zonal")
	out, errs, code := runCmd("fit", "-train", data, "-sparse", "no", "-tfidf", "-normalize", "-standardize=false",
		"-method", "ridge", "-map", "tensorsketch", "-kernel", "polynomial", "-degree", "2", "-features", "512",
		"-lambda", "1e-4", "-json", "-model", model)
	if code != 0 {
		t.Fatalf("fit: code %d, stderr %s", code, errs)
	}
	var res struct {
		Accuracy  float64 `json:"accuracy"`
		TFIDF     bool    `json:"tfidf"`
		Normalize bool    `json:"normalize"`
		Sparse    bool    `json:"sparse"`
		Density   float64 `json:"density"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !res.TFIDF || !res.Normalize || res.Sparse || res.Density != 0.02 {
		t.Errorf("JSON %+v, want tfidf, normalize, dense, density 0.02", res)
	}
	// 5 of 6 words come from the class's block: a quadratic model separates them.
	if res.Accuracy < 0.9 {
		t.Errorf("test accuracy %.3f < 0.9", res.Accuracy)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != 3 {
		t.Errorf("model file version %d, want 3 (text transform, and the classifier's calibration)", v)
	}
	// predict applies the stored transform to the raw counts (read as CSR).
	pout, perrs, code := runCmd("predict", "-model", model, "-data", data, "-json")
	if code != 0 {
		t.Fatalf("predict: code %d, stderr %s", code, perrs)
	}
	var pres struct {
		Accuracy float64 `json:"accuracy"`
	}
	if err := json.Unmarshal([]byte(pout), &pres); err != nil {
		t.Fatal(err)
	}
	if pres.Accuracy < 0.9 {
		t.Errorf("predict accuracy on all rows %.3f < 0.9: the transform was not applied?", pres.Accuracy)
	}
}

func TestFitSparseInputKeptAsCSR(t *testing.T) {
	dir := t.TempDir()
	data := writeCountsLIBSVM(t, dir, 240)
	out, errs, code := runCmd("fit", "-train", data, "-tfidf", "-normalize", "-json",
		"-method", "ridge", "-map", "tensorsketch", "-kernel", "polynomial", "-features", "256", "-lambda", "1e-4")
	if !strings.Contains(errs, "input is sparse (density 2.00%): kept as CSR") {
		t.Errorf("stderr does not say the input is kept sparse: %s", errs)
	}
	if !strings.Contains(errs, "standardize off for sparse input") {
		t.Errorf("stderr does not say standardizing is off: %s", errs)
	}
	if code != 0 {
		t.Fatalf("tensorsketch on CSR: code %d, stderr %s", code, errs)
	}
	// Three classes (chance 1/3); a 256-feature sketch of the degree-2
	// kernel on 300 words is noisy, the exact solvers below reach 0.98-1.
	if acc := jsonAccuracy(t, out); acc < 0.7 {
		t.Errorf("tensorsketch on CSR: test accuracy %.3f < 0.7", acc)
	}
	// Every solver takes the CSR rows as they are.
	for _, m := range [][]string{
		{"-method", "ridge", "-map", "nystrom", "-kernel", "polynomial", "-features", "60"},
		{"-method", "falkon", "-kernel", "gaussian", "-sigma", "1", "-centers", "60"},
		{"-method", "exact", "-kernel", "polynomial"},
		{"-method", "park", "-cells", "2", "-centers", "60", "-sigma", "1"},
	} {
		args := append([]string{"fit", "-train", data, "-normalize", "-lambda", "1e-4", "-json"}, m...)
		out, errs, code := runCmd(args...)
		if code != 0 {
			t.Fatalf("%v: code %d, stderr %s", m, code, errs)
		}
		if acc := jsonAccuracy(t, out); acc < 0.9 {
			t.Errorf("%v on CSR: test accuracy %.3f < 0.9", m, acc)
		}
	}
	// No flag but -train: sigma, lambda and centres chosen on the CSR rows.
	out, errs, code = runCmd("fit", "-train", data, "-json")
	if code != 0 || !strings.Contains(errs, "kept as CSR") {
		t.Fatalf("defaults on CSR: code %d, stderr %s", code, errs)
	}
	var chosen struct {
		Chosen struct{ Sigma, Lambda, Centers string }
	}
	if err := json.Unmarshal([]byte(out), &chosen); err != nil || chosen.Chosen.Sigma == "" || chosen.Chosen.Lambda == "" || chosen.Chosen.Centers == "" {
		t.Errorf("defaults on CSR: chosen %+v (%v) in %s", chosen.Chosen, err, out)
	}
	if acc := jsonAccuracy(t, out); acc < 0.9 {
		t.Errorf("defaults on CSR: test accuracy %.3f < 0.9", acc)
	}
	_, errs, code = runCmd("fit", "-train", data, "-sparse", "maybe")
	if code != 2 || !strings.Contains(errs, "-sparse") {
		t.Errorf("-sparse maybe: code %d, stderr %s", code, errs)
	}
}

// jsonAccuracy reads the test accuracy of a fit's -json output.
func jsonAccuracy(t *testing.T, out string) float64 {
	t.Helper()
	var r struct {
		Accuracy *float64 `json:"accuracy"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Accuracy == nil {
		t.Fatalf("no accuracy in -json output (%v): %s", err, out)
	}
	return *r.Accuracy
}

// zonal tune keeps sparse LIBSVM rows as CSR too: every method tunes on
// them, the refit predicts the CSR test rows, and the model saved reloads.
func TestTuneSparseInput(t *testing.T) {
	dir := t.TempDir()
	data := writeCountsLIBSVM(t, dir, 240)
	for _, m := range [][]string{
		{"-method", "falkon", "-centers", "40"},
		{"-method", "ridge", "-map", "nystrom", "-features", "40"},
		{"-method", "exact"},
		{"-method", "park", "-cells", "2", "-centers", "40"},
	} {
		model := filepath.Join(dir, m[1]+".zonal")
		args := append([]string{"tune", "-train", data, "-lambdas", "1e-6,1e-3", "-folds", "3", "-json", "-model", model}, m...)
		out, errs, code := runCmd(args...)
		if code != 0 || !strings.Contains(errs, "kept as CSR") {
			t.Fatalf("%v: code %d, stderr %s", m, code, errs)
		}
		if acc := jsonAccuracy(t, out); acc < 0.9 {
			t.Errorf("%v: test accuracy %.3f < 0.9", m, acc)
		}
		if _, errs, code := runCmd("predict", "-model", model, "-data", data); code != 0 {
			t.Errorf("%v: predict from the tuned model: code %d, %s", m, code, errs)
		}
	}
	if _, errs, code := runCmd("tune", "-train", data, "-sparse", "maybe"); code != 2 || !strings.Contains(errs, "-sparse") {
		t.Errorf("-sparse maybe: code %d, stderr %s", code, errs)
	}
}

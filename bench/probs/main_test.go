package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/bench/internal/benchsplit"
)

func count(y []float64, v float64) int {
	n := 0
	for _, u := range y {
		if u == v {
			n++
		}
	}
	return n
}

func TestSyntheticPositiveRate(t *testing.T) {
	for _, s := range []synthSpec{{2000, 0.02, synthNoise}, {1000, 0.05, 0}, {synthRows, synthRate, synthNoise}} {
		d, err := synthetic(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		n, cols := d.Dims()
		want := int(math.Round(s.Rate * float64(s.Rows)))
		if n != s.Rows || cols != synthCols || count(d.Y, 1) != want || count(d.Y, 0) != n-want {
			t.Errorf("%+v: %d x %d rows, %d positives and %d negatives; want %d x %d, %d positives",
				s, n, cols, count(d.Y, 1), count(d.Y, 0), s.Rows, synthCols, want)
		}
	}
	a, _ := synthetic(synthSpec{500, 0.04, synthNoise}, 3)
	b, _ := synthetic(synthSpec{500, 0.04, synthNoise}, 3)
	c, _ := synthetic(synthSpec{500, 0.04, synthNoise}, 4)
	if !slices.Equal(a.X.RawMatrix().Data, b.X.RawMatrix().Data) || !slices.Equal(a.Y, b.Y) {
		t.Error("the same seed gave different rows")
	}
	if slices.Equal(a.X.RawMatrix().Data, c.X.RawMatrix().Data) {
		t.Error("another seed gave the same rows")
	}
	// Without noise the labels are a threshold of the score itself.
	d, _ := synthetic(synthSpec{1000, 0.05, 0}, 2)
	lo := math.Inf(1)
	for i, v := range d.Y {
		if v == 1 {
			lo = min(lo, synthScore(d.X.RawRowView(i)))
		}
	}
	for i, v := range d.Y {
		if v == 0 && synthScore(d.X.RawRowView(i)) >= lo {
			t.Fatalf("row %d is negative with score %g above the least positive score %g", i, synthScore(d.X.RawRowView(i)), lo)
		}
	}
	for _, bad := range []synthSpec{{50, 0.2, 0.5}, {1000, 0, 0.5}, {1000, 0.5, 0.5}, {200, 0.02, 0.5}, {1000, 0.02, -1}, {1000, 0.02, math.NaN()}} {
		if _, err := synthetic(bad, 1); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%+v: err = %v, want ErrParam", bad, err)
		}
	}
}

func TestSplitStratified(t *testing.T) {
	d, err := synthetic(synthSpec{synthRows, synthRate, synthNoise}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := benchsplit.Stratified(d.Y, trainFraction, 1)
	if len(tr)+len(te) != len(d.Y) {
		t.Fatalf("%d + %d rows, want %d", len(tr), len(te), len(d.Y))
	}
	seen := make([]bool, len(d.Y))
	for _, i := range slices.Concat(tr, te) {
		if seen[i] {
			t.Fatalf("row %d in both parts or twice", i)
		}
		seen[i] = true
	}
	pick := func(idx []int) []float64 {
		y := make([]float64, len(idx))
		for k, i := range idx {
			y[k] = d.Y[i]
		}
		return y
	}
	pos := count(d.Y, 1)
	if got, want := count(pick(tr), 1), int(math.Round(trainFraction*float64(pos))); got != want {
		t.Errorf("%d training positives, want %d of %d", got, want, pos)
	}
	if got, want := count(pick(te), 1), pos-int(math.Round(trainFraction*float64(pos))); got != want {
		t.Errorf("%d test positives, want %d", got, want)
	}
	if !slices.IsSorted(tr) || !slices.IsSorted(te) {
		t.Error("the row lists are not sorted")
	}
	tr2, _ := benchsplit.Stratified(d.Y, trainFraction, 1)
	tr3, _ := benchsplit.Stratified(d.Y, trainFraction, 2)
	if !slices.Equal(tr, tr2) || slices.Equal(tr, tr3) {
		t.Error("the split does not follow its seed")
	}
}

func TestReliabilityBins(t *testing.T) {
	p := []float64{0.05, 0.15, 0.15, 0.95, 1, 0.1}
	y := []float64{0, 1, 0, 1, 1, 1}
	bins, err := reliabilityBins(p, y, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	// 0.1 is the left edge of bin 1; 1 goes in the last bin.
	want := map[int]bin{0: {1, 0.05, 0}, 1: {3, 0.4 / 3, 2.0 / 3}, 9: {2, 0.975, 1}}
	for j, b := range bins {
		w, ok := want[j]
		if !ok {
			if b.Rows != 0 {
				t.Errorf("bin %d has %d rows, want 0", j, b.Rows)
			}
			continue
		}
		if b.Rows != w.Rows || math.Abs(b.MeanProb-w.MeanProb) > 1e-12 || math.Abs(b.Observed-w.Observed) > 1e-12 {
			t.Errorf("bin %d = %+v, want %+v", j, b, w)
		}
	}
	// (1 |0.05 - 0| + 3 |0.4/3 - 2/3| + 2 |0.975 - 1|) / 6
	if got, want := calibrationError(bins), (0.05+1.6+0.05)/6; math.Abs(got-want) > 1e-12 {
		t.Errorf("calibration error %g, want %g", got, want)
	}
	if _, err := reliabilityBins([]float64{0.5, 1.2}, []float64{0, 1}, 1, 10); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("probability 1.2: err = %v, want ErrParam", err)
	}
	if _, err := reliabilityBins([]float64{0.5, math.NaN()}, []float64{0, 1}, 1, 10); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("NaN probability: err = %v, want ErrParam", err)
	}
	if _, err := reliabilityBins(p, y[:2], 1, 10); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short labels: err = %v, want ErrShape", err)
	}
	if _, err := reliabilityBins(p, y, 1, 0); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("0 bins: err = %v, want ErrParam", err)
	}
}

func TestDrawReliability(t *testing.T) {
	dir := t.TempDir()
	y := []float64{0, 1, 0, 1}
	if err := writeJSON(filepath.Join(dir, "s.zonal_proba.json"), probaFile{Tool: "zonal", Set: "s", Y: y,
		Proba: map[string][]float64{modelLogistic: {0.1, 0.8, 0.3, 0.6}, modelCalibrated: {0.2, 0.7, 0.2, 0.9}}}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	img := filepath.Join(dir, "img")
	if err := drawReliability(dir, []string{"s"}, img, 5, &out); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(img, "reliability_s.png")); err != nil || st.Size() == 0 {
		t.Fatalf("no PNG: %v", err)
	}
	if !strings.Contains(out.String(), "zonal logistic FALKON") || strings.Contains(out.String(), "sklearn") {
		t.Errorf("table:\n%s", out.String())
	}
	if err := writeJSON(filepath.Join(dir, "s.sklearn_proba.json"), probaFile{Tool: "sklearn", Set: "s", Y: y,
		Proba: map[string][]float64{modelLogistic: {0.1, 0.8}}}); err != nil {
		t.Fatal(err)
	}
	if err := drawReliability(dir, []string{"s"}, img, 5, &out); err == nil {
		t.Error("a probability list shorter than the labels was accepted")
	}
}

func TestNewConfig(t *testing.T) {
	sy := synthSpec{synthRows, synthRate, synthNoise}
	cfg, err := newConfig("d", " spam, synthetic ,Sonar", 1, "", sy)
	if err != nil || !slices.Equal(cfg.Sets, []string{"spam", synthName, "Sonar"}) {
		t.Errorf("sets %q, err %v", cfg.Sets, err)
	}
	for _, sets := range []string{"digits", ","} {
		if _, err := newConfig("d", sets, 1, "", sy); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("-sets %q: err = %v, want ErrParam", sets, err)
		}
	}
}

// TestRunSynthetic fits the four models of a small synthetic set end to
// end: every record without error, the probabilities dumped, no dump for
// scikit-learn (the set has no file), one table row a fit.
func TestRunSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("fits four models")
	}
	dir := t.TempDir()
	cfg := config{Sets: []string{synthName}, Seed: 1, Dump: dir, Synth: synthSpec{300, 0.1, synthNoise}}
	var out bytes.Buffer
	jsonl := filepath.Join(dir, "probs.jsonl")
	if err := run(context.Background(), cfg, jsonl, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n| synthetic |"); got != 4 {
		t.Errorf("%d table rows, want 4:\n%s", got, out.String())
	}
	if strings.Contains(out.String(), "error") {
		t.Errorf("a fit failed:\n%s", out.String())
	}
	p, err := readProba(filepath.Join(dir, synthName+".zonal_proba.json"))
	if err != nil || len(p.Proba) != 4 || len(p.Y) != 60 {
		t.Errorf("probabilities: %d models, %d rows, err %v", len(p.Proba), len(p.Y), err)
	}
	if _, err := os.Stat(filepath.Join(dir, synthName+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a scikit-learn dump of the synthetic set: %v", err)
	}
}

// TestLambdaCurves runs the lambda curves on one small synthetic split:
// every curve covers the grid with finite log-losses, and the table has a
// row for zonal's fit and each rule.
func TestLambdaCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the logistic model about 500 times")
	}
	dir := t.TempDir()
	cfg := config{Sets: []string{synthName}, Seed: 1, Synth: synthSpec{300, 0.2, synthNoise}}
	var out bytes.Buffer
	if err := runCurves(context.Background(), cfg, 1, filepath.Join(dir, "c.jsonl"), &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "c.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var c curveSplit
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	n := len(curveLambdas())
	finite := func(v []float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				return false
			}
		}
		return len(v) == n
	}
	if !finite(c.Test) {
		t.Fatalf("test curve %v, want %d finite positive log-losses", c.Test, n)
	}
	for _, p := range curvePlans {
		if !finite(c.CV[p.Name]) {
			t.Fatalf("plan %s: curve %v, want %d finite positive log-losses", p.Name, c.CV[p.Name], n)
		}
	}
	if rows := strings.Count(out.String(), "| "+synthName+" |"); rows != len(curveRules)+1 {
		t.Errorf("%d table rows, want %d:\n%s", rows, len(curveRules)+1, out.String())
	}
}

// Each rule picks from hand-made curves what it says it picks: the plain
// 5-fold rule the least of its curve (index 2), the mean of three 5-fold
// curves its least (1), the 10-fold rule its own (4), the smoothed rule
// the least 3-neighbour mean (1, (3+9+2.5)/3, the first of two ties),
// the oracle the test curve's least (3).
func TestCurveRules(t *testing.T) {
	c := curveSplit{
		Lambdas: []float64{1, 0.1, 0.01, 1e-3, 1e-4},
		Test:    []float64{0.5, 0.4, 0.3, 0.2, 0.6},
		CV: map[string][]float64{
			"5a": {3, 9, 2.5, 9, 3},
			"5b": {5, 0, 4, 4, 5},
			"5c": {5, 0, 4, 4, 5},
			"10": {1, 2, 3, 4, 0},
		},
	}
	want := []int{2, 1, 4, 1, 3}
	if len(want) != len(curveRules) {
		t.Fatalf("%d rules, the test knows %d", len(curveRules), len(want))
	}
	for i, r := range curveRules {
		if got := r.Pick(c); got != want[i] {
			t.Errorf("rule %q picked %d, want %d", r.Name, got, want[i])
		}
	}
}

// fewerPositives keeps every negative row and round(rate/(1-rate) neg)
// positive rows (11 of 60 for 10% of 100 negatives), sorted, the same for
// the same seed; a rate at or above the set's own share, or one keeping
// fewer than 2 positives, is ErrParam.
func TestFewerPositives(t *testing.T) {
	y := make([]float64, 160)
	for i := range y {
		if i%8 < 3 {
			y[i] = 1 // 60 positives
		}
	}
	keep, err := fewerPositives(y, 0.1, 3)
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for _, i := range keep {
		if y[i] == 1 {
			pos++
		}
	}
	if pos != 11 || len(keep)-pos != 100 || !slices.IsSorted(keep) {
		t.Errorf("kept %d positives and %d negatives (sorted: %v), want 11 and 100", pos, len(keep)-pos, slices.IsSorted(keep))
	}
	again, _ := fewerPositives(y, 0.1, 3)
	other, _ := fewerPositives(y, 0.1, 4)
	if !slices.Equal(keep, again) || slices.Equal(keep, other) {
		t.Error("the same seed gave other rows, or another seed the same")
	}
	for _, r := range []float64{0.4, 0.9, 0.005} {
		if _, err := fewerPositives(y, r, 3); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("rate %g: err = %v, want ErrParam", r, err)
		}
	}
}

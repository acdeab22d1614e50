package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// digitsSet is a seeded n-row subsample of the embedded digits set.
func digitsSet(t *testing.T, n int) dataSet {
	t.Helper()
	d, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := dataset.Subsample(len(d.Y), n, 7)
	if err != nil {
		t.Fatal(err)
	}
	if d, err = d.Subset(idx); err != nil {
		t.Fatal(err)
	}
	return dataSet{Name: "digits-sub", Task: solvers.TaskClassification,
		load: func() (*dataset.Data, *dataset.Data, error) { return d, nil, nil }}
}

// sineSet is a smooth regression target with noise of standard deviation
// 0.1 on n rows of 3 features.
func sineSet(n int) dataSet {
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range y {
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.Float64()*4-2)
		}
		y[i] = math.Sin(2*x.At(i, 0)) + x.At(i, 1)*x.At(i, 2) + 0.1*rng.NormFloat64()
	}
	d := &dataset.Data{X: x, Y: y}
	return dataSet{Name: "sine", Task: solvers.TaskRegression,
		load: func() (*dataset.Data, *dataset.Data, error) { return d, nil, nil }}
}

func testConfig(sets ...dataSet) config {
	return config{Sets: sets, Runs: map[string]bool{runDefaults: true, runTune: true}, Splits: 2,
		SmallRows: defaultSmallRows, TuneAbove: defaultTuneAbove, TuneRows: defaultTuneRows, TuneInputs: []string{"std", "raw"}}
}

// TestSuite runs both runs on two small sets (two splits each) and checks
// the JSON lines, the tables' columns and that the scores are those of a
// working model.
func TestSuite(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 200
	}
	dir := t.TempDir()
	cfg := testConfig(digitsSet(t, n), sineSet(n))
	cfg.DumpDir = dir
	var jsonl, table bytes.Buffer
	recs, err := runSuite(context.Background(), cfg, &jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTables(&table, recs); err != nil {
		t.Fatal(err)
	}
	// 2 sets x 2 splits x 2 runs, one JSON line each.
	var lines []record
	sc := bufio.NewScanner(&jsonl)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	if len(lines) != 8 || len(recs) != 8 {
		t.Fatalf("%d JSON lines and %d records, want 8", len(lines), len(recs))
	}
	for _, r := range lines {
		if r.Error != "" {
			t.Fatalf("%s seed %d %s: %s", r.Set, r.Seed, r.Run, r.Error)
		}
		// Each of the 10 digits classes is rounded on its own: at most 5
		// rows off n/5 in all.
		if r.TrainRows+r.TestRows != n || r.TestRows < n/5-5 || r.TestRows > n/5+5 {
			t.Errorf("%s: %d train + %d test rows, want an 80/20 split of %d", r.Set, r.TrainRows, r.TestRows, n)
		}
		switch r.Set {
		case "digits-sub":
			// A Gaussian-kernel fit on 160-320 digits rows scores about
			// 0.9-0.97; 0.75 fails only a broken fit, split or metric.
			if r.Metric != "accuracy" || !(r.Score > 0.75 && r.Score <= 1) {
				t.Errorf("digits %s seed %d: %s %g", r.Run, r.Seed, r.Metric, r.Score)
			}
		case "sine":
			// The target's standard deviation is about 1.4 and its noise
			// 0.1: an RMSE below 0.5 needs a fit that learnt the function.
			if r.Metric != "rmse" || !(r.Score > 0 && r.Score < 0.5) {
				t.Errorf("sine %s seed %d: %s %g", r.Run, r.Seed, r.Metric, r.Score)
			}
		}
		if r.Method != "falkon" || !(r.Sigma > 0) || !(r.Lambda > 0) || r.Centers < 1 {
			t.Errorf("%s %s: setting %s sigma %g lambda %g centres %d", r.Set, r.Run, r.Method, r.Sigma, r.Lambda, r.Centers)
		}
		if r.Run == runDefaults && (r.Chosen == nil || r.CGIterations == nil || !(r.ChooseSeconds <= r.Seconds)) {
			t.Errorf("%s defaults: chosen %v, CG %v, choosing %g s of %g s", r.Set, r.Chosen, r.CGIterations, r.ChooseSeconds, r.Seconds)
		}
	}
	out := table.String()
	for _, cols := range [][]string{summaryColumns, detailColumns} {
		if !strings.Contains(out, "| "+strings.Join(cols, " | ")+" |\n") {
			t.Errorf("table lacks the header %v:\n%s", cols, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "| digits-sub |") && !strings.HasPrefix(l, "| sine |") {
			continue
		}
		cells := strings.Count(l, "|") - 1
		if cells != len(summaryColumns) && cells != len(detailColumns) {
			t.Errorf("row with %d cells: %s", cells, l)
		}
	}
	if got := strings.Count(out, "| digits-sub | classification | accuracy |"); got != 1 {
		t.Errorf("%d summary rows of digits-sub, want 1:\n%s", got, out)
	}

	// The dump: both splits of each set, partitions of the rows.
	for _, set := range []string{"digits-sub", "sine"} {
		b, err := os.ReadFile(filepath.Join(dir, set+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var f dumpFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if len(f.Splits) != 2 || len(f.Lambdas) != 10 || !f.Standardize {
			t.Fatalf("%s dump: %d splits, %d lambdas, standardize %v", set, len(f.Splits), len(f.Lambdas), f.Standardize)
		}
		for _, sp := range f.Splits {
			all := append(slices.Clone(sp.Train), sp.Test...)
			slices.Sort(all)
			if !slices.Equal(all, iota(n)) || len(sp.Sigmas) != 5 || sp.SigmaRows != len(sp.Train) {
				t.Errorf("%s seed %d: the split is not a partition of %d rows, or %d sigmas on %d rows", set, sp.Seed, n, len(sp.Sigmas), sp.SigmaRows)
			}
		}
	}
}

// TestStratifiedSplit checks that every class is split 80/20 on its own,
// that the parts partition the rows, and that the seed decides the rows.
func TestStratifiedSplit(t *testing.T) {
	var y []float64
	for c, k := range []int{50, 7, 13, 2, 1} {
		for range k {
			y = append(y, float64(c))
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
	tr, te := stratifiedSplit(y, solvers.TaskClassification, trainFraction, 1)
	all := append(slices.Clone(tr), te...)
	slices.Sort(all)
	if !slices.Equal(all, iota(len(y))) || !slices.IsSorted(tr) || !slices.IsSorted(te) {
		t.Fatal("train and test rows are not a sorted partition of the rows")
	}
	for c, k := range []int{50, 7, 13, 2, 1} {
		got := 0
		for _, i := range tr {
			if y[i] == float64(c) {
				got++
			}
		}
		want := int(math.Round(trainFraction * float64(k)))
		if k == 2 {
			want = 1 // round(1.6) would leave no test row of the class
		}
		if got != want {
			t.Errorf("class %d: %d of %d rows in training, want %d", c, got, k, want)
		}
	}
	tr2, _ := stratifiedSplit(y, solvers.TaskClassification, trainFraction, 1)
	tr3, _ := stratifiedSplit(y, solvers.TaskClassification, trainFraction, 2)
	if !slices.Equal(tr, tr2) || slices.Equal(tr, tr3) {
		t.Error("the same seed must give the same rows and another seed other rows")
	}
	rtr, rte := stratifiedSplit(y, solvers.TaskRegression, trainFraction, 1)
	dtr, dte := dataset.Split(len(y), trainFraction, 1)
	if !slices.Equal(rtr, dtr) || !slices.Equal(rte, dte) {
		t.Error("a regression split must be dataset.Split's")
	}
}

// TestDefaultGrid checks the grid written for scikit-learn against the
// one tune.Search evaluates by default, on all rows and on a subsample.
func TestDefaultGrid(t *testing.T) {
	ds := digitsSet(t, 150)
	d, _, _ := ds.load()
	x, _, err := prepared(d, d, true)
	if err != nil {
		t.Fatal(err)
	}
	// Dense standardized rows on all rows and on a 90-row subsample, and
	// the raw rows as CSR (the sparse sets' path) on the subsample.
	for _, c := range []struct {
		x     mat.Matrix
		above int
	}{{x, defaultTuneAbove}, {x, 100}, {dataset.NewCSRFromDense(d.X), 100}} {
		x, above := c.x, c.above
		cfg := testConfig(ds)
		cfg.TuneAbove, cfg.TuneRows = above, 90
		o := tuneOptions(cfg, ds, 3, len(d.Y))
		o.Refit = false
		res, err := tune.Search(context.Background(), x, mat.NewDense(len(d.Y), 1, d.Y), o)
		if err != nil {
			t.Fatal(err)
		}
		var sig, lam []float64
		for _, r := range res.Rows {
			if !slices.Contains(sig, r.Sigma) {
				sig = append(sig, r.Sigma)
			}
			if !slices.Contains(lam, r.Lambda) {
				lam = append(lam, r.Lambda)
			}
		}
		want, rows, err := defaultSigmas(x, o.Rows, 3)
		if err != nil {
			t.Fatal(err)
		}
		// Exact equality: both compute the same numbers the same way.
		if !slices.Equal(sig, want) || !slices.Equal(lam, defaultLambdas()) {
			t.Errorf("tune-above %d: search grid sigma %v lambda %v, dumped %v %v", above, sig, lam, want, defaultLambdas())
		}
		wantRows := len(d.Y)
		if o.Rows > 0 {
			wantRows = o.Rows
		}
		if rows != wantRows || (above == 100) != (o.Rows == 90) {
			t.Errorf("tune-above %d: sigma on %d rows, want %d (Rows %d)", above, rows, wantRows, o.Rows)
		}
	}
}

// TestFinite checks that a non-finite number becomes an error, not a
// JSON encoding failure.
func TestFinite(t *testing.T) {
	inf := math.Inf(1)
	r := record{Score: math.NaN(), CGResidual: &inf, Sigma: 2}
	r.finite()
	if _, err := json.Marshal(r); err != nil || r.Sigma != 2 || !strings.Contains(r.Error, "score was NaN") || !strings.Contains(r.Error, "cg_residual was +Inf") {
		t.Errorf("after finite: %+v, %v", r, err)
	}
}

// TestFlags checks the flag errors.
func TestFlags(t *testing.T) {
	for _, c := range []struct{ sets, runs, inputs, dump string }{
		{"digits,nosuchset", "defaults", "std", ""},
		{"", "fit", "std", ""},
		{"", "none", "std", ""},
		{"", "tune", "scaled", ""},
	} {
		if _, err := newConfig(t.TempDir(), c.sets, c.runs, 5, 1, 3, c.inputs, c.dump); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%+v: error %v, want zonal.ErrParam", c, err)
		}
	}
	cfg, err := newConfig("d", "Glass,MNIST", "none", 5, 1, 3, "std", "/tmp/x")
	if err != nil || len(cfg.Sets) != 2 || cfg.Sets[1].Name != "MNIST" || len(cfg.Sets[1].files) != 2 || len(cfg.Runs) != 0 {
		t.Errorf("Glass,MNIST with -runs none: %+v, %v", cfg, err)
	}
}

// TestSynthetic checks the generated sets: named only, deterministic, the
// stated shapes and classes, and refused by the split dump.
func TestSynthetic(t *testing.T) {
	cfg, err := newConfig(t.TempDir(), "", "defaults", 5, 1, 3, "std", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Sets {
		if strings.HasPrefix(s.Name, "synth-") {
			t.Errorf("the default suite holds %s", s.Name)
		}
	}
	want := map[string]struct{ n, d, classes int }{
		"synth-smooth": {15000, 9, 0}, "synth-classes": {12000, 16, 26}, "synth-rare": {8000, 10, 2}, "synth-trend": {6000, 20, 0},
	}
	for _, s := range synthSets() {
		w, ok := want[s.Name]
		if !ok {
			t.Fatalf("unexpected set %s", s.Name)
		}
		a, _, err := s.load()
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := s.load()
		n, d := a.Dims()
		if n != w.n || d != w.d || !mat.Equal(a.X, b.X) || !slices.Equal(a.Y, b.Y) {
			t.Errorf("%s: %d x %d (want %d x %d), or two loads differ", s.Name, n, d, w.n, w.d)
		}
		if w.classes > 0 {
			classes := slices.Compact(slices.Sorted(slices.Values(a.Y)))
			if len(classes) != w.classes {
				t.Errorf("%s: %d classes, want %d", s.Name, len(classes), w.classes)
			}
		}
		if s.Name == "synth-rare" {
			pos := 0.0
			for _, v := range a.Y {
				pos += v
			}
			// the label is the top 7% of the score: exactly 7% of the rows up to the one at the cut
			if r := pos / float64(n); math.Abs(r-0.07) > 0.001 {
				t.Errorf("synth-rare: positive rate %.4f, want 0.07", r)
			}
		}
		if err := dumpSplits(config{DumpDir: t.TempDir()}, s, a, nil, nil); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: dump error %v, want zonal.ErrParam", s.Name, err)
		}
	}
	cfg, err = newConfig(t.TempDir(), "synth-rare", "defaults,variants", 5, 1, 3, "std", "")
	if err != nil || len(cfg.Sets) != 1 || !cfg.Runs["defaults-mean"] || !cfg.Runs["defaults-raw"] || cfg.Runs[runTune] {
		t.Errorf("synth-rare with defaults,variants: %+v, %v", cfg.Runs, err)
	}
}

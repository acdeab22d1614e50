//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/bench/internal/benchdata"
)

// TestMain lets the test binary be the child process, the predict mode's
// fit and the launcher: the parent re-executes os.Executable(), which under
// go test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && (os.Args[1] == childFlag || os.Args[1] == predictFitFlag || os.Args[1] == launchFlag) {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// wantColumns is the table header the README's results table copies.
var wantColumns = []string{"set", "method", "n", "M", "cached", "fit (s)", "CG iters", "s/iter", "predicted s/iter", "ratio",
	"peak RSS (MB)", "data (MB)", "factors (MB)", "budget (MB)", "RSS bound (MB)", "metric", "error"}

func cellsOf(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	for _, c := range strings.Split(line, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

func TestQuick(t *testing.T) {
	dir := t.TempDir()
	out, fig := filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "fig.png")
	sets := "regression,classification"
	if _, err := os.Stat(filepath.Join(benchdata.Dir(), fertilityFile)); err == nil {
		sets += ",fertility"
	} else {
		t.Logf("no %s in %s (set %s): Fertility not run", fertilityFile, benchdata.Dir(), benchdata.EnvVar)
	}
	var stdout bytes.Buffer
	err := run([]string{"-quick", "-sets", sets, "-data", benchdata.Dir(), "-out", out, "-fig", fig}, &stdout, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	nsets := strings.Count(sets, ",") + 1
	wantRows := nsets * 2 * 3 // two quick sizes, three methods

	// The markdown table: the header, then one row per run with every column.
	header, rows := tableOf(stdout.String())
	if !slices.Equal(header, wantColumns) {
		t.Fatalf("table header %q, want %q", header, wantColumns)
	}
	if len(rows) != wantRows {
		t.Fatalf("%d table rows, want %d:\n%s", len(rows), wantRows, stdout.String())
	}
	col := func(name string) int { return slices.Index(wantColumns, name) }
	for _, r := range rows {
		if len(r) != len(wantColumns) {
			t.Fatalf("row %q has %d cells, want %d", r, len(r), len(wantColumns))
		}
		if r[col("error")] != "" {
			t.Errorf("run %s %s n = %s failed: %s", r[0], r[1], r[2], r[col("error")])
		}
		if v, err := strconv.ParseFloat(r[col("peak RSS (MB)")], 64); err != nil || !(v > 0) {
			t.Errorf("run %s %s n = %s: peak RSS %q, want a positive number of MB", r[0], r[1], r[2], r[col("peak RSS (MB)")])
		}
	}

	// The JSON lines: the calibration, then the runs, each with the child's
	// VmHWM read, and the measurements consistent with each other.
	var cal struct{ Calibration calibration }
	runs := jsonLines[result](t, out, &cal)
	if !(cal.Calibration.GemmGFLOPS > 0) || !(cal.Calibration.CExp > 0) {
		t.Fatalf("first line %+v, want the calibration with positive rates", cal)
	}
	if len(runs) != wantRows {
		t.Fatalf("%d JSON runs, want %d", len(runs), wantRows)
	}
	for _, r := range runs {
		name := r.Set + " " + r.Method + " n = " + strconv.Itoa(r.Rows)
		// The child's peak RSS holds at least its training rows, which it
		// allocated and filled; the parent's rusage of the child agrees to
		// within the page accounting of the two counters (a factor 2 is far
		// wider than any difference between them).
		if r.PeakRSS < r.DataBytes || r.PeakRSS <= 0 {
			t.Errorf("%s: VmHWM %d bytes, below the data's %d", name, r.PeakRSS, r.DataBytes)
		}
		if r.StartRSS <= 0 || r.StartRSS > r.PeakRSS {
			t.Errorf("%s: RSS at start %d bytes, peak %d: want 0 < start <= peak", name, r.StartRSS, r.PeakRSS)
		}
		if r.RusageMaxRSS < r.PeakRSS/2 || r.RusageMaxRSS > 2*r.PeakRSS {
			t.Errorf("%s: rusage max RSS %d against VmHWM %d", name, r.RusageMaxRSS, r.PeakRSS)
		}
		if r.CGIters != r.Iterations {
			t.Errorf("%s: %d CG iterations, want all %d (the tolerance never stops CG)", name, r.CGIters, r.Iterations)
		}
		if r.Method != methodParK && !(r.IterSeconds > 0 && r.IterRatio > 0) {
			t.Errorf("%s: iteration time %g, ratio %g: want both measured", name, r.IterSeconds, r.IterRatio)
		}
		if want := float64(r.Rows) * float64(r.Centers) * (2*float64(r.Cols) + r.C); r.Method != methodParK && math.Abs(r.PredFlops-want) > 1e-9*want {
			t.Errorf("%s: predicted flops %g, want n M (2d + c) = %g", name, r.PredFlops, want)
		}
		// Better than chance: the synthetic labels have standard deviation
		// sqrt(1 + 0.3^2) = 1.04 and balanced classes; Fertility's majority
		// class is below 0.6 of the rows.
		switch {
		case r.Metric == "rmse" && !(r.Value < 0.9):
			t.Errorf("%s: test RMSE %g, want below 0.9", name, r.Value)
		case r.Metric == "accuracy" && r.Set == setClassification && !(r.Value > 0.65):
			t.Errorf("%s: test accuracy %g, want above 0.65", name, r.Value)
		case r.Metric == "":
			t.Errorf("%s: no test metric", name)
		}
	}
	png, err := os.ReadFile(fig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("figure is not a PNG (%d bytes)", len(png))
	}

	// -replot: the same runs from the file, a later record of one of them
	// (its fit time changed) replacing the earlier one.
	later := runs[0]
	later.FitSeconds = 12345.6
	line, err := json.Marshal(later)
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(dir, "later.jsonl")
	if err := os.WriteFile(second, []byte("{\"calibration\":{}}\n"+string(line)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fig2 := filepath.Join(dir, "replot.png")
	stdout.Reset()
	if err := run([]string{"-replot", out + "," + second, "-fig", fig2}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, rows = tableOf(stdout.String())
	if len(rows) != wantRows {
		t.Fatalf("replot: %d table rows, want %d:\n%s", len(rows), wantRows, stdout.String())
	}
	if got := rows[0][col("fit (s)")]; got != "12345.60" {
		t.Errorf("replot: the first run's fit time %q, want the later record's 12345.60", got)
	}
	if png, err := os.ReadFile(fig2); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("replot figure: %v, %d bytes", err, len(png))
	}
	if err := run([]string{"-replot", out}, &stdout, io.Discard); err == nil {
		t.Error("-replot without -fig: no error")
	}
}

// TestSynth checks the generator's promises: n rows are the first n of a
// larger draw, the test stream is another draw, the classes are balanced and
// the regression labels are the standardised function plus the noise.
func TestSynth(t *testing.T) {
	const d, small, large = 5, 100, 2*blockRows + 17
	g := newSynth(7, d, 4, 0.3)
	xa, ya := make([]float64, small*d), make([]float64, small)
	xb, yb := make([]float64, large*d), make([]float64, large)
	g.rows(xa, ya, trainStream, small, false)
	g.rows(xb, yb, trainStream, large, false)
	if !slices.Equal(xa, xb[:small*d]) || !slices.Equal(ya, yb[:small]) {
		t.Error("the first rows of a larger draw differ from a smaller draw")
	}
	xt := make([]float64, small*d)
	g.rows(xt, nil, testStream, small, false)
	if slices.Equal(xt, xa) {
		t.Error("the test stream repeats the training rows")
	}
	// Labels minus f are the noise: mean near 0 and deviation near 0.3 over
	// large rows (standard errors 0.3/sqrt(8209) = 0.0033 and about 0.0023;
	// the bounds are more than 5 of them).
	var sum, sum2 float64
	for i := range large {
		e := yb[i] - g.f(xb[i*d:(i+1)*d])
		sum += e
		sum2 += e * e
	}
	mean := sum / large
	if sd := math.Sqrt(sum2/large - mean*mean); math.Abs(mean) > 0.02 || math.Abs(sd-0.3) > 0.015 {
		t.Errorf("noise mean %g, deviation %g; want 0 and 0.3", mean, sd)
	}
	// f is standardised on the calibration draw, so over another draw its
	// mean is near 0 and its deviation near 1 (loose bounds: 8209 rows).
	sum, sum2 = 0, 0
	for i := range large {
		v := g.f(xb[i*d : (i+1)*d])
		sum += v
		sum2 += v * v
	}
	if m, sd := sum/large, math.Sqrt(sum2/large-(sum/large)*(sum/large)); math.Abs(m) > 0.05 || math.Abs(sd-1) > 0.05 {
		t.Errorf("f over a fresh draw: mean %g, deviation %g; want 0 and 1", m, sd)
	}
	yc := make([]float64, large)
	g.rows(xb, yc, trainStream, large, true)
	ones := 0.0
	for _, v := range yc {
		if v != 0 && v != 1 {
			t.Fatalf("class label %g, want 0 or 1", v)
		}
		ones += v
	}
	// The threshold is the calibration median of f; noise symmetric about
	// 0 keeps the classes near half and half (binomial sd 0.0055 at this n).
	if frac := ones / large; math.Abs(frac-0.5) > 0.05 {
		t.Errorf("%.3f of the labels are 1, want about half", frac)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-sizes", "1e4,abc"}, {"-sizes", "0"}, {"-sizes", "1.5"}, {"-fertility-sizes", "all,x"},
		{"-sets", "higgs"}, {"-methods", "falkon"}, {"-memory", "-1G"}, {"-memory", "lots"},
		{"-lambda", "0"}, {"-m", "0"}, {"-noise", "-1"}, {"extra"},
		{"-mode", "fits"}, {"-mode", "read,predict"}, {"-read-rows", "0"}, {"-read-rows", "1e3,2e3"}, {"-read-reps", "0"},
		{"-predict-rows", "1e5,x"}, {"-predict-train", "all"}, {"-predict-centers", "0"}, {"-predict-form", "tsv"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	c, err := parseFlags([]string{"-memory", "512M", "-sizes", "1e4,3e4", "-fertility-sizes", "all,100"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.memory != 512<<20 || !slices.Equal(c.sizes, []int{10000, 30000}) || !slices.Equal(c.fertSizes, []int{0, 100}) || c.cellM != c.m {
		t.Errorf("parsed %+v", c)
	}
	if c.mode != modeFit || c.readRows != 1000000 || !slices.Equal(c.predictRows, []int{100000, 10000000}) || c.predictTrain != 100000 ||
		c.predictCenters != 1000 || c.predictForm.Name != "csv.gz" || c.readReps != 3 {
		t.Errorf("the read and predict modes' defaults: %+v", c)
	}
	c, err = parseFlags([]string{"-mode", "predict", "-quick", "-predict-rows", "7", "-predict-form", "libsvm"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.mode != modePredict || !slices.Equal(c.predictRows, []int{7}) || c.predictTrain != 1000 || c.predictCenters != 100 || !c.predictForm.LIBSVM || c.predictForm.Gzip {
		t.Errorf("-quick with explicit flags: %+v", c)
	}
}

// TestREADMETable keeps the README's results table in step with the program's.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range [][]string{wantColumns, wantReadColumns, wantPredictColumns} {
		want := "| " + strings.Join(cols, " | ") + " |"
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("README.md has no results table headed\n%s", want)
		}
	}
}

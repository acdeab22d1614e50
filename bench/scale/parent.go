//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/bench/internal/benchdata"
)

const childFlag = "-child"

// The sets a run can be on.
const (
	setRegression     = "regression"     // synthetic, regression labels
	setClassification = "classification" // synthetic, thresholded labels
	setFertility      = "fertility"      // the shared Fertility set, classification
)

// The methods.
const (
	methodFalkon64 = "falkon64"
	methodFalkon32 = "falkon32"
	methodParK     = "park"
)

type config struct {
	sizes, fertSizes []int
	sets, methods    []string
	m, cells, cellM  int
	iterations       int
	lambda, sigma    float64
	memory           int64
	d, bumps         int
	noise            float64
	seed             uint64
	testRows         int
	data, out, fig   string
	replot           string
	gemmN, expLen    int

	// The read and predict modes (-mode).
	mode                         string
	readRows, readReps           int
	predictRows                  []int
	predictTrain, predictCenters int
	predictForm                  form
	predictModel, zonal, tmp     string
}

// The modes.
const (
	modeFit     = "fit"     // fit time and memory against n
	modeRead    = "read"    // reader throughput
	modePredict = "predict" // zonal predict of files larger than memory
)

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	sizes := fs.String("sizes", "1e4,3e4,1e5,3e5,1e6,3e6,1e7", "training rows of the synthetic sets, comma-separated")
	fert := fs.String("fertility-sizes", "1e4,3e4,1e5,all", "training rows of Fertility (all: every row not held out for testing)")
	sets := fs.String("sets", "regression,fertility", "data sets: regression, classification (synthetic), fertility")
	methods := fs.String("methods", "falkon64,falkon32,park", "methods: falkon64, falkon32 (FALKON with K_nM in float32), park")
	memory := fs.String("memory", "8G", "memory budget of every fit (solvers.Options.MemoryBudget), e.g. 4G, 512M or bytes")
	fs.IntVar(&c.m, "m", 10000, "FALKON's centres M (capped at n)")
	fs.IntVar(&c.cells, "cells", 4, "ParK's cells Q")
	fs.IntVar(&c.cellM, "cell-centers", 0, "ParK's centres per cell (0: M; the total Q x this is capped at n)")
	fs.IntVar(&c.iterations, "iterations", 20, "CG iterations of every fit (the tolerance is set so that all of them run)")
	fs.Float64Var(&c.lambda, "lambda", 1e-6, "lambda of every fit, the same at every n")
	fs.Float64Var(&c.sigma, "sigma", 0, "Gaussian bandwidth (0: sqrt(d), d the set's columns; the inputs are standardised)")
	fs.IntVar(&c.d, "d", 28, "columns of the synthetic sets")
	fs.IntVar(&c.bumps, "bumps", 8, "Gaussian bumps of the synthetic function")
	fs.Float64Var(&c.noise, "noise", 0.3, "label noise of the synthetic sets, in units of the function's standard deviation")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the synthetic sets, the Fertility split, centres and partitions")
	fs.IntVar(&c.testRows, "test-rows", 10000, "test rows (synthetic: a separate draw; Fertility: held out)")
	fs.StringVar(&c.data, "data", benchdata.Dir(), "folder with Fertility.csv.gz")
	fs.StringVar(&c.out, "out", "", "write the calibration and every run as JSON lines to this file")
	fs.StringVar(&c.fig, "fig", "", "write a log-log PNG of fit time and peak RSS against n to this file")
	fs.StringVar(&c.replot, "replot", "", "with -fig: draw the figure from these -out files (comma-separated; a later run of the same set, method and n replaces an earlier one) instead of running fits")
	fs.StringVar(&c.mode, "mode", modeFit, "what to measure: fit (fit time and memory against n), read (reader throughput), predict (zonal predict of large files)")
	readRows := fs.String("read-rows", "1e6", "read mode: synthetic rows of the files read")
	fs.IntVar(&c.readReps, "read-reps", 3, "read mode: timed reads of every file by every reader (the best is reported), and of the wc baseline")
	predictRows := fs.String("predict-rows", "1e5,1e7", "predict mode: test rows of the files predicted, comma-separated")
	predictTrain := fs.String("predict-train", "1e5", "predict mode: training rows of the model")
	fs.IntVar(&c.predictCenters, "predict-centers", 1000, "predict mode: the model's FALKON centres M (capped at the training rows)")
	predictForm := fs.String("predict-form", "csv.gz", "predict mode: form of the test files: csv, csv.gz, libsvm or libsvm.gz")
	fs.StringVar(&c.predictModel, "predict-model", "", "predict mode: model file; used when it exists, else fitted and saved there (empty: fitted into the temporary folder)")
	fs.StringVar(&c.zonal, "zonal", "", "predict mode: the zonal binary to run (empty: cmd/zonal built with this program's backend tags, which needs the go command and bench/ as the working folder)")
	fs.StringVar(&c.tmp, "tmp", "", "read and predict modes: folder for the temporary files (empty: the system's, $TMPDIR or /tmp)")
	quick := fs.Bool("quick", false, "tiny defaults (sizes 500,1000 for both, M = 200, 3 iterations, 500 test rows; read mode 3000 rows, 1 rep; predict mode 1000,9000 rows, model on 1000 rows with M = 100) and a 256^3 calibration; flags given explicitly keep their values")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if c.memory, err = parseBytes(*memory); err != nil {
		return c, err
	}
	c.gemmN, c.expLen = 1024, 1<<22
	if *quick {
		// Tiny defaults; a flag given explicitly keeps its value.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["sizes"] {
			*sizes = "500,1000"
		}
		if !set["fertility-sizes"] {
			*fert = "500,1000"
		}
		for _, q := range []struct {
			name string
			p    *string
			v    string
		}{{"read-rows", readRows, "3000"}, {"predict-rows", predictRows, "1000,9000"}, {"predict-train", predictTrain, "1000"}} {
			if !set[q.name] {
				*q.p = q.v
			}
		}
		for _, q := range []struct {
			name string
			p    *int
			v    int
		}{{"m", &c.m, 200}, {"iterations", &c.iterations, 3}, {"test-rows", &c.testRows, 500}, {"read-reps", &c.readReps, 1}, {"predict-centers", &c.predictCenters, 100}} {
			if !set[q.name] {
				*q.p = q.v
			}
		}
		c.gemmN, c.expLen = 256, 1<<16
	}
	if c.sizes, err = parseSizes(*sizes, false); err != nil {
		return c, fmt.Errorf("-sizes: %w", err)
	}
	if c.fertSizes, err = parseSizes(*fert, true); err != nil {
		return c, fmt.Errorf("-fertility-sizes: %w", err)
	}
	if c.sets, err = parseList(*sets, setRegression, setClassification, setFertility); err != nil {
		return c, fmt.Errorf("-sets: %w", err)
	}
	if c.methods, err = parseList(*methods, methodFalkon64, methodFalkon32, methodParK); err != nil {
		return c, fmt.Errorf("-methods: %w", err)
	}
	switch c.mode {
	case modeFit, modeRead, modePredict:
	default:
		return c, fmt.Errorf("-mode: want fit, read or predict, got %q", c.mode)
	}
	if c.predictRows, err = parseSizes(*predictRows, false); err != nil {
		return c, fmt.Errorf("-predict-rows: %w", err)
	}
	for _, q := range []struct {
		name string
		s    string
		p    *int
	}{{"read-rows", *readRows, &c.readRows}, {"predict-train", *predictTrain, &c.predictTrain}} {
		v, err := parseSizes(q.s, false)
		if err != nil || len(v) != 1 {
			return c, fmt.Errorf("-%s: want one whole row count of at least 1 such as 1e6, got %q", q.name, q.s)
		}
		*q.p = v[0]
	}
	if c.predictForm, err = formByName(*predictForm); err != nil {
		return c, fmt.Errorf("-predict-form: %w", err)
	}
	if c.readReps < 1 || c.predictCenters < 1 {
		return c, errors.New("-read-reps and -predict-centers must be at least 1")
	}
	switch {
	case c.m < 1 || c.cells < 1 || c.cellM < 0 || c.iterations < 1 || c.d < 1 || c.bumps < 1 || c.testRows < 1:
		return c, errors.New("-m, -cells, -iterations, -d, -bumps and -test-rows must be at least 1, -cell-centers at least 0")
	case !(c.lambda > 0) || math.IsInf(c.lambda, 0):
		return c, fmt.Errorf("-lambda must be positive and finite, got %g", c.lambda)
	case c.sigma < 0 || math.IsInf(c.sigma, 0) || math.IsNaN(c.sigma):
		return c, fmt.Errorf("-sigma must be 0 or positive and finite, got %g", c.sigma)
	case c.noise < 0 || math.IsInf(c.noise, 0) || math.IsNaN(c.noise):
		return c, fmt.Errorf("-noise must be at least 0 and finite, got %g", c.noise)
	}
	if c.cellM == 0 {
		c.cellM = c.m
	}
	return c, nil
}

// parseBytes reads 4G, 512M, 64K (powers of 1024) or a plain byte count.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(s), "B"))
	mult := int64(1)
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("-memory: want a positive size such as 4G, 512M or a byte count, got %q", s)
	}
	return int64(v * float64(mult)), nil
}

// parseSizes reads comma-separated row counts such as 1e4,3e4 (allowAll:
// "all" is 0, every row).
func parseSizes(s string, allowAll bool) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if allowAll && f == "all" {
			out = append(out, 0)
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 1 || v > 1e12 || v != math.Trunc(v) {
			return nil, fmt.Errorf("want whole row counts of at least 1 such as 1e4, got %q", f)
		}
		out = append(out, int(v))
	}
	return out, nil
}

func parseList(s string, allowed ...string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		ok := false
		for _, a := range allowed {
			ok = ok || f == a
		}
		if !ok {
			return nil, fmt.Errorf("unknown %q (want some of %s)", f, strings.Join(allowed, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

// specs lists the runs: every set at each of its sizes, every method.
func specs(c config) []spec {
	var out []spec
	for _, set := range c.sets {
		sizes, task := c.sizes, taskRegression
		switch set {
		case setFertility:
			sizes, task = c.fertSizes, taskClassification
		case setClassification:
			task = taskClassification
		}
		for _, n := range sizes {
			for _, m := range c.methods {
				out = append(out, spec{Set: set, Task: task, Method: m, N: n, M: c.m, Cells: c.cells, CellCenters: c.cellM,
					Lambda: c.lambda, Sigma: c.sigma, Iterations: c.iterations, Memory: c.memory, Seed: c.seed,
					D: c.d, Bumps: c.bumps, Noise: c.noise, TestRows: c.testRows, Data: c.data})
			}
		}
	}
	return out
}

func runParent(c config, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	be := backend.Default()
	fmt.Fprintf(stderr, "calibrating %s: %d^3 Gemm and Sgemm, %d exponentials\n", be.Name(), c.gemmN, c.expLen)
	cal := calibrate(be, c.gemmN, c.expLen)
	out, closeOut, err := openOut(c.out, map[string]any{"calibration": cal})
	if err != nil {
		return err
	}
	defer closeOut()
	var results []result
	for _, s := range specs(c) {
		r := runOne(self, s, stderr)
		r.predict(cal)
		results = append(results, r)
		fmt.Fprintf(stderr, "done: %s %s n = %d: %s\n", r.Set, r.Method, r.N, r.summary())
		if err := out(r); err != nil {
			return err
		}
	}
	writeTable(stdout, cal, results)
	if c.fig != "" {
		if err := writeFigure(c.fig, results); err != nil {
			return err
		}
	}
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// runOne runs s in a child process. A failed fit is a result with Error
// set, so that one size over the budget does not lose the others.
func runOne(self string, s spec, stderr io.Writer) result {
	arg, err := json.Marshal(s)
	if err != nil {
		return result{spec: s, Error: err.Error()}
	}
	cmd := exec.Command(self, childFlag, string(arg))
	var errBuf bytes.Buffer
	cmd.Stderr = io.MultiWriter(stderr, &errBuf)
	start := time.Now()
	outb, err := cmd.Output()
	wall := time.Since(start).Seconds()
	var r result
	if jerr := json.Unmarshal(outb, &r); jerr != nil {
		msg := fmt.Sprintf("child printed %q", outb)
		if err != nil {
			msg = fmt.Sprintf("child: %v: %s", err, strings.TrimSpace(errBuf.String()))
		}
		r = result{spec: s, Error: msg}
	}
	r.WallSeconds = wall
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.RusageMaxRSS = ru.Maxrss << 10 // Linux: kilobytes
		}
	}
	if r.PeakRSS == 0 {
		// A child that died (killed when out of memory, say) read no VmHWM;
		// its peak is still the parent's rusage of it.
		r.PeakRSS = r.RusageMaxRSS
	}
	return r
}

// runReplot draws c.fig from the runs recorded in the -out files of
// c.replot (their first lines, the calibrations, are skipped), a later
// record of the same set, method and n replacing an earlier one, and
// prints the records' table with the first file's calibration.
func runReplot(c config, stdout io.Writer) error {
	if c.fig == "" {
		return fmt.Errorf("-replot needs -fig")
	}
	type key struct {
		set, method string
		n           int
	}
	var (
		results []result
		at      = map[key]int{}
		cal     calibration
	)
	for i, path := range strings.Split(c.replot, ",") {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for j, line := range lines {
			if j == 0 {
				if i == 0 {
					var head struct {
						Calibration calibration `json:"calibration"`
					}
					if err := json.Unmarshal([]byte(line), &head); err != nil {
						return fmt.Errorf("%s: first line: %w", path, err)
					}
					cal = head.Calibration
				}
				continue
			}
			var r result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return fmt.Errorf("%s: line %d: %w", path, j+1, err)
			}
			k := key{r.Set, r.Method, r.N}
			if idx, ok := at[k]; ok {
				results[idx] = r
				continue
			}
			at[k] = len(results)
			results = append(results, r)
		}
	}
	writeTable(stdout, cal, results)
	return writeFigure(c.fig, results)
}

//go:build linux

// Command float32 compares FALKON in float64 and in mixed precision
// (solvers.FalkonOptions.Precision = zonal.Float32) on MNIST:
// for every run (a number of centres M and a precision) it reports the test
// accuracy, the K_nM phase time (from the end of the "factor" stage to the
// last "kernel" report, the cached K_nM's formation; absent when K_nM is
// streamed), the fit time, the total time of the child process, its peak
// RSS, and, for every M fitted in both precisions, the fraction of test rows
// on which the two models predict the same label.
//
// Each fit runs in a child process (this program with -child), so that the
// peak RSS (getrusage's ru_maxrss of the child) is that fit's alone; the
// child also reports its RSS after loading the data, which every run shares.
//
//	cd bench   # its own Go module
//	go run ./float32                         # M = 5000, 10000 both, 20000 float32; all 60000 rows
//	go run ./float32 -n 2000 -m 200          # a tiny check
//	go run -tags netlib ./float32 -json out.json
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/bench/internal/benchdata"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

type config struct {
	data, runs, jsonOut, workDir string
	labels                       string // -child: where to write the predicted labels
	m                            string
	n, testRows, iterations      int
	sigma, lambda                float64
	memory                       int64
	seed                         uint64
}

// run is one fit: M centres in one precision.
type run struct {
	M         int
	Precision zonal.Precision
}

// result is what a child reports, plus what the parent measures.
type result struct {
	M            int     `json:"m"`
	Precision    string  `json:"precision"`
	Backend      string  `json:"backend"`
	NTrain       int     `json:"n_train"`
	NTest        int     `json:"n_test"`
	Accuracy     float64 `json:"accuracy"`
	Cached       bool    `json:"cached_knm"`
	KnMSeconds   float64 `json:"knm_seconds"` // -1: K_nM streamed (no separate phase)
	FitSeconds   float64 `json:"fit_seconds"`
	Iterations   int     `json:"cg_iterations"`
	LoadRSSMB    float64 `json:"rss_after_load_mb"`
	Labels       string  `json:"labels_file"`
	TotalSeconds float64 `json:"total_seconds"`      // parent: the child's wall time
	PeakRSSMB    float64 `json:"peak_rss_mb"`        // parent: the child's ru_maxrss
	AgreeWith64  float64 `json:"agree_with_float64"` // parent: same M, float64 labels; -1 when not run
}

func main() {
	var c config
	child := flag.Bool("child", false, "internal: run one fit (-m M -precision P) and print its JSON result")
	prec := flag.String("precision", "float64", "internal (with -child): the fit's precision")
	flag.StringVar(&c.data, "data", benchdata.Dir(), "folder with mnist_train.csv.gz and mnist_test.csv.gz (default: the shared data)")
	flag.StringVar(&c.runs, "runs", "5000/float64,5000/float32,10000/float64,10000/float32,20000/float32", "fits to run: M/precision, comma-separated")
	flag.StringVar(&c.m, "m", "", "shortcut for -runs M/float64,M/float32 (comma-separated Ms allowed); with -child, the fit's M")
	flag.IntVar(&c.n, "n", 0, "training rows: the first n of mnist_train (0 = all 60000)")
	flag.IntVar(&c.testRows, "test-rows", 0, "test rows: the first of mnist_test (0 = all 10000)")
	flag.IntVar(&c.iterations, "iterations", 20, "CG iterations")
	flag.Float64Var(&c.sigma, "sigma", 8.63, "Gaussian bandwidth (pixels scaled to [0, 1])")
	flag.Float64Var(&c.lambda, "lambda", 1e-8, "FALKON's lambda")
	flag.Int64Var(&c.memory, "memory", 16<<30, "memory budget in bytes (FALKON caches K_nM when it fits)")
	flag.Uint64Var(&c.seed, "seed", 1, "centre sampling seed")
	flag.StringVar(&c.jsonOut, "json", "", "also write the results as a JSON array to this file")
	flag.StringVar(&c.workDir, "work-dir", "", "where the children write their predicted labels (default: a temporary folder, removed after)")
	flag.StringVar(&c.labels, "labels", "", "internal (with -child): file for the predicted test labels")
	flag.Parse()
	var err error
	if *child {
		err = runChild(c, *prec)
	} else {
		err = runParent(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/float32:", err)
		os.Exit(1)
	}
}

func parseRuns(c config) ([]run, error) {
	spec := c.runs
	if c.m != "" {
		var parts []string
		for _, m := range strings.Split(c.m, ",") {
			parts = append(parts, m+"/float64", m+"/float32")
		}
		spec = strings.Join(parts, ",")
	}
	var out []run
	for _, s := range strings.Split(spec, ",") {
		ms, ps, ok := strings.Cut(strings.TrimSpace(s), "/")
		m, err := strconv.Atoi(ms)
		if !ok || err != nil || m < 1 {
			return nil, fmt.Errorf("bad run %q (want M/float64 or M/float32)", s)
		}
		p, err := zonal.ParsePrecision(ps)
		if err != nil || ps == "" {
			return nil, fmt.Errorf("bad run %q: precision %q (want float64 or float32)", s, ps)
		}
		out = append(out, run{m, p})
	}
	return out, nil
}

func runParent(c config) error {
	runs, err := parseRuns(c)
	if err != nil {
		return err
	}
	if c.data == "" {
		return errors.New("no data folder: pass -data DIR (with mnist_train.csv.gz, mnist_test.csv.gz) or set ZONAL_DATA")
	}
	dir := c.workDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "zonal-bench-float32"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var results []result
	for _, r := range runs {
		labels := filepath.Join(dir, fmt.Sprintf("labels-%d-%s.txt", r.M, r.Precision))
		args := []string{"-child", "-m", strconv.Itoa(r.M), "-precision", r.Precision.String(), "-data", c.data,
			"-n", strconv.Itoa(c.n), "-test-rows", strconv.Itoa(c.testRows), "-iterations", strconv.Itoa(c.iterations),
			"-sigma", strconv.FormatFloat(c.sigma, 'g', -1, 64), "-lambda", strconv.FormatFloat(c.lambda, 'g', -1, 64),
			"-memory", strconv.FormatInt(c.memory, 10), "-seed", strconv.FormatUint(c.seed, 10), "-labels", labels}
		cmd := exec.Command(self, args...)
		cmd.Stderr = os.Stderr
		start := time.Now()
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("M = %d %s: %w", r.M, r.Precision, err)
		}
		var res result
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("M = %d %s: child printed %q: %w", r.M, r.Precision, out, err)
		}
		res.TotalSeconds = time.Since(start).Seconds()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.PeakRSSMB = float64(ru.Maxrss) / 1024 // Linux: kilobytes
		}
		res.AgreeWith64 = -1
		results = append(results, res)
		fmt.Fprintf(os.Stderr, "done: M = %d %s: accuracy %.4f, fit %.1f s, peak RSS %.0f MB\n", res.M, res.Precision, res.Accuracy, res.FitSeconds, res.PeakRSSMB)
	}
	for i := range results {
		r := &results[i]
		if r.Precision != zonal.Float32.String() {
			continue
		}
		for _, o := range results {
			if o.M == r.M && o.Precision == zonal.Float64.String() {
				if r.AgreeWith64, err = agreement(r.Labels, o.Labels); err != nil {
					return err
				}
			}
		}
	}
	printTable(results)
	if c.jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func printTable(rs []result) {
	fmt.Printf("FALKON on MNIST (%d training rows, %d test rows, backend %s)\n", rs[0].NTrain, rs[0].NTest, rs[0].Backend)
	fmt.Printf("%7s  %-9s  %8s  %6s  %9s  %8s  %8s  %9s  %9s  %8s\n", "M", "precision", "accuracy", "cached", "K_nM (s)", "fit (s)", "total(s)", "RSS (MB)", "load (MB)", "agree64")
	for _, r := range rs {
		knm, agree := "-", "-"
		if r.KnMSeconds >= 0 {
			knm = fmt.Sprintf("%.2f", r.KnMSeconds)
		}
		if r.AgreeWith64 >= 0 {
			agree = fmt.Sprintf("%.4f", r.AgreeWith64)
		}
		fmt.Printf("%7d  %-9s  %8.4f  %6v  %9s  %8.2f  %8.2f  %9.0f  %9.0f  %8s\n", r.M, r.Precision, r.Accuracy, r.Cached, knm, r.FitSeconds, r.TotalSeconds, r.PeakRSSMB, r.LoadRSSMB, agree)
	}
	// Ratios float32 / float64 at equal M.
	for _, a := range rs {
		for _, b := range rs {
			if a.M == b.M && a.Precision == "float32" && b.Precision == "float64" {
				ratio := func(x, y float64) string {
					if x < 0 || y <= 0 {
						return "-"
					}
					return fmt.Sprintf("%.2f", x/y)
				}
				fmt.Printf("M = %d: float32 / float64: K_nM phase time x%s, fit time x%s, peak RSS x%s, accuracy %+.4f points\n",
					a.M, ratio(a.KnMSeconds, b.KnMSeconds), ratio(a.FitSeconds, b.FitSeconds), ratio(a.PeakRSSMB, b.PeakRSSMB), 100*(a.Accuracy-b.Accuracy))
			}
		}
	}
}

// agreement is the fraction of lines on which two label files agree.
func agreement(a, b string) (float64, error) {
	la, err := readLines(a)
	if err != nil {
		return 0, err
	}
	lb, err := readLines(b)
	if err != nil {
		return 0, err
	}
	if len(la) != len(lb) || len(la) == 0 {
		return 0, fmt.Errorf("label files %s and %s have %d and %d lines", a, b, len(la), len(lb))
	}
	same := 0
	for i := range la {
		if la[i] == lb[i] {
			same++
		}
	}
	return float64(same) / float64(len(la)), nil
}

func readLines(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out, s.Err()
}

// loadMNIST reads the first n rows of a MNIST file (0: all), pixels / 255.
func loadMNIST(path string, n int) (*mat.Dense, []float64, error) {
	d, err := dataset.ReadFile(path, dataset.Options{})
	if err != nil {
		return nil, nil, err
	}
	rows, cols := d.X.Dims()
	if n <= 0 || n > rows {
		n = rows
	}
	x := d.X
	if n < rows {
		x = d.X.Slice(0, n, 0, cols).(*mat.Dense) // a view: the first n rows
	}
	x.Scale(1.0/255, x)
	return x, d.Y[:n], nil
}

func maxRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// runChild fits one model and prints its result as JSON on stdout; the
// predicted test labels go to the file -labels names.
func runChild(c config, precName string) error {
	p, err := zonal.ParsePrecision(precName)
	if err != nil {
		return err
	}
	M, err := strconv.Atoi(c.m)
	if err != nil || M < 1 {
		return fmt.Errorf("-child needs -m M, got %q", c.m)
	}
	xtr, ytr, err := loadMNIST(filepath.Join(c.data, "mnist_train.csv.gz"), c.n)
	if err != nil {
		return err
	}
	xte, yte, err := loadMNIST(filepath.Join(c.data, "mnist_test.csv.gz"), c.testRows)
	if err != nil {
		return err
	}
	// The CSV reader's blocks (as many bytes as the data) are garbage now;
	// hand them back to the OS so that the fit's peak RSS is the fit's, as a
	// memory-conscious program would before a large allocation.
	debug.FreeOSMemory()
	loadRSS := maxRSSMB()
	enc, err := solvers.NewEncoding(ytr, solvers.TaskClassification)
	if err != nil {
		return err
	}
	y, err := enc.Targets(ytr)
	if err != nil {
		return err
	}
	k, err := kernels.NewGaussian(c.sigma)
	if err != nil {
		return err
	}
	be := backend.Default()
	var factorAt, kernelAt time.Time
	progress := func(pr zonal.Progress) {
		switch pr.Stage {
		case "factor":
			factorAt = time.Now()
		case "kernel":
			if pr.Total > 0 && pr.Done == pr.Total {
				kernelAt = time.Now()
			}
		}
	}
	start := time.Now()
	f, err := solvers.FitFalkon(context.Background(), k, xtr, y, c.lambda, solvers.FalkonOptions{
		Options: solvers.Options{Backend: be, MemoryBudget: c.memory, Progress: progress},
		Centers: M, Iterations: c.iterations, Seed: c.seed, Precision: p,
	})
	if err != nil {
		return err
	}
	fit := time.Since(start).Seconds()
	pipe, err := solvers.NewPipeline(nil, enc, f)
	if err != nil {
		return err
	}
	pred := make([]float64, len(yte))
	if err := pipe.PredictLabels(pred, xte); err != nil {
		return err
	}
	correct := 0
	var b strings.Builder
	for i, v := range pred {
		if v == yte[i] {
			correct++
		}
		fmt.Fprintf(&b, "%g\n", v)
	}
	if err := os.WriteFile(c.labels, []byte(b.String()), 0o644); err != nil {
		return err
	}
	knm := -1.0
	if !factorAt.IsZero() && !kernelAt.IsZero() {
		knm = kernelAt.Sub(factorAt).Seconds()
	}
	ntr, _ := xtr.Dims()
	res := result{M: M, Precision: p.String(), Backend: be.Name(), NTrain: ntr, NTest: len(yte),
		Accuracy: float64(correct) / float64(len(yte)), Cached: f.CachedKnM(), KnMSeconds: knm, FitSeconds: fit,
		Iterations: f.CG().Iterations, LoadRSSMB: loadRSS, Labels: c.labels}
	return json.NewEncoder(os.Stdout).Encode(res)
}

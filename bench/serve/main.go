//go:build linux

// Command serve measures the serve package under load on loopback: it fits
// (or loads) three MNIST models, serves each in-process with and without
// dynamic batching, attacks them with vegeta from a child process (so that
// the server's CPU time is its own) at fixed rates, searches the highest
// rate held with p99 < 10 ms and no errors, and soaks one server with a
// reload every 10 s. See bench/serve/README.md for the commands.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/bench/internal/benchdata"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/solvers"
)

type config struct {
	data, modelDir, models, jsonOut string
	refit, quick                    bool
	trainRows, iterations           int
	sigma, lambda                   float64
	centers1, centers2, features    int
	rates                           []int
	duration                        time.Duration
	batchRows                       int
	searchStart, searchMax          int
	searchSteps                     int
	searchDuration                  time.Duration
	soak, reloadEvery               time.Duration
	soakRate                        int
	maxWorkers                      int
	skipRates, skipSearch, skipSoak bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-attack-child" {
		if err := attackChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench/serve attacker:", err)
			os.Exit(1)
		}
		return
	}
	var c config
	var rates string
	flag.StringVar(&c.data, "data", benchdata.Dir(), "folder with mnist_train.csv.gz and mnist_test.csv.gz (default: the shared data)")
	flag.StringVar(&c.modelDir, "model-dir", filepath.Join(os.TempDir(), "zonal-bench-serve"), "where fitted models are kept and reused")
	flag.BoolVar(&c.refit, "refit", false, "fit the models again even if -model-dir has them")
	flag.StringVar(&c.models, "models", "falkon-M1,falkon-M2,ridge-fourier", "models to measure (comma-separated)")
	flag.IntVar(&c.trainRows, "train-rows", 20000, "MNIST training rows used for fitting (seeded subsample)")
	flag.IntVar(&c.centers1, "centers1", 1000, "FALKON centres M of model falkon-M1")
	flag.IntVar(&c.centers2, "centers2", 5000, "FALKON centres M of model falkon-M2")
	flag.IntVar(&c.features, "features", 4096, "Fourier features D of model ridge-fourier")
	flag.IntVar(&c.iterations, "iterations", 10, "FALKON CG iterations")
	flag.Float64Var(&c.sigma, "sigma", 5, "Gaussian kernel bandwidth on pixels scaled to [0, 1]")
	flag.Float64Var(&c.lambda, "lambda", 1e-6, "ridge parameter")
	flag.StringVar(&rates, "rates", "1000,5000,10000,20000", "fixed rates to measure, rows per second (single-row requests; batched requests carry -batch-rows rows at rate/-batch-rows requests per second)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "length of each fixed-rate attack")
	flag.IntVar(&c.batchRows, "batch-rows", 64, "rows per request of the batched client")
	flag.IntVar(&c.searchStart, "search-start", 1000, "first rate (req/s) of the search for the highest rate with p99 < 10 ms and no errors")
	flag.IntVar(&c.searchMax, "search-max", 40000, "highest rate the search tries")
	flag.IntVar(&c.searchSteps, "search-steps", 4, "bisection steps after the doubling phase of the search")
	flag.DurationVar(&c.searchDuration, "search-duration", 5*time.Second, "length of each attack of the search")
	flag.DurationVar(&c.soak, "soak", 60*time.Second, "soak length")
	flag.DurationVar(&c.reloadEvery, "reload-every", 10*time.Second, "reload period during the soak")
	flag.IntVar(&c.soakRate, "soak-rate", 2000, "soak rate (single-row req/s, batching on, first model)")
	flag.IntVar(&c.maxWorkers, "max-workers", 2000, "most vegeta workers (concurrent requests) of an attack")
	flag.BoolVar(&c.skipRates, "skip-rates", false, "skip the fixed-rate table")
	flag.BoolVar(&c.skipSearch, "skip-search", false, "skip the search for the highest rate")
	flag.BoolVar(&c.skipSoak, "skip-soak", false, "skip the soak")
	flag.StringVar(&c.jsonOut, "json", "", "also write every measurement to this JSON file")
	flag.BoolVar(&c.quick, "quick", false, "smoke test: tiny models (M = 50, 100; D = 256; 2000 rows), rates 50,100 for 1 s, search up to 400 (1 s), soak 4 s reloading every 2 s; later flags still override")
	flag.Parse()
	if c.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true }) // explicit flags win over -quick
		quick := func(name string, apply func()) {
			if !set[name] {
				apply()
			}
		}
		quick("train-rows", func() { c.trainRows = 2000 })
		quick("centers1", func() { c.centers1 = 50 })
		quick("centers2", func() { c.centers2 = 100 })
		quick("features", func() { c.features = 256 })
		quick("iterations", func() { c.iterations = 5 })
		quick("duration", func() { c.duration = time.Second })
		quick("search-start", func() { c.searchStart = 100 })
		quick("search-max", func() { c.searchMax = 400 })
		quick("search-steps", func() { c.searchSteps = 1 })
		quick("search-duration", func() { c.searchDuration = time.Second })
		quick("soak", func() { c.soak = 4 * time.Second })
		quick("reload-every", func() { c.reloadEvery = 2 * time.Second })
		quick("soak-rate", func() { c.soakRate = 100 })
		quick("rates", func() { rates = "50,100" })
		quick("model-dir", func() { c.modelDir += "-quick" })
	}
	for _, r := range strings.Split(rates, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || v < 1 {
			fatalf("bad -rates entry %q", r)
		}
		c.rates = append(c.rates, v)
	}
	if err := run(c); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/serve: "+format+"\n", a...)
	os.Exit(1)
}

// point is one attack's outcome.
type point struct {
	Model        string         `json:"model"`
	Client       string         `json:"client"` // "single" or "batch-64"
	Batching     bool           `json:"batching"`
	RowsPerSec   int            `json:"rows_per_sec"`
	ReqPerSec    int            `json:"req_per_sec"`
	Requests     uint64         `json:"requests"`
	P50ms        float64        `json:"p50_ms"`
	P99ms        float64        `json:"p99_ms"`
	Maxms        float64        `json:"max_ms"`
	Success      float64        `json:"success"`
	ServerCPUus  float64        `json:"server_cpu_us_per_req"`
	ClientCPUus  float64        `json:"client_cpu_us_per_req"`
	Throughput   float64        `json:"throughput_req_per_sec"`
	StatusCodes  map[string]int `json:"status_codes"`
	Errors       []string       `json:"errors,omitempty"`
	MeanBatchRow float64        `json:"mean_batch_rows"`
}

type report struct {
	Machine string           `json:"machine"`
	Points  []point          `json:"points"`
	Best    []map[string]any `json:"best"`
	Soak    map[string]any   `json:"soak,omitempty"`
}

// served is one model behind two in-process servers.
type served struct {
	name       string
	file       string
	pipe       *solvers.Pipeline
	on, off    *serve.Server
	onURL      string
	offURL     string
	httpOn     *http.Server
	httpOff    *http.Server
	singleBody string // file of single-row bodies
	batchBody  string // file of batch bodies
}

func run(c config) error {
	if c.data == "" {
		return errors.New("no data folder: pass -data DIR (with mnist_train.csv.gz, mnist_test.csv.gz) or set ZONAL_DATA")
	}
	if err := os.MkdirAll(c.modelDir, 0o755); err != nil {
		return err
	}
	rep := report{Machine: fmt.Sprintf("%s/%s, %d CPUs, GOMAXPROCS %d, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	test, err := dataset.ReadFile(filepath.Join(c.data, "mnist_test.csv.gz"), dataset.Options{})
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "zonal-bench-serve-bodies")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var train *dataset.Data
	var models []*served
	for _, name := range strings.Split(c.models, ",") {
		name = strings.TrimSpace(name)
		file := filepath.Join(c.modelDir, modelFileName(c, name))
		p, err := loadModel(file)
		if err != nil || c.refit {
			if train == nil {
				fmt.Fprintf(os.Stderr, "reading %d MNIST training rows...\n", c.trainRows)
				if train, err = readTrain(c); err != nil {
					return err
				}
			}
			start := time.Now()
			if p, err = fitModel(c, name, train); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(os.Stderr, "fitted %s in %.1f s\n", name, time.Since(start).Seconds())
			if err := saveModel(file, p); err != nil {
				return err
			}
		}
		pred := make([]float64, 2000)
		xt := test.X.Slice(0, 2000, 0, 784).(*mat.Dense)
		if err := p.PredictLabels(pred, xt); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s (%s): test accuracy %.4f on 2000 MNIST test rows\n", name, file, solvers.Accuracy(pred, test.Y[:2000]))
		s := &served{name: name, file: file, pipe: p}
		if s.on, s.onURL, s.httpOn, err = start(p, serve.Options{Name: "m", Logger: logger, ModelFile: file}); err != nil {
			return err
		}
		if s.off, s.offURL, s.httpOff, err = start(p, serve.Options{Name: "m", Logger: logger, MaxBatch: 1}); err != nil {
			return err
		}
		if s.singleBody, s.batchBody, err = writeBodies(tmp, name, test.X, c.batchRows); err != nil {
			return err
		}
		models = append(models, s)
	}
	train = nil
	runtime.GC()
	for _, s := range models { // warm up: page in the models, start the batchers
		for _, on := range []bool{false, true} {
			if _, err := attackPoint(c, s, "single", on, 100, 100, time.Second); err != nil {
				return err
			}
		}
	}

	if !c.skipRates {
		fmt.Printf("\n## Fixed rates (%v each)\n\n", c.duration)
		fmt.Println("| model | client | dynamic batching | rows/s | req/s | p50 (ms) | p99 (ms) | max (ms) | success | server CPU/req (us) | mean block rows |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
		for _, s := range models {
			for _, rate := range c.rates {
				for _, on := range []bool{false, true} {
					pt, err := attackPoint(c, s, "single", on, rate, rate, c.duration)
					if err != nil {
						return err
					}
					rep.Points = append(rep.Points, pt)
					printPoint(pt)
				}
				req := max(1, rate/c.batchRows)
				pt, err := attackPoint(c, s, fmt.Sprintf("batch-%d", c.batchRows), true, rate, req, c.duration)
				if err != nil {
					return err
				}
				rep.Points = append(rep.Points, pt)
				printPoint(pt)
			}
		}
	}
	if !c.skipSearch {
		fmt.Printf("\n## Highest single-row rate with p99 < 10 ms and no errors (%v per probe)\n\n", c.searchDuration)
		fmt.Println("| model | dynamic batching | highest rate held (req/s) | p99 there (ms) | first rate failed (req/s) | why |")
		fmt.Println("|---|---|---|---|---|---|")
		for _, s := range models {
			for _, on := range []bool{false, true} {
				best, bp, fail, why, err := search(c, s, on)
				if err != nil {
					return err
				}
				fmt.Printf("| %s | %s | %d | %.2f | %s | %s |\n", s.name, onOff(on), best, bp.P99ms, failStr(fail), why)
				rep.Best = append(rep.Best, map[string]any{"model": s.name, "batching": on, "best_req_per_sec": best, "p99_ms": bp.P99ms, "failed_at": fail, "why": why})
			}
		}
	}
	if !c.skipSoak && len(models) > 0 {
		soak, err := runSoak(c, models[0])
		if err != nil {
			return err
		}
		rep.Soak = soak
	}
	for _, s := range models {
		for _, h := range []*http.Server{s.httpOn, s.httpOff} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = h.Shutdown(ctx)
			cancel()
		}
		s.on.Close()
		s.off.Close()
	}
	if c.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", " ")
		if err := os.WriteFile(c.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("\nmachine: %s\n", rep.Machine)
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func failStr(f int) string {
	if f == 0 {
		return "none up to -search-max"
	}
	return strconv.Itoa(f)
}

func printPoint(p point) {
	blocks := "-"
	if p.MeanBatchRow > 0 {
		blocks = strconv.FormatFloat(p.MeanBatchRow, 'f', 1, 64)
	}
	fmt.Printf("| %s | %s | %s | %d | %d | %.2f | %.2f | %.2f | %.4f | %.0f | %s |\n", p.Model, p.Client, onOff(p.Batching),
		p.RowsPerSec, p.ReqPerSec, p.P50ms, p.P99ms, p.Maxms, p.Success, p.ServerCPUus, blocks)
}

func modelFileName(c config, name string) string {
	switch name {
	case "falkon-M1":
		return fmt.Sprintf("falkon-M%d-n%d.zonal", c.centers1, c.trainRows)
	case "falkon-M2":
		return fmt.Sprintf("falkon-M%d-n%d.zonal", c.centers2, c.trainRows)
	case "ridge-fourier":
		return fmt.Sprintf("ridge-fourier-D%d-n%d.zonal", c.features, c.trainRows)
	}
	return name + ".zonal"
}

func loadModel(path string) (*solvers.Pipeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return solvers.Load(f, solvers.Options{})
}

func saveModel(path string, p *solvers.Pipeline) error {
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func readTrain(c config) (*dataset.Data, error) {
	all, err := dataset.ReadFile(filepath.Join(c.data, "mnist_train.csv.gz"), dataset.Options{})
	if err != nil {
		return nil, err
	}
	n, _ := all.Dims()
	if c.trainRows < n {
		rows, err := dataset.Subsample(n, c.trainRows, 1)
		if err != nil {
			return nil, err
		}
		return all.Subset(rows)
	}
	return all, nil
}

// fitModel fits one of the three models on pixels scaled to [0, 1] (the
// scaler x/255 is part of the model, so clients send raw pixels).
func fitModel(c config, name string, train *dataset.Data) (*solvers.Pipeline, error) {
	ctx := context.Background()
	be := backend.Default()
	n, d := train.X.Dims()
	mean, scale := make([]float64, d), make([]float64, d)
	for j := range scale {
		scale[j] = 255
	}
	sc, err := solvers.NewScaler(mean, scale)
	if err != nil {
		return nil, err
	}
	x := mat.NewDense(n, d, nil)
	x.Scale(1.0/255, train.X)
	enc, err := solvers.NewEncoding(train.Y, solvers.TaskClassification)
	if err != nil {
		return nil, err
	}
	y, err := enc.Targets(train.Y)
	if err != nil {
		return nil, err
	}
	k, err := kernels.NewGaussian(c.sigma)
	if err != nil {
		return nil, err
	}
	opts := solvers.Options{Backend: be, MemoryBudget: 8 << 30}
	var m solvers.Model
	switch name {
	case "falkon-M1", "falkon-M2":
		centers := c.centers1
		if name == "falkon-M2" {
			centers = c.centers2
		}
		m, err = solvers.FitFalkon(ctx, k, x, y, c.lambda, solvers.FalkonOptions{Options: opts, Centers: centers, Iterations: c.iterations, Seed: 1})
	case "ridge-fourier":
		var fm *kernels.FourierMap
		if fm, err = kernels.NewFourierMap(k, d, kernels.FourierOptions{Options: kernels.Options{Backend: be}, Features: c.features, Seed: 1}); err == nil {
			m, err = solvers.FitRidge(ctx, fm, x, y, c.lambda, solvers.RidgeOptions{Options: opts})
		}
	default:
		return nil, fmt.Errorf("unknown model %q (falkon-M1, falkon-M2, ridge-fourier)", name)
	}
	if err != nil {
		return nil, err
	}
	return solvers.NewPipeline(sc, enc, m)
}

// start serves p on a fresh loopback port.
func start(p *solvers.Pipeline, o serve.Options) (*serve.Server, string, *http.Server, error) {
	s, err := serve.New(p, o)
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	hs := s.HTTPServer(ln.Addr().String())
	go func() { _ = hs.Serve(ln) }()
	return s, "http://" + ln.Addr().String(), hs, nil
}

// writeBodies writes 256 single-row bodies and 16 bodies of batchRows rows
// (MNIST test rows, raw pixels), one JSON body a line.
func writeBodies(dir, name string, x *mat.Dense, batchRows int) (string, string, error) {
	n, _ := x.Dims()
	row := func(i int) []float64 { return x.RawRowView(i % n) }
	single := filepath.Join(dir, name+"-single.jsonl")
	batch := filepath.Join(dir, name+"-batch.jsonl")
	var sb, bb bytes.Buffer
	for i := 0; i < 256; i++ {
		b, _ := json.Marshal(map[string]any{"rows": [][]float64{row(i)}})
		sb.Write(b)
		sb.WriteByte('\n')
	}
	for i := 0; i < 16; i++ {
		rows := make([][]float64, batchRows)
		for r := range rows {
			rows[r] = row(i*batchRows + r)
		}
		b, _ := json.Marshal(map[string]any{"rows": rows})
		bb.Write(b)
		bb.WriteByte('\n')
	}
	if err := os.WriteFile(single, sb.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	return single, batch, os.WriteFile(batch, bb.Bytes(), 0o644)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childResult is what the attacker child prints.
type childResult struct {
	Metrics vegeta.Metrics `json:"metrics"`
}

// attack runs the attacker child against url at rate req/s for du and
// returns its metrics, the server process's CPU time and the child's.
func attack(c config, target, bodies string, rate int, du time.Duration) (*vegeta.Metrics, time.Duration, time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, 0, err
	}
	cmd := exec.Command(exe, "-attack-child", target, bodies, strconv.Itoa(rate), du.String(), strconv.Itoa(c.maxWorkers))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cpu0 := cpuTime()
	if err := cmd.Run(); err != nil {
		return nil, 0, 0, fmt.Errorf("attacker: %w", err)
	}
	server := cpuTime() - cpu0
	var res childResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, 0, 0, fmt.Errorf("attacker output: %w", err)
	}
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return &res.Metrics, server, client, nil
}

func attackPoint(c config, s *served, client string, on bool, rows, req int, du time.Duration) (point, error) {
	base, srv, bodies := s.offURL, s.off, s.singleBody
	if on {
		base, srv = s.onURL, s.on
	}
	if client != "single" {
		bodies = s.batchBody
	}
	blocks0, rows0 := blockStats(srv)
	m, server, cl, err := attack(c, base+"/v1/predict", bodies, req, du)
	if err != nil {
		return point{}, err
	}
	blocks1, rows1 := blockStats(srv)
	pt := point{Model: s.name, Client: client, Batching: on, RowsPerSec: rows, ReqPerSec: req, Requests: m.Requests,
		P50ms: ms(m.Latencies.P50), P99ms: ms(m.Latencies.P99), Maxms: ms(m.Latencies.Max), Success: m.Success,
		Throughput: m.Throughput, StatusCodes: m.StatusCodes, Errors: m.Errors}
	if m.Requests > 0 {
		pt.ServerCPUus = float64(server.Microseconds()) / float64(m.Requests)
		pt.ClientCPUus = float64(cl.Microseconds()) / float64(m.Requests)
	}
	if blocks1 > blocks0 {
		pt.MeanBatchRow = (rows1 - rows0) / (blocks1 - blocks0)
	}
	return pt, nil
}

// blockStats reads the batcher's block count and rows from the registry.
func blockStats(s *serve.Server) (blocks, rows float64) {
	fams, err := s.Registry().Gather()
	if err != nil {
		return 0, 0
	}
	for _, f := range fams {
		if f.GetName() == "zonal_serve_batch_rows" {
			for _, m := range f.GetMetric() {
				blocks += float64(m.GetHistogram().GetSampleCount())
				rows += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return blocks, rows
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func held(m point) (bool, string) {
	switch {
	case m.Success < 1:
		return false, fmt.Sprintf("success %.4f %v", m.Success, m.StatusCodes)
	case m.P99ms >= 10:
		return false, fmt.Sprintf("p99 %.1f ms", m.P99ms)
	}
	return true, ""
}

// search doubles the single-row rate from -search-start while it is held
// (p99 < 10 ms, no errors), then bisects between the last rate held and the
// first one lost.
func search(c config, s *served, on bool) (best int, bestPt point, failed int, why string, err error) {
	probe := func(rate int) (bool, point, string, error) {
		pt, err := attackPoint(c, s, "single", on, rate, rate, c.searchDuration)
		if err != nil {
			return false, pt, "", err
		}
		ok, w := held(pt)
		fmt.Fprintf(os.Stderr, "  search %s batching %s: %d req/s -> p99 %.2f ms, success %.4f\n", s.name, onOff(on), rate, pt.P99ms, pt.Success)
		return ok, pt, w, nil
	}
	rate := c.searchStart
	for rate <= c.searchMax {
		ok, pt, w, err := probe(rate)
		if err != nil {
			return 0, point{}, 0, "", err
		}
		if !ok {
			failed, why = rate, w
			break
		}
		best, bestPt = rate, pt
		rate *= 2
	}
	if failed == 0 {
		return best, bestPt, 0, "", nil
	}
	lo, hi := best, failed
	for i := 0; i < c.searchSteps && hi-lo > max(1, lo/20); i++ {
		mid := (lo + hi) / 2
		if mid == 0 {
			break
		}
		ok, pt, w, err := probe(mid)
		if err != nil {
			return 0, point{}, 0, "", err
		}
		if ok {
			lo, best, bestPt = mid, mid, pt
		} else {
			hi, failed, why = mid, mid, w
		}
	}
	return best, bestPt, failed, why, nil
}

// runSoak attacks the batching server of s at -soak-rate for -soak while
// the model file is reloaded every -reload-every, sampling goroutines and
// RSS every second.
func runSoak(c config, s *served) (map[string]any, error) {
	fmt.Printf("\n## Soak: %s, %d req/s single-row, batching on, %v, reload every %v\n\n", s.name, c.soakRate, c.soak, c.reloadEvery)
	runtime.GC()
	g0, rss0 := runtime.NumGoroutine(), rss()
	type sample struct {
		t          float64
		goroutines int
		rssMiB     float64
	}
	var samples []sample
	stop := make(chan struct{})
	done := make(chan struct{})
	reloads, reloadErrs := 0, 0
	start := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		next := c.reloadEvery
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				el := time.Since(start)
				samples = append(samples, sample{el.Seconds(), runtime.NumGoroutine(), rss()})
				if el >= next {
					next += c.reloadEvery
					reloads++
					if err := s.on.Reload(); err != nil {
						reloadErrs++
						fmt.Fprintln(os.Stderr, "soak reload:", err)
					}
				}
			}
		}
	}()
	pt, err := attackPoint(c, s, "single", true, c.soakRate, c.soakRate, c.soak)
	close(stop)
	<-done
	if err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // let idle connections and blocks finish
	runtime.GC()
	g1, rss1 := runtime.NumGoroutine(), rss()
	maxG, maxRSS := g0, rss0
	for _, sm := range samples {
		maxG, maxRSS = max(maxG, sm.goroutines), math.Max(maxRSS, sm.rssMiB)
	}
	third := func(from, to float64) float64 { // mean RSS over samples in [from, to) of the soak
		sum, k := 0.0, 0
		for _, sm := range samples {
			if f := sm.t / c.soak.Seconds(); f >= from && f < to {
				sum += sm.rssMiB
				k++
			}
		}
		if k == 0 {
			return math.NaN()
		}
		return sum / float64(k)
	}
	fmt.Println("| requests | success | p50 (ms) | p99 (ms) | max (ms) | reloads (failed) | goroutines before / max / after | RSS MiB before / first third / last third / after |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	fmt.Printf("| %d | %.4f | %.2f | %.2f | %.2f | %d (%d) | %d / %d / %d | %.0f / %.0f / %.0f / %.0f |\n", pt.Requests, pt.Success, pt.P50ms, pt.P99ms, pt.Maxms,
		reloads, reloadErrs, g0, maxG, g1, rss0, third(0, 1.0/3), third(2.0/3, 1.01), rss1)
	if pt.Success < 1 {
		fmt.Printf("\nerrors: %v %v\n", pt.StatusCodes, pt.Errors)
	}
	return map[string]any{"point": pt, "reloads": reloads, "reload_errors": reloadErrs, "goroutines_before": g0, "goroutines_max": maxG,
		"goroutines_after": g1, "rss_mib_before": rss0, "rss_mib_after": rss1, "rss_mib_max": maxRSS}, nil
}

// rss is the resident set size in MiB (Linux /proc/self/statm).
func rss() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return math.NaN()
	}
	pages, _ := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize()) / (1 << 20)
}

// attackChild is the attacker process: args are the target URL (loopback
// only), the bodies file, the rate (req/s), the duration and the most
// workers. It prints {"metrics": ...}.
func attackChild(args []string) error {
	if len(args) != 5 {
		return fmt.Errorf("want URL BODIES RATE DURATION MAXWORKERS, got %q", args)
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Hostname() != "127.0.0.1" {
		return fmt.Errorf("target %q: only 127.0.0.1 is attacked", args[0])
	}
	rate, err1 := strconv.Atoi(args[2])
	du, err2 := time.ParseDuration(args[3])
	maxWorkers, err3 := strconv.ParseUint(args[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil || rate < 1 || du <= 0 || du > time.Hour {
		return fmt.Errorf("bad rate, duration or workers %q: %v", args[2:], err)
	}
	f, err := os.Open(args[1])
	if err != nil {
		return err
	}
	var targets []vegeta.Target
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	hdr := http.Header{"Content-Type": []string{"application/json"}}
	for sc.Scan() {
		targets = append(targets, vegeta.Target{Method: "POST", URL: args[0], Body: append([]byte(nil), sc.Bytes()...), Header: hdr})
	}
	f.Close()
	if err := sc.Err(); err != nil || len(targets) == 0 {
		return fmt.Errorf("bodies %s: %d targets, %v", args[1], len(targets), err)
	}
	atk := vegeta.NewAttacker(vegeta.Timeout(5*time.Second), vegeta.KeepAlive(true), vegeta.MaxWorkers(maxWorkers),
		vegeta.Connections(int(min(maxWorkers, 10000))), vegeta.MaxBody(1<<20))
	var m vegeta.Metrics
	for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{Freq: rate, Per: time.Second}, du, "zonal") {
		m.Add(res)
	}
	m.Close()
	return json.NewEncoder(os.Stdout).Encode(childResult{Metrics: m})
}

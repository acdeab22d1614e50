//go:build linux

// Command serve measures package serve under load on loopback, per
// protocol: REST JSON (/v1/predict rows, and the Open Inference Protocol
// v2 tensor in JSON), the REST binary tensor data extension, and gRPC
// ModelInfer with raw_input_contents and with typed contents. For FALKON
// (M = 1000 centres) and ridge on D = 4096 random Fourier features, fitted
// once on MNIST and cached, it measures single-row and 64-row requests:
// p99 and the server's CPU per request at a low rate, and the highest rate
// held with p99 under 10 ms and no errors; then it soaks each protocol for
// 60 s with a reload every few seconds. Each case is a row of a markdown
// table (case, goal, measured, verdict) on stdout and a JSON line in -out.
//
// The servers run in this process, on 127.0.0.1 only; the load comes from
// a child process (this binary re-executed: vegeta for HTTP, an open-loop
// generator of its own for gRPC), so that this process's CPU time
// (getrusage) during a load is the server's. See README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/zonal-ml/zonal/bench/internal/benchdata"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/solvers"
)

type config struct {
	data, modelDir, out           string
	models, protocols             []string
	refit, quick, synthetic       bool
	fp32                          bool
	trainRows, iterations         int
	centers, features             int
	sigma, lambda                 float64
	batchRows                     int
	lowRate, lowRateBatch         int
	duration, warmup              time.Duration
	searchStart, searchMax        int
	searchSteps                   int
	searchDuration                time.Duration
	p99Goal                       time.Duration
	soak, reloadEvery             time.Duration
	soakRate                      int
	maxWorkers, grpcConns         int
	httpBuffer                    int
	maxBatch                      int
	batchDelay                    time.Duration
	timeout                       time.Duration
	skipLow, skipSearch, skipSoak bool
	cpuProfile                    string
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == childFlag {
		if err := loadChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "bench/serve load child:", err)
			os.Exit(1)
		}
		return
	}
	c, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fatalf("%v", err)
	}
	if err := run(c, os.Stdout); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/serve: "+format+"\n", a...)
	os.Exit(1)
}

func parseFlags(fs *flag.FlagSet, args []string) (config, error) {
	var c config
	var models, protocols string
	fs.StringVar(&c.data, "data", benchdata.Dir(), "folder with mnist_train.csv.gz and mnist_test.csv.gz (default: the shared data)")
	fs.BoolVar(&c.synthetic, "synthetic", false, "a tiny synthetic data set (d = 16, 400 training rows) instead of MNIST: for the smoke test")
	fs.StringVar(&c.modelDir, "model-dir", filepath.Join(os.TempDir(), "zonal-bench-serve"), "where fitted models are kept and reused (the file name holds the settings)")
	fs.BoolVar(&c.refit, "refit", false, "fit the models again even if -model-dir has them")
	fs.StringVar(&models, "models", modelFalkon+","+modelRidge, "models to measure, comma-separated: falkon (FALKON, -centers), ridge-fourier (ridge on -features Fourier features), floor (no model: bare net/http and grpc-go servers answering a constant, the transports' floor; no soak), floor-falkon (the same predicting each request's rows with the falkon model; json and grpc only)")
	fs.StringVar(&protocols, "protocol", strings.Join(allProtocols, ","), "protocols, comma-separated: json (/v1/predict rows), v2 (v2 infer, JSON data), binary (v2 infer, binary tensor data), grpc (ModelInfer, raw_input_contents), grpc-typed (ModelInfer, typed contents)")
	fs.BoolVar(&c.fp32, "fp32", false, "send FP32 tensors on v2, binary and gRPC (default FP64; json is always decimal text)")
	fs.IntVar(&c.trainRows, "train-rows", 20000, "MNIST training rows of the fit (a seeded subsample)")
	fs.IntVar(&c.centers, "centers", 1000, "FALKON centres M")
	fs.IntVar(&c.iterations, "iterations", 10, "FALKON CG iterations")
	fs.IntVar(&c.features, "features", 4096, "Fourier features D of ridge-fourier")
	fs.Float64Var(&c.sigma, "sigma", 5, "Gaussian kernel bandwidth on values scaled to [0, 1]")
	fs.Float64Var(&c.lambda, "lambda", 1e-6, "ridge parameter")
	fs.IntVar(&c.batchRows, "batch-rows", 64, "rows of a batched request")
	fs.IntVar(&c.lowRate, "low-rate", 100, "low load of single-row requests (req/s): p99 and server CPU per request")
	fs.IntVar(&c.lowRateBatch, "low-rate-batch", 10, "low load of batched requests (req/s)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of a low-load case")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "single-row load (at -low-rate) after a server starts, not measured")
	fs.IntVar(&c.searchStart, "search-start", 500, "first rate of the search, rows/s (a batched request counts -batch-rows rows)")
	fs.IntVar(&c.searchMax, "search-max", 40000, "highest rate the search tries, rows/s")
	fs.IntVar(&c.searchSteps, "search-steps", 4, "bisection steps after the doubling phase of the search")
	fs.DurationVar(&c.searchDuration, "search-duration", 5*time.Second, "length of each probe of the search")
	fs.DurationVar(&c.p99Goal, "p99", 10*time.Millisecond, "the p99 latency goal")
	fs.DurationVar(&c.soak, "soak", 60*time.Second, "soak length per protocol (first model, single-row requests)")
	fs.DurationVar(&c.reloadEvery, "reload-every", 5*time.Second, "period of POST /v1/reload during a soak")
	fs.IntVar(&c.soakRate, "soak-rate", 1000, "soak rate, single-row req/s")
	fs.IntVar(&c.maxWorkers, "max-workers", 2000, "most requests in flight from the load child")
	fs.IntVar(&c.grpcConns, "grpc-conns", 4, "gRPC connections of the load child")
	fs.IntVar(&c.httpBuffer, "http-buffer", 32<<10, "read and write buffers of the load child's HTTP connections, bytes (default grpc-go's 32 KiB, as the gRPC load has; 0 = net/http's 4 KiB)")
	fs.IntVar(&c.maxBatch, "max-batch", serve.DefaultMaxBatch, "the server's MaxBatch: most single-row requests predicted in one block (1 = no batching; as zonal serve -max-batch)")
	fs.DurationVar(&c.batchDelay, "batch-delay", serve.DefaultBatchDelay, "the server's BatchDelay: longest a single-row request waits for others being decoded (as zonal serve -batch-delay; negative = never wait)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "timeout of one request")
	fs.BoolVar(&c.skipLow, "skip-low", false, "skip the low-load cases")
	fs.BoolVar(&c.skipSearch, "skip-search", false, "skip the searches")
	fs.BoolVar(&c.skipSoak, "skip-soak", false, "skip the soaks")
	fs.StringVar(&c.out, "out", "", "write every case as a JSON line to this file")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the server process (this one; the load comes from a child) during each low-load case to this file, the case inserted before the extension (cpu.prof: cpu-falkon-json-1.prof, ...)")
	fs.BoolVar(&c.quick, "quick", false, "smoke test: 1 s cases at low rates (20 and 5 req/s), a search of 2 probes (50, 100 rows/s) of 1 s, 3 s soaks reloading every 1 s, 0.5 s warm-up; flags given explicitly win")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{"duration": "1s", "warmup": "500ms", "low-rate": "20", "low-rate-batch": "5",
			"search-start": "50", "search-max": "100", "search-steps": "1", "search-duration": "1s",
			"soak": "3s", "reload-every": "1s", "soak-rate": "20", "max-workers": "64"} {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					return c, err
				}
			}
		}
	}
	var err error
	if c.models, err = list(models, []string{modelFalkon, modelRidge, modelFloor, modelFloorFalkon}); err != nil {
		return c, fmt.Errorf("-models: %w", err)
	}
	if c.protocols, err = list(protocols, allProtocols); err != nil {
		return c, fmt.Errorf("-protocol: %w", err)
	}
	if slices.Contains(c.models, modelFloorFalkon) {
		for _, p := range c.protocols {
			if p != protoJSON && p != protoGRPC {
				return c, fmt.Errorf("-models %s serves -protocol %s and %s only, not %s", modelFloorFalkon, protoJSON, protoGRPC, p)
			}
		}
	}
	switch {
	case c.batchRows < 1, c.lowRate < 1, c.lowRateBatch < 1, c.searchStart < 1, c.searchMax < c.searchStart, c.searchSteps < 0, c.soakRate < 1,
		c.maxWorkers < 1, c.grpcConns < 1, c.trainRows < 1, c.centers < 1, c.features < 1:
		return c, errors.New("counts and rates must be positive, and -search-max at least -search-start")
	case c.duration <= 0, c.searchDuration <= 0, c.soak <= 0, c.reloadEvery <= 0, c.timeout <= 0, c.p99Goal <= 0, c.warmup < 0:
		return c, errors.New("durations must be positive")
	case c.maxBatch < 1, c.httpBuffer < 0:
		return c, errors.New("-max-batch must be at least 1 and -http-buffer not negative")
	}
	return c, nil
}

// list splits a comma-separated flag and checks each entry is known.
func list(s string, known []string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		ok := false
		for _, k := range known {
			ok = ok || v == k
		}
		if !ok {
			return nil, fmt.Errorf("unknown %q (one of %s)", v, strings.Join(known, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// result is one case: a row of the table and a JSON line.
type result struct {
	Case     string `json:"case"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"` // pass, FAIL, or reported (a figure without a threshold)

	Kind     string `json:"kind"` // low-load, cpu, search, soak
	Model    string `json:"model"`
	Protocol string `json:"protocol"`
	Rows     int    `json:"rows_per_request"`

	ReqPerSec     int            `json:"req_per_sec,omitempty"`
	Requests      uint64         `json:"requests"`
	P50ms         float64        `json:"p50_ms,omitempty"`
	P99ms         float64        `json:"p99_ms,omitempty"`
	Maxms         float64        `json:"max_ms,omitempty"`
	Success       float64        `json:"success"`
	StatusCodes   map[string]int `json:"status_codes,omitempty"`
	Errors        []string       `json:"errors,omitempty"`
	ServerCPUus   float64        `json:"server_cpu_us_per_req,omitempty"`
	ClientCPUus   float64        `json:"client_cpu_us_per_req,omitempty"`
	MeanBlockRows float64        `json:"mean_block_rows,omitempty"`

	BestReqPerSec   int    `json:"best_req_per_sec,omitempty"`
	FailedReqPerSec int    `json:"failed_req_per_sec,omitempty"`
	FailedWhy       string `json:"failed_why,omitempty"`

	Reloads         int     `json:"reloads,omitempty"`
	ReloadErrors    int     `json:"reload_errors,omitempty"`
	GoroutinesStart int     `json:"goroutines_start,omitempty"`
	GoroutinesEnd   int     `json:"goroutines_end,omitempty"`
	GoroutinesMax   int     `json:"goroutines_max,omitempty"`
	RSSStartMiB     float64 `json:"rss_mib_start,omitempty"`
	RSSEndMiB       float64 `json:"rss_mib_end,omitempty"`
	RSSMaxMiB       float64 `json:"rss_mib_max,omitempty"`
}

// bench is one run: the configuration, its scratch folder and the results.
type bench struct {
	c       config
	tmp     string
	out     *os.File
	results []result
}

func (b *bench) add(r result) error {
	b.results = append(b.results, r)
	fmt.Fprintf(os.Stderr, "%s: %s -> %s\n", r.Case, r.Measured, r.Verdict)
	if b.out == nil {
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = b.out.Write(append(line, '\n'))
	return err
}

func run(c config, stdout io.Writer) (err error) {
	b := &bench{c: c}
	if b.tmp, err = os.MkdirTemp("", "zonal-bench-serve-"); err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	if c.out != "" {
		if b.out, err = os.Create(c.out); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, b.out.Close()) }()
	}
	ts, err := loadData(c)
	if err != nil {
		return err
	}
	first := true
	for _, name := range c.models {
		if name == modelFloor || name == modelFloorFalkon {
			var p *solvers.Pipeline
			if name == modelFloorFalkon {
				if p, _, err = model(c, ts, modelFalkon); err != nil {
					return err
				}
			}
			srv, err := startFloor(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%s: the bare transports (a model: %v)\n", name, p != nil)
			if err := errors.Join(b.cases(ts, name, srv, false), srv.stop()); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		start := time.Now()
		p, file, err := model(c, ts, name)
		if err != nil {
			return err
		}
		acc, err := accuracy(p, ts)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %s (ready in %.1f s), test accuracy %.4f\n", name, file, time.Since(start).Seconds(), acc)
		runtime.GC()
		if err := b.model(ts, name, p, file, first); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		first = false
	}
	writeTable(stdout, b.results)
	fmt.Fprintf(stdout, "\nmachine: %s/%s, %d CPUs, GOMAXPROCS %d, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	return nil
}

func writeTable(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| case | goal | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.Case, r.Goal, r.Measured, r.Verdict)
	}
}

// server is one model served on loopback over HTTP and gRPC, with the
// defaults of `zonal serve` (dynamic batching on) and POST /v1/reload.
type server struct {
	s        *serve.Server
	hs       *http.Server
	gs       *grpc.Server
	httpBase string
	grpcAddr string
}

func startServer(p *solvers.Pipeline, file string, c config) (*server, error) {
	s, err := serve.New(p, serve.Options{Name: modelName, ModelFile: file, ReloadEndpoint: true, MaxBatch: c.maxBatch, BatchDelay: c.batchDelay,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	srv, err := listenAndServe(s, s.HTTPServer(""), s.GRPCServer())
	if err != nil {
		s.Close()
	}
	return srv, err
}

// listenAndServe serves hs and gs on two loopback ports of their own; s
// is the model server behind them (nil for the floor), closed by stop.
func listenAndServe(s *serve.Server, hs *http.Server, gs *grpc.Server) (*server, error) {
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hl.Close()
		return nil, err
	}
	hs.Addr = hl.Addr().String()
	srv := &server{s: s, hs: hs, gs: gs, httpBase: "http://" + hl.Addr().String(), grpcAddr: gl.Addr().String()}
	go func() { _ = srv.hs.Serve(hl) }()
	go func() { _ = srv.gs.Serve(gl) }()
	return srv, nil
}

// stop stops the gRPC and HTTP servers (in-flight calls get 5 s each) and
// then the model server.
func (srv *server) stop() error {
	done := make(chan struct{})
	go func() { srv.gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		srv.gs.Stop()
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.hs.Shutdown(ctx)
	if srv.s != nil {
		err = errors.Join(err, srv.s.Close())
	}
	return err
}

// model runs every case of one model; soak says to run the soaks too.
func (b *bench) model(ts *trainSet, name string, p *solvers.Pipeline, file string, soak bool) (err error) {
	srv, err := startServer(p, file, b.c)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.stop()) }()
	return b.cases(ts, name, srv, soak)
}

// cases runs every case of one server (a model's, or the floor's).
func (b *bench) cases(ts *trainSet, name string, srv *server, soak bool) error {
	c := b.c
	if c.warmup > 0 {
		if _, err := b.load(srv, ts, protoJSON, 1, c.lowRate, c.warmup, ""); err != nil {
			return err
		}
	}
	for _, proto := range c.protocols {
		for _, rows := range []int{1, c.batchRows} {
			what := fmt.Sprintf("%s %s %d-row", name, proto, rows)
			rate := c.lowRate
			if rows > 1 {
				rate = c.lowRateBatch
			}
			if !c.skipLow {
				prof := ""
				if c.cpuProfile != "" {
					prof = profileName(c.cpuProfile, name, proto, rows)
				}
				pt, err := b.load(srv, ts, proto, rows, rate, c.duration, prof)
				if err != nil {
					return err
				}
				r := pt.result(name, proto, rows, "low-load")
				r.Case = fmt.Sprintf("%s: p99 at %d req/s", what, rate)
				r.Goal = fmt.Sprintf("p99 < %v, no errors", c.p99Goal)
				r.Measured = fmt.Sprintf("p50 %.2f ms, p99 %.2f ms, success %.4f of %d", r.P50ms, r.P99ms, r.Success, r.Requests)
				r.Verdict = verdict(held(c, pt) == "")
				if err := b.add(r); err != nil {
					return err
				}
				r.Kind = "cpu"
				r.Case = fmt.Sprintf("%s: server CPU per request at %d req/s", what, rate)
				r.Goal = "reported (all of the server process's CPU time / requests)"
				r.Measured = fmt.Sprintf("%.0f µs/request (%.1f µs/row)", r.ServerCPUus, r.ServerCPUus/float64(rows))
				r.Verdict = "reported"
				if err := b.add(r); err != nil {
					return err
				}
			}
			if !c.skipSearch {
				r, err := b.search(srv, ts, name, proto, rows)
				if err != nil {
					return err
				}
				r.Case = what + ": highest rate"
				if err := b.add(r); err != nil {
					return err
				}
			}
		}
	}
	if soak && !c.skipSoak {
		for _, proto := range c.protocols {
			r, err := b.soak(srv, ts, name, proto)
			if err != nil {
				return err
			}
			if err := b.add(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// startProfile starts a CPU profile of this process into file (see
// -cpuprofile) and returns the function that stops it and closes the
// file; with no file it does nothing.
func startProfile(file string) (stop func() error, err error) {
	if file == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// profileName is file with -model-proto-rows inserted before its extension.
func profileName(file, model, proto string, rows int) string {
	ext := filepath.Ext(file)
	return fmt.Sprintf("%s-%s-%s-%d%s", strings.TrimSuffix(file, ext), model, proto, rows, ext)
}

func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// point is one load's outcome, as the client and the server saw it.
type point struct {
	rate, rows           int
	requests             uint64
	p50, p99, max        time.Duration
	success              float64
	codes                map[string]int
	errs                 []string
	serverCPU, clientCPU time.Duration
	blocks, blockRowsSum float64
}

func (pt point) result(model, proto string, rows int, kind string) result {
	r := result{Kind: kind, Model: model, Protocol: proto, Rows: rows, ReqPerSec: pt.rate, Requests: pt.requests,
		P50ms: ms(pt.p50), P99ms: ms(pt.p99), Maxms: ms(pt.max), Success: pt.success, StatusCodes: pt.codes, Errors: pt.errs}
	if pt.requests > 0 {
		r.ServerCPUus = float64(pt.serverCPU.Nanoseconds()) / 1e3 / float64(pt.requests)
		r.ClientCPUus = float64(pt.clientCPU.Nanoseconds()) / 1e3 / float64(pt.requests)
	}
	if pt.blocks > 0 {
		r.MeanBlockRows = pt.blockRowsSum / pt.blocks
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// held is "" when pt meets the goal (p99 under -p99, every request
// answered 2xx), else why not.
func held(c config, pt point) string {
	switch {
	case pt.requests == 0:
		return "no requests"
	case pt.success < 1:
		return fmt.Sprintf("success %.4f %v", pt.success, pt.codes)
	case pt.p99 >= c.p99Goal:
		return fmt.Sprintf("p99 %.1f ms", ms(pt.p99))
	}
	return ""
}

// load sends rate requests/s of rows rows each over proto to srv for du,
// from the load child, and reads the server's CPU time and block sizes
// around it; with a profile file name, it writes the CPU profile of this
// process over the same span (the load child's run, not the making of the
// requests).
func (b *bench) load(srv *server, ts *trainSet, proto string, rows, rate int, du time.Duration, profile string) (point, error) {
	c := b.c
	n, d := ts.test.Dims()
	count := max(1, min(256, 4096/rows)) // distinct requests, cycled
	blocks := make([][]float64, count)
	for i := range blocks {
		x := make([]float64, 0, rows*d)
		for r := range rows {
			x = append(x, ts.test.RawRowView((i*rows+r)%n)...)
		}
		blocks[i] = x
	}
	spec := loadSpec{Protocol: proto, Rate: rate, Duration: du, MaxWorkers: c.maxWorkers, Conns: c.grpcConns, HTTPBuffer: c.httpBuffer, Timeout: c.timeout, FP32: c.fp32, D: d}
	switch proto {
	case protoGRPC, protoGRPCTyped:
		spec.Target, spec.Blocks = srv.grpcAddr, blocks
	default:
		spec.Target = srv.httpBase + "/v2/models/" + modelName + "/infer"
		if proto == protoJSON {
			spec.Target = srv.httpBase + "/v1/predict"
		}
		var err error
		if spec.Bodies, spec.HeaderLen, err = requests(proto, blocks, d, c.fp32); err != nil {
			return point{}, err
		}
	}
	blocks0, rows0 := blockStats(srv.s)
	stopProfile, err := startProfile(profile)
	if err != nil {
		return point{}, err
	}
	m, server, client, err := runLoad(spec, b.tmp)
	if err = errors.Join(err, stopProfile()); err != nil {
		return point{}, err
	}
	blocks1, rows1 := blockStats(srv.s)
	errs := m.Errors
	if len(errs) > 5 {
		errs = errs[:5]
	}
	return point{rate: rate, rows: rows, requests: m.Requests, p50: m.Latencies.P50, p99: m.Latencies.P99, max: m.Latencies.Max,
		success: m.Success, codes: m.StatusCodes, errs: errs, serverCPU: server, clientCPU: client,
		blocks: blocks1 - blocks0, blockRowsSum: rows1 - rows0}, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// blockStats reads the batcher's block count and rows from the registry.
func blockStats(s *serve.Server) (blocks, rows float64) {
	if s == nil {
		return 0, 0
	}
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

// search doubles the request rate from -search-start rows/s while the
// goal is held, up to -search-max rows/s, then bisects -search-steps
// times between the last rate held and the first one lost. Rates are
// requests/s of rows rows each.
func (b *bench) search(srv *server, ts *trainSet, model, proto string, rows int) (result, error) {
	c := b.c
	var best, failed int
	var bestPt point
	var why string
	probe := func(rate int) (bool, error) {
		pt, err := b.load(srv, ts, proto, rows, rate, c.searchDuration, "")
		if err != nil {
			return false, err
		}
		w := held(c, pt)
		fmt.Fprintf(os.Stderr, "  search %s %s %d-row: %d req/s -> p99 %.2f ms, success %.4f\n", model, proto, rows, rate, ms(pt.p99), pt.success)
		if w == "" {
			if rate > best {
				best, bestPt = rate, pt
			}
			return true, nil
		}
		if failed == 0 || rate < failed {
			failed, why = rate, w
		}
		return false, nil
	}
	hi := max(1, c.searchMax/rows)
	for rate := max(1, c.searchStart/rows); rate <= hi; rate *= 2 {
		ok, err := probe(rate)
		if err != nil {
			return result{}, err
		}
		if !ok {
			break
		}
	}
	for i := 0; i < c.searchSteps && failed > 0 && best > 0 && failed-best > max(1, best/20); i++ {
		if _, err := probe((best + failed) / 2); err != nil {
			return result{}, err
		}
	}
	r := bestPt.result(model, proto, rows, "search")
	r.BestReqPerSec, r.FailedReqPerSec, r.FailedWhy = best, failed, why
	r.Goal = fmt.Sprintf("highest rate with p99 < %v and no errors (searched %d..%d rows/s)", c.p99Goal, max(1, c.searchStart/rows)*rows, hi*rows)
	lost := "held up to the top of the search"
	if failed > 0 {
		lost = fmt.Sprintf("lost at %d req/s: %s", failed, why)
	}
	if best == 0 {
		r.Measured = "not held at the first rate; " + lost
	} else {
		r.Measured = fmt.Sprintf("%d req/s = %d rows/s (p99 %.2f ms); %s", best, best*rows, r.P99ms, lost)
	}
	r.Verdict = verdict(best > 0)
	return r, nil
}

// soak sends -soak-rate single-row requests/s over proto for -soak while
// a goroutine POSTs /v1/reload every -reload-every, and samples the
// goroutines and RSS of this process (the server's) every 100 ms.
func (b *bench) soak(srv *server, ts *trainSet, model, proto string) (result, error) {
	c := b.c
	runtime.GC()
	g0, rss0 := runtime.NumGoroutine(), rss()
	gMax, rssMax := g0, rss0
	reloads, reloadErrs := 0, 0
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		// No keep-alive: an idle reload connection would hold goroutines
		// on both sides past the end of the soak.
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		sample, reload := time.NewTicker(100*time.Millisecond), time.NewTicker(c.reloadEvery)
		defer sample.Stop()
		defer reload.Stop()
		for {
			select {
			case <-stop:
				return
			case <-sample.C:
				gMax, rssMax = max(gMax, runtime.NumGoroutine()), max(rssMax, rss())
			case <-reload.C:
				reloads++
				if err := postReload(hc, srv.httpBase); err != nil {
					reloadErrs++
					fmt.Fprintln(os.Stderr, "soak reload:", err)
				}
			}
		}
	}()
	pt, err := b.load(srv, ts, proto, 1, c.soakRate, c.soak, "")
	close(stop)
	<-done
	if err != nil {
		return result{}, err
	}
	// The load child has exited, so its connections are closed; the
	// server's goroutines for them end soon after. Wait for that, for at
	// most 5 s.
	g1 := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); g1 > g0 && time.Now().Before(deadline); g1 = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	runtime.GC()
	rss1 := rss()
	gMax, rssMax = max(gMax, g1), max(rssMax, rss1)
	r := pt.result(model, proto, 1, "soak")
	r.Reloads, r.ReloadErrors = reloads, reloadErrs
	r.GoroutinesStart, r.GoroutinesEnd, r.GoroutinesMax = g0, g1, gMax
	r.RSSStartMiB, r.RSSEndMiB, r.RSSMaxMiB = rss0, rss1, rssMax
	r.Case = fmt.Sprintf("%s %s soak: %v at %d req/s, reload every %v", model, proto, c.soak, c.soakRate, c.reloadEvery)
	r.Goal = "no errors or failed reloads; goroutines back to the start; RSS at the end <= 1.5 x the start"
	failed := pt.requests - uint64(float64(pt.requests)*pt.success+0.5)
	r.Measured = fmt.Sprintf("%d requests, %d errors, p99 %.2f ms, %d reloads (%d failed), goroutines %d -> %d (max %d), RSS %.0f -> %.0f MiB (max %.0f)",
		pt.requests, failed, r.P99ms, reloads, reloadErrs, g0, g1, gMax, rss0, rss1, rssMax)
	// The heap may grow to twice the live heap (GOGC = 100) and freed pages
	// go back to the OS lazily, so only growth beyond half again counts.
	r.Verdict = verdict(pt.requests > 0 && failed == 0 && reloadErrs == 0 && g1 <= g0 && rss1 <= 1.5*rss0)
	return r, nil
}

func postReload(hc *http.Client, base string) error {
	resp, err := hc.Post(base+"/v1/reload", "application/json", nil)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/reload: %s: %s", resp.Status, body)
	}
	return nil
}

// rss is this process's resident set size in MiB (Linux /proc/self/statm).
func rss() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize()) / (1 << 20)
}

//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zonal-ml/zonal/serve/oip"
)

// Protocols of -protocol.
const (
	protoJSON      = "json"       // POST /v1/predict {"rows": [[...]]}
	protoV2        = "v2"         // POST /v2/models/m/infer, the tensor in JSON "data"
	protoBinary    = "binary"     // the same with the binary tensor data extension
	protoGRPC      = "grpc"       // ModelInfer with raw_input_contents
	protoGRPCTyped = "grpc-typed" // ModelInfer with fp64_contents / fp32_contents
)

var allProtocols = []string{protoJSON, protoV2, protoBinary, protoGRPC, protoGRPCTyped}

// modelName is the served model's name in the v2 routes and gRPC.
const modelName = "m"

// loadSpec is what the load child is told: where to send what, how fast
// and for how long. The parent writes it (gob) to a file.
type loadSpec struct {
	Protocol   string
	Target     string // URL (HTTP) or host:port (gRPC); loopback only
	Rate       int    // requests per second
	Duration   time.Duration
	MaxWorkers int // most requests in flight
	Conns      int // gRPC connections
	HTTPBuffer int // the HTTP client's read and write buffers, bytes (0: net/http's 4 KiB)
	Timeout    time.Duration
	FP32       bool
	D          int
	Bodies     [][]byte    // HTTP bodies
	HeaderLen  []int       // binary: the JSON length of each body
	Blocks     [][]float64 // gRPC: the rows of each request, row-major
}

// childResult is what the load child prints.
type childResult struct {
	Metrics vegeta.Metrics `json:"metrics"`
}

// requests builds the requests of protocol p: one per block of rows
// (row-major, d values per row).
func requests(p string, blocks [][]float64, d int, fp32 bool) (bodies [][]byte, hlen []int, err error) {
	dt := "FP64"
	if fp32 {
		dt = "FP32"
	}
	for _, x := range blocks {
		n := len(x) / d
		var b []byte
		switch p {
		case protoJSON:
			rows := make([][]float64, n)
			for i := range rows {
				rows[i] = x[i*d : (i+1)*d]
			}
			b, err = json.Marshal(map[string]any{"rows": rows})
		case protoV2:
			b, err = json.Marshal(map[string]any{
				"inputs":  []any{map[string]any{"name": "x", "datatype": dt, "shape": []int{n, d}, "data": x}},
				"outputs": []any{map[string]any{"name": "predictions"}},
			})
		case protoBinary:
			raw := rawBytes(x, fp32)
			b, err = json.Marshal(map[string]any{
				"inputs":  []any{map[string]any{"name": "x", "datatype": dt, "shape": []int{n, d}, "parameters": map[string]any{"binary_data_size": len(raw)}}},
				"outputs": []any{map[string]any{"name": "predictions", "parameters": map[string]any{"binary_data": true}}},
			})
			hlen = append(hlen, len(b))
			b = append(b, raw...)
		default:
			return nil, nil, fmt.Errorf("protocol %q has no HTTP body", p)
		}
		if err != nil {
			return nil, nil, err
		}
		bodies = append(bodies, b)
	}
	return bodies, hlen, nil
}

// rawBytes is x as little-endian FP64 or FP32 values.
func rawBytes(x []float64, fp32 bool) []byte {
	var b []byte
	for _, v := range x {
		if fp32 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// grpcRequest is the ModelInfer request of protocol p for the rows x.
func grpcRequest(p string, x []float64, d int, fp32 bool) *oip.ModelInferRequest {
	n := len(x) / d
	in := &oip.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{int64(n), int64(d)}}
	if fp32 {
		in.Datatype = "FP32"
	}
	req := &oip.ModelInferRequest{ModelName: modelName, Inputs: []*oip.ModelInferRequest_InferInputTensor{in},
		Outputs: []*oip.ModelInferRequest_InferRequestedOutputTensor{{Name: "predictions"}}}
	switch {
	case p == protoGRPC:
		req.RawInputContents = [][]byte{rawBytes(x, fp32)}
	case fp32:
		in.Contents = &oip.InferTensorContents{Fp32Contents: make([]float32, len(x))}
		for i, v := range x {
			in.Contents.Fp32Contents[i] = float32(v)
		}
	default:
		in.Contents = &oip.InferTensorContents{Fp64Contents: x}
	}
	return req
}

// runLoad runs the load child (this binary, re-executed) with spec and
// returns its metrics, the CPU time of this process (the server's) while
// the child ran, and the child's.
func runLoad(spec loadSpec, dir string) (m *vegeta.Metrics, server, client time.Duration, err error) {
	f, err := os.CreateTemp(dir, "spec-*.gob")
	if err != nil {
		return nil, 0, 0, err
	}
	defer os.Remove(f.Name())
	err = gob.NewEncoder(f).Encode(spec)
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, 0, 0, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, 0, err
	}
	// The child's own bound: the attack, then its timeout for the last
	// requests, plus a margin for starting and connecting.
	ctx, cancel := context.WithTimeout(context.Background(), spec.Duration+spec.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, childFlag, f.Name())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // the child ends with this process
	cpu0 := cpuTime()
	err = cmd.Run()
	server = cpuTime() - cpu0
	if err != nil {
		return nil, 0, 0, fmt.Errorf("load child: %w", err)
	}
	var res childResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, 0, 0, fmt.Errorf("load child output: %w", err)
	}
	return &res.Metrics, server, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// childFlag is the first argument that makes this binary the load child.
const childFlag = "-load-child"

// loadChild reads the spec file and runs the load it describes; it prints
// {"metrics": ...}.
func loadChild(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	var spec loadSpec
	err = gob.NewDecoder(f).Decode(&spec)
	f.Close()
	if err != nil {
		return fmt.Errorf("spec %s: %w", path, err)
	}
	if err := checkSpec(spec); err != nil {
		return err
	}
	var m *vegeta.Metrics
	switch spec.Protocol {
	case protoGRPC, protoGRPCTyped:
		m, err = grpcLoad(spec)
	default:
		m, err = httpLoad(spec)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(childResult{Metrics: *m})
}

// checkSpec refuses anything but loopback and bounded loads.
func checkSpec(s loadSpec) error {
	host := s.Target
	if u, err := url.Parse(s.Target); err == nil && u.Host != "" {
		host = u.Host
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil || h != "127.0.0.1" {
		return fmt.Errorf("target %q: only 127.0.0.1 is loaded", s.Target)
	}
	if s.Rate < 1 || s.Rate > 1_000_000 || s.Duration <= 0 || s.Duration > time.Hour || s.MaxWorkers < 1 || s.Timeout <= 0 {
		return fmt.Errorf("bad load: rate %d req/s, duration %v, %d workers, timeout %v", s.Rate, s.Duration, s.MaxWorkers, s.Timeout)
	}
	if len(s.Bodies) == 0 && len(s.Blocks) == 0 {
		return errors.New("no requests to send")
	}
	return nil
}

// httpLoad attacks spec.Target with vegeta, cycling over the bodies.
func httpLoad(spec loadSpec) (*vegeta.Metrics, error) {
	targets := make([]vegeta.Target, len(spec.Bodies))
	for i, b := range spec.Bodies {
		h := http.Header{"Content-Type": []string{"application/json"}}
		if spec.Protocol == protoBinary {
			h = http.Header{"Content-Type": []string{"application/octet-stream"}, "Inference-Header-Content-Length": []string{strconv.Itoa(spec.HeaderLen[i])}}
		}
		targets[i] = vegeta.Target{Method: http.MethodPost, URL: spec.Target, Body: b, Header: h}
	}
	// The transport vegeta would make (its dialer's keep-alive), with the
	// buffers of -http-buffer; the options after it set the rest as usual.
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: dialer.DialContext,
		WriteBufferSize: spec.HTTPBuffer, ReadBufferSize: spec.HTTPBuffer}
	atk := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: tr}), vegeta.Timeout(spec.Timeout), vegeta.KeepAlive(true), vegeta.MaxWorkers(uint64(spec.MaxWorkers)),
		vegeta.Connections(min(spec.MaxWorkers, 10000)), vegeta.MaxBody(1<<20))
	var m vegeta.Metrics
	for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{Freq: spec.Rate, Per: time.Second}, spec.Duration, "zonal") {
		m.Add(res)
	}
	m.Close()
	return &m, nil
}

// grpcLoad is an open-loop load on a pool of spec.Conns connections: the
// i-th call is sent at start + i/rate (whether or not earlier calls have
// been answered, as vegeta does), ceil(rate x duration) calls in all, at most
// spec.MaxWorkers in flight (a call due while that many are in flight
// waits for one to finish, as vegeta's workers do). Each call's latency
// runs from its sending to its answer and goes into vegeta's Metrics (its
// t-digest quantiles), so that gRPC and HTTP figures are computed alike.
// An answer other than OK is a failure, counted under the HTTP code of
// the same meaning (Unavailable 503, InvalidArgument 400, DeadlineExceeded
// 504, ResourceExhausted 413, others 500).
func grpcLoad(spec loadSpec) (*vegeta.Metrics, error) {
	conns := make([]oip.GRPCInferenceServiceClient, max(1, spec.Conns))
	for i := range conns {
		cc, err := grpc.NewClient(spec.Target, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
		if err != nil {
			return nil, err
		}
		defer cc.Close()
		conns[i] = oip.NewGRPCInferenceServiceClient(cc)
		// Connect before the clock starts (NewClient connects on the
		// first call): the HTTP/2 handshake is not a request's latency.
		ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
		_, err = conns[i].ServerLive(ctx, &oip.ServerLiveRequest{})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("gRPC connection %d to %s: %w", i, spec.Target, err)
		}
	}
	reqs := make([]*oip.ModelInferRequest, len(spec.Blocks))
	for i, x := range spec.Blocks {
		reqs[i] = grpcRequest(spec.Protocol, x, spec.D, spec.FP32)
	}
	// As vegeta: a call at 0, 1/rate, 2/rate, ... while before the end.
	total := int(math.Ceil(float64(spec.Rate) * spec.Duration.Seconds()))
	results := make(chan *vegeta.Result, 1024)
	var m vegeta.Metrics
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for r := range results {
			m.Add(r)
		}
	}()
	sem := make(chan struct{}, spec.MaxWorkers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		if d := time.Until(start.Add(time.Duration(float64(i) / float64(spec.Rate) * float64(time.Second)))); d > 0 {
			time.Sleep(d)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
			defer cancel()
			t0 := time.Now()
			_, err := conns[i%len(conns)].ModelInfer(ctx, reqs[i%len(reqs)])
			r := &vegeta.Result{Attack: "zonal", Seq: uint64(i), Timestamp: t0, Latency: time.Since(t0), Code: 200, Method: "ModelInfer", URL: spec.Target}
			if err != nil {
				r.Code, r.Error = grpcCode(err), err.Error()
			}
			results <- r
		}(i)
	}
	wg.Wait()
	close(results)
	<-collected
	m.Close()
	return &m, nil
}

func grpcCode(err error) uint16 {
	switch status.Code(err) {
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

package serve_test

// The gRPC service tested from outside: the server through serve's API
// (New, GRPCServer, ServeHTTP), the calls through the client generated
// from open_inference_grpc.proto (package oip) only.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/serve/oip"
	"github.com/zonal-ml/zonal/solvers"
)

const gd = 5 // features of the test models

// falkonModel is a 3-class FALKON classifier on gd features.
func falkonModel(t testing.TB, seed uint64) *solvers.Pipeline {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	n := 150
	x := mat.NewDense(n, gd, nil)
	labels := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < gd; j++ {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			s += v
		}
		labels[i] = float64(int(math.Abs(s)) % 3)
	}
	enc, err := solvers.NewEncoding(labels, solvers.TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	y, err := enc.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernels.NewGaussian(2)
	if err != nil {
		t.Fatal(err)
	}
	f, err := solvers.FitFalkon(context.Background(), k, x, y, 1e-4, solvers.FalkonOptions{Centers: 30, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	p, err := solvers.NewPipeline(nil, enc, f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// blockModel is a regression model on gd inputs answering the row's sum;
// a row starting with 99 blocks until release is closed.
type blockModel struct{ entered, release chan struct{} }

func (m *blockModel) Kind() string  { return "block" }
func (m *blockModel) InputDim() int { return gd }
func (m *blockModel) Outputs() int  { return 1 }
func (m *blockModel) Predict(dst *mat.Dense, x mat.Matrix) error {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		if x.At(i, 0) == 99 {
			m.entered <- struct{}{}
			<-m.release
		}
		s := 0.0
		for j := 0; j < gd; j++ {
			s += x.At(i, j)
		}
		dst.Set(i, 0, s)
	}
	return nil
}

type rig struct {
	srv    *serve.Server
	gs     *grpc.Server
	client oip.GRPCInferenceServiceClient
	http   *httptest.Server
}

// start serves p over gRPC (on a local port) and HTTP.
func start(t *testing.T, p *solvers.Pipeline, opts serve.Options) *rig {
	t.Helper()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := s.GRPCServer()
	go gs.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		conn.Close()
		gs.Stop()
		hs.Close()
		s.Close()
	})
	return &rig{srv: s, gs: gs, client: oip.NewGRPCInferenceServiceClient(conn), http: hs}
}

func rows(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := make([]float64, n*gd)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// restAnswer is the REST v2 answer to rows x in datatype dt: the
// predictions and outputs tensors' data.
func restAnswer(t *testing.T, url string, x []float64, dt string) ([]float64, []float64) {
	t.Helper()
	data, _ := json.Marshal(x)
	body := fmt.Sprintf(`{"inputs": [{"name": "x", "datatype": %q, "shape": [%d, %d], "data": %s}]}`, dt, len(x)/gd, gd, data)
	resp, err := http.Post(url+"/v2/models/model/infer", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		Outputs []struct{ Data []float64 }
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 || len(a.Outputs) != 2 {
		t.Fatalf("REST answer: %d %v %+v", resp.StatusCode, err, a)
	}
	return a.Outputs[0].Data, a.Outputs[1].Data
}

// inferRequest builds a ModelInfer request of rows x as dt, in typed
// contents or raw.
func inferRequest(x []float64, dt string, raw bool) *oip.ModelInferRequest {
	in := &oip.ModelInferRequest_InferInputTensor{Name: "x", Datatype: dt, Shape: []int64{int64(len(x) / gd), gd}}
	req := &oip.ModelInferRequest{ModelName: "model", Id: "r1", Inputs: []*oip.ModelInferRequest_InferInputTensor{in}}
	switch {
	case raw && dt == "FP32":
		var b []byte
		for _, v := range x {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
		req.RawInputContents = [][]byte{b}
	case raw:
		var b []byte
		for _, v := range x {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		req.RawInputContents = [][]byte{b}
	case dt == "FP32":
		in.Contents = &oip.InferTensorContents{}
		for _, v := range x {
			in.Contents.Fp32Contents = append(in.Contents.Fp32Contents, float32(v))
		}
	default:
		in.Contents = &oip.InferTensorContents{Fp64Contents: x}
	}
	return req
}

// tensors returns the data of the answer's tensors, typed or raw.
func tensors(t *testing.T, resp *oip.ModelInferResponse) (raw bool, data [][]float64) {
	t.Helper()
	raw = len(resp.GetRawOutputContents()) > 0
	for i, o := range resp.GetOutputs() {
		var v []float64
		switch {
		case raw && o.GetDatatype() == "FP32":
			b := resp.GetRawOutputContents()[i]
			for j := 0; j+4 <= len(b); j += 4 {
				v = append(v, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[j:]))))
			}
		case raw:
			b := resp.GetRawOutputContents()[i]
			for j := 0; j+8 <= len(b); j += 8 {
				v = append(v, math.Float64frombits(binary.LittleEndian.Uint64(b[j:])))
			}
		case o.GetDatatype() == "FP32":
			for _, f := range o.GetContents().GetFp32Contents() {
				v = append(v, float64(f))
			}
		default:
			v = o.GetContents().GetFp64Contents()
		}
		data = append(data, v)
	}
	return raw, data
}

// equal compares exactly; for FP32 as float32 (REST writes the shortest
// decimal of the float32, which parses back to it).
func equal(a, b []float64, fp32 bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && (!fp32 || float32(a[i]) != float32(b[i])) {
			return false
		}
	}
	return true
}

// Every RPC of inference.GRPCInferenceService answers; ModelInfer with
// typed contents and with raw_input_contents, FP64 and FP32, gives the
// same numbers as each other and as REST, raw answers for raw requests
// (or as binary_data_output asks).
func TestGRPCService(t *testing.T) {
	p := falkonModel(t, 1)
	r := start(t, p, serve.Options{Version: "7"})
	ctx := context.Background()
	if a, err := r.client.ServerLive(ctx, &oip.ServerLiveRequest{}); err != nil || !a.GetLive() {
		t.Errorf("ServerLive: %v %v", a, err)
	}
	if a, err := r.client.ServerReady(ctx, &oip.ServerReadyRequest{}); err != nil || !a.GetReady() {
		t.Errorf("ServerReady: %v %v", a, err)
	}
	for _, v := range []string{"", "7"} {
		if a, err := r.client.ModelReady(ctx, &oip.ModelReadyRequest{Name: "model", Version: v}); err != nil || !a.GetReady() {
			t.Errorf("ModelReady %q: %v %v", v, a, err)
		}
	}
	if _, err := r.client.ModelReady(ctx, &oip.ModelReadyRequest{Name: "other"}); status.Code(err) != codes.NotFound {
		t.Errorf("ModelReady of an unknown model: %v", err)
	}
	if _, err := r.client.ModelMetadata(ctx, &oip.ModelMetadataRequest{Name: "model", Version: "6"}); status.Code(err) != codes.NotFound {
		t.Errorf("ModelMetadata of an unknown version: %v", err)
	}
	if a, err := r.client.ServerMetadata(ctx, &oip.ServerMetadataRequest{}); err != nil || a.GetName() != "zonal" {
		t.Errorf("ServerMetadata: %v %v", a, err)
	}
	md, err := r.client.ModelMetadata(ctx, &oip.ModelMetadataRequest{Name: "model"})
	if err != nil || md.GetPlatform() != "zonal_falkon" || fmt.Sprint(md.GetVersions()) != "[7]" || len(md.GetInputs()) != 1 ||
		fmt.Sprint(md.GetInputs()[0].GetShape()) != fmt.Sprintf("[-1 %d]", gd) || len(md.GetOutputs()) != 2 || fmt.Sprint(md.GetOutputs()[1].GetShape()) != "[-1 3]" {
		t.Errorf("ModelMetadata: %v %v", md, err)
	}

	for _, n := range []int{1, 7} {
		x := rows(n, uint64(n))
		for _, dt := range []string{"FP64", "FP32"} {
			wantPred, wantOut := restAnswer(t, r.http.URL, x, dt)
			for _, raw := range []bool{false, true} {
				for _, override := range []string{"", "typed", "raw"} {
					req := inferRequest(x, dt, raw)
					if override != "" {
						req.Parameters = map[string]*oip.InferParameter{"binary_data_output": {ParameterChoice: &oip.InferParameter_BoolParam{BoolParam: override == "raw"}}}
					}
					resp, err := r.client.ModelInfer(ctx, req)
					if err != nil {
						t.Fatalf("%d rows %s raw %v: %v", n, dt, raw, err)
					}
					gotRaw, data := tensors(t, resp)
					if wantRaw := raw && override != "typed" || override == "raw"; gotRaw != wantRaw {
						t.Errorf("%d rows %s raw %v %q: raw answer %v, want %v", n, dt, raw, override, gotRaw, wantRaw)
					}
					o := resp.GetOutputs()
					if resp.GetModelName() != "model" || resp.GetModelVersion() != "7" || resp.GetId() != "r1" || len(o) != 2 ||
						o[0].GetName() != "predictions" || o[1].GetName() != "outputs" || o[0].GetDatatype() != dt ||
						fmt.Sprint(o[1].GetShape()) != fmt.Sprintf("[%d 3]", n) {
						t.Fatalf("%d rows %s raw %v: answer %v", n, dt, raw, resp)
					}
					if !equal(data[0], wantPred, dt == "FP32") || !equal(data[1], wantOut, dt == "FP32") {
						t.Errorf("%d rows %s raw %v %q: %v, REST %v %v", n, dt, raw, override, data, wantPred, wantOut)
					}
				}
			}
		}
	}
	// One requested output.
	req := inferRequest(rows(2, 3), "FP64", false)
	req.Outputs = []*oip.ModelInferRequest_InferRequestedOutputTensor{{Name: "outputs"}}
	if resp, err := r.client.ModelInfer(ctx, req); err != nil || len(resp.GetOutputs()) != 1 || resp.GetOutputs()[0].GetName() != "outputs" {
		t.Errorf("outputs only: %v %v", resp, err)
	}
	// The calls are timed and counted like REST's, with protocol="grpc".
	resp, err := http.Get(r.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		`zonal_request_duration_seconds_count{protocol="grpc",route="ModelInfer"} 25`,
		`zonal_compute_duration_seconds_count{protocol="grpc",route="ModelInfer"} 25`,
		`zonal_queue_duration_seconds_count{protocol="grpc",route="ModelInfer"} 25`,
		`zonal_serve_requests_total{code="OK",route="ServerLive"} 1`,
		`zonal_serve_requests_total{code="NotFound",route="ModelReady"} 1`,
	} {
		if !strings.Contains(string(b), line) {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// Bad requests are InvalidArgument (too many rows or too large a message:
// ResourceExhausted; an unknown model: NotFound) with a message naming
// the problem.
func TestGRPCErrors(t *testing.T) {
	p := falkonModel(t, 2)
	r := start(t, p, serve.Options{MaxRows: 10, MaxBodyBytes: 4000})
	ctx := context.Background()
	x := rows(2, 5)
	mod := func(f func(*oip.ModelInferRequest)) *oip.ModelInferRequest {
		req := inferRequest(x, "FP64", false)
		f(req)
		return req
	}
	in := func(req *oip.ModelInferRequest) *oip.ModelInferRequest_InferInputTensor { return req.Inputs[0] }
	for _, c := range []struct {
		name string
		req  *oip.ModelInferRequest
		code codes.Code
		msg  string
	}{
		{"wrong d", mod(func(r *oip.ModelInferRequest) { in(r).Shape = []int64{1, 10} }), codes.InvalidArgument, "[n, 5]"},
		{"1-d shape", mod(func(r *oip.ModelInferRequest) { in(r).Shape = []int64{10} }), codes.InvalidArgument, "[n, 5]"},
		{"no rows", mod(func(r *oip.ModelInferRequest) { in(r).Shape = []int64{0, gd} }), codes.InvalidArgument, "n >= 1"},
		{"3-d shape", mod(func(r *oip.ModelInferRequest) { in(r).Shape = []int64{1, 2, 5} }), codes.InvalidArgument, "has shape [1 2 5]"},
		{"shape against data", mod(func(r *oip.ModelInferRequest) { in(r).Shape = []int64{3, gd} }), codes.InvalidArgument, "fp64_contents has 10 values, shape [3, 5] needs 15"},
		{"int tensor", mod(func(r *oip.ModelInferRequest) { in(r).Datatype = "INT32" }), codes.InvalidArgument, `datatype "INT32"`},
		{"contents of another type", mod(func(r *oip.ModelInferRequest) {
			in(r).Contents = &oip.InferTensorContents{IntContents: make([]int32, 10)}
		}), codes.InvalidArgument, "int_contents; use fp64_contents"},
		{"raw of the wrong size", func() *oip.ModelInferRequest {
			req := inferRequest(x, "FP32", true)
			req.RawInputContents[0] = req.RawInputContents[0][:39]
			return req
		}(), codes.InvalidArgument, "raw_input_contents has 39 bytes; shape [2, 5] of FP32 needs 40"},
		{"raw and contents", mod(func(r *oip.ModelInferRequest) { r.RawInputContents = [][]byte{make([]byte, 80)} }), codes.InvalidArgument, "both contents"},
		{"two raw", mod(func(r *oip.ModelInferRequest) {
			in(r).Contents = nil
			r.RawInputContents = [][]byte{make([]byte, 80), make([]byte, 80)}
		}), codes.InvalidArgument, "2 raw_input_contents"},
		{"two inputs", mod(func(r *oip.ModelInferRequest) { r.Inputs = append(r.Inputs, r.Inputs[0]) }), codes.InvalidArgument, "2 input tensors"},
		{"no input", mod(func(r *oip.ModelInferRequest) { r.Inputs = nil }), codes.InvalidArgument, "0 input tensors"},
		{"NaN", mod(func(r *oip.ModelInferRequest) {
			in(r).Contents.Fp64Contents = append([]float64(nil), x...)
			in(r).Contents.Fp64Contents[7] = math.NaN()
		}), codes.InvalidArgument, "row 1, column 2 is not a finite FP64"},
		{"FP32 overflow", func() *oip.ModelInferRequest {
			req := inferRequest(x, "FP32", false)
			req.Inputs[0].Contents.Fp32Contents[1] = float32(math.Inf(1))
			return req
		}(), codes.InvalidArgument, "column 1 is not a finite FP32"},
		{"unknown output", mod(func(r *oip.ModelInferRequest) {
			r.Outputs = []*oip.ModelInferRequest_InferRequestedOutputTensor{{Name: "probs"}}
		}), codes.InvalidArgument, `unknown output "probs"`},
		{"bad parameter", mod(func(r *oip.ModelInferRequest) {
			r.Parameters = map[string]*oip.InferParameter{"binary_data_output": {ParameterChoice: &oip.InferParameter_Int64Param{Int64Param: 1}}}
		}), codes.InvalidArgument, "bool_param"},
		{"unknown model", mod(func(r *oip.ModelInferRequest) { r.ModelName = "other" }), codes.NotFound, `no model "other"`},
		{"too many rows", inferRequest(rows(11, 1), "FP32", true), codes.ResourceExhausted, "11 rows is over the limit of 10"},
		{"message too large", mod(func(r *oip.ModelInferRequest) { r.Id = strings.Repeat("x", 4000) }), codes.ResourceExhausted, "larger than max"},
	} {
		_, err := r.client.ModelInfer(ctx, c.req)
		if st, _ := status.FromError(err); st.Code() != c.code || !strings.Contains(st.Message(), c.msg) {
			t.Errorf("%s: %v, want %v with %q", c.name, err, c.code, c.msg)
		}
	}
}

// The gRPC calls share REST's limits and life cycle: with MaxInFlight
// calls admitted the next is Unavailable; concurrent single rows are
// batched and answered exactly; a swapped model answers at once;
// GracefulStop lets an in-flight call finish.
func TestGRPCLimitsAndLifecycle(t *testing.T) {
	m := &blockModel{entered: make(chan struct{}, 4), release: make(chan struct{})}
	bp, err := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, bp, serve.Options{MaxInFlight: 1, Workers: 1})
	ctx := context.Background()
	blocked := rows(2, 1)
	blocked[0] = 99
	done := make(chan error, 1)
	go func() {
		_, err := r.client.ModelInfer(ctx, inferRequest(blocked, "FP64", false))
		done <- err
	}()
	<-m.entered
	if _, err := r.client.ModelInfer(ctx, inferRequest(rows(1, 2), "FP64", false)); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "saturated") {
		t.Errorf("over MaxInFlight: %v, want Unavailable", err)
	}
	stopped := make(chan struct{})
	go func() {
		r.gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("GracefulStop returned with a call in flight")
	case <-time.After(50 * time.Millisecond): // not a timing assertion: a stop that waits passes either way
	}
	close(m.release)
	if err := <-done; err != nil {
		t.Errorf("in-flight call during GracefulStop: %v", err)
	}
	<-stopped

	p := falkonModel(t, 3)
	r2 := start(t, p, serve.Options{Workers: 1, BatchDelay: 5 * time.Millisecond})
	const n = 24
	x := rows(n, 4)
	wantPred, wantOut := restAnswer(t, r2.http.URL, x, "FP64") // 24 rows: predicted row by row, exact
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := r2.client.ModelInfer(ctx, inferRequest(x[i*gd:(i+1)*gd], "FP64", i%2 == 1))
			if err != nil {
				t.Errorf("row %d: %v", i, err)
				return
			}
			_, data := tensors(t, resp)
			if !equal(data[0], wantPred[i:i+1], false) || !equal(data[1], wantOut[3*i:3*i+3], false) {
				t.Errorf("row %d: %v, want %v %v", i, data, wantPred[i], wantOut[3*i:3*i+3])
			}
		}()
	}
	wg.Wait()
	q := falkonModel(t, 4)
	if err := r2.srv.Swap(q); err != nil {
		t.Fatal(err)
	}
	qPred, _ := restAnswer(t, r2.http.URL, x[:3*gd], "FP64")
	resp, err := r2.client.ModelInfer(ctx, inferRequest(x[:3*gd], "FP64", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, data := tensors(t, resp); !equal(data[0], qPred, false) {
		t.Errorf("after Swap: %v, want %v", data[0], qPred)
	}
	r2.srv.SetDraining(true)
	if a, err := r2.client.ServerReady(ctx, &oip.ServerReadyRequest{}); err != nil || a.GetReady() {
		t.Errorf("ServerReady while draining: %v %v", a, err)
	}
}

// BenchmarkServeGRPC: one ModelInfer call of 1 or 64 rows on the REST
// benchmark's model (d = 784, serve.BenchModel) over a loopback
// connection, typed fp64_contents and raw_input_contents (client and
// server in this process: the allocations are both sides').
func BenchmarkServeGRPC(b *testing.B) {
	p := serve.BenchModel(b)
	d := p.InputDim()
	s, err := serve.New(p, serve.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	gs := s.GRPCServer()
	go gs.Serve(ln)
	defer gs.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := oip.NewGRPCInferenceServiceClient(conn)
	for _, n := range []int{1, 64} {
		x := make([]float64, n*d)
		for i := range x {
			x[i] = float64(i % 256)
		}
		for _, raw := range []bool{false, true} {
			in := &oip.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{int64(n), int64(d)}}
			req := &oip.ModelInferRequest{ModelName: "model", Inputs: []*oip.ModelInferRequest_InferInputTensor{in}}
			if raw {
				var buf []byte
				for _, v := range x {
					buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
				}
				req.RawInputContents = [][]byte{buf}
			} else {
				in.Contents = &oip.InferTensorContents{Fp64Contents: x}
			}
			b.Run(fmt.Sprintf("raw=%v/rows=%d", raw, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := client.ModelInfer(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

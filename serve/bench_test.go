package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// benchWriter is an http.ResponseWriter that keeps the last answer and
// reuses its header map, so that a benchmark counts the server's own
// allocations and not a recorder's.
type benchWriter struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *benchWriter) reset() {
	clear(w.h)
	w.code = 0
	w.body.Reset()
}

// benchBody is a request body read again on every iteration.
type benchBody struct{ bytes.Reader }

func (b *benchBody) Close() error { return nil }

// benchModel is a FALKON classifier on d = 784 features (the digits data
// sets' width) with M = 200 centres, fitted on synthetic data: enough for
// the request path to be measured on the width it serves.
func benchModel(b *testing.B) *solvers.Pipeline {
	b.Helper()
	const d = 784
	x, y := synth(400, d, 21)
	return digitPipeline(b, x, y, 40, solvers.FalkonOptions{Centers: 200, Seed: 1})
}

// digitPipeline fits FALKON (Gaussian sigma, opts) on x with ten classes
// read off y (|3 y| mod 10): a classifier of the serving benchmarks' shape.
func digitPipeline(b *testing.B, x *mat.Dense, y []float64, sigma float64, opts solvers.FalkonOptions) *solvers.Pipeline {
	b.Helper()
	labels := make([]float64, len(y))
	for i, v := range y {
		labels[i] = float64(int(math.Abs(v*3)) % 10)
	}
	enc, err := solvers.NewEncoding(labels, solvers.TaskClassification)
	if err != nil {
		b.Fatal(err)
	}
	t, err := enc.Targets(labels)
	if err != nil {
		b.Fatal(err)
	}
	k, err := kernels.NewGaussian(sigma)
	if err != nil {
		b.Fatal(err)
	}
	f, err := solvers.FitFalkon(bg, k, x, t, 1e-6, opts)
	if err != nil {
		b.Fatal(err)
	}
	p, err := solvers.NewPipeline(nil, enc, f)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchRequests are the bodies of one request of n rows of pixel-like
// values (integers 0..255 and a few decimals) on each route.
func benchRequests(n, d int) map[string]struct {
	path   string
	body   []byte
	header http.Header
} {
	rows := make([][]float64, n)
	flat := make([]float64, 0, n*d)
	for i := range rows {
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			v := float64((i*31 + j*7) % 256)
			if j%10 == 0 {
				v /= 7
			}
			rows[i][j] = v
		}
		flat = append(flat, rows[i]...)
	}
	v1, _ := json.Marshal(map[string]any{"rows": rows})
	v2, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP64", "shape": []int{n, d}, "data": flat}}})
	hdr, _ := json.Marshal(map[string]any{
		"inputs":     []any{map[string]any{"name": "x", "datatype": "FP64", "shape": []int{n, d}, "parameters": map[string]any{"binary_data_size": 8 * n * d}}},
		"parameters": map[string]any{"binary_data_output": true},
	})
	bin := append([]byte(nil), hdr...)
	for _, v := range flat {
		bin = binary.LittleEndian.AppendUint64(bin, math.Float64bits(v))
	}
	type req = struct {
		path   string
		body   []byte
		header http.Header
	}
	return map[string]req{
		"v1":       {"/v1/predict", v1, http.Header{}},
		"v2":       {"/v2/models/model/infer", v2, http.Header{}},
		"v2binary": {"/v2/models/model/infer", bin, http.Header{headerLength: {strconv.Itoa(len(hdr))}}},
	}
}

// benchReq is one request of a benchmark: path, body and header.
type benchReq = struct {
	path   string
	body   []byte
	header http.Header
}

// BenchmarkServeJSON: one request of 1 or 64 rows through the handler
// (routing, admission, body, decoding, prediction, answer), on /v1/predict,
// v2 JSON and v2 binary. Report allocations with -benchmem.
func BenchmarkServeJSON(b *testing.B) {
	p := benchModel(b)
	s, err := New(p, Options{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{1, 64} {
		for _, route := range []string{"v1", "v2", "v2binary"} {
			rq := benchRequests(n, p.InputDim())[route]
			b.Run(fmt.Sprintf("%s/rows=%d", route, n), func(b *testing.B) {
				body := new(benchBody)
				req, err := http.NewRequest("POST", rq.path, body)
				if err != nil {
					b.Fatal(err)
				}
				req.Header = rq.header
				req.ContentLength = int64(len(rq.body))
				w := &benchWriter{h: http.Header{}}
				b.ReportAllocs()
				b.SetBytes(int64(len(rq.body)))
				for b.Loop() {
					body.Reset(rq.body)
					w.reset()
					s.ServeHTTP(w, req)
					if w.code != http.StatusOK {
						b.Fatalf("%d %s", w.code, w.body.String())
					}
				}
			})
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkServeSingleRow: single-row requests through the handler on the
// model size the serving goal is stated for, FALKON with M = 1000 centres
// on d = 784, with digit-like rows (four values in five zero, the others
// integers up to 255). "serial" sends one request at a time (the inline
// path of a lone row); "parallel" sends from GOMAXPROCS goroutines at
// once (rows meet in the batcher). Report allocations with -benchmem.
func BenchmarkServeSingleRow(b *testing.B) {
	const n, d, m = 1200, 784, 1000
	x, y := synth(n, d, 23)
	for i, v := range x.RawMatrix().Data {
		if i%5 != 0 {
			v = 0
		}
		x.RawMatrix().Data[i] = math.Round(math.Abs(v) * 80)
	}
	p := digitPipeline(b, x, y, 1000, solvers.FalkonOptions{Centers: m, Iterations: 5, Seed: 1})
	s, err := New(p, Options{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	row := x.RawRowView(7)
	bodies := map[string]benchReq{}
	v1, _ := json.Marshal(map[string]any{"rows": [][]float64{row}})
	bodies["v1"] = benchReq{"/v1/predict", v1, http.Header{}}
	hdr, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "x", "datatype": "FP64", "shape": []int{1, d}, "parameters": map[string]any{"binary_data_size": 8 * d}}}})
	bin := append([]byte(nil), hdr...)
	for _, v := range row {
		bin = binary.LittleEndian.AppendUint64(bin, math.Float64bits(v))
	}
	bodies["v2binary"] = benchReq{"/v2/models/model/infer", bin, http.Header{headerLength: {strconv.Itoa(len(hdr))}}}
	serveOne := func(b *testing.B, rq benchReq) func() {
		body := new(benchBody)
		req, err := http.NewRequest("POST", rq.path, body)
		if err != nil {
			b.Fatal(err)
		}
		req.Header = rq.header
		req.ContentLength = int64(len(rq.body))
		w := &benchWriter{h: http.Header{}}
		return func() {
			body.Reset(rq.body)
			w.reset()
			s.ServeHTTP(w, req)
			if w.code != http.StatusOK {
				b.Errorf("%d %s", w.code, w.body.String())
			}
		}
	}
	for _, route := range []string{"v1", "v2binary"} {
		rq := bodies[route]
		b.Run(route+"/serial", func(b *testing.B) {
			one := serveOne(b, rq)
			b.ReportAllocs()
			for b.Loop() {
				one()
			}
		})
		b.Run(route+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				one := serveOne(b, rq)
				for pb.Next() {
					one()
				}
			})
		})
	}
}

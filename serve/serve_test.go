package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// /v1/predict answers the labels of every model kind, and the raw outputs
// with "outputs": true, equal (exactly: JSON numbers round-trip) to the
// pipeline's own predictions, for one row and for a block of rows.
func TestPredictV1(t *testing.T) {
	xt, _ := synth(9, 4, 5)
	for name, p := range testModels(t) {
		t.Run(name, func(t *testing.T) {
			_, ts, _ := newTestServer(t, p, Options{})
			labels, outs := want(t, p, xt)
			for _, rows := range []int{1, 9} {
				x := xt.Slice(0, rows, 0, 4).(*mat.Dense)
				code, body, resp := do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, x, true))
				if code != 200 || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%d rows: %d %s", rows, code, body)
				}
				a := decodeAnswer(t, body)
				if len(a.Predictions) != rows || len(a.Outputs) != rows {
					t.Fatalf("%d rows: answer %s", rows, body)
				}
				for i := 0; i < rows; i++ {
					if a.Predictions[i] != labels[i] {
						t.Errorf("%d rows: row %d label %g, want %g", rows, i, a.Predictions[i], labels[i])
					}
					for j, v := range a.Outputs[i] {
						if v != outs.At(i, j) {
							t.Errorf("%d rows: output (%d,%d) = %g, want %g", rows, i, j, v, outs.At(i, j))
						}
					}
				}
			}
			// Without "outputs" the answer has predictions only.
			code, body, _ := do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, xt.Slice(0, 2, 0, 4).(*mat.Dense), false))
			if code != 200 || strings.Contains(body, `"outputs"`) {
				t.Errorf("outputs false: %d %s", code, body)
			}
		})
	}
}

// Every malformed /v1/predict request is refused with its status and a
// message naming the problem (and d = 4 where the shape is concerned).
func TestPredictV1Errors(t *testing.T) {
	p := testModels(t)["krr"]
	_, ts, _ := newTestServer(t, p, Options{MaxRows: 3, MaxBodyBytes: 400})
	cases := []struct {
		name, method, path, body string
		code                     int
		msg                      []string
	}{
		{"malformed", "POST", "/v1/predict", `{"rows": [[1,2,3,4]`, 400, []string{"malformed JSON", "x4"}},
		{"not json", "POST", "/v1/predict", `rows=1,2,3,4`, 400, []string{"malformed JSON at byte"}},
		{"empty body", "POST", "/v1/predict", ``, 400, []string{"empty request body"}},
		{"short row", "POST", "/v1/predict", `{"rows": [[1,2,3,4],[1,2,3]]}`, 400, []string{"row 1 has 3 values", "d = 4"}},
		{"long row", "POST", "/v1/predict", `{"rows": [[1,2,3,4,5]]}`, 400, []string{"row 0 has 5 values", "d = 4"}},
		{"no rows", "POST", "/v1/predict", `{"rows": []}`, 400, []string{"empty", "d = 4"}},
		{"missing rows", "POST", "/v1/predict", `{"outputs": true}`, 400, []string{`missing "rows"`, "x4"}},
		{"unknown field", "POST", "/v1/predict", `{"row": [[1,2,3,4]]}`, 400, []string{`unknown field "row"`}},
		{"string value", "POST", "/v1/predict", `{"rows": [[1,"2",3,4]]}`, 400, []string{"a number was expected"}},
		{"huge value", "POST", "/v1/predict", `{"rows": [[1,2e999,3,4]]}`, 400, []string{"rows"}},
		{"trailing data", "POST", "/v1/predict", `{"rows": [[1,2,3,4]]} {}`, 400, []string{"more data after"}},
		{"too many rows", "POST", "/v1/predict", `{"rows": [[1,2,3,4],[1,2,3,4],[1,2,3,4],[1,2,3,4]]}`, 413, []string{"4 rows", "limit of 3"}},
		{"body too large", "POST", "/v1/predict", `{"rows": [[` + strings.Repeat("1,", 300) + `1]]}`, 413, []string{"limit of 400 bytes"}},
		{"wrong method", "GET", "/v1/predict", ``, 405, []string{"method GET not allowed", "POST"}},
		{"unknown path", "GET", "/v1/nothing", ``, 404, []string{"no route GET /v1/nothing"}},
		{"reload disabled", "POST", "/v1/reload", ``, 404, []string{"no route"}},
	}
	for _, c := range cases {
		code, body, resp := do(t, c.method, ts.URL+c.path, c.body)
		if code != c.code {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.code, body)
			continue
		}
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
			t.Errorf("%s: body %q is not {\"error\": ...}", c.name, body)
		}
		for _, m := range c.msg {
			if !strings.Contains(e.Error, m) {
				t.Errorf("%s: message %q lacks %q", c.name, e.Error, m)
			}
		}
		if code == 405 && resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", c.name, resp.Header.Get("Allow"))
		}
	}
}

// The Open Inference Protocol v2 routes: health, metadata, readiness and
// infer with FP64 and FP32 tensors, flat or nested, answering the same
// numbers as /v1/predict (FP32: rounded to float32).
func TestV2(t *testing.T) {
	p := testModels(t)["falkon"]
	_, ts, _ := newTestServer(t, p, Options{Name: "digits", Version: "3"})
	for path, wantBody := range map[string]string{
		"/v2/health/live":         `{"live":true}`,
		"/v2/health/ready":        `{"ready":true}`,
		"/v2/models/digits/ready": `{"name":"digits","ready":true}`,
	} {
		code, body, _ := do(t, "GET", ts.URL+path, "")
		if code != 200 || strings.TrimSpace(body) != wantBody {
			t.Errorf("%s: %d %q, want %s", path, code, body, wantBody)
		}
	}
	code, body, _ := do(t, "GET", ts.URL+"/v2", "")
	if code != 200 || !strings.Contains(body, `"name":"zonal"`) {
		t.Errorf("/v2: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", ts.URL+"/v2/models/digits", "")
	var meta v2Meta
	if err := json.Unmarshal([]byte(body), &meta); code != 200 || err != nil {
		t.Fatalf("metadata: %d %s %v", code, body, err)
	}
	if meta.Name != "digits" || meta.Platform != "zonal_falkon" || len(meta.Versions) != 1 || meta.Versions[0] != "3" ||
		len(meta.Inputs) != 1 || fmt.Sprint(meta.Inputs[0].Shape) != "[-1 4]" || len(meta.Outputs) != 2 ||
		fmt.Sprint(meta.Outputs[1].Shape) != "[-1 3]" {
		t.Errorf("metadata %+v", meta)
	}

	xt, _ := synth(3, 4, 6)
	labels, outs := want(t, p, xt)
	flat := fmt.Sprint(xt.RawMatrix().Data)
	flat = strings.ReplaceAll(strings.Trim(flat, "[]"), " ", ",")
	type tensor struct {
		Name     string
		Datatype string
		Shape    []int
		Data     []float64
	}
	type answer struct {
		ModelName    string `json:"model_name"`
		ModelVersion string `json:"model_version"`
		ID           string
		Outputs      []tensor
	}
	infer := func(body string) (int, answer, string) {
		code, b, _ := do(t, "POST", ts.URL+"/v2/models/digits/infer", body)
		var a answer
		if code == 200 {
			if err := json.Unmarshal([]byte(b), &a); err != nil {
				t.Fatalf("infer answer %s: %v", b, err)
			}
		}
		return code, a, b
	}
	code, a, b := infer(`{"id": "q1", "inputs": [{"name": "x", "datatype": "FP64", "shape": [3, 4], "data": [` + flat + `]}]}`)
	if code != 200 || a.ModelName != "digits" || a.ModelVersion != "3" || a.ID != "q1" || len(a.Outputs) != 2 {
		t.Fatalf("FP64 infer: %d %s", code, b)
	}
	if o := a.Outputs[0]; o.Name != "predictions" || o.Datatype != "FP64" || fmt.Sprint(o.Shape) != "[3]" || fmt.Sprint(o.Data) != fmt.Sprint(labels) {
		t.Errorf("predictions tensor %+v, want labels %v", o, labels)
	}
	if o := a.Outputs[1]; o.Name != "outputs" || fmt.Sprint(o.Shape) != "[3 3]" || fmt.Sprint(o.Data) != fmt.Sprint(outs.RawMatrix().Data) {
		t.Errorf("outputs tensor %+v, want %v", o, outs.RawMatrix().Data)
	}
	// The versioned routes answer the same.
	if code, body, _ := do(t, "GET", ts.URL+"/v2/models/digits/versions/3/ready", ""); code != 200 || !strings.Contains(body, `"ready":true`) {
		t.Errorf("versioned ready: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", ts.URL+"/v2/models/digits/versions/3", ""); code != 200 || !strings.Contains(body, `"platform":"zonal_falkon"`) {
		t.Errorf("versioned metadata: %d %s", code, body)
	}
	code, a2, b := infer(`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [3, 4], "data": [` + flat + `]}]}`)
	if code != 200 || fmt.Sprint(a2.Outputs[0].Data) != fmt.Sprint(labels) {
		t.Errorf("infer again: %d %s", code, b)
	}
	if code, body, _ := do(t, "POST", ts.URL+"/v2/models/digits/versions/3/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [3, 4], "data": [`+flat+`]}]}`); code != 200 || !strings.Contains(body, `"model_version":"3"`) {
		t.Errorf("versioned infer: %d %s", code, body)
	}
	// Nested data, one requested output.
	rows, _ := json.Marshal([][]float64{xt.RawRowView(0), xt.RawRowView(1), xt.RawRowView(2)})
	code, a, b = infer(`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [3, 4], "data": ` + string(rows) + `}], "outputs": [{"name": "predictions"}]}`)
	if code != 200 || len(a.Outputs) != 1 || fmt.Sprint(a.Outputs[0].Data) != fmt.Sprint(labels) {
		t.Errorf("nested infer: %d %s", code, b)
	}
	// FP32: the inputs are rounded to float32 and the answer is FP32.
	x32 := mat.DenseCopyOf(xt)
	for i, v := range x32.RawMatrix().Data {
		x32.RawMatrix().Data[i] = float64(float32(v))
	}
	_, outs32 := want(t, p, x32)
	code, a, b = infer(`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [3, 4], "data": [` + flat + `]}], "outputs": [{"name": "outputs"}]}`)
	if code != 200 || len(a.Outputs) != 1 || a.Outputs[0].Datatype != "FP32" {
		t.Fatalf("FP32 infer: %d %s", code, b)
	}
	for i, v := range a.Outputs[0].Data {
		if w := float32(outs32.RawMatrix().Data[i]); float32(v) != w {
			t.Errorf("FP32 output %d = %g, want %g", i, v, w)
		}
	}

	errs := []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"unknown model", "/v2/models/other/infer", `{}`, 404, `no model "other"`},
		{"int tensor", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "INT32", "shape": [1, 4], "data": [1,2,3,4]}]}`, 400, `datatype "INT32"`},
		{"wrong d", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 5], "data": [1,2,3,4,5]}]}`, 400, "[n, 4]"},
		{"1-d shape", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [4], "data": [1,2,3,4]}]}`, 400, "[n, 4]"},
		{"short data", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [2, 4], "data": [1,2,3,4]}]}`, 400, "4 values, shape needs 8"},
		{"ragged", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [2, 4], "data": [[1,2,3,4],[1,2]]}]}`, 400, "row 1 has 2 values; the model expects d = 4"},
		{"no data", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4]}]}`, 400, `no "data"`},
		{"FP32 overflow", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1,1e39,3,4]}]}`, 400, "column 1 is not a finite FP32"},
		{"two inputs", "/v2/models/digits/infer", `{"inputs": [{"name": "a"}, {"name": "b"}]}`, 400, "2 input tensors"},
		{"unknown output", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1,2,3,4]}], "outputs": [{"name": "probs"}]}`, 400, `unknown output "probs"`},
		{"malformed", "/v2/models/digits/infer", `{"inputs": [`, 400, "malformed JSON"},
		{"too many rows", "/v2/models/digits/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [100000, 4], "data": []}]}`, 413, "limit of 10000 rows"},
		{"unknown model meta", "/v2/models/other", ``, 404, `no model "other"`},
		{"unknown version", "/v2/models/digits/versions/2/infer", `{}`, 404, `no version "2"; it serves version "3"`},
		{"unknown version meta", "/v2/models/digits/versions/2", ``, 404, `no version "2"`},
	}
	for _, c := range errs {
		method := "POST"
		if c.body == "" {
			method = "GET"
		}
		code, body, _ := do(t, method, ts.URL+c.path, c.body)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != c.code || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, code, body, c.code, c.msg)
		}
	}
	if code, _, resp := do(t, "GET", ts.URL+"/v2/models/digits/infer", ""); code != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET infer: %d", code)
	}
	if code, _, resp := do(t, "POST", ts.URL+"/v2/health/live", ""); code != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST live: %d", code)
	}
}

// /healthz, /readyz (503 while draining) and /metrics with the request,
// row and model series.
func TestHealthAndMetrics(t *testing.T) {
	p := testModels(t)["ridge"]
	s, ts, _ := newTestServer(t, p, Options{Name: "m"})
	if code, body, _ := do(t, "GET", ts.URL+"/healthz", ""); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, _, _ := do(t, "GET", ts.URL+"/readyz", ""); code != 200 {
		t.Errorf("readyz: %d", code)
	}
	if code, _, _ := do(t, "HEAD", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("HEAD healthz: %d", code)
	}
	xt, _ := synth(5, 4, 3)
	do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, xt, false))
	do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1]]}`)
	s.SetDraining(true)
	if code, _, _ := do(t, "GET", ts.URL+"/readyz", ""); code != 503 {
		t.Errorf("readyz while draining: %d", code)
	}
	if code, _, _ := do(t, "GET", ts.URL+"/v2/health/ready", ""); code != 503 {
		t.Errorf("v2 ready while draining: %d", code)
	}
	if code, _, _ := do(t, "GET", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("healthz while draining: %d", code)
	}
	s.SetDraining(false)
	code, body, _ := do(t, "GET", ts.URL+"/metrics", "")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, line := range []string{
		`zonal_serve_requests_total{code="200",route="/v1/predict"} 1`,
		`zonal_serve_requests_total{code="400",route="/v1/predict"} 1`,
		`zonal_serve_requests_total{code="503",route="/readyz"} 1`,
		`zonal_serve_rows_predicted_total 5`,
		`zonal_serve_model_info{kind="ridge",name="m",task="regression"} 1`,
		`zonal_serve_model_input_dim 4`,
		`zonal_serve_model_outputs 1`,
		`zonal_serve_reloads_total{result="failure"} 0`,
		`zonal_serve_in_flight_requests 0`,
		`zonal_request_duration_seconds_count{protocol="http",route="/v1/predict"} 2`,
		`zonal_serve_model_load_timestamp_seconds `,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// Two servers with private registries do not clash; a registry shared by
// two servers, a nil model and bad options are refused with ErrParam.
func TestNewErrors(t *testing.T) {
	ms := testModels(t)
	reg := prometheus.NewRegistry()
	a, err := New(ms["krr"], Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(ms["krr"], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for name, o := range map[string]Options{
		"shared registry": {Registry: reg},
		"negative rows":   {MaxRows: -1},
		"slash in name":   {Name: "a/b"},
		"reload no file":  {ReloadEndpoint: true},
	} {
		if s, err := New(ms["krr"], o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: err %v, want ErrParam", name, err)
			if s != nil {
				s.Close()
			}
		}
	}
	if _, err := New(nil, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("nil model: %v", err)
	}
	nanModel, trap := trapPipeline(t, 4)
	trap.nanAtZero = true
	if _, err := New(nanModel, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("model with NaN outputs: %v, want ErrNonFinite", err)
	}
}

// A panic in a prediction (batched single row or block) is a 500, logged
// and counted; a non-finite model output is a 500 naming it.
func TestPanicAndNonFinite(t *testing.T) {
	p, _ := trapPipeline(t, 3)
	s, ts, logs := newTestServer(t, p, Options{})
	for _, body := range []string{`{"rows": [[42, 0, 0]]}`, `{"rows": [[1, 2, 3], [42, 0, 0]]}`} {
		code, b, _ := do(t, "POST", ts.URL+"/v1/predict", body)
		if code != 500 || !strings.Contains(b, "internal error") {
			t.Errorf("panic %s: %d %s", body, code, b)
		}
	}
	if !strings.Contains(logs.String(), "panic in prediction") || !strings.Contains(logs.String(), "trap: 42") {
		t.Errorf("panic not logged: %s", logs.String())
	}
	code, b, _ := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[7, 0, 0]]}`)
	if code != 500 || !strings.Contains(b, "non-finite") {
		t.Errorf("NaN output: %d %s", code, b)
	}
	// The server still answers.
	code, b, _ = do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3.5]]}`)
	if code != 200 || strings.TrimSpace(b) != `{"predictions":[6.5]}` {
		t.Errorf("after the panics: %d %s", code, b)
	}
	if got := counter(t, s, "zonal_serve_panics_total"); got != 2 {
		t.Errorf("panics counted %g, want 2", got)
	}
	if got := counterWith(t, s, "zonal_serve_requests_total", "code", "500"); got != 3 {
		t.Errorf("500s counted %g, want 3", got)
	}
}

// A handler panic (outside the prediction) is recovered the same way.
func TestHandlerPanic(t *testing.T) {
	p, _ := trapPipeline(t, 3)
	s, _, logs := newTestServer(t, p, Options{})
	h := s.instrument("/boom", "", func(w http.ResponseWriter, r *http.Request) error { panic("boom") })
	rec := newRecorder()
	h.ServeHTTP(rec, mustRequest(t, "GET", "/boom"))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "internal error") || !strings.Contains(logs.String(), "panic in handler") {
		t.Errorf("handler panic: %d %s; log %s", rec.Code, rec.Body.String(), logs.String())
	}
	if got := counterWith(t, s, "zonal_serve_requests_total", "route", "/boom"); got != 1 {
		t.Errorf("counted %g", got)
	}
}

// With MaxInFlight requests admitted the next one is refused at once with
// 503 and Retry-After; once they finish, requests are served again.
func TestSaturation(t *testing.T) {
	p, m := trapPipeline(t, 3)
	s, ts, _ := newTestServer(t, p, Options{MaxInFlight: 2, Workers: 1, RetryAfter: 1500 * 1e6})
	done := make(chan int, 2)
	for i := 0; i < 2; i++ {
		go func() {
			code, _, _ := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[99, 0, 0], [1, 1, 1]]}`)
			done <- code
		}()
	}
	<-m.entered // one block runs (and blocks); the other waits for the worker
	waitFor(t, func() bool { return gauge(t, s, "zonal_serve_in_flight_requests") == 2 })
	code, body, resp := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3]]}`)
	if code != 503 || resp.Header.Get("Retry-After") != "2" || !strings.Contains(body, "saturated") {
		t.Errorf("saturated: %d %s Retry-After %q", code, body, resp.Header.Get("Retry-After"))
	}
	// Health and metrics are not limited.
	if code, _, _ := do(t, "GET", ts.URL+"/healthz", ""); code != 200 {
		t.Errorf("healthz when saturated: %d", code)
	}
	close(m.release)
	for i := 0; i < 2; i++ {
		if c := <-done; c != 200 {
			t.Errorf("blocked request: %d", c)
		}
	}
	if code, _, _ := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3]]}`); code != 200 {
		t.Errorf("after saturation: %d", code)
	}
	if got := counter(t, s, "zonal_serve_rejected_total"); got != 1 {
		t.Errorf("rejected %g, want 1", got)
	}
}

// After Close a prediction is a 503.
func TestClosed(t *testing.T) {
	p := testModels(t)["krr"]
	s, ts, _ := newTestServer(t, p, Options{})
	s.Close()
	if code, body, _ := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3, 4]]}`); code != 503 || !strings.Contains(body, "shutting down") {
		t.Errorf("closed: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", ts.URL+"/readyz", ""); code != 503 {
		t.Errorf("readyz closed: %d", code)
	}
}

// HTTPServer sets every timeout; a client that stops sending its body is
// cut off after the read timeout instead of holding a connection.
func TestHTTPServerTimeouts(t *testing.T) {
	p := testModels(t)["krr"]
	s, _, _ := newTestServer(t, p, Options{})
	hs := s.HTTPServer("127.0.0.1:0")
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("timeouts not all set: %+v", hs)
	}
	hs.ReadTimeout, hs.ReadHeaderTimeout = 300*time.Millisecond, 300*time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	// The clock starts before the dial: the server may accept and arm its
	// read deadline before Dial returns here, and a client descheduled in
	// between (a loaded machine) would otherwise see less than the 300 ms.
	start := time.Now()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"rows\": [[1,")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(conn) // the answer, if any, then EOF when the server closes
	el := time.Since(start)
	if el < 250*time.Millisecond || el > 4*time.Second {
		t.Errorf("slow client cut off after %v, want about the 300 ms read timeout", el)
	}
	if len(b) > 0 && !strings.Contains(string(b), "400 Bad Request") {
		t.Errorf("answer to a stalled body: %q", b)
	}
}

package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

var bg = context.Background()

// synth draws n rows of d standard normal features with a smooth target.
func synth(n, d int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.NormFloat64()
			x.Set(i, j, v)
			s += v * float64(j+1) / float64(d)
		}
		y[i] = s
	}
	return x, y
}

// testModels fits small models on 4 features: a 3-class KRR (labels 3, 5,
// 7), a 3-class FALKON with a scaler, a regression ridge on Fourier
// features, a 3-class float32 ridge ("ridge32", float32 features) on the
// same map, and a regression KRR "b" fitted on other data (for reloads).
func testModels(t testing.TB) map[string]*solvers.Pipeline {
	t.Helper()
	const d = 4
	x, y := synth(120, d, 1)
	k, err := kernels.NewGaussian(1.5)
	if err != nil {
		t.Fatal(err)
	}
	labels := tercileLabels(y)
	enc3, err := solvers.NewEncoding(labels, solvers.TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	y3, err := enc3.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	yr := mat.NewDense(len(y), 1, append([]float64(nil), y...))
	reg := solvers.Encoding{Task: solvers.TaskRegression}
	sc, err := solvers.NewScaler([]float64{0.1, -0.2, 0, 0.3}, []float64{1.5, 2, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*solvers.Pipeline{}
	add := func(name string, s *solvers.Scaler, e solvers.Encoding, m solvers.Model, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := solvers.NewPipeline(s, e, m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = p
	}
	kr, err := solvers.FitKRR(bg, k, x, y3, 1e-3, solvers.Options{})
	add("krr", nil, enc3, kr, err)
	f, err := solvers.FitFalkon(bg, k, x, y3, 1e-4, solvers.FalkonOptions{Centers: 40, Seed: 2})
	add("falkon", sc, enc3, f, err)
	fm, err := kernels.NewFourierMap(k, d, kernels.FourierOptions{Features: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := solvers.FitRidge(bg, fm, x, yr, 1e-3, solvers.RidgeOptions{})
	add("ridge", sc, reg, r, err)
	r32, err := solvers.FitRidge(bg, fm, x, y3, 1e-3, solvers.RidgeOptions{Precision: zonal.Float32})
	add("ridge32", sc, enc3, r32, err)
	xb, yb := synth(80, d, 9)
	kb, err := solvers.FitKRR(bg, k, xb, mat.NewDense(len(yb), 1, yb), 1e-2, solvers.Options{})
	add("b", nil, reg, kb, err)
	return out
}

// tercileLabels are 3-class labels of targets y: 3 below -0.5, 5 below
// 0.5, 7 above (the classes of testModels' classifiers).
func tercileLabels(y []float64) []float64 {
	labels := make([]float64, len(y))
	for i, v := range y {
		switch {
		case v < -0.5:
			labels[i] = 3
		case v < 0.5:
			labels[i] = 5
		default:
			labels[i] = 7
		}
	}
	return labels
}

// writeModel saves p to a file in dir and returns its path.
func writeModel(t testing.TB, dir, name string, p *solvers.Pipeline) string {
	t.Helper()
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newTestServer serves p with opts (logging into the returned buffer) on
// an httptest server closed at the end of the test.
func newTestServer(t testing.TB, p *solvers.Pipeline, opts Options) (*Server, *httptest.Server, *syncBuffer) {
	t.Helper()
	logs := new(syncBuffer)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, err := New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return s, ts, logs
}

// do sends a request and returns the status, the body and the response.
func do(t testing.TB, method, url, body string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp
}

// rowsJSON encodes rows as a /v1/predict body.
func rowsJSON(t testing.TB, x *mat.Dense, outputs bool) string {
	t.Helper()
	n, _ := x.Dims()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = x.RawRowView(i)
	}
	b, err := json.Marshal(map[string]any{"rows": rows, "outputs": outputs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type v1Answer struct {
	Predictions []float64   `json:"predictions"`
	Outputs     [][]float64 `json:"outputs"`
	Error       string      `json:"error"`
}

func decodeAnswer(t testing.TB, body string) v1Answer {
	t.Helper()
	var a v1Answer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	return a
}

// want returns the labels and outputs of p on x, one row at a time.
func want(t testing.TB, p *solvers.Pipeline, x *mat.Dense) ([]float64, *mat.Dense) {
	t.Helper()
	n, d := x.Dims()
	labels := make([]float64, n)
	outs := mat.NewDense(n, p.Outputs(), nil)
	for i := 0; i < n; i++ {
		row := mat.NewDense(1, d, x.RawRowView(i))
		if err := p.PredictLabels(labels[i:i+1], row); err != nil {
			t.Fatal(err)
		}
		if err := p.PredictOutputs(outs.Slice(i, i+1, 0, p.Outputs()).(*mat.Dense), row); err != nil {
			t.Fatal(err)
		}
	}
	return labels, outs
}

// trapModel is a regression model on d inputs whose output is the sum of
// the row, except that a row starting with 42 panics, one starting with 7
// gives NaN and one starting with 99 blocks until release is closed.
type trapModel struct {
	d         int
	nanAtZero bool // a row of zeros (the probe row of New) gives NaN
	release   chan struct{}
	entered   chan struct{}
}

func (m *trapModel) Kind() string  { return "trap" }
func (m *trapModel) InputDim() int { return m.d }
func (m *trapModel) Outputs() int  { return 1 }
func (m *trapModel) Predict(dst *mat.Dense, x mat.Matrix) error {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		row := x.(*mat.Dense).RawRowView(i)
		if m.nanAtZero && slices.Max(row) == 0 && slices.Min(row) == 0 {
			dst.Set(i, 0, math.NaN())
			continue
		}
		switch row[0] {
		case 42:
			panic("trap: 42")
		case 7:
			dst.Set(i, 0, math.NaN())
			continue
		case 99:
			m.entered <- struct{}{}
			<-m.release
		}
		s := 0.0
		for _, v := range row {
			s += v
		}
		dst.Set(i, 0, s)
	}
	return nil
}

func trapPipeline(t testing.TB, d int) (*solvers.Pipeline, *trapModel) {
	t.Helper()
	m := &trapModel{d: d, release: make(chan struct{}), entered: make(chan struct{}, 16)}
	p, err := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

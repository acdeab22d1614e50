package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// calibrated returns p with a calibration fitted on its own outputs of
// rows x with labels y (in-sample: wrong for a real model, enough to give
// the pipeline valid calibrators for these tests).
func calibrated(t testing.TB, p *solvers.Pipeline, x *mat.Dense, y []float64) *solvers.Pipeline {
	t.Helper()
	n, _ := x.Dims()
	out := mat.NewDense(n, p.Outputs(), nil)
	if err := p.PredictOutputs(out, x); err != nil {
		t.Fatal(err)
	}
	var c solvers.Calibration
	var err error
	if p.Classes() == 2 {
		c.Binary, err = calibrate.FitPlatt(mat.Col(nil, 0, out), y, nil)
	} else {
		c.Multiclass, err = calibrate.FitMulticlass(calibrate.MethodPlatt, out, p.Encoding.Classes, y, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.WithCalibration(&c)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// probaModels returns a calibrated 3-class FALKON pipeline, a calibrated
// binary KRR one and the uncalibrated 3-class one, with test rows.
func probaModels(t testing.TB) (multi, bin, plain *solvers.Pipeline, xt *mat.Dense) {
	t.Helper()
	ms := testModels(t)
	x, y := synth(120, 4, 1)
	labels := tercileLabels(y)
	plain = ms["falkon"]
	multi = calibrated(t, plain, x, labels)
	b := make([]float64, len(y))
	for i, v := range y {
		if v > 0 {
			b[i] = 1
		}
	}
	enc, err := solvers.NewEncoding(b, solvers.TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := enc.Targets(b)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernels.NewGaussian(1.5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := solvers.FitKRR(bg, k, x, tg, 1e-2, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := solvers.NewPipeline(nil, enc, m)
	if err != nil {
		t.Fatal(err)
	}
	bin = calibrated(t, p, x, b)
	xt, _ = synth(10, 4, 5)
	return multi, bin, plain, xt
}

// checkRows asserts that got holds the probabilities of want bit for bit
// (the server predicts a block of at most 32 rows row by row, as
// PredictProba does), each in [0, 1], each row summing to 1 within 1e-12
// (k float64 values of at most 1: a few ulps).
func checkRows(t *testing.T, got [][]float64, want *mat.Dense) {
	t.Helper()
	n, k := want.Dims()
	if len(got) != n {
		t.Fatalf("%d rows of probabilities, want %d", len(got), n)
	}
	for i, row := range got {
		if len(row) != k {
			t.Fatalf("row %d has %d probabilities, want %d", i, len(row), k)
		}
		s := 0.0
		for j, v := range row {
			if v != want.At(i, j) || !(v >= 0 && v <= 1) {
				t.Fatalf("row %d class %d: %v, PredictProba %v", i, j, v, want.At(i, j))
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
}

// /v1/predict answers "probabilities" when asked and the model has them;
// without the key the answer is as before; a model without a calibration
// refuses the question with a 400.
func TestV1Probabilities(t *testing.T) {
	multi, bin, plain, xt := probaModels(t)
	n, _ := xt.Dims()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = xt.RawRowView(i)
	}
	body, _ := json.Marshal(map[string]any{"rows": rows, "probabilities": true})
	for name, p := range map[string]*solvers.Pipeline{"3 classes": multi, "binary": bin} {
		t.Run(name, func(t *testing.T) {
			_, ts, _ := newTestServer(t, p, Options{})
			code, resp, _ := do(t, "POST", ts.URL+"/v1/predict", string(body))
			var a struct {
				Predictions   []float64   `json:"predictions"`
				Probabilities [][]float64 `json:"probabilities"`
			}
			if code != http.StatusOK || json.Unmarshal([]byte(resp), &a) != nil {
				t.Fatalf("%d %s", code, resp)
			}
			want := mat.NewDense(n, p.Classes(), nil)
			if err := p.PredictProba(want, xt); err != nil {
				t.Fatal(err)
			}
			checkRows(t, a.Probabilities, want)
			labels := make([]float64, n)
			if err := p.PredictLabels(labels, xt); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(labels) != fmt.Sprint(a.Predictions) {
				t.Fatalf("predictions %v, PredictLabels %v", a.Predictions, labels)
			}
			code, resp, _ = do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, xt, false))
			if code != http.StatusOK || strings.Contains(resp, "probabilities") {
				t.Fatalf("without the question: %d %s", code, resp)
			}
		})
	}
	_, ts, _ := newTestServer(t, plain, Options{})
	code, resp, _ := do(t, "POST", ts.URL+"/v1/predict", string(body))
	if code != http.StatusBadRequest || !strings.Contains(resp, "no class probabilities") {
		t.Fatalf("uncalibrated model: %d %s", code, resp)
	}
}

// v2 infer answers an output "probabilities" of shape [n, classes] when it
// is asked for, in JSON or binary; the model metadata lists it; a model
// without a calibration refuses it (400), and an answer without it asked
// for is unchanged.
func TestV2Probabilities(t *testing.T) {
	multi, _, plain, xt := probaModels(t)
	n, d := xt.Dims()
	data, _ := json.Marshal(xt.RawMatrix().Data)
	in := fmt.Sprintf(`"inputs": [{"name": "x", "datatype": "FP64", "shape": [%d, %d], "data": %s}]`, n, d, data)
	_, ts, _ := newTestServer(t, multi, Options{})
	code, resp, _ := do(t, "POST", ts.URL+"/v2/models/model/infer", `{`+in+`, "outputs": [{"name": "predictions"}, {"name": "probabilities"}]}`)
	var a struct {
		Outputs []struct {
			Name  string
			Shape []int
			Data  []float64
		}
	}
	if code != http.StatusOK || json.Unmarshal([]byte(resp), &a) != nil || len(a.Outputs) != 2 {
		t.Fatalf("%d %s", code, resp)
	}
	o := a.Outputs[1]
	if o.Name != outProbabilities || fmt.Sprint(o.Shape) != fmt.Sprint([]int{n, 3}) {
		t.Fatalf("output %q of shape %v", o.Name, o.Shape)
	}
	want := mat.NewDense(n, 3, nil)
	if err := multi.PredictProba(want, xt); err != nil {
		t.Fatal(err)
	}
	got := make([][]float64, n)
	for i := range got {
		got[i] = o.Data[3*i : 3*i+3]
	}
	checkRows(t, got, want)

	// Binary data: the JSON header names the tensor, the bytes follow.
	code, resp, hr := do(t, "POST", ts.URL+"/v2/models/model/infer", `{`+in+`, "outputs": [{"name": "probabilities", "parameters": {"binary_data": true}}]}`)
	if code != http.StatusOK || hr.Header.Get(headerLength) == "" || !strings.Contains(resp, `"binary_data_size":240`) {
		t.Fatalf("binary: %d %q", code, resp[:min(len(resp), 200)])
	}

	code, resp, _ = do(t, "GET", ts.URL+"/v2/models/model", "")
	if code != http.StatusOK || !strings.Contains(resp, `{"name":"probabilities","datatype":"FP64","shape":[-1,3]}`) {
		t.Fatalf("metadata: %d %s", code, resp)
	}
	code, resp, _ = do(t, "POST", ts.URL+"/v2/models/model/infer", `{`+in+`}`)
	if code != http.StatusOK || strings.Contains(resp, "probabilities") {
		t.Fatalf("default outputs: %d %s", code, resp)
	}

	_, ts2, _ := newTestServer(t, plain, Options{})
	code, resp, _ = do(t, "POST", ts2.URL+"/v2/models/model/infer", `{`+in+`, "outputs": [{"name": "probabilities"}]}`)
	if code != http.StatusBadRequest || !strings.Contains(resp, "no class probabilities") {
		t.Fatalf("uncalibrated model: %d %s", code, resp)
	}
	code, resp, _ = do(t, "GET", ts2.URL+"/v2/models/model", "")
	if code != http.StatusOK || strings.Contains(resp, "probabilities") {
		t.Fatalf("uncalibrated metadata: %d %s", code, resp)
	}
}

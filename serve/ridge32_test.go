package serve

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/solvers"
)

// A float32 ridge model (float32 features, model file format 2) loaded
// from its file by /v1/reload serves the fitted model's labels, and its
// outputs exactly for requests of up to 32 rows (predicted row by row, as
// want does) and within 1e-12 (1 + |y|) for 40 rows (a float64 Gemm on
// the widened float32 features, which sums in another order): the file
// records the precision, so the reloaded model predicts with float32
// features as the fitted one does.
func TestServeFloat32Ridge(t *testing.T) {
	ms := testModels(t)
	p32 := ms["ridge32"]
	if r, ok := p32.Model.(*solvers.Ridge); !ok || r.Precision() != zonal.Float32 {
		t.Fatalf("ridge32 is %T, not a float32 ridge", p32.Model)
	}
	dir := t.TempDir()
	path := writeModel(t, dir, "m.zonal", ms["krr"])
	_, ts, _ := newTestServer(t, ms["krr"], Options{ModelFile: path, ReloadEndpoint: true})
	writeModel(t, dir, "m.zonal", p32)
	code, b, _ := do(t, "POST", ts.URL+"/v1/reload", "")
	if code != 200 || !strings.Contains(b, `"kind":"ridge"`) || !strings.Contains(b, `"task":"classification"`) {
		t.Fatalf("reload: %d %s", code, b)
	}
	for _, rows := range []int{1, 32, 40} {
		xt, _ := synth(rows, 4, 13)
		labels, outs := want(t, p32, xt)
		tol := 0.0
		if rows > 32 {
			tol = 1e-12
		}
		code, body, _ := do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, xt, true))
		if code != 200 {
			t.Fatalf("predict: %d %s", code, body)
		}
		a := decodeAnswer(t, body)
		if fmt.Sprint(a.Predictions) != fmt.Sprint(labels) {
			t.Errorf("%d rows: labels %v, want %v", rows, a.Predictions, labels)
		}
		for i := range a.Outputs {
			for j, v := range a.Outputs[i] {
				if w := outs.At(i, j); math.Abs(v-w) > tol*(1+math.Abs(w)) {
					t.Errorf("%d rows: row %d output %d: %v, fitted model %v", rows, i, j, v, w)
				}
			}
		}
	}
}

package solvers

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

func TestEncoding(t *testing.T) {
	e, err := NewEncoding([]float64{0, 1, 1, 0}, TaskAuto)
	if err != nil || e.Task != TaskClassification || e.Outputs() != 1 {
		t.Fatalf("binary: %+v %v", e, err)
	}
	tg, _ := e.Targets([]float64{0, 1})
	if tg.At(0, 0) != -1 || tg.At(1, 0) != 1 {
		t.Fatalf("binary targets %v", mat.Formatted(tg))
	}
	lab := make([]float64, 3)
	if err := e.Decode(lab, mat.NewDense(3, 1, []float64{-0.2, 0.3, 0})); err != nil {
		t.Fatal(err)
	}
	if lab[0] != 0 || lab[1] != 1 || lab[2] != 0 {
		t.Fatalf("sign decode %v", lab)
	}
	e, _ = NewEncoding([]float64{2, 9, 4, 4}, TaskClassification)
	if e.Outputs() != 3 {
		t.Fatalf("3 classes: %+v", e)
	}
	tg, _ = e.Targets([]float64{4})
	if tg.At(0, 0) != -1 || tg.At(0, 1) != 1 || tg.At(0, 2) != -1 {
		t.Fatalf("one-vs-all targets %v", mat.Formatted(tg))
	}
	if err := e.Decode(lab[:1], mat.NewDense(1, 3, []float64{0.1, -1, 0.5})); err != nil {
		t.Fatal(err)
	}
	if lab[0] != 9 {
		t.Fatalf("argmax decode %v", lab[0])
	}
	// Mismatched sizes are errors that write nothing, not panics.
	lab[0] = -7
	if err := e.Decode(lab[:2], mat.NewDense(1, 3, nil)); !errors.Is(err, zonal.ErrShape) || lab[0] != -7 {
		t.Fatalf("decode into 2 labels from 1 row: %v", err)
	}
	if err := e.Decode(lab[:1], mat.NewDense(1, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("decode 2 outputs with a 3-class encoding: %v", err)
	}
	if err := (Encoding{Task: TaskClassification}).Decode(lab[:1], mat.NewDense(1, 1, nil)); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("decode without classes: %v", err)
	}
	if _, err := e.Targets(nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Fatalf("no targets: %v", err)
	}
	if _, err := e.Targets([]float64{5}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("unseen class: %v", err)
	}
	if e, _ := NewEncoding([]float64{1.5, 2, 3}, TaskAuto); e.Task != TaskRegression {
		t.Fatal("fractional labels should be regression")
	}
	many := make([]float64, 50)
	for i := range many {
		many[i] = float64(i)
	}
	if e, _ := NewEncoding(many, TaskAuto); e.Task != TaskRegression {
		t.Fatal("50 distinct integers should be regression")
	}
	// Integer labels each repeated MinClassRows times are classes, however
	// many (no cap of 20 values): 26 letters here.
	letters := make([]float64, 26*MinClassRows)
	for i := range letters {
		letters[i] = float64(i % 26)
	}
	if e, _ := NewEncoding(letters, TaskAuto); e.Task != TaskClassification || e.Outputs() != 26 {
		t.Fatalf("26 classes of %d rows each: %+v", MinClassRows, e)
	}
	if e, _ := NewEncoding(many, TaskClassification); e.Outputs() != 50 {
		t.Fatal("forced classification")
	}
	if _, err := NewEncoding([]float64{1, 1}, TaskClassification); !errors.Is(err, zonal.ErrParam) {
		t.Fatal("one class")
	}
	if _, err := NewEncoding([]float64{1, math.NaN()}, TaskAuto); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatal("NaN label")
	}
	if _, err := ParseTask("nope"); !errors.Is(err, zonal.ErrParam) {
		t.Fatal("ParseTask")
	}
}

func TestMetrics(t *testing.T) {
	p, y := []float64{1, 2, 3, 5}, []float64{1, 2, 4, 3}
	// errors 0,0,-1,2: RMSE sqrt(5/4), MAE 3/4; mean y 2.5, SST 0+...
	if got := RMSE(p, y); math.Abs(got-math.Sqrt(1.25)) > 1e-15 {
		t.Errorf("RMSE %g", got)
	}
	if got := MAE(p, y); got != 0.75 {
		t.Errorf("MAE %g", got)
	}
	// SST = 2.25+0.25+2.25+0.25 = 5, SSE = 5: R^2 = 0.
	if got := R2(p, y); math.Abs(got) > 1e-15 {
		t.Errorf("R2 %g", got)
	}
	if got := Accuracy(p, y); got != 0.5 {
		t.Errorf("accuracy %g", got)
	}
	m := Encoding{Task: TaskClassification, Classes: []float64{0, 1}}.Evaluate(p, y)
	if m.Accuracy == nil || m.RMSE != nil {
		t.Error("classification metrics")
	}
	// Lengths that differ, or none: NaN, not a panic.
	for _, f := range []func(a, b []float64) float64{RMSE, MAE, R2, Accuracy} {
		if v, w := f(p[:3], y), f(nil, nil); !math.IsNaN(v) || !math.IsNaN(w) {
			t.Errorf("mismatched lengths %g, empty %g; want NaN", v, w)
		}
	}
}

// TestOneVsAllDigits trains one-vs-all FALKON and exact KRR on the embedded
// digits set
// (1797 8x8 images, 10 classes; first rows train, the rest test) and checks
// the test accuracy against a floor a few points under the measured value.
func TestOneVsAllDigits(t *testing.T) {
	data, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	x, labels := data.X, data.Y
	n, d := x.Dims()
	ntr := 1200
	if testing.Short() {
		ntr = 600
	}
	xtr := x.Slice(0, ntr, 0, d).(*mat.Dense)
	xte := x.Slice(ntr, n, 0, d).(*mat.Dense)
	enc, err := NewEncoding(labels[:ntr], TaskAuto)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Task != TaskClassification || enc.Outputs() != 10 {
		t.Fatalf("encoding %+v", enc)
	}
	y, err := enc.Targets(labels[:ntr])
	if err != nil {
		t.Fatal(err)
	}
	// Pixels 0..16 in 64 dims: nearest-neighbour distances ~ 20; sigma 20
	// and lambda 1e-8 were the best of a small grid on this split.
	k := testGauss{20}
	krr, err := FitKRR(bg, k, xtr, y, 1e-8, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := FitFalkon(bg, k, xtr, y, 1e-8, FalkonOptions{Centers: 400, Iterations: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Model{krr, f} {
		p, err := NewPipeline(nil, enc, m)
		if err != nil {
			t.Fatal(err)
		}
		pred := make([]float64, n-ntr)
		if err := p.PredictLabels(pred, xte); err != nil {
			t.Fatal(err)
		}
		// Measured: KRR 0.977, FALKON 0.955 with 1200 training rows;
		// KRR 0.962, FALKON 0.956 with 600 (-short).
		floor := 0.94
		if testing.Short() {
			floor = 0.92
		}
		if acc := Accuracy(pred, labels[ntr:]); acc < floor {
			t.Errorf("%s: digits one-vs-all accuracy %.4f < %.2f", m.Kind(), acc, floor)
		} else {
			t.Logf("%s: accuracy %.4f", m.Kind(), acc)
		}
	}
}

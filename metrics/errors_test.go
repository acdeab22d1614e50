package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// call runs one metric on (a, y, w); a is the prediction, score or
// positive-class probability.
type call struct {
	name string
	f    func(a, y, w []float64) error
}

func err2(_ float64, err error) error { return err }

// vectorMetrics are the functions taking one value per row; probs is
// whether the values must be probabilities.
var vectorMetrics = []call{
	{"Accuracy", func(a, y, w []float64) error { return err2(Accuracy(a, y, w)) }},
	{"BalancedAccuracy", func(a, y, w []float64) error { return err2(BalancedAccuracy(a, y, w)) }},
	{"ROCAUC", func(a, y, w []float64) error { return err2(ROCAUC(a, y, w)) }},
	{"BinaryLogLoss", func(a, y, w []float64) error { return err2(BinaryLogLoss(a, y, w)) }},
	{"BinaryBrier", func(a, y, w []float64) error { return err2(BinaryBrier(a, y, w)) }},
	{"BinaryPRF", func(a, y, w []float64) error { _, err := BinaryPRF(a, y, w, 0.5); return err }},
	{"RecallAtPrecision", func(a, y, w []float64) error { _, _, err := RecallAtPrecision(a, y, w, 0.5); return err }},
	{"PerClass", func(a, y, w []float64) error { _, err := PerClass(a, y, w, nil); return err }},
	{"NewConfusionMatrix", func(a, y, w []float64) error { _, err := NewConfusionMatrix(a, y, w, nil); return err }},
	{"RMSE", func(a, y, w []float64) error { return err2(RMSE(a, y, w)) }},
	{"MAE", func(a, y, w []float64) error { return err2(MAE(a, y, w)) }},
	{"R2", func(a, y, w []float64) error { return err2(R2(a, y, w)) }},
	{"PoissonDeviance", func(a, y, w []float64) error { return err2(PoissonDeviance(a, y, w)) }},
	{"ClassificationReport", func(a, y, w []float64) error { _, err := ClassificationReport(a, y, w, nil, nil); return err }},
	{"RegressionReport", func(a, y, w []float64) error { _, err := RegressionReport(a, y, w); return err }},
	{"ROCAUCMulti", func(a, y, w []float64) error {
		return err2(ROCAUCMulti(twoColumns(a), []float64{0, 1}, y, w))
	}},
	{"LogLoss", func(a, y, w []float64) error { return err2(LogLoss(twoColumns(a), []float64{0, 1}, y, w)) }},
	{"Brier", func(a, y, w []float64) error { return err2(Brier(twoColumns(a), []float64{0, 1}, y, w)) }},
}

// twoColumns is the n x 2 matrix of rows (1 - a_i, a_i).
func twoColumns(a []float64) *mat.Dense {
	if len(a) == 0 {
		return &mat.Dense{}
	}
	m := mat.NewDense(len(a), 2, nil)
	for i, v := range a {
		m.Set(i, 0, 1-v)
		m.Set(i, 1, v)
	}
	return m
}

// TestBadInput runs every function on the same family of bad inputs and
// checks the sentinel of each error.
func TestBadInput(t *testing.T) {
	a := []float64{0.25, 0.5, 1, 0.75}
	y := []float64{0, 1, 1, 0}
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name    string
		a, y, w []float64
		want    []error
	}{
		{"negative weight", a, y, []float64{1, -1, 1, 1}, []error{zonal.ErrParam}},
		{"NaN weight", a, y, []float64{1, nan, 1, 1}, []error{zonal.ErrParam, zonal.ErrNonFinite}},
		{"Inf weight", a, y, []float64{1, inf, 1, 1}, []error{zonal.ErrParam, zonal.ErrNonFinite}},
		{"zero weights", a, y, []float64{0, 0, 0, 0}, []error{zonal.ErrParam}},
		{"short weights", a, y, []float64{1, 1, 1}, []error{zonal.ErrParam, zonal.ErrShape}},
		{"short predictions", a[:3], y, nil, []error{zonal.ErrParam, zonal.ErrShape}},
		{"NaN prediction", []float64{0.25, nan, 1, 0.75}, y, nil, []error{zonal.ErrNonFinite}},
		{"NaN label", a, []float64{0, nan, 1, 0}, nil, []error{zonal.ErrNonFinite}},
		{"Inf label", a, []float64{0, inf, 1, 0}, nil, []error{zonal.ErrNonFinite}},
		{"empty", []float64{}, []float64{}, nil, []error{zonal.ErrEmpty}},
	}
	for _, c := range cases {
		for _, m := range vectorMetrics {
			err := m.f(c.a, c.y, c.w)
			if err == nil {
				t.Errorf("%s on %s: no error", m.name, c.name)
				continue
			}
			for _, s := range c.want {
				if !errors.Is(err, s) {
					t.Errorf("%s on %s: %v, want %v", m.name, c.name, err, s)
				}
			}
		}
	}
}

func TestUndefined(t *testing.T) {
	one := []float64{1, 1, 1}
	s := []float64{0.1, 0.5, 0.9}
	for _, m := range []call{vectorMetrics[2], vectorMetrics[3], vectorMetrics[4], vectorMetrics[5], vectorMetrics[6]} {
		if err := m.f(s, one, nil); !errors.Is(err, zonal.ErrParam) || !strings.Contains(err.Error(), "one class") {
			t.Errorf("%s of one class: %v, want an ErrParam naming one class", m.name, err)
		}
	}
	// Both classes, one of weight 0.
	if _, err := ROCAUC(s, []float64{0, 1, 1}, []float64{0, 1, 1}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("AUC with a zero-weight class: %v", err)
	}
	if _, err := ROCAUC(s, []float64{0, 1, 2}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("AUC of three classes: %v", err)
	}
	p, classes, y := probs()
	if _, err := ROCAUCMulti(p, classes, []float64{0, 1, 1, 1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("multiclass AUC without class 2: %v", err)
	}
	if _, err := R2([]float64{1, 2}, []float64{3, 3}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("R2 of constant labels: %v", err)
	}
	if _, err := PoissonDeviance([]float64{1, 0}, []float64{1, 1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Poisson with a zero prediction: %v", err)
	}
	if _, err := PoissonDeviance([]float64{1, 1}, []float64{1, -1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Poisson with a negative label: %v", err)
	}
	for _, th := range []float64{0, -0.5, 1.5, math.NaN()} {
		if _, _, err := RecallAtPrecision(s, []float64{0, 1, 1}, nil, th); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("RecallAtPrecision(%g): %v", th, err)
		}
	}
	if _, err := BinaryPRF(s, []float64{0, 1, 1}, nil, math.NaN()); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("BinaryPRF at NaN: %v", err)
	}

	// Probability matrices: a row not summing to 1, an entry outside
	// [0, 1], a NaN, the wrong shape, repeated or missing classes, a label
	// outside the classes.
	bad := map[string]func() (*mat.Dense, []float64, []float64){
		"row sum": func() (*mat.Dense, []float64, []float64) {
			q := mat.DenseCopyOf(p)
			q.Set(0, 0, 0.7)
			return q, classes, y
		},
		"negative": func() (*mat.Dense, []float64, []float64) {
			q := mat.DenseCopyOf(p)
			q.Set(0, 0, -0.1)
			q.Set(0, 1, 1)
			return q, classes, y
		},
		"NaN": func() (*mat.Dense, []float64, []float64) {
			q := mat.DenseCopyOf(p)
			q.Set(1, 1, math.NaN())
			return q, classes, y
		},
		"shape":    func() (*mat.Dense, []float64, []float64) { return p, []float64{0, 1, 2, 3}, y },
		"repeated": func() (*mat.Dense, []float64, []float64) { return p, []float64{0, 1, 1}, y },
		"one class": func() (*mat.Dense, []float64, []float64) {
			return mat.NewDense(4, 1, []float64{1, 1, 1, 1}), []float64{0}, []float64{0, 0, 0, 0}
		},
		"label": func() (*mat.Dense, []float64, []float64) { return p, classes, []float64{0, 1, 2, 5} },
		"nil":   func() (*mat.Dense, []float64, []float64) { return nil, classes, y },
	}
	for name, f := range bad {
		q, c, yy := f()
		if _, err := LogLoss(q, c, yy, nil); err == nil {
			t.Errorf("LogLoss with bad %s: no error", name)
		}
		if _, err := Brier(q, c, yy, nil); err == nil {
			t.Errorf("Brier with bad %s: no error", name)
		}
		if name != "row sum" && name != "negative" {
			if _, err := ROCAUCMulti(q, c, yy, nil); err == nil {
				t.Errorf("ROCAUCMulti with bad %s: no error", name)
			}
		}
	}
	if _, err := BinaryLogLoss([]float64{0.5, 1.5}, []float64{0, 1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("probability 1.5: %v", err)
	}
	if _, err := NewConfusionMatrix([]float64{0, 3}, []float64{0, 1}, nil, []float64{0, 1}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("prediction outside the classes: %v", err)
	}
}

func TestExportedChecks(t *testing.T) {
	if sum, err := CheckWeights([]float64{0.5, 0, 2}, 3); err != nil || sum != 2.5 {
		t.Errorf("CheckWeights: %g, %v", sum, err)
	}
	if sum, err := CheckWeights(nil, 4); err != nil || sum != 4 {
		t.Errorf("CheckWeights(nil): %g, %v", sum, err)
	}
	if neg, pos, err := BinaryLabels([]float64{1, -1, 1}, nil); err != nil || neg != -1 || pos != 1 {
		t.Errorf("BinaryLabels: %g %g %v", neg, pos, err)
	}
	if _, _, err := BinaryLabels([]float64{1, -1, 1}, []float64{1, 0, 1}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("BinaryLabels with a zero-weight class: %v", err)
	}
	if _, _, err := BinaryLabels(nil, nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("BinaryLabels(nil): %v", err)
	}
}

func TestName(t *testing.T) {
	for n := NameAuto; n < nameEnd; n++ {
		got, err := ParseName(n.String())
		if err != nil || got != n {
			t.Errorf("ParseName(%q) = %v, %v", n, got, err)
		}
		b, err := n.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Name
		if err := back.UnmarshalText(b); err != nil || back != n {
			t.Errorf("text round trip of %v: %v, %v", n, back, err)
		}
	}
	if _, err := ParseName("precision"); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("unknown name: %v", err)
	}
	if got, _ := ParseName(""); got != NameAuto {
		t.Errorf(`ParseName("") = %v`, got)
	}
	if _, err := Name(99).MarshalText(); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("invalid name marshalled: %v", err)
	}
	if Name(99).String() != "Name(99)" {
		t.Errorf("invalid name: %q", Name(99).String())
	}
	maximize := map[Name]bool{NameAccuracy: true, NameBalancedAccuracy: true, NameAUC: true, NameF1: true, NameR2: true, NameLogLoss: false, NameRMSE: false, NameMAE: false}
	for n, m := range maximize {
		if n.Maximize() != m {
			t.Errorf("%v.Maximize() = %v", n, n.Maximize())
		}
		lo, hi := 0.25, 0.75
		if n.Better(hi, lo) != m || n.Better(lo, hi) == m || n.Better(lo, lo) {
			t.Errorf("%v.Better is not consistent with Maximize", n)
		}
		if n.Better(math.NaN(), lo) || !n.Better(lo, math.NaN()) {
			t.Errorf("%v.Better mishandles NaN", n)
		}
		if err := n.CheckTask(n.Classification()); err != nil {
			t.Errorf("%v on its own task: %v", n, err)
		}
		if err := n.CheckTask(!n.Classification()); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%v on the other task: %v", n, err)
		}
	}
	if NameAuto.Better(1, 0) || NameAuto.Resolve(true) != NameAccuracy || NameAuto.Resolve(false) != NameRMSE {
		t.Errorf("NameAuto: Better %v, Resolve %v %v", NameAuto.Better(1, 0), NameAuto.Resolve(true), NameAuto.Resolve(false))
	}
	if !NameAUC.NeedsProbabilities() || NameF1.NeedsProbabilities() {
		t.Error("NeedsProbabilities")
	}
}

func TestReport(t *testing.T) {
	y := []float64{0, 0, 0, 1, 1}
	pred := []float64{0, 0, 1, 1, 0}
	p1 := []float64{0.1, 0.2, 0.7, 0.8, 0.4}
	col := mat.NewDense(5, 1, p1)
	both := twoColumns(p1)
	classes := []float64{0, 1}
	r1, err := ClassificationReport(pred, y, nil, classes, col)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ClassificationReport(pred, y, nil, classes, both)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if string(j1) != string(j2) {
		t.Errorf("n x 1 and n x 2 probabilities differ:\n%s\n%s", j1, j2)
	}
	// Each field against its function.
	checks := []struct {
		name string
		got  *float64
		want func() (float64, error)
	}{
		{"accuracy", r1.Accuracy, func() (float64, error) { return Accuracy(pred, y, nil) }},
		{"balanced", r1.BalancedAccuracy, func() (float64, error) { return BalancedAccuracy(pred, y, nil) }},
		{"auc", r1.AUC, func() (float64, error) { return ROCAUC(p1, y, nil) }},
		{"logloss", r1.LogLoss, func() (float64, error) { return BinaryLogLoss(p1, y, nil) }},
		{"brier", r1.Brier, func() (float64, error) { return BinaryBrier(p1, y, nil) }},
		{"f1", r1.F1, func() (float64, error) {
			// Labels as scores at threshold 1: the positive class's F1.
			r, err := BinaryPRF(pred, y, nil, 1)
			return r.F1, err
		}},
	}
	for _, c := range checks {
		if c.got == nil {
			t.Errorf("%s missing", c.name)
			continue
		}
		near(t, c.name, *c.got, must(t)(c.want()))
	}
	if r1.RMSE != nil || r1.R2 != nil || r1.PoissonDeviance != nil {
		t.Error("regression metrics in a classification report")
	}
	var m map[string]any
	if err := json.Unmarshal(j1, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rmse", "mae", "r2", "poisson_deviance"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("JSON %s = %v (present %v), want null", k, v, ok)
		}
	}
	if v, ok := r1.Value(NameAUC); !ok || v != *r1.AUC {
		t.Errorf("Value(auc) = %v, %v", v, ok)
	}
	if _, ok := r1.Value(NameRMSE); ok {
		t.Error("Value(rmse) present in a classification report")
	}

	// One class in the labels: AUC undefined (null), the rest reported;
	// the positive class's F1 is 0 with a false alarm (2 TP / (2 TP + FP +
	// FN) = 0/1) and undefined without one (0/0).
	r, err := ClassificationReport([]float64{0, 1}, []float64{0, 0}, nil, classes, mat.NewDense(2, 1, []float64{0.2, 0.6}))
	if err != nil {
		t.Fatal(err)
	}
	if r.AUC != nil || r.LogLoss == nil || r.F1 == nil || *r.F1 != 0 {
		t.Errorf("one class: AUC %v, logloss %v, F1 %v", r.AUC, r.LogLoss, r.F1)
	}
	r, err = ClassificationReport([]float64{0, 0}, []float64{0, 0}, nil, classes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.F1 != nil || r.AUC != nil || r.Accuracy == nil || *r.Accuracy != 1 {
		t.Errorf("one class, no alarm: F1 %v, AUC %v, accuracy %v", r.F1, r.AUC, r.Accuracy)
	}
	if _, err := ClassificationReport(pred, y, nil, nil, col); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("probabilities without classes: %v", err)
	}

	// Multiclass: the multiclass functions.
	p, cl, ym := probs()
	predm := []float64{0, 1, 2, 1}
	rm, err := ClassificationReport(predm, ym, nil, cl, p)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "multiclass auc", *rm.AUC, must(t)(ROCAUCMulti(p, cl, ym, nil)))
	near(t, "multiclass logloss", *rm.LogLoss, must(t)(LogLoss(p, cl, ym, nil)))
	near(t, "multiclass brier", *rm.Brier, must(t)(Brier(p, cl, ym, nil)))
	s, _ := PerClass(predm, ym, nil, cl)
	near(t, "macro f1", *rm.F1, s.MacroF1)

	// Regression: constant labels have no R^2, negative predictions no
	// Poisson deviance; the JSON names of zonal fit.
	rr, err := RegressionReport([]float64{-1, 2}, []float64{1, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rr.R2 != nil || rr.PoissonDeviance != nil || rr.RMSE == nil || rr.Accuracy != nil {
		t.Errorf("regression report %+v", rr)
	}
	js, _ := json.Marshal(rr)
	for _, k := range []string{`"rmse":`, `"mae":`, `"r2":null`, `"accuracy":null`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("JSON %s lacks %s", js, k)
		}
	}
	rr, err = RegressionReport([]float64{0.5, 1, 2}, []float64{0, 2, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "report poisson", *rr.PoissonDeviance, must(t)(PoissonDeviance([]float64{0.5, 1, 2}, []float64{0, 2, 1}, nil)))
}

package calibrate

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"gonum.org/v1/gonum/mat"
)

// TestRoundTrip stores every calibrator through JSON and gob (what a model
// file does with the exported fields), validates the decoded copy and
// requires bit-identical outputs on scores inside, between and outside
// the fitted knots.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	s, y := miscalibrated(rng, 300)
	probe := []float64{-1, 0, 1e-9, 0.01, 0.1, 0.3333, 0.5, 0.9, 1, 2}
	for range 50 {
		probe = append(probe, rng.Float64())
	}
	platt, _ := FitPlatt(s, y, nil)
	iso, _ := FitIsotonic(s, y, nil)
	scores, labels := multiData(rng, 300)
	classes := []float64{0, 1, 2}
	mp, err := FitMulticlass(MethodPlatt, scores, classes, labels, nil)
	if err != nil {
		t.Fatal(err)
	}
	mi, err := FitMulticlass(MethodIsotonic, scores, classes, labels, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := map[string]func(any, any) error{
		"json": func(in, out any) error {
			b, err := json.Marshal(in)
			if err != nil {
				return err
			}
			return json.Unmarshal(b, out)
		},
		"gob": func(in, out any) error {
			var b bytes.Buffer
			if err := gob.NewEncoder(&b).Encode(in); err != nil {
				return err
			}
			return gob.NewDecoder(&b).Decode(out)
		},
	}
	for name, rt := range enc {
		for _, c := range []Calibrator{platt, iso} {
			var back Calibrator
			switch c.(type) {
			case *Platt:
				back = &Platt{}
			case *Isotonic:
				back = &Isotonic{}
			}
			if err := rt(c, back); err != nil {
				t.Fatal(err)
			}
			if err := back.Validate(); err != nil {
				t.Fatalf("%s %s: %v", name, c.Method(), err)
			}
			for _, x := range probe {
				if a, b := c.Apply(x), back.Apply(x); math.Float64bits(a) != math.Float64bits(b) {
					t.Errorf("%s %s: Apply(%g) = %g before, %g after", name, c.Method(), x, a, b)
				}
			}
		}
		for _, m := range []*Multiclass{mp, mi} {
			back := &Multiclass{}
			if err := rt(m, back); err != nil {
				t.Fatal(err)
			}
			if err := back.Validate(); err != nil {
				t.Fatalf("%s multiclass %s: %v", name, m.Method, err)
			}
			a, _ := m.Apply(scores)
			b, _ := back.Apply(scores)
			if !mat.Equal(a, b) {
				t.Errorf("%s multiclass %s: outputs differ after the round trip", name, m.Method)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	nan := math.NaN()
	for name, c := range map[string]Calibrator{
		"Platt NaN":          &Platt{A: nan},
		"Platt Inf":          &Platt{B: math.Inf(1)},
		"isotonic empty":     &Isotonic{},
		"isotonic lengths":   &Isotonic{X: []float64{1, 2}, Y: []float64{0.5}},
		"isotonic X order":   &Isotonic{X: []float64{2, 1}, Y: []float64{0.1, 0.2}},
		"isotonic X repeat":  &Isotonic{X: []float64{1, 1}, Y: []float64{0.1, 0.2}},
		"isotonic Y order":   &Isotonic{X: []float64{1, 2}, Y: []float64{0.3, 0.2}},
		"isotonic Y range":   &Isotonic{X: []float64{1, 2}, Y: []float64{0.3, 1.2}},
		"isotonic NaN":       &Isotonic{X: []float64{nan}, Y: []float64{0.3}},
		"isotonic Y NaN":     &Isotonic{X: []float64{1}, Y: []float64{nan}},
		"isotonic X Inf":     &Isotonic{X: []float64{math.Inf(-1), 1}, Y: []float64{0, 0.3}},
		"isotonic Y too low": &Isotonic{X: []float64{1}, Y: []float64{-0.1}},
	} {
		if err := c.Validate(); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	if !math.IsNaN((&Isotonic{}).Apply(1)) {
		t.Error("Apply of an empty isotonic calibrator is not NaN")
	}
	good := Platt{A: 1}
	for name, m := range map[string]*Multiclass{
		"method":     {Method: 7, Classes: []float64{0, 1}, Platt: []Platt{good, good}},
		"one class":  {Classes: []float64{0}, Platt: []Platt{good}},
		"repeated":   {Classes: []float64{0, 0}, Platt: []Platt{good, good}},
		"count":      {Classes: []float64{0, 1}, Platt: []Platt{good}},
		"other kind": {Classes: []float64{0, 1}, Platt: []Platt{good, good}, Isotonic: []Isotonic{{X: []float64{0}, Y: []float64{0}}}},
		"isotonic":   {Method: MethodIsotonic, Classes: []float64{0, 1}, Platt: []Platt{good, good}},
		"bad member": {Classes: []float64{0, 1}, Platt: []Platt{good, {A: nan}}},
	} {
		if err := m.Validate(); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("multiclass %s: %v, want ErrFormat", name, err)
		}
	}
	if err := (&Multiclass{Classes: []float64{0, 1}, Platt: []Platt{good, good}}).Validate(); err != nil {
		t.Errorf("a valid multiclass calibrator: %v", err)
	}
	short := &Multiclass{Classes: []float64{0, 1}, Platt: []Platt{good}}
	if err := short.ApplyRow(make([]float64, 2), []float64{0, 1}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("ApplyRow with a missing member: %v", err)
	}
}

func TestMethod(t *testing.T) {
	for _, m := range []Method{MethodPlatt, MethodIsotonic} {
		got, err := ParseMethod(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %v, %v", m, got, err)
		}
		b, _ := m.MarshalText()
		var back Method
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("text round trip of %v: %v %v", m, back, err)
		}
	}
	if _, err := ParseMethod("sigmoid"); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("unknown method: %v", err)
	}
	if m, _ := ParseMethod(""); m != MethodPlatt {
		t.Errorf(`ParseMethod("") = %v`, m)
	}
	if _, err := Fit(Method(9), []float64{0, 1}, []float64{0, 1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Fit with an invalid method: %v", err)
	}
	if Method(9).String() != "Method(9)" {
		t.Errorf("invalid method: %q", Method(9).String())
	}
}

func TestFitErrors(t *testing.T) {
	s := []float64{0.1, 0.4, 0.8}
	y := []float64{0, 1, 1}
	for _, m := range []Method{MethodPlatt, MethodIsotonic} {
		for name, c := range map[string]struct {
			s, y, w []float64
			want    error
		}{
			"NaN score":    {[]float64{0.1, math.NaN(), 0.8}, y, nil, zonal.ErrNonFinite},
			"Inf score":    {[]float64{0.1, math.Inf(1), 0.8}, y, nil, zonal.ErrNonFinite},
			"one class":    {s, []float64{1, 1, 1}, nil, zonal.ErrParam},
			"three":        {s, []float64{0, 1, 2}, nil, zonal.ErrParam},
			"length":       {s[:2], y, nil, zonal.ErrShape},
			"weights":      {s, y, []float64{1, -1, 1}, zonal.ErrParam},
			"zero weights": {s, y, []float64{0, 0, 0}, zonal.ErrParam},
			"empty":        {nil, nil, nil, zonal.ErrEmpty},
		} {
			if _, err := Fit(m, c.s, c.y, c.w); !errors.Is(err, c.want) {
				t.Errorf("%s with %s: %v, want %v", m, name, err, c.want)
			}
		}
	}
}

// TestFitCV checks that the folds are stratified, that fitAndScore is
// never asked to score a row it trained on and scores every row once, and
// that the calibrator is the fit of the out-of-fold scores.
func TestFitCV(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	n := 500
	x, y := miscalibrated(rng, n)
	// About 6% positives, to make stratification matter.
	for i := range y {
		y[i] = 0
		if i%17 == 0 {
			y[i] = 1
		}
	}
	folds, err := StratifiedFolds(y, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	pos := make([]int, 5)
	for f, fold := range folds {
		for _, i := range fold.Test {
			if y[i] == 1 {
				pos[f]++
			}
		}
		if len(fold.Train)+len(fold.Test) != n {
			t.Fatalf("fold %d: %d train + %d test rows", f, len(fold.Train), len(fold.Test))
		}
	}
	total := (n + 16) / 17
	for f, p := range pos {
		if p < total/5 || p > total/5+1 {
			t.Errorf("fold %d holds %d of the %d positives", f, p, total)
		}
	}

	scored := make([]int, n)
	// The "model" adds the training rows' positive rate to x: its scores
	// depend on the fold, which the calibrator must see.
	fit := func(train, test []int) ([]float64, error) {
		in := make(map[int]bool, len(train))
		rate := 0.0
		for _, i := range train {
			in[i] = true
			rate += y[i]
		}
		rate /= float64(len(train))
		out := make([]float64, len(test))
		for t2, i := range test {
			if in[i] {
				t.Errorf("row %d is scored by a model trained on it", i)
			}
			scored[i]++
			out[t2] = x[i] + rate
		}
		return out, nil
	}
	c, oof, err := FitCV(context.Background(), MethodIsotonic, y, nil, 5, 1, fit)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range scored {
		if k != 1 {
			t.Fatalf("row %d scored %d times", i, k)
		}
	}
	want, _ := FitIsotonic(oof, y, nil)
	if got := c.(*Isotonic); !close(got.X, want.X, 0) || !close(got.Y, want.Y, 0) {
		t.Error("FitCV's calibrator is not the fit of its out-of-fold scores")
	}
	for _, fold := range folds {
		expect, _ := fit(fold.Train, fold.Test)
		for t2, i := range fold.Test {
			if oof[i] != expect[t2] {
				t.Fatalf("out-of-fold score of row %d: %g, want %g", i, oof[i], expect[t2])
			}
		}
	}

	// Cancelled: no fold runs.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	_, _, err = FitCV(ctx, MethodPlatt, y, nil, 5, 1, func(train, test []int) ([]float64, error) { calls++; return nil, nil })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled: %v after %d calls", err, calls)
	}
	// A score slice of the wrong length, a failing fit, too few rows of a
	// class, bad folds.
	if _, _, err := FitCV(context.Background(), MethodPlatt, y, nil, 5, 1, func(train, test []int) ([]float64, error) { return make([]float64, 1), nil }); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short scores: %v", err)
	}
	boom := errors.New("boom")
	if _, _, err := FitCV(context.Background(), MethodPlatt, y, nil, 5, 1, func(train, test []int) ([]float64, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("failing fit: %v", err)
	}
	if _, err := StratifiedFolds([]float64{0, 0, 0, 1}, 2, 1); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("a class smaller than k: %v", err)
	}
	bad := []dataset.Fold{{Test: []int{0, 1}}, {Test: []int{1, 2}}}
	if _, err := OutOfFold(context.Background(), 3, bad, fit); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("overlapping folds: %v", err)
	}
	if _, err := OutOfFold(context.Background(), 4, []dataset.Fold{{Test: []int{0, 1, 2}}}, fit); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("a row never tested: %v", err)
	}
	leaky := []dataset.Fold{{Train: []int{0, 1}, Test: []int{0}}, {Train: []int{0}, Test: []int{1}}}
	if _, err := OutOfFold(context.Background(), 2, leaky, fit); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("a fold training on its test row: %v", err)
	}
}

func TestFitMulticlassCV(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	scores, y := multiData(rng, 300)
	classes := []float64{0, 1, 2}
	fit := func(train, test []int) (*mat.Dense, error) {
		out := mat.NewDense(len(test), 3, nil)
		for t2, i := range test {
			out.SetRow(t2, scores.RawRowView(i))
		}
		return out, nil
	}
	mc, oof, err := FitMulticlassCV(context.Background(), MethodPlatt, classes, y, nil, 4, 2, fit)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(oof, scores) {
		t.Error("out-of-fold matrix does not put each row's scores in its row")
	}
	direct, _ := FitMulticlass(MethodPlatt, scores, classes, y, nil)
	a, _ := mc.Apply(scores)
	b, _ := direct.Apply(scores)
	if !mat.Equal(a, b) {
		t.Error("FitMulticlassCV differs from FitMulticlass on the same scores")
	}
	if _, _, err := FitMulticlassCV(context.Background(), MethodPlatt, classes, y, nil, 4, 2, func(train, test []int) (*mat.Dense, error) {
		return mat.NewDense(len(test), 2, nil), nil
	}); err == nil {
		t.Error("two score columns for three classes: no error")
	}
}

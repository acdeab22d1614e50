package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
)

// calibratedPipelines returns a calibrated binary KRR pipeline (Platt) and
// a calibrated 3-class FALKON pipeline (isotonic) with a scaler, and test
// rows. The calibrators are fitted on the training rows' own outputs: that
// is wrong for a real model (see package calibrate) but enough to give
// valid calibrators of both kinds for these tests.
func calibratedPipelines(t testing.TB) (bin, multi *Pipeline, xt *mat.Dense) {
	t.Helper()
	ps, xt := fittedPipelines(t)
	x, y := synth(90, 3, 21)
	labels := make([]float64, 90)
	for i := range labels {
		if y.At(i, 0) > 0.3 {
			labels[i] = 1
		}
	}
	enc, err := NewEncoding(labels, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := enc.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	m, err := FitKRR(bg, testGauss{1.2}, x, tg, 1e-2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bin, err = NewPipeline(nil, enc, m)
	if err != nil {
		t.Fatal(err)
	}
	out := mat.NewDense(90, 1, nil)
	if err := bin.PredictOutputs(out, x); err != nil {
		t.Fatal(err)
	}
	pl, err := calibrate.FitPlatt(mat.Col(nil, 0, out), labels, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bin, err = bin.WithCalibration(&Calibration{Binary: pl}); err != nil {
		t.Fatal(err)
	}

	multi = ps[KindFalkon]
	out3 := mat.NewDense(90, 3, nil)
	if err := multi.PredictOutputs(out3, x); err != nil {
		t.Fatal(err)
	}
	lab3 := tercileLabels(y) // the true labels of fittedPipelines' 3-class encoding
	mc, err := calibrate.FitMulticlass(calibrate.MethodIsotonic, out3, multi.Encoding.Classes, lab3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if multi, err = multi.WithCalibration(&Calibration{Multiclass: mc}); err != nil {
		t.Fatal(err)
	}
	return bin, multi, xt
}

// checkProba asserts that prob is n x k, every entry in [0, 1] and every
// row summing to 1 within 1e-12 (k values of at most 1 summed in float64:
// a few ulps; 1e-12 leaves room and still catches any unnormalised row).
func checkProba(t *testing.T, prob *mat.Dense, n, k int) {
	t.Helper()
	if r, c := prob.Dims(); r != n || c != k {
		t.Fatalf("probabilities are %d x %d, want %d x %d", r, c, n, k)
	}
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range prob.RawRowView(i) {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("row %d: probability %v outside [0, 1]", i, v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
}

// Probabilities are in [0, 1], rows sum to 1, and a saved and reloaded
// pipeline gives the same probabilities bit for bit, from a format-3 file
// that re-saves to the same bytes.
func TestPipelineProbaSaveLoad(t *testing.T) {
	bin, multi, xt := calibratedPipelines(t)
	n, _ := xt.Dims()
	for name, p := range map[string]*Pipeline{"binary platt": bin, "3-class isotonic": multi} {
		t.Run(name, func(t *testing.T) {
			if !p.HasProbabilities() {
				t.Fatal("HasProbabilities false for a calibrated pipeline")
			}
			k := p.Classes()
			prob := mat.NewDense(n, k, nil)
			if err := p.PredictProba(prob, xt); err != nil {
				t.Fatal(err)
			}
			checkProba(t, prob, n, k)
			b, err := MarshalPipeline(p)
			if err != nil {
				t.Fatal(err)
			}
			if v := binary.LittleEndian.Uint16(b[len(fileMagic):]); v != 3 {
				t.Errorf("calibrated pipeline written as format %d, want 3", v)
			}
			q, err := Load(bytes.NewReader(b), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if q.Calibration == nil || q.Calibration.Method() != p.Calibration.Method() {
				t.Fatalf("reloaded calibration %+v", q.Calibration)
			}
			prob2 := mat.NewDense(n, k, nil)
			if err := q.PredictProba(prob2, xt); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(prob, prob2) {
				t.Fatalf("probabilities differ after reload by %g", maxAbsDiff(prob, prob2))
			}
			again, err := MarshalPipeline(q)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Fatal("re-saved calibrated file differs")
			}
			// WithText keeps the calibration.
			if r, err := q.WithText(nil); err != nil || r.Calibration != q.Calibration {
				t.Fatalf("WithText dropped the calibration (%v)", err)
			}
		})
	}
}

// Regression pipelines and classifiers without a calibration have no
// probabilities (ErrState), and a calibration must fit the classes.
func TestPipelineProbaErrors(t *testing.T) {
	ps, xt := fittedPipelines(t)
	bin, multi, _ := calibratedPipelines(t)
	n, _ := xt.Dims()
	for _, name := range []string{KindRidge, KindKRR} { // regression; uncalibrated 3 classes
		p := ps[name]
		if p.HasProbabilities() {
			t.Errorf("%s: HasProbabilities true", name)
		}
		err := p.PredictProba(mat.NewDense(n, max(1, p.Classes()), nil), xt)
		if !errors.Is(err, zonal.ErrState) {
			t.Errorf("%s: PredictProba error %v, want ErrState", name, err)
		}
	}
	if _, err := ps[KindRidge].WithCalibration(bin.Calibration); !errors.Is(err, zonal.ErrState) {
		t.Errorf("calibrating a regression pipeline: %v, want ErrState", err)
	}
	if _, err := ps[KindKRR].WithCalibration(bin.Calibration); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("binary calibration on 3 classes: %v, want ErrParam", err)
	}
	if _, err := bin.WithCalibration(multi.Calibration); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("multiclass calibration on 2 classes: %v, want ErrParam", err)
	}
	if _, err := bin.WithCalibration(&Calibration{Binary: &calibrate.Platt{A: math.NaN()}}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("NaN Platt: %v, want ErrParam", err)
	}
	if err := bin.PredictProba(mat.NewDense(n, 1, nil), xt); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("n x 1 dst for 2 classes: %v, want ErrShape", err)
	}
	if err := multi.PredictLabelsAt(make([]float64, n), xt, 0.5); !errors.Is(err, zonal.ErrState) {
		t.Errorf("threshold on 3 classes: %v, want ErrState", err)
	}
	if err := bin.PredictLabelsAt(make([]float64, n), xt, 1.5); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("threshold 1.5: %v, want ErrParam", err)
	}
}

// A calibrated binary pipeline decides by its probability: PredictLabels
// is the decision at 0.5, raising the threshold never adds a positive, the
// thresholds 0 and 1 predict by "probability > 0" and never positive.
func TestPipelineProbaThreshold(t *testing.T) {
	bin, _, xt := calibratedPipelines(t)
	n, _ := xt.Dims()
	prob := mat.NewDense(n, 2, nil)
	if err := bin.PredictProba(prob, xt); err != nil {
		t.Fatal(err)
	}
	lab := make([]float64, n)
	if err := bin.PredictLabels(lab, xt); err != nil {
		t.Fatal(err)
	}
	prev := n + 1
	for _, th := range []float64{0, 0.2, 0.5, 0.8, 1} {
		at := make([]float64, n)
		if err := bin.PredictLabelsAt(at, xt, th); err != nil {
			t.Fatal(err)
		}
		pos := 0
		for i, v := range at {
			want := bin.Encoding.Classes[0]
			if prob.At(i, 1) > th {
				want = bin.Encoding.Classes[1]
			}
			if v != want {
				t.Fatalf("threshold %g row %d: label %v with probability %v", th, i, v, prob.At(i, 1))
			}
			if v == bin.Encoding.Classes[1] {
				pos++
			}
			if th == DefaultThreshold && v != lab[i] {
				t.Fatalf("row %d: PredictLabels %v, threshold 0.5 %v", i, lab[i], v)
			}
		}
		if pos > prev {
			t.Fatalf("threshold %g predicts %d positives, more than %d at a lower one", th, pos, prev)
		}
		if th == 1 && pos != 0 {
			t.Fatalf("threshold 1 predicts %d positives", pos)
		}
		prev = pos
	}
}

// A calibration flag in a format-2 file, and a calibrator that Validate
// refuses, are malformed files.
func TestModelFileBadCalibration(t *testing.T) {
	bin, _, _ := calibratedPipelines(t)
	b, err := MarshalPipeline(bin)
	if err != nil {
		t.Fatal(err)
	}
	v2 := bytes.Clone(b)
	binary.LittleEndian.PutUint16(v2[len(fileMagic):], 2)
	if _, err := UnmarshalPipeline(fixCRC(v2), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("calibration in a format-2 file: %v, want ErrFormat", err)
	}
	// The Platt A follows the method byte after the flags; the binary
	// pipeline has no scaler or text transform, so it is at a fixed place:
	// magic, version, kind, task, classes (2), flags, method.
	off := len(fileMagic) + 2 + 8 + len(bin.Model.Kind()) + 1 + 8 + 2*8 + 1 + 1
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint64(bad[off:], math.Float64bits(math.Inf(1)))
	if _, err := UnmarshalPipeline(fixCRC(bad), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("Inf Platt A: %v, want ErrFormat", err)
	}
	bad = bytes.Clone(b)
	bad[off-1] = 7 // method
	if _, err := UnmarshalPipeline(fixCRC(bad), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("method 7: %v, want ErrFormat", err)
	}
}

// A calibrated pipeline's labels of a small batch still allocate nothing
// after warm-up (the calibrated decision is applied in place).
func TestPipelineProbaLabelsAllocFree(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items on purpose under -race; allocation counts are checked without it")
	}
	bin, multi, xt := calibratedPipelines(t)
	for name, p := range map[string]*Pipeline{"binary": bin, "3 classes": multi} {
		x := xt.Slice(0, 8, 0, 3).(*mat.Dense)
		labels := make([]float64, 8)
		if err := p.PredictLabels(labels, x); err != nil { // warm-up
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(50, func() { _ = p.PredictLabels(labels, x) }); a != 0 {
			t.Errorf("%s: PredictLabels allocates %g times", name, a)
		}
	}
}

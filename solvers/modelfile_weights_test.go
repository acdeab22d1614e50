package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// weightedRecord is a TrainingWeights record fitting p's encoding: class
// factors for a classifier, none for regression.
func weightedRecord(p *Pipeline) *TrainingWeights {
	tw := &TrainingWeights{Sum: 123.25, Rows: 87}
	if p.Encoding.Task == TaskClassification {
		for j := range p.Encoding.Classes {
			tw.ClassFactors = append(tw.ClassFactors, 0.5+float64(j))
		}
	}
	return tw
}

// weightedPipelines are fittedPipelines and calibratedPipelines, each with
// a record of training weights, and the same pipelines without it.
func weightedPipelines(t testing.TB) (weighted, plain map[string]*Pipeline, xt *mat.Dense) {
	t.Helper()
	plain, xt = fittedPipelines(t)
	bin, multi, _ := calibratedPipelines(t)
	plain["calibrated-binary"], plain["calibrated-multi"] = bin, multi
	weighted = map[string]*Pipeline{}
	for name, p := range plain {
		q, err := p.WithWeights(weightedRecord(p))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		weighted[name] = q
	}
	return weighted, plain, xt
}

func fileVersion(b []byte) uint16 { return binary.LittleEndian.Uint16(b[len(fileMagic):]) }

// TestWeightsRoundTrip: a pipeline's record of training weights survives
// save and load (equal record, the models' WeightSum restored from it,
// the same predictions and, re-saved, the same bytes) in a version-4
// file, and removing the record gives the file of the pipeline that never
// had it, of its version as before (3 or lower).
func TestWeightsRoundTrip(t *testing.T) {
	weighted, plain, xt := weightedPipelines(t)
	n, _ := xt.Dims()
	for name, p := range weighted {
		t.Run(name, func(t *testing.T) {
			b, err := MarshalPipeline(p)
			if err != nil {
				t.Fatal(err)
			}
			if v := fileVersion(b); v != 4 {
				t.Fatalf("weighted file has version %d, want 4", v)
			}
			q, err := UnmarshalPipeline(b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(q.Weights, p.Weights) {
				t.Fatalf("loaded record %+v, saved %+v", q.Weights, p.Weights)
			}
			if ws, ok := q.Model.(interface{ WeightSum() float64 }); ok && ws.WeightSum() != p.Weights.Sum {
				t.Errorf("loaded model's WeightSum %g, record %g", ws.WeightSum(), p.Weights.Sum)
			}
			if (q.Calibration == nil) != (p.Calibration == nil) || (q.Scaler == nil) != (p.Scaler == nil) {
				t.Fatalf("loaded calibration %v, scaler %v", q.Calibration != nil, q.Scaler != nil)
			}
			a, c := mat.NewDense(n, p.Outputs(), nil), mat.NewDense(n, q.Outputs(), nil)
			if err := p.PredictOutputs(a, xt); err != nil {
				t.Fatal(err)
			}
			if err := q.PredictOutputs(c, xt); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a, c) {
				t.Fatalf("predictions differ after reload by %g", maxAbsDiff(a, c))
			}
			again, err := MarshalPipeline(q)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Fatal("re-saving a weighted file changed its bytes")
			}
			// Without the record: the bytes of the pipeline that never had one.
			stripped, err := q.WithWeights(nil)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := MarshalPipeline(stripped)
			if err != nil {
				t.Fatal(err)
			}
			want, err := MarshalPipeline(plain[name])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sb, want) {
				t.Fatal("a pipeline without its record does not write the unweighted file")
			}
			if v := fileVersion(want); v > 3 {
				t.Fatalf("unweighted file has version %d, want 3 or lower", v)
			}
		})
	}
}

// TestWeightedFitSurvivesLoad: a genuinely weighted FALKON fit, recorded
// with NewTrainingWeights, loads with the WeightSum it was fitted with.
func TestWeightedFitSurvivesLoad(t *testing.T) {
	x, y := synth(60, 3, 31)
	w := make([]float64, 60)
	for i := range w {
		w[i] = float64(i % 4) // a quarter of the rows weigh 0
	}
	f, err := FitFalkon(bg, testGauss{1.2}, x, y, 1e-4, FalkonOptions{Options: Options{Weights: w}, Centers: 15})
	if err != nil {
		t.Fatal(err)
	}
	tw, err := NewTrainingWeights(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tw.Rows != 45 || tw.Sum != f.WeightSum() || tw.ClassFactors != nil {
		t.Fatalf("record %+v for the fit of WeightSum %g on 45 rows of positive weight", tw, f.WeightSum())
	}
	p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, f)
	if err == nil {
		p, err = p.WithWeights(tw)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := UnmarshalPipeline(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Model.(*Falkon).WeightSum(); got != f.WeightSum() {
		t.Errorf("loaded WeightSum %g, fitted %g", got, f.WeightSum())
	}
	// Without a record the loaded model's WeightSum stays 0.
	plain, err := p.WithWeights(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = MarshalPipeline(plain); err != nil {
		t.Fatal(err)
	}
	if q, err = UnmarshalPipeline(b, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := q.Model.(*Falkon).WeightSum(); got != 0 || q.Weights != nil {
		t.Errorf("file without a record: WeightSum %g, record %v", got, q.Weights)
	}
	if tw, err := NewTrainingWeights(nil, nil); tw != nil || err != nil {
		t.Errorf("NewTrainingWeights(nil) = %v, %v; want nil, nil", tw, err)
	}
	if _, err := NewTrainingWeights([]float64{1, -1}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("negative weight: %v", err)
	}
}

// TestWithWeightsChecks: bad records are refused with the sentinels, and
// the pipeline keeps its own copy of the class factors.
func TestWithWeightsChecks(t *testing.T) {
	ps, _ := fittedPipelines(t)
	cls, reg := ps[KindKRR], ps[KindRidge] // 3 classes; regression
	for _, c := range []struct {
		name string
		p    *Pipeline
		tw   TrainingWeights
		want error
	}{
		{"zero sum", reg, TrainingWeights{Sum: 0, Rows: 3}, zonal.ErrParam},
		{"NaN sum", reg, TrainingWeights{Sum: math.NaN(), Rows: 3}, zonal.ErrParam},
		{"Inf sum", reg, TrainingWeights{Sum: math.Inf(1), Rows: 3}, zonal.ErrParam},
		{"no rows", reg, TrainingWeights{Sum: 1, Rows: 0}, zonal.ErrParam},
		{"factors on regression", reg, TrainingWeights{Sum: 1, Rows: 1, ClassFactors: []float64{1, 2}}, zonal.ErrShape},
		{"factor count", cls, TrainingWeights{Sum: 1, Rows: 1, ClassFactors: []float64{1, 2}}, zonal.ErrShape},
		{"negative factor", cls, TrainingWeights{Sum: 1, Rows: 1, ClassFactors: []float64{1, -2, 1}}, zonal.ErrParam},
		{"NaN factor", cls, TrainingWeights{Sum: 1, Rows: 1, ClassFactors: []float64{1, math.NaN(), 1}}, zonal.ErrParam},
	} {
		if _, err := c.p.WithWeights(&c.tw); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	cf := []float64{1, 2, 3}
	q, err := cls.WithWeights(&TrainingWeights{Sum: 6, Rows: 3, ClassFactors: cf})
	if err != nil {
		t.Fatal(err)
	}
	cf[0] = 99
	if q.Weights.ClassFactors[0] != 1 || cls.Weights != nil {
		t.Errorf("record %v after the caller's change; original pipeline's %v", q.Weights, cls.Weights)
	}
	// The record is kept by the other copying methods.
	if r, err := q.WithCalibration(nil); err != nil || r.Weights != q.Weights {
		t.Errorf("WithCalibration dropped the record: %v", err)
	}
	if r, err := q.WithText(nil); err != nil || r.Weights != q.Weights {
		t.Errorf("WithText dropped the record: %v", err)
	}
}

// TestLoadBadWeights: a version-4 file read as version 3 (the flag is
// unknown there), a truncated weights section and a section of bad values
// (checksum recomputed) are zonal.ErrFormat, never a panic; a build
// reading only to version 3 refuses a version-4 file by its version.
func TestLoadBadWeights(t *testing.T) {
	weighted, _, _ := weightedPipelines(t)
	p := weighted[KindFalkon] // 3 classes: section of 8 + 8 + 8 + 3*8 bytes
	good, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.Model.(PersistentModel).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	end := len(good) - 4 - len(body) // the weights section ends here
	start := end - (8 + 8 + 8 + 8*len(p.Weights.ClassFactors))
	if got := math.Float64frombits(binary.LittleEndian.Uint64(good[start:])); got != p.Weights.Sum {
		t.Fatalf("section offset: sum %g at %d, want %g", got, start, p.Weights.Sum)
	}
	asV3 := bytes.Clone(good)
	binary.LittleEndian.PutUint16(asV3[len(fileMagic):], 3)
	if _, err := UnmarshalPipeline(fixCRC(asV3), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("weights in a version-3 file: %v", err)
	}
	if FormatVersion != 4 {
		t.Fatalf("FormatVersion %d: the weights section is version 4", FormatVersion)
	}
	future := bytes.Clone(good)
	binary.LittleEndian.PutUint16(future[len(fileMagic):], FormatVersion+1)
	if _, err := UnmarshalPipeline(fixCRC(future), Options{}); !errors.Is(err, zonal.ErrVersion) {
		t.Errorf("a version beyond the build's: %v", err)
	}
	// Cut inside the section (the rest of the file follows, so lengths no
	// longer match): ErrFormat for every cut.
	for cut := start; cut < end; cut++ {
		bad := append(bytes.Clone(good[:cut]), good[end:len(good)-4]...)
		if _, err := UnmarshalPipeline(fixCRC(append(bad, 0, 0, 0, 0)), Options{}); !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("section cut to %d of %d bytes: %v", cut-start, end-start, err)
		}
	}
	put := func(off int, v uint64) []byte {
		bad := bytes.Clone(good)
		binary.LittleEndian.PutUint64(bad[off:], v)
		return fixCRC(bad)
	}
	for name, bad := range map[string][]byte{
		"zero sum":        put(start, 0),
		"NaN sum":         put(start, math.Float64bits(math.NaN())),
		"negative sum":    put(start, math.Float64bits(-1)),
		"zero rows":       put(start+8, 0),
		"huge rows":       put(start+8, math.MaxUint64),
		"factor count":    put(start+16, 2),
		"absurd count":    put(start+16, 1<<60),
		"negative factor": put(start+24, math.Float64bits(-0.5)),
		"Inf factor":      put(start+32, math.Float64bits(math.Inf(1))),
	} {
		if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Class factors recorded for a regression model.
	reg := weighted[KindRidge]
	rb, err := MarshalPipeline(reg)
	if err != nil {
		t.Fatal(err)
	}
	rbody, _ := reg.Model.(PersistentModel).MarshalBinary()
	rend := len(rb) - 4 - len(rbody)
	// Replace the empty factor list (its uint64 0) by one factor.
	bad := append(bytes.Clone(rb[:rend-8]), 1, 0, 0, 0, 0, 0, 0, 0)
	bad = binary.LittleEndian.AppendUint64(bad, math.Float64bits(1))
	bad = append(bad, rb[rend:]...)
	if _, err := UnmarshalPipeline(fixCRC(bad), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("class factors on a regression model: %v", err)
	}
}

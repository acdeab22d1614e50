package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/testctx"
	"gonum.org/v1/gonum/mat"
)

// fittedPipelines returns one fitted pipeline of every model kind, with a
// scaler and a 3-class encoding on some of them, and test inputs.
func fittedPipelines(t testing.TB) (map[string]*Pipeline, *mat.Dense) {
	t.Helper()
	x, y := synth(90, 3, 21)
	xt, _ := synth(40, 3, 22)
	k := testGauss{1.2}
	labels := tercileLabels(y)
	enc3, err := NewEncoding(labels, TaskAuto)
	if err != nil {
		t.Fatal(err)
	}
	y3, err := enc3.Targets(labels)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := NewScaler([]float64{0.1, -0.2, 0}, []float64{1.5, 2, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	reg := Encoding{Task: TaskRegression}
	fm, err := newExactMap(k, x.Slice(0, 25, 0, 3).(*mat.Dense))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Pipeline{}
	add := func(name string, s *Scaler, e Encoding, m Model, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := NewPipeline(s, e, m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = p
	}
	r, err := FitRidge(bg, fm, x, y, 1e-3, RidgeOptions{})
	add("ridge", sc, reg, r, err)
	kr, err := FitKRR(bg, k, x, y3, 1e-3, Options{})
	add("krr", nil, enc3, kr, err)
	f, err := FitFalkon(bg, k, x, y3, 1e-4, FalkonOptions{Centers: 20})
	add("falkon", sc, enc3, f, err)
	p, err := FitParK(bg, k, x, y, 1e-4, ParKOptions{Cells: 3, Centers: 30})
	add("park", sc, reg, p, err)
	lg, err := FitLogistic(bg, k, x, y3, 1e-3, LogisticOptions{Centers: 20})
	add("logistic", sc, enc3, lg, err)
	return out, xt
}

// tercileLabels are three classes from the targets y (n x 1): 3 below 0,
// 5 below 0.6, 7 above (those of fittedPipelines' classifiers).
func tercileLabels(y *mat.Dense) []float64 {
	n, _ := y.Dims()
	labels := make([]float64, n)
	for i := range labels {
		switch v := y.At(i, 0); {
		case v < 0:
			labels[i] = 3
		case v < 0.6:
			labels[i] = 5
		default:
			labels[i] = 7
		}
	}
	return labels
}

func TestSaveLoadRoundTrip(t *testing.T) {
	ps, xt := fittedPipelines(t)
	n, _ := xt.Dims()
	for name, p := range ps {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Save(&buf, p); err != nil {
				t.Fatal(err)
			}
			q, err := Load(bytes.NewReader(buf.Bytes()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if q.Model.Kind() != name || q.Encoding.Task != p.Encoding.Task || len(q.Encoding.Classes) != len(p.Encoding.Classes) || (q.Scaler == nil) != (p.Scaler == nil) {
				t.Fatalf("reloaded %s/%v/%v, scaler %v", q.Model.Kind(), q.Encoding.Task, q.Encoding.Classes, q.Scaler != nil)
			}
			// Bit-identical outputs, large batch and single rows.
			a := mat.NewDense(n, p.Outputs(), nil)
			b := mat.NewDense(n, q.Outputs(), nil)
			if err := p.PredictOutputs(a, xt); err != nil {
				t.Fatal(err)
			}
			if err := q.PredictOutputs(b, xt); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a, b) {
				t.Fatalf("predictions differ after reload by %g", maxAbsDiff(a, b))
			}
			one, two := mat.NewDense(1, p.Outputs(), nil), mat.NewDense(1, p.Outputs(), nil)
			row := xt.Slice(3, 4, 0, 3).(*mat.Dense)
			_ = p.PredictOutputs(one, row)
			_ = q.PredictOutputs(two, row)
			if !mat.Equal(one, two) {
				t.Fatal("single-row predictions differ after reload")
			}
			// Saving the reloaded model gives the same bytes.
			var buf2 bytes.Buffer
			if err := Save(&buf2, q); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
				t.Fatal("re-saved file differs")
			}
		})
	}
}

func TestLoadBadFiles(t *testing.T) {
	ps, _ := fittedPipelines(t)
	good, err := MarshalPipeline(ps["park"])
	if err != nil {
		t.Fatal(err)
	}
	// Every truncation is caught (by length or checksum).
	for _, n := range []int{0, 3, 8, 9, 10, 13, 14, 50, len(good) / 2, len(good) - 5, len(good) - 1} {
		if _, err := UnmarshalPipeline(good[:n], Options{}); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	// A flipped bit anywhere after the header is caught by the checksum.
	for _, i := range []int{10, 20, len(good) / 3, len(good) - 8, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("bit flip at %d: err = %v", i, err)
		}
	}
	bad := bytes.Clone(good)
	bad[0] = 'X'
	if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("bad magic: %v", err)
	}
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint16(bad[8:], FormatVersion+1)
	if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrVersion) {
		t.Errorf("future version: %v", err)
	}
	// A consistent checksum over inconsistent contents is caught by the parser.
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[10:], 1<<60) // kind length
	bad = fixCRC(bad)
	if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("absurd length: %v", err)
	}
	bad = append(bytes.Clone(good[:len(good)-4]), 0)
	if _, err := UnmarshalPipeline(fixCRC(append(bad, 0, 0, 0, 0)), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("trailing byte: %v", err)
	}
}

// fixCRC recomputes the trailing checksum of a (modified) model file.
func fixCRC(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
	return b
}

// FuzzLoad: no input makes the loader panic or accept garbage silently; with
// the checksum recomputed the fuzzer reaches the field parser too.
func FuzzLoad(f *testing.F) {
	ps, xt := fittedPipelines(f)
	for _, name := range []string{"ridge", "krr", "falkon", "park", "logistic"} {
		b, err := MarshalPipeline(ps[name])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	bin, multi, _ := calibratedPipelines(f)
	for _, p := range []*Pipeline{bin, multi} {
		b, err := MarshalPipeline(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	weighted, _, _ := weightedPipelines(f)
	for _, name := range []string{"krr", "park", "calibrated-multi"} {
		b, err := MarshalPipeline(weighted[name])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("ZONALMDL\x01\x00"))
	row := xt.Slice(0, 1, 0, 3).(*mat.Dense)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, fixCRC(b)} {
			// Decoding allocates about len(b) bytes: far below the bound of
			// testctx.WithinBudget for the fuzzer's inputs (Load is
			// io.ReadAll and UnmarshalPipeline).
			var p *Pipeline
			var err error
			testctx.WithinBudget(t, "Load", func() { p, err = Load(bytes.NewReader(in), Options{}) })
			if err != nil {
				if !errors.Is(err, zonal.ErrFormat) && !errors.Is(err, zonal.ErrVersion) {
					t.Fatalf("error without sentinel: %v", err)
				}
				continue
			}
			// A file that loads must serve predictions of its own shape.
			if p.InputDim() == 3 {
				out := make([]float64, 1)
				_ = p.PredictLabels(out, row)
				if p.HasProbabilities() {
					_ = p.PredictProba(mat.NewDense(1, p.Classes(), nil), row)
				}
			}
		}
	})
}

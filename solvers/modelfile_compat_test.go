package solvers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/v1_*.zonal and their expected predictions")

// goldenKinds are the model kinds of the format-1 files in testdata, written
// by fittedPipelines before the model kinds moved to a registry.
var goldenKinds = []string{KindRidge, KindKRR, KindFalkon, KindParK}

// goldenPredictions holds, per kind, the outputs of the saved pipeline on
// the test rows of fittedPipelines, each row predicted on its own (the
// pure-Go single-row path, the same bits on every backend).
type goldenPredictions map[string][][]float64

func goldenPath(name string) string { return filepath.Join("testdata", name) }

// TestModelFileCompat loads the model files written by an earlier build and
// checks that (1) they still load, (2) they predict what they predicted when
// they were written: single rows bit for bit, a 40-row batch (kernel blocks
// and Gemm, whose summation order depends on the backend) within 1e-12
// relative to the largest output, and (3) saving them again reproduces the
// file byte for byte.
func TestModelFileCompat(t *testing.T) {
	ps, xt := fittedPipelines(t)
	n, d := xt.Dims()
	if *updateGolden {
		want := goldenPredictions{}
		for _, kind := range goldenKinds {
			b, err := MarshalPipeline(ps[kind])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(goldenPath("v1_"+kind+".zonal"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			want[kind] = singleRowOutputs(t, ps[kind], xt)
		}
		js, err := json.MarshalIndent(want, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath("v1_predictions.json"), js, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js, err := os.ReadFile(goldenPath("v1_predictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want goldenPredictions
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	for _, kind := range goldenKinds {
		t.Run(kind, func(t *testing.T) {
			file, err := os.ReadFile(goldenPath("v1_" + kind + ".zonal"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := UnmarshalPipeline(file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Model.Kind() != kind || p.InputDim() != d {
				t.Fatalf("loaded kind %q with %d inputs, want %q with %d", p.Model.Kind(), p.InputDim(), kind, d)
			}
			got := singleRowOutputs(t, p, xt)
			w := want[kind]
			if len(w) != n {
				t.Fatalf("%d expected rows, want %d", len(w), n)
			}
			scale := 0.0
			for i := range got {
				for j := range got[i] {
					if got[i][j] != w[i][j] {
						t.Fatalf("row %d output %d: %v, the file predicted %v when written", i, j, got[i][j], w[i][j])
					}
					scale = math.Max(scale, math.Abs(w[i][j]))
				}
			}
			batch := mat.NewDense(n, p.Outputs(), nil)
			if err := p.PredictOutputs(batch, xt); err != nil {
				t.Fatal(err)
			}
			for i := range w {
				for j, v := range w[i] {
					if math.Abs(batch.At(i, j)-v) > 1e-12*scale {
						t.Fatalf("batch row %d output %d: %v, want %v", i, j, batch.At(i, j), v)
					}
				}
			}
			again, err := MarshalPipeline(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, file) {
				t.Fatal("re-saving a format-1 file changed its bytes")
			}
		})
	}
}

func singleRowOutputs(t *testing.T, p *Pipeline, x *mat.Dense) [][]float64 {
	t.Helper()
	n, d := x.Dims()
	out := make([][]float64, n)
	for i := range out {
		o := mat.NewDense(1, p.Outputs(), nil)
		if err := p.PredictOutputs(o, x.Slice(i, i+1, 0, d).(*mat.Dense)); err != nil {
			t.Fatal(err)
		}
		out[i] = o.RawRowView(0)
	}
	return out
}

// v2Golden is a format-2 file (a FALKON pipeline with a text transform)
// written by the build before calibrators were stored.
const v2Golden = "v2_falkon_text.zonal"

// TestModelFileV2Compat loads the format-2 file written by an earlier build:
// it still loads as format 2, has no calibration, and saving it again
// reproduces the file byte for byte (files without a calibrator are written
// as before).
func TestModelFileV2Compat(t *testing.T) {
	if *updateGolden {
		ps, _ := fittedPipelines(t)
		x, _ := synth(90, 3, 21)
		tt, err := dataset.FitTextTransform(x, dataset.TextOptions{Normalize: true})
		if err != nil {
			t.Fatal(err)
		}
		p, err := ps[KindFalkon].WithText(tt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalPipeline(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath(v2Golden), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(goldenPath(v2Golden))
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(file[len(fileMagic):]); v != 2 {
		t.Fatalf("golden file has format %d, want 2", v)
	}
	p, err := UnmarshalPipeline(file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Text == nil || p.Model.Kind() != KindFalkon {
		t.Fatalf("loaded kind %q, text transform %v", p.Model.Kind(), p.Text != nil)
	}
	again, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, file) {
		t.Fatal("re-saving a format-2 file changed its bytes")
	}
}

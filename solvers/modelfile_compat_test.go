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
			w := want[kind]
			// Single rows bit for bit; the batch within 1e-12 of the
			// largest output (the summation order is the backend's).
			checkGoldenFile(t, goldenFile{name: "v1_" + kind + ".zonal", kind: kind, x: xt, want: w, batchTol: 1e-12 * maxAbsRows(w)})
		})
	}
}

// goldenFile is a saved pipeline file in testdata and what it must do.
type goldenFile struct {
	name string     // the file's name in testdata
	kind string     // the model kind it must load as
	x    *mat.Dense // the test rows
	// want is the outputs of each row of x predicted alone when the file
	// was written.
	want [][]float64
	// oneTol and batchTol bound |output - want| for the rows predicted
	// alone and for x predicted as one batch; zero means the same bits.
	oneTol, batchTol float64
}

// checkGoldenFile loads g's file and checks that (1) it loads as a model
// of g.kind taking x's columns, (2) each row of x predicted alone is
// within g.oneTol of g.want, (3) x predicted as one batch is within
// g.batchTol of g.want, and (4) saving the loaded pipeline again
// reproduces the file byte for byte. It returns the pipeline and its
// single-row outputs, for the checks of the caller's own.
func checkGoldenFile(t *testing.T, g goldenFile) (*Pipeline, [][]float64) {
	t.Helper()
	file, err := os.ReadFile(goldenPath(g.name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := UnmarshalPipeline(file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, d := g.x.Dims()
	if p.Model.Kind() != g.kind || p.InputDim() != d {
		t.Fatalf("%s: loaded kind %q with %d inputs, want %q with %d", g.name, p.Model.Kind(), p.InputDim(), g.kind, d)
	}
	if len(g.want) != n {
		t.Fatalf("%s: %d expected rows, want %d", g.name, len(g.want), n)
	}
	one := singleRowOutputs(t, p, g.x)
	batch := mat.NewDense(n, p.Outputs(), nil)
	if err := p.PredictOutputs(batch, g.x); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i, w := range g.want {
		if len(w) != p.Outputs() {
			t.Fatalf("%s: row %d has %d expected outputs, the model %d", g.name, i, len(w), p.Outputs())
		}
		for j, v := range w {
			e := math.Abs(one[i][j] - v)
			worst = math.Max(worst, e)
			if e > g.oneTol || (g.oneTol == 0 && one[i][j] != v) {
				t.Errorf("%s: row %d output %d alone: %v, the file predicted %v when written (tolerance %.3g)", g.name, i, j, one[i][j], v, g.oneTol)
			}
			if b := batch.At(i, j); math.Abs(b-v) > g.batchTol || (g.batchTol == 0 && b != v) {
				t.Errorf("%s: row %d output %d of the %d-row batch: %v, want %v (tolerance %.3g)", g.name, i, j, n, b, v, g.batchTol)
			}
		}
	}
	if g.oneTol > 0 {
		t.Logf("%s: largest difference from the predictions when written: %.3g", g.name, worst)
	}
	again, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, file) {
		t.Errorf("%s: saving the loaded pipeline again changed the file", g.name)
	}
	return p, one
}

// maxAbsRows is the largest |v| of the rows w.
func maxAbsRows(w [][]float64) float64 {
	m := 0.0
	for _, r := range w {
		for _, v := range r {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
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

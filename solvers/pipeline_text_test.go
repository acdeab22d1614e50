package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"gonum.org/v1/gonum/mat"
)

// textPipeline fits KRR on tf-idf + normalized count rows and returns the
// pipeline (text transform and scaler), the raw training counts and the
// transformed ones.
func textPipeline(t *testing.T) (*Pipeline, *mat.Dense) {
	t.Helper()
	x, _ := synth(60, 4, 31)
	raw := x.RawMatrix()
	for i := range raw.Data { // counts 0..3
		raw.Data[i] = math.Floor(math.Abs(raw.Data[i]) * 2)
	}
	y := mat.NewDense(60, 1, nil)
	for i := 0; i < 60; i++ {
		y.Set(i, 0, x.At(i, 0)-x.At(i, 2))
	}
	tt, err := dataset.FitTextTransform(x, dataset.TextOptions{TFIDF: true, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	xt := mat.DenseCopyOf(x)
	if err := tt.Apply(xt); err != nil {
		t.Fatal(err)
	}
	sc, err := NewScaler([]float64{0.2, 0.1, 0, -0.1}, []float64{1, 2, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	xs := mat.DenseCopyOf(xt)
	for i := 0; i < 60; i++ {
		sc.applyRow(rowOf(xs, i), rowOf(xs, i))
	}
	m, err := FitKRR(t.Context(), testGauss{1}, xs, y, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(sc, Encoding{Task: TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = p.WithText(tt); err != nil {
		t.Fatal(err)
	}
	return p, x
}

func TestPipelineTextTransform(t *testing.T) {
	p, x := textPipeline(t)
	// The pipeline on raw counts equals the model on transformed rows.
	xs := mat.DenseCopyOf(x)
	if err := p.Text.Apply(xs); err != nil {
		t.Fatal(err)
	}
	n, d := xs.Dims()
	for i := 0; i < n; i++ {
		p.Scaler.applyRow(rowOf(xs, i), rowOf(xs, i))
	}
	want := predictAll(t, p.Model, xs)
	got := mat.NewDense(n, 1, nil)
	if err := p.PredictOutputs(got, x); err != nil {
		t.Fatal(err)
	}
	if diff := maxAbsDiff(got, want); diff > 1e-13 {
		t.Errorf("pipeline vs transformed rows: max diff %g > 1e-13", diff)
	}
	// Sparse rows give the same outputs (dense blocks inside).
	gotS := mat.NewDense(n, 1, nil)
	if err := p.PredictOutputs(gotS, dataset.NewCSRFromDense(x)); err != nil {
		t.Fatal(err)
	}
	if diff := maxAbsDiff(gotS, want); diff > 1e-13 {
		t.Errorf("CSR vs dense prediction: max diff %g > 1e-13", diff)
	}
	// Small batch path (pooled scratch) too.
	one := mat.NewDense(1, 1, nil)
	if err := p.PredictOutputs(one, x.Slice(3, 4, 0, d).(*mat.Dense)); err != nil {
		t.Fatal(err)
	}
	if math.Abs(one.At(0, 0)-want.At(3, 0)) > 1e-13 {
		t.Errorf("one row: %v, want %v", one.At(0, 0), want.At(3, 0))
	}
	// A negative count is refused with the row named.
	bad := mat.DenseCopyOf(x.Slice(0, 2, 0, d))
	bad.Set(1, 2, -1)
	if err := p.PredictOutputs(mat.NewDense(2, 1, nil), bad); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("negative count: %v, want ErrRange", err)
	}
	// The transform must fit the model's width.
	tt, _ := dataset.FitTextTransform(mat.NewDense(1, 3, []float64{1, 0, 2}), dataset.TextOptions{Normalize: true})
	if _, err := p.WithText(tt); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("WithText of 3 columns on a 4-input model: %v, want ErrShape", err)
	}
}

func TestPipelineTextRoundTrip(t *testing.T) {
	p, x := textPipeline(t)
	b, err := MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b[len(fileMagic):]); v != 2 {
		t.Errorf("a pipeline with a text transform is written as version %d, want 2", v)
	}
	q, err := UnmarshalPipeline(b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Text == nil || q.Scaler == nil || !q.Text.Normalize || len(q.Text.IDF) != 4 {
		t.Fatalf("round trip lost the inputs: text %+v, scaler %v", q.Text, q.Scaler)
	}
	n, _ := x.Dims()
	a, c := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	if err := p.PredictOutputs(a, x); err != nil {
		t.Fatal(err)
	}
	if err := q.PredictOutputs(c, x); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, c) {
		t.Errorf("loaded pipeline predicts differently: max diff %g", maxAbsDiff(a, c))
	}
	// Without the text transform the file is version 1, as older builds wrote it.
	plain, err := p.WithText(nil)
	if err != nil {
		t.Fatal(err)
	}
	b1, err := MarshalPipeline(plain)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b1[len(fileMagic):]); v != 1 {
		t.Errorf("a pipeline without a text transform is written as version %d, want 1", v)
	}
	// A version-1 file may not use the text flag.
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint16(bad[len(fileMagic):], 1)
	if _, err := UnmarshalPipeline(fixCRC(bad), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("text flag in a version-1 file: %v, want ErrFormat", err)
	}
	// Every truncation fails cleanly.
	for cut := len(fileMagic) + 2; cut < len(b); cut += 7 {
		if _, err := UnmarshalPipeline(fixCRC(bytes.Clone(b[:cut])), Options{}); !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("truncated at %d: %v, want ErrFormat", cut, err)
		}
	}
}

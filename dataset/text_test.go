package dataset

import (
	"errors"
	"math"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// textCounts is a 4 x 3 count matrix: column 0 in 3 rows, column 1 in 1
// row, column 2 in no row; row 3 is empty.
func textCounts() *mat.Dense {
	return mat.NewDense(4, 3, []float64{
		1, 2, 0,
		3, 0, 0,
		1, 0, 0,
		0, 0, 0,
	})
}

func TestTextTransformHand(t *testing.T) {
	x := textCounts()
	tr, err := FitTextTransform(x, TextOptions{TFIDF: true, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	// idf_j = ln((1+n)/(1+df_j)) + 1 with n = 4, df = (3, 1, 0).
	want := []float64{math.Log(5.0/4) + 1, math.Log(5.0/2) + 1, math.Log(5) + 1}
	for j, w := range want {
		if math.Abs(tr.IDF[j]-w) > 1e-15 {
			t.Errorf("idf[%d] = %v, want %v", j, tr.IDF[j], w)
		}
	}
	if err := tr.Apply(x); err != nil {
		t.Fatal(err)
	}
	// Row 0: (1 idf0, 2 idf1) / its norm.
	a, b := want[0], 2*want[1]
	nrm := math.Hypot(a, b)
	wantRows := [][]float64{{a / nrm, b / nrm, 0}, {1, 0, 0}, {1, 0, 0}, {0, 0, 0}}
	for i, row := range wantRows {
		for j, w := range row {
			if got := x.At(i, j); math.Abs(got-w) > 1e-15 {
				t.Errorf("row %d col %d = %v, want %v (tolerance 1e-15)", i, j, got, w)
			}
		}
	}
}

func TestTextTransformSparseMatchesDense(t *testing.T) {
	x := mat.NewDense(5, 6, []float64{
		0, 4, 0, 1, 0, 0,
		2, 0, 0, 0, 7, 0,
		0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 1, 1,
		0, 3, 0, 0, 0, 5,
	})
	s := NewCSRFromDense(x)
	for _, opts := range []TextOptions{{TFIDF: true}, {Normalize: true}, {TFIDF: true, Normalize: true}} {
		td, err := FitTextTransform(x, opts)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := FitTextTransform(s, opts)
		if err != nil {
			t.Fatal(err)
		}
		for j := range td.IDF {
			if td.IDF[j] != ts.IDF[j] {
				t.Fatalf("%+v: idf[%d] dense %v, sparse %v", opts, j, td.IDF[j], ts.IDF[j])
			}
		}
		xs, err := ts.ApplyCSR(s)
		if err != nil {
			t.Fatal(err)
		}
		if xs.NNZ() != s.NNZ() {
			t.Errorf("%+v: ApplyCSR changed nnz %d -> %d", opts, s.NNZ(), xs.NNZ())
		}
		xd := mat.DenseCopyOf(x)
		if err := td.Apply(xd); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(xd, xs.ToDense(), 1e-15) {
			t.Errorf("%+v: dense and sparse results differ by more than 1e-15:\n%v\n%v", opts, mat.Formatted(xd), mat.Formatted(xs.ToDense()))
		}
		row := mat.Row(nil, 3, x)
		if err := td.ApplyVec(row); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(mat.NewVecDense(6, row), xd.RowView(3), 1e-15) {
			t.Errorf("%+v: ApplyVec differs from Apply on row 3", opts)
		}
	}
	// The input CSR is untouched.
	if !mat.Equal(s.ToDense(), x) {
		t.Error("ApplyCSR modified its input")
	}
}

func TestTextTransformRoundTrip(t *testing.T) {
	for _, opts := range []TextOptions{{TFIDF: true}, {Normalize: true}, {TFIDF: true, Normalize: true}} {
		tr, err := FitTextTransform(textCounts(), opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tr.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back TextTransform
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if back.Cols != tr.Cols || back.Normalize != tr.Normalize || len(back.IDF) != len(tr.IDF) {
			t.Fatalf("%+v: round trip gave %+v", opts, back)
		}
		for j := range tr.IDF {
			if back.IDF[j] != tr.IDF[j] {
				t.Fatalf("idf[%d] %v -> %v", j, tr.IDF[j], back.IDF[j])
			}
		}
		// Every truncation is refused.
		for cut := 0; cut < len(b); cut++ {
			if err := new(TextTransform).UnmarshalBinary(b[:cut]); !errors.Is(err, zonal.ErrFormat) {
				t.Fatalf("%+v: truncated to %d bytes: %v, want ErrFormat", opts, cut, err)
			}
		}
	}
}

func TestTextTransformErrors(t *testing.T) {
	neg := mat.NewDense(2, 2, []float64{1, -1, 0, 2})
	if _, err := FitTextTransform(neg, TextOptions{TFIDF: true}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("negative count: %v, want ErrRange", err)
	}
	if _, err := FitTextTransform(neg, TextOptions{Normalize: true}); err != nil {
		t.Errorf("normalize alone accepts negative values: %v", err)
	}
	nan := mat.NewDense(1, 2, []float64{1, math.NaN()})
	if _, err := FitTextTransform(NewCSRFromDense(nan), TextOptions{Normalize: true}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN: %v, want ErrNonFinite", err)
	}
	if _, err := FitTextTransform(neg, TextOptions{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("no transform selected: %v, want ErrParam", err)
	}
	var nilCSR *CSR
	if _, err := FitTextTransform(nilCSR, TextOptions{TFIDF: true}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("nil CSR: %v, want ErrEmpty", err)
	}
	tr, err := FitTextTransform(textCounts(), TextOptions{TFIDF: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Apply(mat.NewDense(2, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("dims mismatch: %v, want ErrShape", err)
	}
	if _, err := tr.ApplyCSR(NewCSRFromDense(mat.NewDense(1, 4, []float64{1, 0, 0, 1}))); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("CSR dims mismatch: %v, want ErrShape", err)
	}
	if _, err := tr.ApplyCSR(NewCSRFromDense(mat.NewDense(1, 3, []float64{1, -2, 0}))); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("negative count at apply: %v, want ErrRange", err)
	}
	if err := new(TextTransform).Apply(textCounts()); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("unfitted: %v, want ErrParam", err)
	}
	b, _ := tr.MarshalBinary()
	b[len(textMagic)] = 9
	if err := new(TextTransform).UnmarshalBinary(b); !errors.Is(err, zonal.ErrVersion) {
		t.Errorf("bad version: %v, want ErrVersion", err)
	}
	b, _ = tr.MarshalBinary()
	copy(b[len(b)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // NaN idf
	if err := new(TextTransform).UnmarshalBinary(b); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("NaN idf: %v, want ErrFormat", err)
	}
}

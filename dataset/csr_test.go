package dataset

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// randomSparse returns an r x c dense matrix with about density*r*c nonzeros.
func randomSparse(r, c int, density float64, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if rng.Float64() < density {
				m.Set(i, j, rng.NormFloat64())
			}
		}
	}
	return m
}

func TestCSRRoundTripAndProducts(t *testing.T) {
	for _, sh := range []struct {
		r, c int
		dens float64
	}{{1, 1, 1}, {3, 5, 0}, {7, 4, 0.5}, {40, 33, 0.1}, {25, 60, 1}} {
		a := randomSparse(sh.r, sh.c, sh.dens, uint64(sh.r*100+sh.c))
		s := NewCSRFromDense(a)
		if err := s.Validate(); err != nil {
			t.Fatalf("%dx%d: %v", sh.r, sh.c, err)
		}
		nnz := 0
		for _, v := range a.RawMatrix().Data {
			if v != 0 {
				nnz++
			}
		}
		if s.NNZ() != nnz {
			t.Fatalf("NNZ %d, want %d", s.NNZ(), nnz)
		}
		if !mat.Equal(s.ToDense(), a) {
			t.Fatalf("%dx%d: ToDense(NewCSRFromDense(a)) != a", sh.r, sh.c)
		}
		// NewCSRFromDense through the generic mat.Matrix path gives the same CSR.
		s2 := NewCSRFromDense(a.T().T())
		if !mat.Equal(s2, s) {
			t.Fatal("NewCSRFromDense of a non-Dense matrix differs")
		}
		// At agrees everywhere (CSR is a mat.Matrix).
		if !mat.Equal(s, a) || !mat.Equal(s.T(), a.T()) {
			t.Fatal("At or T differs from the dense matrix")
		}
		// Products agree with dense ones. The sums run over the same terms
		// in the same order except for the skipped zeros, so they agree to
		// a few ulps of the absolute sum: 1e-13 relative is ample.
		x := make([]float64, sh.c)
		for j := range x {
			x[j] = float64(j%5) - 1.5
		}
		want := mat.NewVecDense(sh.r, nil)
		want.MulVec(a, mat.NewVecDense(sh.c, x))
		got := make([]float64, sh.r)
		if err := s.MulVec(got, x); err != nil {
			t.Fatal(err)
		}
		for _, rg := range [][2]int{{0, sh.r}, {sh.r / 2, sh.r}, {sh.r - 1, sh.r}} {
			v, err := s.SliceRows(rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(); err != nil {
				t.Fatalf("SliceRows%v: %v", rg, err)
			}
			want := a.Slice(rg[0], rg[1], 0, sh.c)
			if !mat.Equal(v.ToDense(), want) {
				t.Fatalf("SliceRows%v differs from the dense rows", rg)
			}
		}
		if _, err := s.SliceRows(0, sh.r+1); !errors.Is(err, zonal.ErrRange) {
			t.Fatalf("SliceRows past the end: err = %v, want zonal.ErrRange", err)
		}
		norms := s.RowNorms2()
		if len(norms) != sh.r {
			t.Fatalf("RowNorms2 has %d entries, want %d", len(norms), sh.r)
		}
		for i := 0; i < sh.r; i++ {
			if norms[i] != s.RowNorm2(i) {
				t.Fatalf("RowNorms2[%d] = %v, RowNorm2 = %v", i, norms[i], s.RowNorm2(i))
			}
			rd, err := s.RowDot(i, x)
			if err != nil {
				t.Fatal(err)
			}
			if !scalar.EqualWithinAbsOrRel(rd, want.AtVec(i), 1e-13, 1e-13) || rd != got[i] {
				t.Fatalf("row %d: RowDot %v, MulVec %v, dense %v", i, rd, got[i], want.AtVec(i))
			}
			row := a.RawRowView(i)
			if n2 := s.RowNorm2(i); !scalar.EqualWithinAbsOrRel(n2, floats.Dot(row, row), 1e-13, 1e-13) {
				t.Fatalf("RowNorm2 %v, want %v", n2, floats.Dot(row, row))
			}
		}
		b := randomSparse(sh.c, 3, 1, 7)
		var wantM mat.Dense
		wantM.Mul(a, b)
		gotM := mat.NewDense(sh.r, 3, nil)
		gotM.Set(0, 0, math.NaN()) // dst content must be ignored
		if err := s.MulDense(gotM, b); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(gotM, &wantM, 1e-13) {
			t.Fatal("MulDense differs from mat.Mul")
		}
		if err := s.MulDense(gotM, b.T().T()); err != nil || !mat.EqualApprox(gotM, &wantM, 1e-13) {
			t.Fatal("MulDense with a non-Dense operand differs")
		}
	}
}

func TestCSRRowIterationAndSubset(t *testing.T) {
	a := randomSparse(10, 8, 0.4, 3)
	s := NewCSRFromDense(a)
	back := mat.NewDense(10, 8, nil)
	for i := 0; i < s.Rows; i++ {
		cols, vals := s.Row(i)
		for k, j := range cols {
			back.Set(i, j, vals[k])
		}
	}
	if !mat.Equal(back, a) {
		t.Fatal("Row iteration does not rebuild the matrix")
	}
	rows := []int{9, 0, 0, 4}
	sub, err := s.Subset(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Validate(); err != nil {
		t.Fatal(err)
	}
	for k, r := range rows {
		if !floats.Equal(sub.ToDense().RawRowView(k), a.RawRowView(r)) {
			t.Fatalf("Subset row %d != row %d", k, r)
		}
	}
	if _, err := s.Subset([]int{10}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("Subset out of range: %v", err)
	}
}

func TestCSRErrors(t *testing.T) {
	good := func() *CSR {
		return &CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 2, 3}, Col: []int{0, 2, 1}, Val: []float64{1, 2, 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		break_ func(*CSR)
		is     error
	}{
		{"negative shape", func(m *CSR) { m.Cols = -1 }, zonal.ErrShape},
		{"rowptr length", func(m *CSR) { m.RowPtr = m.RowPtr[:2] }, zonal.ErrShape},
		{"col/val length", func(m *CSR) { m.Val = m.Val[:2] }, zonal.ErrShape},
		{"rowptr start", func(m *CSR) { m.RowPtr[0] = 1 }, zonal.ErrShape},
		{"rowptr end", func(m *CSR) { m.RowPtr[2] = 2 }, zonal.ErrShape},
		{"rowptr decreasing", func(m *CSR) { m.RowPtr[1] = 4; m.RowPtr[2] = 3 }, zonal.ErrShape},
		{"rowptr decreasing, increasing columns", func(m *CSR) {
			m.RowPtr, m.Col = []int{0, 4, 3}, []int{0, 1, 2}
		}, zonal.ErrShape},
		{"column too big", func(m *CSR) { m.Col[2] = 3 }, zonal.ErrRange},
		{"negative column", func(m *CSR) { m.Col[0] = -1 }, zonal.ErrRange},
		{"not increasing", func(m *CSR) { m.Col[1] = 0 }, zonal.ErrRange},
	}
	for _, c := range cases {
		m := good()
		c.break_(m)
		if err := m.Validate(); !errors.Is(err, c.is) {
			t.Errorf("%s: Validate = %v, want %v", c.name, err, c.is)
		}
		if _, err := NewCSR(m.Rows, m.Cols, m.RowPtr, m.Col, m.Val); !errors.Is(err, c.is) {
			t.Errorf("%s: NewCSR = %v, want %v", c.name, err, c.is)
		}
	}
	m := good()
	if _, err := m.RowDot(2, []float64{1, 2, 3}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("RowDot row 2: %v", err)
	}
	if _, err := m.RowDot(-1, []float64{1, 2, 3}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("RowDot row -1: %v", err)
	}
	if _, err := m.RowDot(0, []float64{1, 2}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("RowDot short x: %v", err)
	}
	if err := m.MulVec(make([]float64, 2), make([]float64, 2)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("MulVec: %v", err)
	}
	if err := m.MulDense(mat.NewDense(2, 2, nil), mat.NewDense(2, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("MulDense: %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("At out of range did not panic like gonum matrices")
			}
		}()
		m.At(0, 3)
	}()
}

// SparseDot merges the column lists: shared columns only, any overlap.
func TestSparseDot(t *testing.T) {
	for _, c := range []struct {
		ca   []int
		va   []float64
		cb   []int
		vb   []float64
		want float64
	}{
		{nil, nil, []int{1}, []float64{2}, 0},
		{[]int{0, 3, 7}, []float64{1, 2, 3}, []int{3, 7, 9}, []float64{4, 5, 6}, 2*4 + 3*5},
		{[]int{2}, []float64{3}, []int{0, 1}, []float64{1, 1}, 0},
		{[]int{0, 1, 2}, []float64{1, 2, 3}, []int{0, 1, 2}, []float64{1, 2, 3}, 14},
	} {
		if got := SparseDot(c.ca, c.va, c.cb, c.vb); got != c.want {
			t.Errorf("SparseDot(%v, %v) = %g, want %g", c.ca, c.cb, got, c.want)
		}
	}
}

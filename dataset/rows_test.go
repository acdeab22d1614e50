package dataset

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// SelectRows keeps the kind of its input and copies the rows in order,
// repeats included; a dense and a CSR input give the same values.
func TestSelectRows(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{1, 0, 2, 0, 0, 3, 4, 5, 0, 0, 0, 0})
	idx := []int{2, 0, 2}
	d, err := SelectRows(x, idx)
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(3, 3, []float64{4, 5, 0, 1, 0, 2, 4, 5, 0})
	if !mat.Equal(d, want) {
		t.Errorf("dense rows %v", mat.Formatted(d))
	}
	d.Set(0, 0, 99)
	if x.At(2, 0) != 4 {
		t.Error("SelectRows shares storage with its input")
	}
	c, err := SelectRows(NewCSRFromDense(x), idx)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(c.ToDense(), want) {
		t.Errorf("CSR rows %v", mat.Formatted(c.ToDense()))
	}
	var m mat.Matrix = x.T() // neither kind: copied into a dense matrix
	g, err := SelectRows(m, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.(*mat.Dense); !ok || g.At(0, 2) != 5 {
		t.Errorf("other matrix: %T %v", g, mat.Formatted(g))
	}
	if _, err := SelectRows(x, []int{4}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("index 4 of 4 rows: %v", err)
	}
	if _, err := SelectRows(x, nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("no indices: %v", err)
	}
	var nilDense *mat.Dense
	if _, err := SelectRows(nilDense, []int{0}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("nil matrix: %v", err)
	}
}

package dataset

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

var _ mat.Matrix = (*Dense32)(nil)

// TestDense32: NewDense32 rounds to nearest, At, Row, RowRange (a view),
// Subset (a copy), ToDense (exact) and Bytes agree with the float64 rows.
func TestDense32(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1.0 / 3, 2, -0.1, 4e-30, 5, 6})
	m, err := NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 3 || c != 2 || m.Bytes() != 24 || m.Validate() != nil {
		t.Fatalf("dims %dx%d, %d bytes, validate %v", r, c, m.Bytes(), m.Validate())
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 2; j++ {
			if want := float64(float32(x.At(i, j))); m.At(i, j) != want || float64(m.Row(i)[j]) != want {
				t.Fatalf("(%d,%d): At %g, Row %g, want %g", i, j, m.At(i, j), m.Row(i)[j], want)
			}
		}
	}
	v, err := m.RowRange(1, 3)
	if err != nil || v.Rows != 2 || v.At(0, 0) != m.At(1, 0) {
		t.Fatalf("RowRange: %v %+v", err, v)
	}
	v.Data[0] = 7
	if m.At(1, 0) != 7 {
		t.Fatal("RowRange copied")
	}
	s, err := m.Subset([]int{2, 0})
	if err != nil || s.At(0, 1) != 6 || s.At(1, 0) != m.At(0, 0) {
		t.Fatalf("Subset: %v %+v", err, s)
	}
	s.Data[0] = 9
	if m.At(2, 0) != 5 {
		t.Fatal("Subset shares entries")
	}
	if !mat.Equal(m.ToDense(), mat.DenseCopyOf(m)) {
		t.Fatal("ToDense differs from At")
	}
	if _, err := m.Subset([]int{3}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("Subset row 3: %v, want ErrRange", err)
	}
	if _, err := m.RowRange(2, 1); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("RowRange(2, 1): %v, want ErrRange", err)
	}
}

// TestDense32Errors: NaN, Inf, values beyond float32's range, nil and
// empty inputs, and a Data of the wrong length.
func TestDense32Errors(t *testing.T) {
	for name, v := range map[string]float64{"NaN": math.NaN(), "Inf": math.Inf(-1), "1e39": 1e39} {
		x := mat.NewDense(2, 2, []float64{1, 2, 3, v})
		if _, err := NewDense32(x); !errors.Is(err, zonal.ErrNonFinite) {
			t.Errorf("%s: %v, want ErrNonFinite", name, err)
		}
	}
	if _, err := NewDense32(nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("nil: %v, want ErrEmpty", err)
	}
	if _, err := NewDense32(&mat.Dense{}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("empty: %v, want ErrEmpty", err)
	}
	if err := (&Dense32{Rows: 2, Cols: 2, Data: make([]float32, 3)}).Validate(); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("short Data: %v, want ErrShape", err)
	}
	if err := (&Dense32{Rows: -1, Cols: 2}).Validate(); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("negative rows: %v, want ErrShape", err)
	}
}

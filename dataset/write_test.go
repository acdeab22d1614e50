package dataset

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// sameValues compares bit patterns, except that +0 and -0 are equal (LIBSVM
// drops zeros of either sign).
func sameValues(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == 0 && b[i] == 0 {
			continue
		}
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// roundTrip writes d in both formats and reads it back; X, Y (and Names for
// CSV) must come back exactly.
func roundTrip(t *testing.T, d *Data, allow bool) {
	t.Helper()
	_, c := d.Dims()
	var lb, cb bytes.Buffer
	if d.Y != nil {
		if err := WriteLIBSVM(&lb, d.X, d.Y); err != nil {
			t.Fatal(err)
		}
		l, err := ReadLIBSVM(&lb, Options{MinCols: c, MaxCols: c, AllowNonFinite: allow})
		if err != nil {
			t.Fatalf("LIBSVM round trip: %v", err)
		}
		if !sameValues(l.X.RawMatrix().Data, d.X.RawMatrix().Data) || !sameValues(l.Y, d.Y) {
			t.Fatal("LIBSVM round trip changed the data")
		}
	}
	names := d.Names
	if d.Y != nil && slices.Contains(names, "y") {
		names = nil // "y" is reserved for the target column
	}
	if err := WriteCSV(&cb, d.X, d.Y, names); err != nil {
		t.Fatal(err)
	}
	r, err := ReadCSV(&cb, Options{AllowNonFinite: allow, NoTarget: d.Y == nil})
	if err != nil {
		t.Fatalf("CSV round trip: %v\n%s", err, cb.String())
	}
	if !sameValues(r.X.RawMatrix().Data, d.X.RawMatrix().Data) || !sameValues(r.Y, d.Y) {
		t.Fatal("CSV round trip changed the data")
	}
	if names != nil && !slices.Equal(r.Names, names) {
		t.Fatalf("CSV round trip names %q, want %q", r.Names, names)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(30, 6, nil)
	y := make([]float64, 30)
	for i := range y {
		y[i] = float64(rng.IntN(3))
		for j := 0; j < 6; j++ {
			switch rng.IntN(4) {
			case 0: // zero
			case 1:
				x.Set(i, j, float64(rng.IntN(256)))
			case 2:
				x.Set(i, j, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
			default:
				x.Set(i, j, math.Float64frombits(rng.Uint64()&^(0x7ff<<52)|(uint64(rng.IntN(2046)+1)<<52)))
			}
		}
	}
	x.Set(0, 0, 5e-324)
	x.Set(1, 1, -math.MaxFloat64)
	d := &Data{X: x, Y: y, Names: []string{"a", "b, c", ` padded `, `q"uote`, "y", "f"}}
	roundTrip(t, d, false)
	d.Names[4] = "e"
	roundTrip(t, d, false)
	roundTrip(t, &Data{X: x}, false) // no target
	x.Set(2, 2, math.NaN())
	x.Set(3, 3, math.Inf(-1))
	y[4] = math.Inf(1)
	roundTrip(t, &Data{X: x, Y: y}, true)

	var b bytes.Buffer
	if err := WriteLIBSVM(&b, x, y[:3]); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("label count: %v", err)
	}
	if err := WriteCSV(&b, x, nil, []string{"a"}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("name count: %v", err)
	}
	if err := WriteCSV(&b, x, nil, []string{"a", "b\nc", "d", "e", "f", "g"}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("line break in name: %v", err)
	}
	if err := WriteCSV(&b, x, y, []string{"a", "y", "d", "e", "f", "g"}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("feature named y: %v", err)
	}
	b.Reset()
	WriteLIBSVM(&b, mat.NewDense(2, 3, []float64{0, 1.5, 0, 255, 0, -2e-7}), []float64{1, 0})
	if got := b.String(); got != "1 2:1.5\n0 1:255 3:-2e-07\n" {
		t.Errorf("WriteLIBSVM output %q", got)
	}
	b.Reset()
	WriteCSV(&b, mat.NewDense(1, 2, []float64{0.25, 3}), []float64{7}, nil)
	if got := b.String(); got != "y,x1,x2\n7,0.25,3\n" {
		t.Errorf("WriteCSV output %q", got)
	}
}

func TestWriteSmallFileRoundTrip(t *testing.T) {
	for _, name := range []string{"small.libsvm", "small.csv"} {
		d := readTestFile(t, name, Options{})
		roundTrip(t, d, false)
	}
}

package kpca

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// TestModelRoundTrip: a model (batch and incremental, with and without mean
// adjustment) survives MarshalBinary / UnmarshalModel bit for bit: the
// re-encoding is byte-identical and Transform of new points and Scores give
// identical float64 values; kernels.UnmarshalMap decodes it too.
func TestModelRoundTrip(t *testing.T) {
	x := randPoints(21, 40, 3, 1)
	y := randPoints(22, 7, 3, 1)
	k := gaussian(t, 1.4)
	for _, mean := range []bool{false, true} {
		fit, err := Fit(context.Background(), k, x, Options{MeanAdjust: mean, Components: 5})
		if err != nil {
			t.Fatal(err)
		}
		inc, _ := NewIncremental(k, 3, Options{MeanAdjust: mean})
		if err := inc.AddRows(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		im, err := inc.Model(6)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*Model{fit, im} {
			data, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			back, err := UnmarshalModel(data)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := back.MarshalBinary()
			if !bytes.Equal(data, again) {
				t.Fatalf("mean=%v: re-encoding differs", mean)
			}
			a := mat.NewDense(7, m.Dim(), nil)
			b := mat.NewDense(7, m.Dim(), nil)
			if err := m.Transform(a, y); err != nil {
				t.Fatal(err)
			}
			if err := back.Transform(b, y); err != nil {
				t.Fatal(err)
			}
			sameBits(t, "Transform", a, b)
			sameBits(t, "Scores", m.Scores(), back.Scores())
			fm, err := kernels.UnmarshalMap(ModelKind, data)
			if err != nil || fm.Dim() != m.Dim() {
				t.Fatalf("UnmarshalMap: %v", err)
			}
		}
	}
}

func sameBits(t *testing.T, what string, a, b *mat.Dense) {
	t.Helper()
	ra, rb := a.RawMatrix(), b.RawMatrix()
	for i := 0; i < ra.Rows; i++ {
		for j := 0; j < ra.Cols; j++ {
			if math.Float64bits(ra.Data[i*ra.Stride+j]) != math.Float64bits(rb.Data[i*rb.Stride+j]) {
				t.Fatalf("%s: (%d,%d) %v vs %v", what, i, j, ra.Data[i*ra.Stride+j], rb.Data[i*rb.Stride+j])
			}
		}
	}
}

// TestScoresAreTransform: the training scores sqrt(lambda_j) U_ij equal
// Transform of the training points (K' U = U Lambda) to 1e-10 relative to
// sqrt(lambda_max) (Transform sums n kernel products: ~n eps).
func TestScoresAreTransform(t *testing.T) {
	x := randPoints(23, 30, 2, 1)
	for _, mean := range []bool{false, true} {
		m, err := Fit(context.Background(), gaussian(t, 1), x, Options{MeanAdjust: mean, Components: 4})
		if err != nil {
			t.Fatal(err)
		}
		tr := mat.NewDense(30, 4, nil)
		if err := m.Transform(tr, x); err != nil {
			t.Fatal(err)
		}
		sc := m.Scores()
		tol := 1e-10 * math.Sqrt(m.Eigenvalues()[0])
		for i := 0; i < 30; i++ {
			for j := 0; j < 4; j++ {
				if d := math.Abs(tr.At(i, j) - sc.At(i, j)); d > tol {
					t.Fatalf("mean=%v: (%d,%d) Transform %g, Scores %g", mean, i, j, tr.At(i, j), sc.At(i, j))
				}
			}
		}
	}
}

// TestUnmarshalModelErrors: truncation at every length is ErrFormat (or
// ErrVersion for a damaged version field), never a panic; a NaN is
// ErrFormat; another version is ErrVersion.
func TestUnmarshalModelErrors(t *testing.T) {
	m, err := Fit(context.Background(), gaussian(t, 1), randPoints(24, 6, 2, 1), Options{Components: 2})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := m.MarshalBinary()
	for l := 0; l < len(data); l++ {
		if _, err := UnmarshalModel(data[:l]); !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("truncated to %d bytes: %v", l, err)
		}
	}
	bad := append([]byte(nil), data...)
	bad[0] = 9
	if _, err := UnmarshalModel(bad); !errors.Is(err, zonal.ErrVersion) {
		t.Fatalf("version 9: %v", err)
	}
	bad = append([]byte(nil), data...)
	copy(bad[len(bad)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // NaN in the last eigenvector entry
	if _, err := UnmarshalModel(bad); !errors.Is(err, zonal.ErrFormat) {
		t.Fatalf("NaN: %v", err)
	}
}

package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// transform32 runs Transform32 into a fresh float32 matrix.
func transform32(t *testing.T, f FeatureMap, x mat.Matrix) blas32.General {
	t.Helper()
	n, _ := x.Dims()
	z := blas32.General{Rows: n, Cols: f.Dim(), Stride: f.Dim(), Data: make([]float32, n*f.Dim())}
	if err := Transform32(f, z, x); err != nil {
		t.Fatalf("%v: Transform32: %v", f, err)
	}
	return z
}

// within32 checks |got_ij - round(want_ij)| <= tol(i, j) and returns the
// number of entries that are not exactly round(want_ij).
func within32(t *testing.T, what string, got blas32.General, want *mat.Dense, tol func(i, j int) float64) int {
	t.Helper()
	r, c := want.Dims()
	if got.Rows != r || got.Cols != c {
		t.Fatalf("%s: %dx%d, want %dx%d", what, got.Rows, got.Cols, r, c)
	}
	differ, worst := 0, 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			g, w := got.Data[i*got.Stride+j], want.At(i, j)
			if g != float32(w) {
				differ++
			}
			if e, tl := math.Abs(float64(g)-w), tol(i, j); !(e <= tl) {
				t.Fatalf("%s: [%d,%d] = %v, float64 %v: error %.3g > tolerance %.3g", what, i, j, g, w, e, tl)
			} else if tl > 0 {
				worst = max(worst, e/tl)
			}
		}
	}
	t.Logf("%s: largest error %.3g of its tolerance", what, worst)
	return differ
}

// roundingTol is the tolerance of a map whose float32 features are its
// float64 ones rounded (the fallback, sparse Fourier input): half an ulp of
// the rounding plus one ulp in case the float64 value differs by round-off
// (a different row blocking) across a rounding boundary, i.e. 1.5 ulp <=
// 3 u |z|, and 1e-38 for values near float32's underflow.
func roundingTol(z *mat.Dense) func(i, j int) float64 {
	return func(i, j int) float64 { return 3*u32*math.Abs(z.At(i, j)) + 1e-38 }
}

// fallbackOnly hides a map's Transform32, so that Transform32 takes the
// generic fallback.
type fallbackOnly struct{ FeatureMap }

// TestTransform32Fourier: the float32 Fourier features of dense input are
// within the bound of FourierMap.Transform32's doc,
// m^{-1/2} (d + 2) u sum_j |omega_kj x_ij| + 2 u |z| (the trigonometric
// functions and final scaling add rounding of about u |z|, doubled), which
// is worst case: the test cannot fail by an unlucky seed. Some entries must
// differ from round(Transform), showing the product ran in float32. Sparse
// input and the generic fallback (on 600 rows: three blocks, the last one
// partial) give round(Transform) to rounding.
func TestTransform32Fourier(t *testing.T) {
	const n, d = 600, 20
	xs, xd := sparseData(7, n, d, 0.4, 1.5)
	for _, c := range []struct {
		k    Kernel
		orth bool
	}{{Gaussian{Sigma: 1.3}, false}, {Gaussian{Sigma: 0.9}, true}, {Laplacian{Sigma: 2}, false}} {
		f, err := NewFourierMap(c.k, d, FourierOptions{Features: 120, Orthogonal: c.orth, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		name := f.String()
		zd, zs := transformBoth(t, f, xd, xs)
		m := f.m
		sc := 1 / math.Sqrt(float64(m))
		tol := func(i, j int) float64 {
			k := j / 2
			s := 0.0
			for l := 0; l < d; l++ {
				s += math.Abs(f.wt[l*m+k] * xd.At(i, l))
			}
			return sc*float64(d+2)*u32*s + 2*u32*math.Abs(zd.At(i, j)) + 1e-38
		}
		differ := within32(t, name+" dense", transform32(t, f, xd), zd, tol)
		if differ == 0 {
			t.Errorf("%s: every float32 feature equals round(float64 feature): the product did not run in float32", name)
		}
		t.Logf("%s dense: %d of %d features differ from round(Transform)", name, differ, n*f.Dim())
		within32(t, name+" CSR", transform32(t, f, xs), zs, roundingTol(zs))
		within32(t, name+" fallback, dense", transform32(t, fallbackOnly{f}, xd), zd, roundingTol(zd))
		within32(t, name+" fallback, CSR", transform32(t, fallbackOnly{f}, xs), zs, roundingTol(zs))
	}
}

// TestTransform32Nystrom: float32 Nystrom features are within the bound of
// Nystrom.Transform32's doc, computed here from the float64 kernel block
// K(x, C) and M = K_CC^{-1/2}: sum_i (e_i + (m + 2) u |K_i|) |M_ij| + 2 u |z_j|,
// with e_i twice the entry bound of NewCenters32's note (K gamma (d + 4) u
// (|x|^2 + |c|^2) + 2u) on the float32 Gaussian route and 2 u |K_i| when
// the entries are float64 values rounded (polynomial kernel, sparse
// landmarks or input). 1100 rows span two of Transform32's 1024-row chunks.
func TestTransform32Nystrom(t *testing.T) {
	const n, d = 1100, 16
	xs, xd := sparseData(8, n, d, 0.5, 1)
	ctx := context.Background()
	for _, c := range []struct {
		k      Kernel
		sparse bool // landmarks from the CSR
	}{{Gaussian{Sigma: 1.5}, false}, {Gaussian{Sigma: 1.5}, true}, {Polynomial{Degree: 2, Gamma: 0.5, Coef0: 1}, false}} {
		var src mat.Matrix = xd
		if c.sparse {
			src = xs
		}
		ny, err := NewNystrom(ctx, c.k, src, NystromOptions{Landmarks: 60, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%v sparse landmarks %v", ny, c.sparse)
		lm := ny.Landmarks()
		kx, err := Matrix(ctx, c.k, xd, lm, Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := ny.Dim()
		xn, cn := RowSqNorms(xd), RowSqNorms(lm)
		g, gauss := c.k.(Gaussian)
		tolFor := func(z *mat.Dense, route32 bool) func(i, j int) float64 {
			return func(i, j int) float64 {
				s := 0.0
				for l := 0; l < m; l++ {
					kv := math.Abs(kx.At(i, l))
					e := 2 * u32 * kv
					if route32 {
						e = 2 * (kv*g.Gamma()*float64(d+4)*u32*(xn[i]+cn[l]) + 2*u32)
					}
					s += (e + float64(m+2)*u32*kv) * math.Abs(ny.msqr.At(l, j))
				}
				return s + 2*u32*math.Abs(z.At(i, j)) + 1e-38
			}
		}
		zd, zs := transformBoth(t, ny, xd, xs)
		differ := within32(t, name+" dense", transform32(t, ny, xd), zd, tolFor(zd, gauss && !c.sparse))
		if differ == 0 {
			t.Errorf("%s: every float32 feature equals round(float64 feature): the products did not run in float32", name)
		}
		within32(t, name+" CSR", transform32(t, ny, xs), zs, tolFor(zs, false))
		within32(t, name+" fallback", transform32(t, fallbackOnly{ny}, xs), zs, roundingTol(zs))
	}
}

// TestTransform32Gegenbauer: the Gegenbauer map has no FeatureMap32 and
// goes through the fallback: round(Transform) to rounding, dense and CSR.
func TestTransform32Gegenbauer(t *testing.T) {
	const n, d = 300, 12
	xs, xd := sparseData(9, n, d, 0.5, 1)
	g, err := NewGegenbauerMap(context.Background(), Gaussian{Sigma: 1.5}, xd, GegenbauerOptions{Features: 96, Q: 5, S: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := FeatureMap(g).(FeatureMap32); ok {
		t.Fatal("GegenbauerMap implements FeatureMap32; its doc says it uses the fallback")
	}
	zd, zs := transformBoth(t, g, xd, xs)
	within32(t, "gegenbauer dense", transform32(t, g, xd), zd, roundingTol(zd))
	within32(t, "gegenbauer CSR", transform32(t, g, xs), zs, roundingTol(zs))
}

// TestTransform32Errors: for every map, native and through the fallback,
// Transform32 fails with the sentinel Transform gives on the same input:
// wrong width, dst of the wrong shape, NaN (dense and CSR), empty input
// and dst; and a nil map is zonal.ErrParam.
func TestTransform32Errors(t *testing.T) {
	x := randMatrix(21, 10, 4, 1)
	ctx := context.Background()
	g, err := NewGegenbauerMap(ctx, Gaussian{1}, x, GegenbauerOptions{Features: 12, Q: 3, S: 2})
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFourierMap(Gaussian{1}, 4, FourierOptions{Features: 8})
	if err != nil {
		t.Fatal(err)
	}
	ny, err := NewNystrom(ctx, Gaussian{1}, x, NystromOptions{Landmarks: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	nan := mat.DenseCopyOf(x)
	nan.Set(1, 1, math.NaN())
	nanCSR := dataset.NewCSRFromDense(x)
	nanCSR.Val[3] = math.Inf(1)
	emptyCSR := &dataset.CSR{Rows: 0, Cols: 4, RowPtr: []int{0}}
	for _, m := range []FeatureMap{g, f, ny, fallbackOnly{f}, fallbackOnly{ny}} {
		D := m.Dim()
		dst32 := func(r, c int) blas32.General {
			return blas32.General{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
		}
		cases := []struct {
			name  string
			x     mat.Matrix
			r, c  int
			want  error
			dst32 *blas32.General
		}{
			{"width", randMatrix(1, 10, 3, 1), 10, D, zonal.ErrShape, nil},
			{"dst rows", x, 9, D, zonal.ErrShape, nil},
			{"dst cols", x, 10, D + 1, zonal.ErrShape, nil},
			{"NaN", nan, 10, D, zonal.ErrNonFinite, nil},
			{"Inf in CSR", nanCSR, 10, D, zonal.ErrNonFinite, nil},
			{"empty", &mat.Dense{}, 0, 0, zonal.ErrEmpty, &blas32.General{}},
			{"nil x", nil, 10, D, zonal.ErrEmpty, nil},
			{"empty CSR", emptyCSR, 0, D, zonal.ErrEmpty, nil},
			{"short stride", x, 10, D, zonal.ErrShape, &blas32.General{Rows: 10, Cols: D, Stride: D - 1, Data: make([]float32, 10*D)}},
		}
		for _, c := range cases {
			d32 := dst32(c.r, c.c)
			if c.dst32 != nil {
				d32 = *c.dst32
			}
			err := Transform32(m, d32, c.x)
			if !errors.Is(err, c.want) {
				t.Errorf("%T %s: Transform32 gives %v, want %v", m, c.name, err, c.want)
			}
			if c.dst32 != nil && c.name == "short stride" {
				continue // no float64 analogue
			}
			var d64 *mat.Dense
			if c.r > 0 && c.c > 0 {
				d64 = mat.NewDense(c.r, c.c, nil)
			} else {
				d64 = &mat.Dense{}
			}
			if err64 := m.Transform(d64, c.x); !errors.Is(err64, c.want) {
				t.Errorf("%T %s: Transform gives %v, Transform32 %v: they should agree", m, c.name, err64, err)
			}
		}
	}
	if err := Transform32(nil, blas32.General{Rows: 1, Cols: 1, Stride: 1, Data: []float32{0}}, x); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("nil map: %v", err)
	}
}

package tensorsketch

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

type featureMap = kernels.PersistentMap

// linear is the linear kernel <x,y>, the one CountSketch approximates.
var linear = kernels.Polynomial{Degree: 1, Gamma: 1}

// innerProducts returns the feature inner product <z(x), z(y)> for R maps
// built from seeds 0..R-1.
func innerProducts(t *testing.T, build func(seed uint64) (featureMap, error), xy *mat.Dense, R int) []float64 {
	t.Helper()
	out := make([]float64, R)
	for s := 0; s < R; s++ {
		f, err := build(uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		z := mat.NewDense(2, f.Dim(), nil)
		if err := f.Transform(z, xy); err != nil {
			t.Fatal(err)
		}
		out[s] = mat.Dot(z.RowView(0), z.RowView(1))
	}
	return out
}

func meanVar(v []float64) (mean, variance float64) {
	for _, a := range v {
		mean += a
	}
	mean /= float64(len(v))
	for _, a := range v {
		variance += (a - mean) * (a - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// TestUnbiased checks E[<z(x), z(y)>] = k(x, y) for TensorSketch and
// PolySketch (polynomial and Taylor-truncated Gaussian): the mean over R
// independent seeds must lie within 4.5 standard errors of the exact value
// (a two-sided normal test at level ~7e-6; the seeds are fixed, so the
// outcome is deterministic). The variance must fall with D: from D to 16 D
// the theory predicts a factor ~16 (variance ~ 1/D); we require > 5.
func TestUnbiased(t *testing.T) {
	x := []float64{0.3, -0.5, 0.8, 0.1, 0, -0.4}
	y := []float64{0.6, 0.2, 0.5, -0.3, 0.7, 0}
	xy := mat.NewDense(2, 6, append(append([]float64{}, x...), y...))
	poly := kernels.Polynomial{Degree: 3, Gamma: 0.8, Coef0: 0.5}
	const sigma, q = 1.2, 8
	gauss, _ := gaussExpansion(sigma, q)
	R := 1500
	if testing.Short() {
		R = 600
	}
	cases := []struct {
		name  string
		exact float64
		build func(D int) func(uint64) (featureMap, error)
	}{
		{"tensorsketch/poly", poly.Eval(x, y), func(D int) func(uint64) (featureMap, error) {
			return func(s uint64) (featureMap, error) {
				return NewTensorSketch(poly, 6, SketchOptions{Features: D, Seed: s})
			}
		}},
		{"polysketch/poly", poly.Eval(x, y), func(D int) func(uint64) (featureMap, error) {
			return func(s uint64) (featureMap, error) { return NewPolySketch(poly, 6, SketchOptions{Features: D, Seed: s}) }
		}},
		{"tensorsketch/gauss", gauss.eval(x, y), func(D int) func(uint64) (featureMap, error) {
			return func(s uint64) (featureMap, error) {
				return NewTensorSketch(kernels.Gaussian{Sigma: sigma}, 6, SketchOptions{Features: D*q + 1, TaylorDegree: q, Seed: s})
			}
		}},
		{"polysketch/gauss", gauss.eval(x, y), func(D int) func(uint64) (featureMap, error) {
			return func(s uint64) (featureMap, error) {
				return NewPolySketch(kernels.Gaussian{Sigma: sigma}, 6, SketchOptions{Features: D*q + 1, TaylorDegree: q, Seed: s})
			}
		}},
		{"countsketch/linear", mat.Dot(mat.NewVecDense(6, x), mat.NewVecDense(6, y)), func(D int) func(uint64) (featureMap, error) {
			return func(s uint64) (featureMap, error) {
				return NewCountSketch(linear, 6, SketchOptions{Features: D, Seed: s})
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var vars []float64
			for _, D := range []int{8, 128} {
				ip := innerProducts(t, c.build(D), xy, R)
				m, v := meanVar(ip)
				se := math.Sqrt(v / float64(R))
				t.Logf("D=%d: mean %.5f exact %.5f (SE %.5f), variance %.3g", D, m, c.exact, se, v)
				if math.Abs(m-c.exact) > 4.5*se {
					t.Errorf("D=%d: mean %.5f is %.1f standard errors from k(x,y) = %.5f", D, m, math.Abs(m-c.exact)/se, c.exact)
				}
				vars = append(vars, v)
			}
			if !(vars[0] > 5*vars[1]) {
				t.Errorf("variance did not fall with D: %.3g at D=8, %.3g at D=128", vars[0], vars[1])
			}
		})
	}
}

// TestGaussianTruncation checks the Taylor truncation bound behind
// TaylorDegree: for points with |x|^2, |y|^2 <= r2 the truncated expansion
// is within tol of the Gaussian kernel.
func TestGaussianTruncation(t *testing.T) {
	for _, r2 := range []float64{0.5, 2, 8} {
		for _, tol := range []float64{1e-2, 1e-6} {
			q := TaylorDegree(r2, tol)
			e, err := gaussExpansion(1, q)
			if err != nil {
				t.Fatal(err)
			}
			r := math.Sqrt(r2)
			// worst case: x = y on the sphere of radius r (a = r2), plus an off-diagonal pair
			for _, pair := range [][2][]float64{{{r, 0}, {r, 0}}, {{r, 0}, {0.6 * r, 0.8 * r}}, {{r, 0}, {-r, 0}}} {
				x, y := pair[0], pair[1]
				d2 := (x[0]-y[0])*(x[0]-y[0]) + (x[1]-y[1])*(x[1]-y[1])
				if err := math.Abs(e.eval(x, y) - math.Exp(-d2/2)); err > tol {
					t.Errorf("r2=%g tol=%g q=%d: truncation error %.3g", r2, tol, q, err)
				}
			}
			if q > 1 {
				e2, _ := gaussExpansion(1, q-1)
				if math.Abs(e2.eval([]float64{r, 0}, []float64{r, 0})-1) <= tol {
					t.Errorf("r2=%g tol=%g: q=%d is not the smallest degree", r2, tol, q)
				}
			}
		}
	}
}

// TestDenseCSRIdentical checks that dense and CSR input give bit-identical
// features for every map and the same seed, including an empty row.
func TestDenseCSRIdentical(t *testing.T) {
	x := randData(30, 12, 0.3, 2)
	for j := 0; j < 12; j++ {
		x.Set(7, j, 0) // an empty row
	}
	c := toCSR(x)
	poly := kernels.Polynomial{Degree: 3, Gamma: 0.5, Coef0: 1}
	ts, _ := NewTensorSketch(poly, 12, SketchOptions{Features: 64, Seed: 1})
	ps, _ := NewPolySketch(poly, 12, SketchOptions{Features: 64, Seed: 1})
	gts, _ := NewTensorSketch(kernels.Gaussian{Sigma: 1.5}, 12, SketchOptions{Features: 65, TaylorDegree: 4, Seed: 1})
	gps, _ := NewPolySketch(kernels.Gaussian{Sigma: 1.5}, 12, SketchOptions{Features: 65, TaylorDegree: 4, Seed: 1})
	cs, _ := NewCountSketch(linear, 12, SketchOptions{Features: 16, Seed: 1})
	o := AdaptiveOptions{Samples: 64, Lambda: 0.1, Seed: 9}
	ad, err := FitAdaptive(nil, x, poly, o)
	if err != nil {
		t.Fatal(err)
	}
	adc, err := FitAdaptive(nil, c, poly, o)
	if err != nil {
		t.Fatal(err)
	}
	ga, err := FitAdaptive(nil, x, kernels.Gaussian{Sigma: 1.5}, o)
	if err != nil {
		t.Fatal(err)
	}
	gac, err := FitAdaptive(nil, c, kernels.Gaussian{Sigma: 1.5}, o)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualMaps(t, ad, adc)
	mustEqualMaps(t, ga, gac)
	for _, f := range []featureMap{ts, ps, gts, gps, cs, ad, ga} {
		zd := mat.NewDense(30, f.Dim(), nil)
		zc := mat.NewDense(30, f.Dim(), nil)
		if err := f.Transform(zd, x); err != nil {
			t.Fatal(err)
		}
		if err := f.Transform(zc, c); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(zd, zc) {
			t.Errorf("%s: dense and CSR features differ", f.Kind())
		}
		// the empty row is the zero vector: homogeneous part vanishes
		if f.Kind() == "countsketch" && mat.Norm(zd.RowView(7), 2) != 0 {
			t.Errorf("countsketch of the empty row is not zero")
		}
	}
}

func mustEqualMaps(t *testing.T, a, b *Adaptive) {
	t.Helper()
	ba, _ := a.MarshalBinary()
	bb, _ := b.MarshalBinary()
	if string(ba) != string(bb) {
		t.Errorf("FitAdaptive on dense and CSR input sampled different maps (%d vs %d rows)", a.Dim(), b.Dim())
	}
}

// TestMarshalRoundTrip checks that every map decodes (through
// kernels.UnmarshalMap) to one that produces the same features.
func TestMarshalRoundTrip(t *testing.T) {
	x := randData(10, 5, 1, 3)
	poly := kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: 1}
	ts, _ := NewTensorSketch(poly, 5, SketchOptions{Features: 32, Seed: 4})
	ps, _ := NewPolySketch(kernels.Gaussian{Sigma: 2}, 5, SketchOptions{Features: 33, TaylorDegree: 4, Seed: 4})
	cs, _ := NewCountSketch(linear, 5, SketchOptions{Features: 8, Seed: 4})
	ad, err := FitAdaptive(nil, x, kernels.Gaussian{Sigma: 2}, AdaptiveOptions{Samples: 40, Lambda: 0.1, TaylorDegree: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []featureMap{ts, ps, cs, ad} {
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		g, err := kernels.UnmarshalMap(f.Kind(), b)
		if err != nil {
			t.Fatalf("%s: %v", f.Kind(), err)
		}
		z1 := mat.NewDense(10, f.Dim(), nil)
		z2 := mat.NewDense(10, g.Dim(), nil)
		if err := f.Transform(z1, x); err != nil {
			t.Fatal(err)
		}
		if err := g.Transform(z2, x); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(z1, z2) {
			t.Errorf("%s: decoded map gives different features", f.Kind())
		}
		if _, err := kernels.UnmarshalMap(f.Kind(), b[:len(b)-3]); err == nil {
			t.Errorf("%s: truncated encoding accepted", f.Kind())
		}
	}
}

// TestBadInput checks the documented errors.
func TestBadInput(t *testing.T) {
	x := randData(5, 3, 1, 1)
	o := AdaptiveOptions{Samples: 8, Lambda: 0.1}
	for name, err := range map[string]error{
		"degree 0": func() error {
			_, err := NewTensorSketch(kernels.Polynomial{Degree: 0, Gamma: 1}, 3, SketchOptions{Features: 8, Seed: 1})
			return err
		}(),
		"gamma 0": func() error {
			_, err := NewPolySketch(kernels.Polynomial{Degree: 2, Gamma: 0}, 3, SketchOptions{Features: 8, Seed: 1})
			return err
		}(),
		"gamma <0 adaptive": func() error { _, err := FitAdaptive(nil, x, kernels.Polynomial{Degree: 2, Gamma: -1}, o); return err }(),
		"coef0 < 0": func() error {
			_, err := NewTensorSketch(kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: -1}, 3, SketchOptions{Features: 8, Seed: 1})
			return err
		}(),
		"sigma 0": func() error {
			_, err := NewTensorSketch(kernels.Gaussian{Sigma: 0}, 3, SketchOptions{Features: 8, TaylorDegree: 3, Seed: 1})
			return err
		}(),
		"D too small": func() error {
			_, err := NewPolySketch(kernels.Gaussian{Sigma: 1}, 3, SketchOptions{Features: 3, TaylorDegree: 3, Seed: 1})
			return err
		}(),
		"lambda 0": func() error {
			_, err := FitAdaptive(nil, x, kernels.Polynomial{Degree: 2, Gamma: 1}, AdaptiveOptions{Samples: 8})
			return err
		}(),
		"samples 0": func() error {
			_, err := FitAdaptive(nil, x, kernels.Polynomial{Degree: 2, Gamma: 1}, AdaptiveOptions{Lambda: 1})
			return err
		}(),
		"countsketch D 0": func() error { _, err := NewCountSketch(linear, 3, SketchOptions{Features: 0, Seed: 1}); return err }(),
		"degree > MaxDegree": func() error {
			_, err := NewPolySketch(kernels.Polynomial{Degree: 65, Gamma: 1}, 3, SketchOptions{Features: 8, Seed: 1})
			return err
		}(),
	} {
		if !errors.Is(err, zonal.ErrParam) {
			t.Errorf("%s: got %v, want zonal.ErrParam", name, err)
		}
	}
	ts, _ := NewTensorSketch(kernels.Polynomial{Degree: 2, Gamma: 1}, 3, SketchOptions{Features: 8, Seed: 1})
	// CSR with a column index out of range
	bad := &dataset.CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 1, 2}, Col: []int{0, 3}, Val: []float64{1, 2}}
	if err := ts.Transform(mat.NewDense(2, 8, nil), bad); !errors.Is(err, zonal.ErrFormat) || !errors.Is(err, zonal.ErrRange) {
		t.Errorf("out-of-range CSR column: got %v", err)
	}
	if _, err := FitAdaptive(nil, bad, kernels.Polynomial{Degree: 2, Gamma: 1}, o); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("adaptive, out-of-range CSR column: got %v", err)
	}
	for name, c := range map[string]*dataset.CSR{
		"negative column":   {Rows: 1, Cols: 3, RowPtr: []int{0, 1}, Col: []int{-1}, Val: []float64{1}},
		"unsorted columns":  {Rows: 1, Cols: 3, RowPtr: []int{0, 2}, Col: []int{2, 1}, Val: []float64{1, 1}},
		"short RowPtr":      {Rows: 2, Cols: 3, RowPtr: []int{0, 1}, Col: []int{0}, Val: []float64{1}},
		"RowPtr past end":   {Rows: 1, Cols: 3, RowPtr: []int{0, 4}, Col: []int{0}, Val: []float64{1}},
		"decreasing RowPtr": {Rows: 2, Cols: 3, RowPtr: []int{0, 1, 0}, Col: []int{0}, Val: []float64{1}},
	} {
		if err := ts.Transform(mat.NewDense(c.Rows, 8, nil), c); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("%s: got %v, want zonal.ErrFormat", name, err)
		}
	}
	nan := &dataset.CSR{Rows: 1, Cols: 3, RowPtr: []int{0, 1}, Col: []int{1}, Val: []float64{math.NaN()}}
	if err := ts.Transform(mat.NewDense(1, 8, nil), nan); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in CSR: got %v", err)
	}
	xn := mat.DenseCopyOf(x)
	xn.Set(1, 1, math.Inf(1))
	if err := ts.Transform(mat.NewDense(5, 8, nil), xn); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("Inf in dense input: got %v", err)
	}
	if err := ts.Transform(mat.NewDense(5, 8, nil), mat.NewDense(5, 4, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong width: got %v", err)
	}
	if err := ts.Transform(mat.NewDense(4, 8, nil), x); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong dst: got %v", err)
	}
	if err := ts.Transform(mat.NewDense(1, 8, nil), &dataset.CSR{Cols: 3}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("no rows: got %v", err)
	}
	// all rows empty: the polynomial kernel with coef0 = 0 is the zero matrix
	zero := &dataset.CSR{Rows: 3, Cols: 3, RowPtr: []int{0, 0, 0, 0}}
	if _, err := FitAdaptive(nil, zero, kernels.Polynomial{Degree: 2, Gamma: 1}, o); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("all-zero data: got %v, want zonal.ErrEmpty", err)
	}
	// empty rows with coef0 > 0 are fine: the kernel is the constant coef0^p
	ad, err := FitAdaptive(nil, zero, kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: 2}, o)
	if err != nil {
		t.Fatalf("empty rows with coef0 > 0: %v", err)
	}
	z := mat.NewDense(3, ad.Dim(), nil)
	if err := ad.Transform(z, zero); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if v := mat.Dot(z.RowView(i), z.RowView(0)); math.Abs(v-4) > 1e-12 {
			t.Errorf("empty rows: feature inner product %v, want coef0^2 = 4", v)
		}
	}
}

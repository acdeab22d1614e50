package tensorsketch

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// TestKernelKinds checks that every constructor takes kernels.Polynomial
// and kernels.Gaussian (values or pointers, with bit-identical features)
// and rejects other kernel kinds, a nil kernel, a Gaussian kernel without
// a Taylor degree and a CountSketch of degree > 1 with zonal.ErrParam.
func TestKernelKinds(t *testing.T) {
	x := randData(20, 5, 0.6, 11)
	poly := kernels.Polynomial{Degree: 2, Gamma: 0.5, Coef0: 1}
	gauss := kernels.Gaussian{Sigma: 1.3}
	so := SketchOptions{Features: 41, TaylorDegree: 4, Seed: 2}
	ao := AdaptiveOptions{Samples: 50, Lambda: 0.1, TaylorDegree: 4, Seed: 2}
	build := map[string]func(k kernels.Kernel) (kernels.FeatureMap, error){
		"tensorsketch": func(k kernels.Kernel) (kernels.FeatureMap, error) { return NewTensorSketch(k, 5, so) },
		"polysketch":   func(k kernels.Kernel) (kernels.FeatureMap, error) { return NewPolySketch(k, 5, so) },
		"adaptive":     func(k kernels.Kernel) (kernels.FeatureMap, error) { return FitAdaptive(t.Context(), x, k, ao) },
	}
	for name, b := range build {
		for _, pair := range [][2]kernels.Kernel{{poly, &poly}, {gauss, &gauss}} {
			f, err := b(pair[0])
			if err != nil {
				t.Fatalf("%s %v: %v", name, pair[0], err)
			}
			g, err := b(pair[1])
			if err != nil {
				t.Fatalf("%s %v (pointer): %v", name, pair[0], err)
			}
			zf := mat.NewDense(20, f.Dim(), nil)
			zg := mat.NewDense(20, g.Dim(), nil)
			if err := f.Transform(zf, x); err != nil {
				t.Fatal(err)
			}
			if err := g.Transform(zg, x); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(zf, zg) {
				t.Errorf("%s: kernel value and pointer give different features", name)
			}
		}
		for _, k := range []kernels.Kernel{kernels.Laplacian{Sigma: 1}, kernels.ExpDot{Sigma: 1}, nil, (*kernels.Polynomial)(nil)} {
			if _, err := b(k); !errors.Is(err, zonal.ErrParam) {
				t.Errorf("%s with kernel %v: got %v, want zonal.ErrParam", name, k, err)
			}
		}
	}
	if _, err := NewTensorSketch(gauss, 5, SketchOptions{Features: 41}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("gaussian TensorSketch without TaylorDegree: got %v, want zonal.ErrParam", err)
	}
	if _, err := NewCountSketch(poly, 5, so); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("CountSketch of a degree-2 kernel: got %v, want zonal.ErrParam", err)
	}
	if _, err := NewCountSketch(gauss, 5, so); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("CountSketch of the gaussian kernel: got %v, want zonal.ErrParam", err)
	}
	if _, err := FitAdaptive(t.Context(), x, poly, AdaptiveOptions{Samples: 5, Lambda: 1, TaylorDegree: -1}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("negative TaylorDegree: got %v, want zonal.ErrParam", err)
	}
}

// TestCountSketchAffine checks the CountSketch of the degree-1 kernel
// gamma <x,y> + coef0 (through the augmented points): over R = 1500 seeds
// the mean feature inner product lies within 4.5 standard errors of the
// kernel (a two-sided normal test at level ~7e-6; fixed seeds).
func TestCountSketchAffine(t *testing.T) {
	x := []float64{0.3, -0.5, 0.8, 0.1, 0, -0.4}
	y := []float64{0.6, 0.2, 0.5, -0.3, 0.7, 0}
	xy := mat.NewDense(2, 6, append(append([]float64{}, x...), y...))
	k := kernels.Polynomial{Degree: 1, Gamma: 0.5, Coef0: 2}
	const R = 1500
	ip := innerProducts(t, func(s uint64) (featureMap, error) {
		return NewCountSketch(k, 6, SketchOptions{Features: 8, Seed: s})
	}, xy, R)
	m, v := meanVar(ip)
	se := math.Sqrt(v / R)
	if exact := k.Eval(x, y); math.Abs(m-exact) > 4.5*se {
		t.Errorf("mean %.5f is %.1f standard errors from k(x,y) = %.5f", m, math.Abs(m-exact)/se, exact)
	}
}

// TestCountSketchLegacyEncoding checks that a version-1 CountSketch
// encoding (d, D and seed, no kernel) decodes to the linear-kernel
// CountSketch with the same seed, with identical features.
func TestCountSketchLegacyEncoding(t *testing.T) {
	var b []byte
	for _, v := range []uint64{1, 7, 16, 5} { // version, d, D, seed
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	old, err := kernels.UnmarshalMap("countsketch", b)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewCountSketch(linear, 7, SketchOptions{Features: 16, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	x := randData(9, 7, 0.7, 3)
	z1 := mat.NewDense(9, 16, nil)
	z2 := mat.NewDense(9, 16, nil)
	if err := old.Transform(z1, x); err != nil {
		t.Fatal(err)
	}
	if err := cs.Transform(z2, x); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z1, z2) {
		t.Error("legacy countsketch encoding decodes to different features")
	}
}

// TestMemoryBudget checks that a budget below the working arrays gives
// zonal.ErrTooLarge from every constructor, from Transform and from
// FitAdaptive, and that the default budget accepts the same sizes.
func TestMemoryBudget(t *testing.T) {
	x := randData(40, 200, 0.5, 4)
	poly := kernels.Polynomial{Degree: 3, Gamma: 0.5, Coef0: 1}
	const tiny = 1 << 10 // below the 200-coordinate hash tables (2.4 KiB)
	for name, err := range map[string]error{
		"countsketch": func() error {
			_, err := NewCountSketch(linear, 200, SketchOptions{Features: 8, MemoryBudget: tiny})
			return err
		}(),
		"tensorsketch": func() error {
			_, err := NewTensorSketch(poly, 200, SketchOptions{Features: 8, MemoryBudget: tiny})
			return err
		}(),
		"polysketch": func() error {
			_, err := NewPolySketch(poly, 200, SketchOptions{Features: 8, MemoryBudget: tiny})
			return err
		}(),
		"adaptive": func() error {
			_, err := FitAdaptive(t.Context(), x, poly, AdaptiveOptions{Options: Options{MemoryBudget: tiny}, Samples: 20, Lambda: 0.1})
			return err
		}(),
		"huge sketch dim": func() error {
			_, err := FitAdaptive(t.Context(), x, poly, AdaptiveOptions{Samples: 20, Lambda: 0.1, SketchDim: 1 << 26})
			return err
		}(),
	} {
		if !errors.Is(err, zonal.ErrTooLarge) {
			t.Errorf("%s: got %v, want zonal.ErrTooLarge", name, err)
		}
	}
	// 40 x 200 at density 0.5: the copy of the nonzeros and its augmented
	// form (~128 KiB) exceed
	// 32 KiB while the map itself (about 10 KiB of tables) fits.
	ts, err := NewTensorSketch(poly, 200, SketchOptions{Features: 8, MemoryBudget: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Transform(mat.NewDense(40, 8, nil), x); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("Transform beyond the budget: got %v, want zonal.ErrTooLarge", err)
	}
	if err := ts.Transform(mat.NewDense(2, 8, nil), x.Slice(0, 2, 0, 200)); err != nil {
		t.Errorf("Transform of two rows within the budget: %v", err)
	}
	// Two rows run on one worker, so the scratch charged is one worker's
	// whatever the core count (it was GOMAXPROCS workers': 42 KiB, over the
	// budget, on 64 cores).
	prev := runtime.GOMAXPROCS(64)
	err = ts.Transform(mat.NewDense(2, 8, nil), x.Slice(0, 2, 0, 200))
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Errorf("Transform of two rows within the budget at GOMAXPROCS 64: %v", err)
	}
	if _, err := FitAdaptive(t.Context(), x, poly, AdaptiveOptions{Samples: 20, Lambda: 0.1}); err != nil {
		t.Errorf("default budget: %v", err)
	}
}

// TestProgress checks the level reports of FitAdaptive: Stage "level",
// Done counting 1, 2, ... up to the levels in Levels(), a constant Total
// until the last report, which has Done == Total.
func TestProgress(t *testing.T) {
	x := randData(60, 8, 1, 6)
	var got []zonal.Progress
	o := AdaptiveOptions{Samples: 64, Lambda: 1e-3, Seed: 1}
	o.Progress = func(p zonal.Progress) { got = append(got, p) }
	ad, err := FitAdaptive(t.Context(), x, kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: 1}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ad.Levels()) || len(got) < 2 {
		t.Fatalf("%d reports for %d levels", len(got), len(ad.Levels()))
	}
	for i, p := range got {
		if p.Stage != "level" || p.Done != i+1 || p.Total < p.Done {
			t.Errorf("report %d: %+v", i, p)
		}
		if i > 0 && i < len(got)-1 && p.Total != got[0].Total {
			t.Errorf("report %d: Total changed from %d to %d", i, got[0].Total, p.Total)
		}
	}
	if last := got[len(got)-1]; last.Done != last.Total {
		t.Errorf("last report %+v: Done != Total", last)
	}
}

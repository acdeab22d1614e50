package solvers

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// rounded32 returns x with every entry rounded to float32 (still float64).
func rounded32(x *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(x)
	raw := out.RawMatrix()
	for i, v := range raw.Data {
		raw.Data[i] = float64(float32(v))
	}
	return out
}

// TestFalkonRows32 is float32 FALKON on *dataset.Dense32 rows against the
// same fit on float64 rows, on TestFalkonFloat32Synthetic's problem, with
// K_nM cached and streamed:
//
//   - on float64 rows that are float32 values, the fits do the same
//     arithmetic (the float32 route rounds each row block to the values the
//     Dense32 holds, and the centres widen back exactly), so the predictions
//     agree to 1e-10 relative RMS (only float64 summation orders of the row
//     norms may differ);
//   - on general float64 rows, the Dense32 rows differ from them by the
//     rounding of the entries (relative 2^-24, 6e-8), which perturbs K_nM as
//     the float32 storage of K_nM does: the predictions agree with the
//     float32 fit on float64 rows and with the float64 fit within 1e-4
//     relative RMS (the bound of TestFalkonFloat32Synthetic, whose
//     measurement is about 7e-6; this one is logged).
func TestFalkonRows32(t *testing.T) {
	p := newFloat32Problem(t)
	x, y, xt, k, base, want64 := p.x, p.y, p.xt, p.k, p.base, p.want
	ctx := context.Background()
	x32, err := dataset.NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	xr := rounded32(x)
	for _, budget := range []int64{0, 3 << 20} { // cached, streamed (see TestFalkonFloat32Synthetic)
		o32 := base
		o32.Precision, o32.MemoryBudget = zonal.Float32, budget
		on32, err := FitFalkon(ctx, k, x32, y, float32Lambda, o32)
		if err != nil {
			t.Fatal(err)
		}
		if on32.CachedKnM() != (budget == 0) {
			t.Fatalf("budget %d: cached %v", budget, on32.CachedKnM())
		}
		if _, ok := on32.Centers().(*mat.Dense); !ok {
			t.Fatalf("centres of a Dense32 fit are %T, want *mat.Dense", on32.Centers())
		}
		got := predictAll(t, on32, xt)
		onRounded, err := FitFalkon(ctx, k, xr, y, float32Lambda, o32)
		if err != nil {
			t.Fatal(err)
		}
		if r := relRMSDiff(got, predictAll(t, onRounded, xt)); r > 1e-10 {
			t.Errorf("budget %d: Dense32 rows vs the same values in float64: relative RMS %.3g, want <= 1e-10", budget, r)
		}
		on64, err := FitFalkon(ctx, k, x, y, float32Lambda, o32)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]*mat.Dense{"float32 on float64 rows": predictAll(t, on64, xt), "float64": want64} {
			if r := relRMSDiff(got, want); r > 3e-5 {
				t.Errorf("budget %d: Dense32 rows vs %s: relative RMS %.3g, want <= 3e-5", budget, name, r)
			} else {
				t.Logf("budget %d: Dense32 rows vs %s: relative RMS %.3g", budget, name, r)
			}
		}
	}
}

// TestFalkonRows32Weighted: zero weights drop rows of a Dense32 as of a
// Dense (the fits on the rounded float64 rows and on the Dense32 agree), and
// CenterIndices are rows of the given x.
func TestFalkonRows32Weighted(t *testing.T) {
	x, y := synth(400, 3, 5)
	xr := rounded32(x)
	x32, err := dataset.NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 400)
	for i := range w {
		w[i] = float64(i % 3) // every third row weight 0
	}
	k := kernels.Gaussian{Sigma: 1}
	o := FalkonOptions{Options: Options{Weights: w}, Centers: 40, Seed: 1, Iterations: 60, Precision: zonal.Float32}
	a, err := FitFalkon(context.Background(), k, x32, y, 1e-4, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitFalkon(context.Background(), k, xr, y, 1e-4, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := relRMSDiff(predictAll(t, a, xr), predictAll(t, b, xr)); r > 1e-10 {
		t.Errorf("weighted Dense32 vs float64 rows: relative RMS %.3g", r)
	}
	for _, i := range a.CenterIndices() {
		if w[i] == 0 {
			t.Fatalf("centre %d has weight 0", i)
		}
	}
}

// TestFalkonRows32Errors: bad Dense32 rows give the errors bad float64 rows
// give (NaN, shape, labels), and the options Dense32 rows are not read with
// are refused with zonal.ErrParam.
func TestFalkonRows32Errors(t *testing.T) {
	x, y := synth(50, 2, 71)
	k := kernels.Gaussian{Sigma: 1}
	ctx := context.Background()
	o := FalkonOptions{Centers: 10, Precision: zonal.Float32}
	fit := func(x mat.Matrix, y *mat.Dense, o FalkonOptions) error {
		_, err := FitFalkon(ctx, k, x, y, 1e-3, o)
		return err
	}
	x32, err := dataset.NewDense32(x)
	if err != nil {
		t.Fatal(err)
	}
	nan32 := &dataset.Dense32{Rows: 50, Cols: 2, Data: append([]float32(nil), x32.Data...)}
	nan32.Data[7] = float32(math.NaN())
	nan64 := mat.DenseCopyOf(x)
	nan64.Set(3, 1, math.NaN())
	short := mat.NewDense(49, 1, nil)
	var nilRows *dataset.Dense32
	for _, c := range []struct {
		name     string
		got, ref error
		want     error
	}{
		{"NaN", fit(nan32, y, o), fit(nan64, y, o), zonal.ErrNonFinite},
		{"labels", fit(x32, short, o), fit(x, short, o), zonal.ErrShape},
		{"data length", fit(&dataset.Dense32{Rows: 50, Cols: 2, Data: x32.Data[:99]}, y, o), nil, zonal.ErrShape},
		{"nil", fit(nilRows, y, o), fit((*mat.Dense)(nil), y, o), zonal.ErrShape},
		{"empty", fit(&dataset.Dense32{Rows: 0, Cols: 2}, y, o), fit(&mat.Dense{}, y, o), zonal.ErrEmpty},
		{"centres", fit(x32, y, FalkonOptions{Centers: 51, Precision: zonal.Float32}), fit(x, y, FalkonOptions{Centers: 51, Precision: zonal.Float32}), zonal.ErrParam},
		{"float64 precision", fit(x32, y, FalkonOptions{Centers: 10}), nil, zonal.ErrParam},
		{"rls", fit(x32, y, FalkonOptions{Centers: 10, Precision: zonal.Float32, Sampling: SamplingRLS}), nil, zonal.ErrParam},
	} {
		if !errors.Is(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
		if c.ref != nil && !errors.Is(c.ref, c.want) {
			t.Errorf("%s on float64 rows: %v, want %v", c.name, c.ref, c.want)
		}
	}
	// The other solvers refuse Dense32 rows (ErrShape, naming the type).
	if _, err := FitKRR(ctx, k, x32, y, 1e-3, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("KRR on Dense32: %v, want ErrShape", err)
	}
}

package estimator_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// TestFitRows32 is the memory accounting of Precision float32: a FALKON
// fit on standardized dense rows holds them in float32 (Report.Rows32,
// RowBytes = 4 n d) and predicts as the float64 fit of the same settings
// within 1e-4 relative RMS (solvers.TestFalkonRows32's bound for Dense32
// against float64 rows is 3e-5; here the CG stopping point of two fits also
// differs); Precision float64 reports 8 n d, and rows that are the caller's
// own (no scaling) are not copied.
func TestFitRows32(t *testing.T) {
	const n, d = 1500, 4
	x, y := smooth(n, d, 0.05, 3)
	xt, _ := smooth(300, d, 0, 4)
	ctx := context.Background()
	o := estimator.Options{Standardize: estimator.StandardizeOn, Sigma: 1.5, Lambda: 1e-5, Centers: 150, Seed: 1, Calibration: estimator.CalibrationNone}
	predict := func(o estimator.Options) (*estimator.Report, *mat.Dense) {
		t.Helper()
		pipe, rep, err := estimator.Fit(ctx, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		out := mat.NewDense(300, 1, nil)
		if err := pipe.PredictOutputs(out, xt); err != nil {
			t.Fatal(err)
		}
		return rep, out
	}
	rep64, want := predict(o)
	if rep64.Rows32 || rep64.RowBytes != 8*n*d {
		t.Errorf("float64: Rows32 %v, RowBytes %d, want false, %d", rep64.Rows32, rep64.RowBytes, 8*n*d)
	}
	o32 := o
	o32.Precision = zonal.Float32
	rep32, got := predict(o32)
	if !rep32.Rows32 || rep32.RowBytes != 4*n*d {
		t.Errorf("float32: Rows32 %v, RowBytes %d, want true, %d", rep32.Rows32, rep32.RowBytes, 4*n*d)
	}
	var num, den, mu float64
	for i := 0; i < 300; i++ {
		mu += want.At(i, 0) / 300
	}
	for i := 0; i < 300; i++ {
		num += math.Pow(got.At(i, 0)-want.At(i, 0), 2)
		den += math.Pow(want.At(i, 0)-mu, 2)
	}
	if r := math.Sqrt(num / den); r > 1e-4 {
		t.Errorf("float32 rows vs float64: relative RMS %.3g, want <= 1e-4", r)
	} else {
		t.Logf("float32 rows vs float64: relative RMS %.3g", r)
	}
	// Not FALKON's float32 blocks: the rows stay float64.
	for name, alt := range map[string]estimator.Options{
		"rls":      func() estimator.Options { a := o32; a.Sampling = solvers.SamplingRLS; return a }(),
		"unscaled": func() estimator.Options { a := o32; a.Standardize = estimator.StandardizeOff; return a }(),
		"park":     func() estimator.Options { a := o32; a.Method = estimator.MethodParK; return a }(),
	} {
		_, rep, err := estimator.Fit(ctx, x, y, alt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep.Rows32 {
			t.Errorf("%s: Rows32 set", name)
		}
	}
}

// TestFitRows32Calibrated: a float32 classification fit holds its rows in
// float32 through the calibration's fold fits too, and its probabilities
// are calibrated.
func TestFitRows32Calibrated(t *testing.T) {
	x, y := blobs(600, 3, 2, 1.0, 5)
	pipe, rep, err := estimator.Fit(context.Background(), x, y, estimator.Options{Standardize: estimator.StandardizeOn, Precision: zonal.Float32, Centers: 60, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rows32 || rep.Calibration == estimator.CalibrationNone {
		t.Fatalf("Rows32 %v, calibration %v", rep.Rows32, rep.Calibration)
	}
	p := mat.NewDense(600, 2, nil)
	if err := pipe.PredictProba(p, x); err != nil {
		t.Fatal(err)
	}
	rowSums(t, p)
}

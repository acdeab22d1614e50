package estimator

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
)

// Above CalibrationRows the calibration refits on a stratified subsample:
// about CalibrationRows rows, every class in proportion, a rare class
// kept whole, the rows increasing and distinct, the same for a seed.
func TestCalibrationRows(t *testing.T) {
	n := 3 * CalibrationRows
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(i % 3) // three equal classes
	}
	y[5], y[17] = 9, 9 // a class of 2 rows
	classes := []float64{0, 1, 2, 9}
	rows, err := calibrationRows(y, classes, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < CalibrationRows-len(classes) || len(rows) > CalibrationRows+len(classes) {
		t.Fatalf("%d calibration rows of %d, want about %d", len(rows), n, CalibrationRows)
	}
	if !slices.IsSorted(rows) || len(slices.Compact(slices.Clone(rows))) != len(rows) {
		t.Fatal("rows are not increasing and distinct")
	}
	sub := make([]float64, len(rows))
	for i, r := range rows {
		sub[i] = y[r]
	}
	counts := classCounts(sub, classes)
	if counts[3] != 2 {
		t.Errorf("the 2-row class has %d calibration rows", counts[3])
	}
	for c := 0; c < 3; c++ {
		// Each big class is a third of the rows, kept in proportion up
		// to the rounding of one row.
		if counts[c] < CalibrationRows/3-1 || counts[c] > CalibrationRows/3+1 {
			t.Errorf("class %d: %d rows, want about %d", c, counts[c], CalibrationRows/3)
		}
	}
	again, _ := calibrationRows(y, classes, 1)
	if !slices.Equal(rows, again) {
		t.Error("the subsample changed for the same seed")
	}
	small, _ := calibrationRows(y[:100], classes, 1)
	if len(small) != 100 {
		t.Errorf("100 rows: %d calibration rows, want all", len(small))
	}
}

func TestGrownCenters(t *testing.T) {
	f64 := zonal.Float64
	for _, c := range []struct {
		full, half float64
		m, n       int
		limit      int64
		want       int
	}{
		{0.10, 0.20, 2048, 20000, 0, 4096},        // halving the loss pays: double
		{0.10, 0.104, 2048, 20000, 0, 2048},       // within the 5% noise: keep
		{0.10, 0.106, 2048, 20000, 0, 4096},       // just past it
		{0.10, 0.20, 2048, 3000, 0, 3000},         // at most n
		{0.10, 0.20, 3000, 20000, 0, 4096},        // at most GrowCenters
		{0.10, 0.20, 2048, 100000, 1 << 30, 2048}, // 1 GiB holds 1324 centres (with K_nM cached): never below the plan's
		{math.NaN(), 0.20, 2048, 20000, 0, 2048},  // a NaN loss never grows
		{0.10, math.Inf(1), 2048, 20000, 0, 4096}, // an unscorable half count loses
	} {
		want := c.want
		if got := grownCenters(c.full, c.half, c.m, c.n, c.limit, f64); got != want {
			t.Errorf("grownCenters(%g, %g, %d, %d, %d) = %d, want %d", c.full, c.half, c.m, c.n, c.limit, got, want)
		}
	}
}

// A fold model on r of n rows gets lambda n / r, so that lambda n, its
// penalty against the sum of squared errors, is the final model's;
// weighted, n and r are the weight sums. A fold whose weights are all zero
// (or bad weights) is a zonal.ErrParam, not a division by zero.
func TestFoldLambda(t *testing.T) {
	if got, err := foldLambda(1e-3, nil, 1000, nil, 800); err != nil || math.Abs(got-1.25e-3) > 1e-15 {
		t.Errorf("unweighted 1000 rows, fold of 800: %g, %v, want 1.25e-3", got, err)
	}
	w := []float64{1, 2, 3, 4}
	if got, err := foldLambda(1e-3, w, 4, []float64{1, 4}, 2); err != nil || math.Abs(got-2e-3) > 1e-15 {
		t.Errorf("weights summing to 10, fold's to 5: %g, %v, want 2e-3", got, err)
	}
	for name, c := range map[string]struct {
		w, wr []float64
		r     int
	}{
		"all-zero fold":     {w, []float64{0, 0}, 2},
		"negative fold":     {w, []float64{-1, 4}, 2},
		"all-zero weights":  {[]float64{0, 0, 0, 0}, []float64{0, 0}, 2},
		"fold length wrong": {w, []float64{1, 4}, 3},
	} {
		got, err := foldLambda(1e-3, c.w, 4, c.wr, c.r)
		if !errors.Is(err, zonal.ErrParam) || got != 0 {
			t.Errorf("%s: %g, %v, want 0 and ErrParam", name, got, err)
		}
	}
}

package solvers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// TestLogisticStartChecks: a warm start (LogisticOptions.Start) that
// differs from the fit in anything the model records of its own fit
// (iterate, input dimension, outputs, centre count, row count, centre
// indices, intercept, centre rows, kernel) is refused with a
// zonal.ParamError on Start whose reason names the difference; the same
// rows in the other storage (dense start, CSR fit and back) are accepted.
func TestLogisticStartChecks(t *testing.T) {
	ctx := context.Background()
	x, y := blobs(90, 3, 2, 5)
	_, tg := encoded(t, y)
	o := LogisticOptions{Centers: 20, Seed: 4, MaxNewtonSteps: 3}
	start, err := FitLogistic(ctx, testGauss{1}, x, tg, 1e-1, o)
	if err != nil {
		t.Fatal(err)
	}
	xs := dataset.NewCSRFromDense(x)
	startCSR, err := FitLogistic(ctx, testGauss{1}, xs, tg, 1e-1, o)
	if err != nil {
		t.Fatal(err)
	}
	n, d := x.Dims()
	idx := start.CenterIndices()

	// The fits to refuse: each changes one thing.
	wide := mat.NewDense(n, d+1, nil)
	wide.Slice(0, n, 0, d).(*mat.Dense).Copy(x)
	y2 := make([]float64, n)
	for i, v := range y {
		y2[i] = float64(int(v) % 2)
	}
	_, tg2 := encoded(t, y2)
	longer := mat.NewDense(n+1, d, nil)
	longer.Slice(0, n, 0, d).(*mat.Dense).Copy(x)
	_, tgLonger := encoded(t, append(append([]float64(nil), y...), 0))
	moved := mat.DenseCopyOf(x)
	moved.Set(idx[0], 1, moved.At(idx[0], 1)+1)
	movedCSR := dataset.NewCSRFromDense(moved)
	loaded := *start
	loaded.u = nil
	fewer, seed, icpt := o, o, o
	fewer.Centers = 19
	seed.Seed = 5
	icpt.Intercept = InterceptFitted

	type fit struct {
		k     testGauss
		x     mat.Matrix
		y     *mat.Dense
		o     LogisticOptions
		start *Logistic
	}
	for _, c := range []struct {
		name, reason string
		fit
	}{
		{"loaded", "loaded from a model file", fit{testGauss{1}, x, tg, o, &loaded}},
		{"input dimension", "takes 2 input columns, the rows have 3", fit{testGauss{1}, wide, tg, o, start}},
		{"outputs", "has 3 outputs, the targets need 1", fit{testGauss{1}, x, tg2, o, start}},
		{"centre count", "has 20 centres, the fit 19", fit{testGauss{1}, x, tg, fewer, start}},
		{"row count", "fitted on 90 rows, these are 91", fit{testGauss{1}, longer, tgLonger, o, start}},
		{"seed", "other centre indices", fit{testGauss{1}, x, tg, seed, start}},
		{"intercept", "fitted intercept false, the fit true", fit{testGauss{1}, x, tg, icpt, start}},
		{"centre rows", "centre 0 unequal to row", fit{testGauss{1}, moved, tg, o, start}},
		{"centre rows, CSR start and fit", "centre 0 unequal to row", fit{testGauss{1}, movedCSR, tg, o, startCSR}},
		{"centre rows, CSR start, dense fit", "centre 0 unequal to row", fit{testGauss{1}, moved, tg, o, startCSR}},
		{"kernel", "has kernel test-gauss(1), the fit test-gauss(2)", fit{testGauss{2}, x, tg, o, start}},
	} {
		c.o.Start = c.start
		_, err := FitLogistic(ctx, c.k, c.x, c.y, 1e-2, c.o)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != "Start" || !strings.Contains(pe.Reason, c.reason) || !errors.Is(err, zonal.ErrParam) {
			t.Errorf("start with another %s: %v, want a ParamError on Start saying %q", c.name, err, c.reason)
		}
	}

	for _, c := range []struct {
		name  string
		x     mat.Matrix
		start *Logistic
	}{{"dense", x, start}, {"dense start, CSR fit", xs, start}, {"CSR start, dense fit", x, startCSR}, {"CSR", xs, startCSR}} {
		so := o
		so.Start = c.start
		if _, err := FitLogistic(ctx, testGauss{1}, c.x, tg, 1e-2, so); err != nil {
			t.Errorf("%s: a start on the same rows is refused: %v", c.name, err)
		}
	}
}

// TestSameRow: rows compare equal across dense and CSR storage, with a
// CSR's explicit zeros equal to absent entries, and any differing entry
// (stored or not) makes them unequal.
func TestSameRow(t *testing.T) {
	dense := mat.NewDense(1, 4, []float64{0, 2, 0, 3})
	// Row 0: the dense row with an explicit zero at column 0; row 1: the
	// same without it; row 2: an extra entry at column 2; row 3: column 3
	// missing.
	c, err := dataset.NewCSR(4, 4, []int{0, 3, 5, 8, 9}, []int{0, 1, 3, 1, 3, 1, 2, 3, 1}, []float64{0, 2, 3, 2, 3, 2, 1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false} {
		if got := sameRow(dense, 0, c, i); got != want {
			t.Errorf("dense vs CSR row %d: %t, want %t", i, got, want)
		}
		if got := sameRow(c, i, dense, 0); got != want {
			t.Errorf("CSR row %d vs dense: %t, want %t", i, got, want)
		}
		if got := sameRow(c, 0, c, i); got != want {
			t.Errorf("CSR row 0 vs CSR row %d: %t, want %t", i, got, want)
		}
		if got := sameRow(c, i, c, 0); got != want {
			t.Errorf("CSR row %d vs CSR row 0: %t, want %t", i, got, want)
		}
	}
	if !sameRow(dense, 0, mat.DenseCopyOf(dense), 0) || sameRow(dense, 0, mat.NewDense(1, 4, []float64{0, 2, 0, 4}), 0) {
		t.Error("dense rows compared wrongly")
	}
}

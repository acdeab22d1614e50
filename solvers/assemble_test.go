package solvers

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// roundTrip saves m in a pipeline and loads it back.
func roundTrip(t *testing.T, m Model) Model {
	t.Helper()
	p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Save(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := Load(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return q.Model
}

func TestNewModelsEqualFitted(t *testing.T) {
	ctx := context.Background()
	x, y := synth(300, 3, 7)
	xt, _ := synth(50, 3, 8)
	k := testGauss{1}

	f, err := FitFalkon(ctx, k, x, y, 1e-3, FalkonOptions{Centers: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	nf, err := NewFalkonModel(k, f.Centers(), f.Alpha(), f.exp.mean, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := predictAll(t, f, xt)
	for _, m := range []Model{nf, roundTrip(t, nf)} {
		if d := maxAbsDiff(predictAll(t, m, xt), want); d != 0 {
			t.Errorf("falkon %T: predictions differ by %g", m, d)
		}
	}

	fm, err := newExactMap(k, mat.DenseCopyOf(x.Slice(0, 30, 0, 3)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nr, err := NewRidgeModel(fm, r.Weights(), r.mean, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = predictAll(t, r, xt)
	for _, m := range []Model{nr, roundTrip(t, nr)} {
		if d := maxAbsDiff(predictAll(t, m, xt), want); d != 0 {
			t.Errorf("ridge %T: predictions differ by %g", m, d)
		}
	}

	pk, err := FitParK(ctx, k, x, y, 1e-3, ParKOptions{Cells: 3, Centers: 60, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]*Falkon, pk.Cells())
	for q, e := range pk.cells {
		cells[q] = &Falkon{exp: e, lambda: 1}
	}
	np, err := NewParKModel(k, pk.Centroids(), cells, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = predictAll(t, pk, xt)
	for _, m := range []Model{np, roundTrip(t, np)} {
		if d := maxAbsDiff(predictAll(t, m, xt), want); d != 0 {
			t.Errorf("park %T: predictions differ by %g", m, d)
		}
	}
}

func TestNewModelsReject(t *testing.T) {
	k := testGauss{1}
	c := mat.NewDense(2, 2, []float64{0, 0, 1, 1})
	a := mat.NewDense(2, 1, []float64{1, 2})
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"nil kernel", err2(NewFalkonModel(nil, c, a, nil, 1, Options{})), zonal.ErrParam},
		{"lambda", err2(NewFalkonModel(k, c, a, nil, 0, Options{})), zonal.ErrParam},
		{"alpha rows", err2(NewFalkonModel(k, c, mat.NewDense(3, 1, nil), nil, 1, Options{})), zonal.ErrShape},
		{"mean length", err2(NewFalkonModel(k, c, a, []float64{1, 2}, 1, Options{})), zonal.ErrShape},
		{"nan alpha", err2(NewFalkonModel(k, c, mat.NewDense(2, 1, []float64{1, math.NaN()}), nil, 1, Options{})), zonal.ErrNonFinite},
		{"nil map", err2(NewRidgeModel(nil, a, nil, 1, Options{})), zonal.ErrParam},
		{"park cells", err2(NewParKModel(k, c, nil, 1, Options{})), zonal.ErrShape},
		{"park nil cell", err2(NewParKModel(k, c, make([]*Falkon, 2), 1, Options{})), zonal.ErrParam},
	}
	f, err := NewFalkonModel(testGauss{2}, c, a, nil, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		name string
		err  error
		want error
	}{"park other kernel", err2(NewParKModel(k, c, []*Falkon{f, f}, 1, Options{})), zonal.ErrParam})
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

func err2[T any](_ T, err error) error { return err }

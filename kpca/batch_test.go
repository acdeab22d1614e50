package kpca

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// linear is the kernel <x, y>: with it, centred kernel PCA is ordinary PCA,
// which gives an independent reference.
type linear struct{}

func (linear) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}
func (linear) Kind() string                   { return "test-linear" }
func (linear) String() string                 { return "linear" }
func (linear) MarshalBinary() ([]byte, error) { return nil, nil }

// TestFitLinearIsPCA: with the linear kernel, the explained variances of
// centred kernel PCA are the eigenvalues of the covariance (1/n) Xc^T Xc, and
// the scores are the projections of the centred points on its eigenvectors
// (up to sign). Values are O(1), n = 50: 1e-10 is far above rounding.
func TestFitLinearIsPCA(t *testing.T) {
	x := randPoints(31, 50, 4, 1)
	for j := 0; j < 4; j++ { // anisotropic, shifted
		for i := 0; i < 50; i++ {
			x.Set(i, j, x.At(i, j)*float64(j+1)+3)
		}
	}
	m, err := Fit(context.Background(), linear{}, x, Options{MeanAdjust: true, Components: 4})
	if err != nil {
		t.Fatal(err)
	}
	xc := mat.DenseCopyOf(x)
	for j := 0; j < 4; j++ {
		mean := 0.0
		for i := 0; i < 50; i++ {
			mean += x.At(i, j) / 50
		}
		for i := 0; i < 50; i++ {
			xc.Set(i, j, x.At(i, j)-mean)
		}
	}
	var cov mat.Dense
	cov.Mul(xc.T(), xc)
	cov.Scale(1.0/50, &cov)
	cv, cvec := batchEig(t, &cov)
	ev := m.ExplainedVariance()
	for j := 0; j < 4; j++ {
		if math.Abs(ev[j]-cv[j]) > 1e-10*cv[0] {
			t.Fatalf("variance %d: %g vs PCA %g", j, ev[j], cv[j])
		}
	}
	scores := mat.NewDense(50, 4, nil)
	if err := m.Transform(scores, x); err != nil {
		t.Fatal(err)
	}
	var proj mat.Dense
	proj.Mul(xc, cvec)
	for j := 0; j < 4; j++ {
		sign := 1.0
		if scores.At(0, j)*proj.At(0, j) < 0 {
			sign = -1
		}
		for i := 0; i < 50; i++ {
			if math.Abs(sign*scores.At(i, j)-proj.At(i, j)) > 1e-9 {
				t.Fatalf("score (%d,%d): %g vs %g", i, j, scores.At(i, j), proj.At(i, j))
			}
		}
	}
	ratio := m.ExplainedVarianceRatio()
	sum := 0.0
	for _, r := range ratio {
		sum += r
	}
	if math.Abs(sum-1) > 1e-12 { // rank 4 data, all 4 components kept
		t.Fatalf("ratios sum to %g", sum)
	}
}

// TestFitIdentities: training scores are sqrt(lambda_j) U_ij; the training
// reconstruction errors sum to the discarded eigenvalues; with all
// components the reconstruction error of a training point is 0; batch Fit
// agrees with Incremental.Model.
func TestFitIdentities(t *testing.T) {
	x := randPoints(32, 30, 3, 1)
	k := gaussian(t, 1.2)
	for _, mean := range []bool{false, true} {
		all, err := Fit(context.Background(), k, x, Options{MeanAdjust: mean})
		if err != nil {
			t.Fatal(err)
		}
		const r = 5
		m, err := Fit(context.Background(), k, x, Options{MeanAdjust: mean, Components: r})
		if err != nil {
			t.Fatal(err)
		}
		if m.Dim() != r || m.InputDim() != 3 {
			t.Fatalf("dims %d %d", m.Dim(), m.InputDim())
		}
		sc := mat.NewDense(30, r, nil)
		if err := m.Transform(sc, x); err != nil {
			t.Fatal(err)
		}
		u := m.Components()
		vals := m.Eigenvalues()
		for i := 0; i < 30; i++ {
			for j := 0; j < r; j++ {
				if d := math.Abs(sc.At(i, j) - math.Sqrt(vals[j])*u.At(i, j)); d > 1e-10 {
					t.Fatalf("mean=%v: score (%d,%d) off by %g", mean, i, j, d)
				}
			}
		}
		e, err := m.ReconstructionError(x)
		if err != nil {
			t.Fatal(err)
		}
		sum, tail := 0.0, 0.0
		for _, v := range e {
			sum += v
		}
		for _, v := range all.Eigenvalues()[r:] {
			tail += v
		}
		if math.Abs(sum-tail) > 1e-10*math.Max(1, tail) {
			t.Fatalf("mean=%v: sum of reconstruction errors %g, discarded eigenvalues %g", mean, sum, tail)
		}
		e0, _ := all.ReconstructionError(x.Slice(0, 3, 0, 3))
		for _, v := range e0 {
			if v > 1e-9 {
				t.Fatalf("mean=%v: full-rank reconstruction error %g", mean, v)
			}
		}
		inc, _ := NewIncremental(k, 3, Options{MeanAdjust: mean})
		if err := inc.AddRows(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		im, err := inc.Model(r)
		if err != nil {
			t.Fatal(err)
		}
		xt := randPoints(33, 4, 3, 1)
		// Transform at any time straight from the Incremental (all held
		// components) agrees with its snapshot's leading r scores.
		allS := mat.NewDense(4, inc.Rank(), nil)
		if err := inc.Transform(allS, xt); err != nil {
			t.Fatal(err)
		}
		s1 := mat.NewDense(4, r, nil)
		s2 := mat.NewDense(4, r, nil)
		m.Transform(s1, xt)
		im.Transform(s2, xt)
		for i := 0; i < 4; i++ {
			for j := 0; j < r; j++ { // eigenvectors are defined up to sign
				if math.Abs(allS.At(i, j)-s2.At(i, j)) > 1e-12 { // same projection, possibly another blocking
					t.Fatalf("Incremental.Transform (%d,%d) = %g, Model = %g", i, j, allS.At(i, j), s2.At(i, j))
				}
				if d := math.Abs(math.Abs(s1.At(i, j)) - math.Abs(s2.At(i, j))); d > 1e-8 {
					t.Fatalf("mean=%v: incremental vs batch score (%d,%d): %g vs %g", mean, i, j, s1.At(i, j), s2.At(i, j))
				}
			}
		}
	}
}

func TestFitErrors(t *testing.T) {
	k := gaussian(t, 1)
	ctx := context.Background()
	if _, err := Fit(ctx, nil, mat.NewDense(2, 2, nil), Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("nil kernel: %v", err)
	}
	if _, err := Fit(ctx, k, &mat.Dense{}, Options{}); !errors.Is(err, zonal.ErrEmpty) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := Fit(ctx, k, mat.NewDense(2, 2, []float64{1, 2, math.NaN(), 0}), Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN: %v", err)
	}
	if _, err := Fit(ctx, k, mat.NewDense(2, 2, nil), Options{Components: -2}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("components: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Fit(cctx, k, mat.NewDense(2, 2, nil), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	m, _ := Fit(ctx, k, randPoints(1, 5, 2, 1), Options{Components: 2})
	if err := m.Transform(mat.NewDense(1, 2, nil), mat.NewDense(1, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("width: %v", err)
	}
	if err := m.Transform(mat.NewDense(1, 3, nil), mat.NewDense(1, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("dst: %v", err)
	}
	if _, err := m.ReconstructionError(mat.NewDense(1, 2, []float64{math.Inf(1), 0})); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("Inf: %v", err)
	}
}

// TestBudgetAndProgress: the n x n allocations are refused beyond
// Options.MemoryBudget with zonal.ErrTooLarge (and leave an Incremental
// unchanged), and Fit and Init report the "kernel" and "eigen" stages in
// order, each from 0/1 to 1/1.
func TestBudgetAndProgress(t *testing.T) {
	ctx := context.Background()
	k := gaussian(t, 1)
	x := randPoints(3, 40, 2, 1)
	small := Options{MemoryBudget: 4 << 10} // 4 KiB: 512 floats, less than 40 x 40
	if _, err := Fit(ctx, k, x, small); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("Fit: %v", err)
	}
	inc, _ := NewIncremental(k, 2, small)
	if err := inc.Init(ctx, x); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("Init: %v", err)
	}
	if err := inc.Init(ctx, x.Slice(0, 5, 0, 2)); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 5; i < 40 && err == nil; i++ {
		err = inc.Add(x.RawRowView(i))
	}
	if !errors.Is(err, zonal.ErrTooLarge) || inc.Len() >= 40 {
		t.Fatalf("Add beyond the budget: %v at %d points", err, inc.Len())
	}
	n := inc.Len()
	if err := inc.Add(x.RawRowView(n)); !errors.Is(err, zonal.ErrTooLarge) || inc.Len() != n {
		t.Fatalf("second refused Add: %v, %d points, want %d", err, inc.Len(), n)
	}
	if dr := inc.Drift(); dr.RelRecon > 1e-12 || dr.Orth > 1e-12 {
		t.Fatalf("state after a refused Add: drift %+v", dr)
	}
	if _, err := NewNystromMap(ctx, k, x, small); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("NewNystromMap: %v", err)
	}
	if _, err := Fit(ctx, k, x, Options{MemoryBudget: -1}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("negative budget: %v", err)
	}

	for name, run := range map[string]func(Options) error{
		"Fit": func(o Options) error { _, err := Fit(ctx, k, x, o); return err },
		"Init": func(o Options) error {
			inc, err := NewIncremental(k, 2, o)
			if err != nil {
				return err
			}
			return inc.Init(ctx, x)
		},
	} {
		var got []zonal.Progress
		if err := run(Options{MeanAdjust: true, Progress: func(p zonal.Progress) { got = append(got, p) }}); err != nil {
			t.Fatal(name, err)
		}
		want := []zonal.Progress{{Stage: "kernel", Total: 1}, {Stage: "kernel", Done: 1, Total: 1}, {Stage: "eigen", Total: 1}, {Stage: "eigen", Done: 1, Total: 1}}
		if len(got) != len(want) {
			t.Fatalf("%s: progress %+v", name, got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: progress %+v, want %+v", name, got, want)
			}
		}
	}
}

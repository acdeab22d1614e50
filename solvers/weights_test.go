package solvers

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// weightedProblem returns n rows with two outputs and integer weights in
// 0..3 (some zero), and the same data with row i repeated w_i times; first
// maps each row of positive weight to the index of its first copy.
func weightedProblem(n int, seed uint64) (x, y *mat.Dense, w []float64, xr, yr *mat.Dense, first []int) {
	x, y1 := synth(n, 3, seed)
	y = mat.NewDense(n, 2, nil)
	rng := rand.New(rand.NewPCG(seed, 7))
	w = make([]float64, n)
	for i := 0; i < n; i++ {
		y.Set(i, 0, y1.At(i, 0))
		y.Set(i, 1, 3+x.At(i, 2)) // a second output with a large mean
		w[i] = float64(rng.IntN(4))
	}
	w[0], w[1] = 0, 3 // at least one zero and one repeat whatever the seed
	var rows []int
	first = make([]int, n)
	for i := range w {
		first[i] = -1
		if w[i] > 0 {
			first[i] = len(rows)
		}
		for c := 0; c < int(w[i]); c++ {
			rows = append(rows, i)
		}
	}
	return x, y, w, gatherRows(x, rows), gatherRows(y, rows), first
}

// The key identity of the weighted objective: integer weights are the
// unweighted fit on rows repeated that many times (zero: left out), with
// the same lambda. KRR and ridge solve directly, so the two fits agree to
// rounding: the systems are the same matrices summed in another order, of
// condition about max(K)/(lambda n) <= 1/lambda = 1e3 here, hence 1e-9.
func TestWeightsRepeatRowsDirect(t *testing.T) {
	ctx := context.Background()
	x, y, w, xr, yr, _ := weightedProblem(60, 3)
	xt, _ := synth(25, 3, 99)
	k := testGauss{sigma: 1.2}
	const lambda = 1e-3

	kw, err := FitKRR(ctx, k, x, y, lambda, Options{Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := FitKRR(ctx, k, xr, yr, lambda, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(predictAll(t, kw, xt), predictAll(t, kr, xt)); d > 1e-9 {
		t.Errorf("KRR: weighted vs repeated rows differ by %g", d)
	}
	var sum float64
	for _, v := range w {
		sum += v
	}
	if kw.WeightSum() != sum || kr.WeightSum() != 0 {
		t.Errorf("KRR WeightSum %g and %g, want %g and 0", kw.WeightSum(), kr.WeightSum(), sum)
	}

	// Ridge on a fixed map (the exact map on 15 fixed centres).
	c, _ := synth(15, 3, 5)
	fm, err := newExactMap(k, c)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := FitRidge(ctx, fm, x, y, lambda, RidgeOptions{Options: Options{Weights: w}})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := FitRidge(ctx, fm, xr, yr, lambda, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := predictAll(t, rr, xt)
	if d := relDiff(predictAll(t, rw, xt), want); d > 1e-9 {
		t.Errorf("ridge: weighted vs repeated rows differ by %g", d)
	}
	// Float32 features: the same identity up to float32 rounding of the
	// features and Gram blocks (relative 2^-24 per entry, amplified by the
	// system's condition, about 1e3): 1e-3.
	r32, err := FitRidge(ctx, fm, x, y, lambda, RidgeOptions{Options: Options{Weights: w}, Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(predictAll(t, r32, xt), want); d > 1e-3 {
		t.Errorf("float32 ridge: weighted vs repeated rows differ by %g", d)
	}
	// Small row blocks (a tight budget) walk the weights block by block.
	D := fm.Dim()
	tight := int64(D*(D+2)*8 + 7*D*8)
	rb, err := FitRidge(ctx, fm, x, y, lambda, RidgeOptions{Options: Options{Weights: w, MemoryBudget: tight}})
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(predictAll(t, rb, xt), want); d > 1e-9 {
		t.Errorf("ridge in small blocks: weighted vs repeated rows differ by %g", d)
	}
}

// FALKON: the weighted fit and the fit on repeated rows solve the same
// system when their centres are the same rows. The weighted fit draws its
// centres among the rows of positive weight (CenterIndices are the
// caller's rows); the repeated fit is given the first copy of each. The
// preconditioners differ (the weighted one scales by the centres'
// weights), so the agreement is CG's: both runs stop at relative residual
// 1e-12 on systems of condition well under 1e4 after preconditioning,
// hence 1e-7 (float32 K_nM: rounded entries of the same matrix in both
// fits, summed in another order, 1e-5 as falkon32.go measures).
func TestWeightsRepeatRowsFalkon(t *testing.T) {
	ctx := context.Background()
	x, y, w, xr, yr, first := weightedProblem(60, 4)
	xt, _ := synth(25, 3, 98)
	k := testGauss{sigma: 1.2}
	const lambda = 1e-3
	pos := 0
	for _, v := range w {
		if v > 0 {
			pos++
		}
	}
	for _, tc := range []struct {
		name   string
		M      int
		prec   zonal.Precision
		stream bool
		tol    float64
	}{
		{"all-rows", pos, zonal.Float64, false, 1e-7},
		{"M=12", 12, zonal.Float64, false, 1e-7},
		{"M=12-streamed", 12, zonal.Float64, true, 1e-7},
		{"M=12-float32", 12, zonal.Float32, false, 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := FalkonOptions{Centers: tc.M, Seed: 11, Tol: 1e-12, Precision: tc.prec}
			if tc.stream {
				// The factors and CG vectors; the streamed pass's row norms
				// (of the larger, repeated set), w transposed and one
				// worker's sum; 4 rows of K_nM and of K_b w.
				_, kout := y.Dims()
				nr, _ := xr.Dims()
				opts.MemoryBudget = int64(tc.M*tc.M+int(factorScratch(tc.M))+6*tc.M*kout)*8 +
					knm64Fixed(nr, tc.M, kout, false) + int64(tc.M*kout)*8 + 4*int64(tc.M+kout)*8
			}
			wo := opts
			wo.Weights = w
			fw, err := FitFalkon(ctx, k, x, y, lambda, wo)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stream == fw.CachedKnM() {
				t.Fatalf("cached K_nM %v, want %v", fw.CachedKnM(), !tc.stream)
			}
			idx := make([]int, 0, tc.M)
			for _, i := range fw.CenterIndices() {
				if w[i] == 0 {
					t.Fatalf("centre %d has weight 0", i)
				}
				idx = append(idx, first[i])
			}
			yc, mean := centerTargets(yr, nil)
			nr, _ := xr.Dims()
			fr, err := fitFalkonCentered(ctx, k, xr, yc, mean, lambda, idx, nil, float64(nr), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !fw.Diagnostics().Converged || !fr.Diagnostics().Converged {
				t.Fatalf("not converged: %v / %v", fw.Diagnostics(), fr.Diagnostics())
			}
			if d := relDiff(predictAll(t, fw, xt), predictAll(t, fr, xt)); d > tc.tol {
				t.Errorf("weighted vs repeated rows differ by %g (tolerance %g)", d, tc.tol)
			}
		})
	}
}

// ParK with one cell is FALKON (package doc), weighted too: the cell
// holds the rows of positive weight in order, its seed is the fit's, so
// both draw the same centres and solve the same system with the same
// preconditioner; they agree to rounding (1e-9).
func TestWeightsParKOneCell(t *testing.T) {
	ctx := context.Background()
	x, y, w, _, _, _ := weightedProblem(60, 5)
	xt, _ := synth(25, 3, 97)
	k := testGauss{sigma: 1.2}
	const lambda = 1e-3
	f, err := FitFalkon(ctx, k, x, y, lambda, FalkonOptions{Options: Options{Weights: w}, Centers: 12, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p, err := FitParK(ctx, k, x, y, lambda, ParKOptions{Options: Options{Weights: w}, Cells: 1, Centers: 12, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(predictAll(t, p, xt), predictAll(t, f, xt)); d > 1e-9 {
		t.Errorf("weighted ParK with one cell vs weighted FALKON: %g", d)
	}
	if p.WeightSum() == 0 || f.WeightSum() != p.WeightSum() {
		t.Errorf("WeightSum ParK %g, FALKON %g", p.WeightSum(), f.WeightSum())
	}
	// Several cells, weighted: every cell's lambda_q is lambda sum(w) /
	// sum_q(w), so the cells' absolute regulariser is the global one.
	p3, err := FitParK(ctx, k, x, y, lambda, ParKOptions{Options: Options{Weights: w}, Cells: 3, Centers: 24, Seed: 3, Budget: BudgetEffDim})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	sq := make([]float64, 3)
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		sum += w[i]
		if w[i] > 0 {
			sq[p3.Cell(rowOf(x, i))] += w[i]
		}
	}
	for q, c := range p3.Report().Cells {
		if want := lambda * sum / sq[q]; math.Abs(c.Lambda-want) > 1e-12*want {
			t.Errorf("cell %d: lambda_q %g, want lambda sum(w) / sum_q(w) = %g", q, c.Lambda, want)
		}
	}
}

// Equal weights are the unweighted objective exactly ((1/sum w) sum w_i
// ... with w_i = c), so the fits must be identical: all ones and all 2.5.
func TestWeightsUniformIsUnweighted(t *testing.T) {
	ctx := context.Background()
	x, y := synth(50, 3, 8)
	xt, _ := synth(10, 3, 9)
	k := testGauss{sigma: 1.2}
	const lambda = 1e-3
	c, _ := synth(10, 3, 5)
	fm, err := newExactMap(k, c)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(w []float64) []Model {
		o := Options{Weights: w}
		a, err := FitKRR(ctx, k, x, y, lambda, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := FitRidge(ctx, fm, x, y, lambda, RidgeOptions{Options: o})
		if err != nil {
			t.Fatal(err)
		}
		f, err := FitFalkon(ctx, k, x, y, lambda, FalkonOptions{Options: o, Centers: 10, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, err := FitParK(ctx, k, x, y, lambda, ParKOptions{Options: o, Cells: 2, Centers: 10, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return []Model{a, b, f, p}
	}
	base := fit(nil)
	for _, c := range []float64{1, 2.5} {
		w := make([]float64, 50)
		for i := range w {
			w[i] = c
		}
		for j, m := range fit(w) {
			if d := maxAbsDiff(predictAll(t, m, xt), predictAll(t, base[j], xt)); d != 0 {
				t.Errorf("%s with weights all %g differs from unweighted by %g", m.Kind(), c, d)
			}
		}
	}
}

func TestWeightsBad(t *testing.T) {
	ctx := context.Background()
	x, y := synth(20, 2, 1)
	k := testGauss{sigma: 1}
	c, _ := synth(5, 2, 5)
	fm, err := newExactMap(k, c)
	if err != nil {
		t.Fatal(err)
	}
	ones := func() []float64 {
		w := make([]float64, 20)
		for i := range w {
			w[i] = 1
		}
		return w
	}
	with := func(i int, v float64) []float64 { w := ones(); w[i] = v; return w }
	cases := []struct {
		name  string
		w     []float64
		cause error
	}{
		{"short", make([]float64, 19), zonal.ErrShape},
		{"negative", with(3, -1), nil},
		{"NaN", with(4, math.NaN()), zonal.ErrNonFinite},
		{"Inf", with(5, math.Inf(1)), zonal.ErrNonFinite},
		{"zero", make([]float64, 20), nil},
		{"sum overflows", with(0, math.MaxFloat64), nil},
	}
	cases[5].w[1] = math.MaxFloat64
	for _, tc := range cases {
		o := Options{Weights: tc.w}
		fits := map[string]func() error{
			"krr":   func() error { _, err := FitKRR(ctx, k, x, y, 1e-3, o); return err },
			"ridge": func() error { _, err := FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{Options: o}); return err },
			"falkon": func() error {
				_, err := FitFalkon(ctx, k, x, y, 1e-3, FalkonOptions{Options: o, Centers: 5})
				return err
			},
			"park": func() error {
				_, err := FitParK(ctx, k, x, y, 1e-3, ParKOptions{Options: o, Cells: 2, Centers: 5})
				return err
			},
		}
		for name, fit := range fits {
			err := fit()
			var pe *zonal.ParamError
			if !errors.As(err, &pe) || pe.Param != "Weights" || !errors.Is(err, zonal.ErrParam) {
				t.Errorf("%s %s: got %v, want a ParamError on Weights", name, tc.name, err)
				continue
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("%s %s: %v does not wrap %v", name, tc.name, err, tc.cause)
			}
		}
	}
	// More centres than rows of positive weight is a parameter error
	// that says so.
	w := make([]float64, 20)
	w[0], w[1], w[2] = 1, 2, 1
	if _, err := FitFalkon(ctx, k, x, y, 1e-3, FalkonOptions{Options: Options{Weights: w}, Centers: 5}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("5 centres for 3 rows of positive weight: %v", err)
	}
}

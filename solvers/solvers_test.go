package solvers

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

var bg = context.Background()

// TestKRRMatchesDirectSolve checks FitKRR against gonum's dense LU solve of
// (K + lambda n I) alpha = y - mean.
func TestKRRMatchesDirectSolve(t *testing.T) {
	x, y := synth(80, 3, 1)
	k := testGauss{1}
	const lambda = 1e-3
	m, err := FitKRR(bg, k, x, y, lambda, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 80
	kmat := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			kmat.Set(i, j, k.Eval(rowOf(x, i), rowOf(x, j)))
		}
		kmat.Set(i, i, kmat.At(i, i)+lambda*float64(n))
	}
	yc, _ := centerTargets(y, nil)
	var want mat.Dense
	if err := want.Solve(kmat, yc); err != nil {
		t.Fatal(err)
	}
	// K + lambda n I has condition number <= 1 + n/(lambda n) = 1e3+1, so
	// the two solves agree to ~1e3 * 1e-16 relative; 1e-10 is generous.
	if d := maxAbsDiff(m.Alpha(), &want); d > 1e-10*mat.Norm(&want, math.Inf(1)) {
		t.Fatalf("alpha differs from the direct solve by %g", d)
	}
	if m.Jitter() != 0 {
		t.Fatalf("jitter %g on a well-conditioned system", m.Jitter())
	}
}

// TestRidgeExactNystromEqualsKRR: with all training points as landmarks the
// Nystrom map is exact on the training set (Z Z^T = K), so ridge on it is
// exact KRR: W = Z^T alpha and z(x) W = k(x, X) K^{-1} K alpha' = k(x,X) alpha.
func TestRidgeExactNystromEqualsKRR(t *testing.T) {
	x, y := synth(60, 2, 2)
	xt, _ := synth(40, 2, 3)
	k := testGauss{1.5}
	const lambda = 1e-3
	fm, err := newExactMap(k, x)
	if err != nil {
		t.Fatal(err)
	}
	// Both solve systems with condition number ~ 1/(lambda n) * ||K|| ~ 1e3
	// and the map multiplies by L^{-1} (cond(K_CC) up to ~1e8 here), so the
	// predictions agree to ~1e-16 * 1e3 * 1e4 ~ 1e-9; we allow 1e-7.
	if d := ridgeVsKRR(t, fm, k, x, y, xt, lambda); d > 1e-7 {
		t.Fatalf("ridge on exact Nystrom differs from KRR by %g", d)
	}
}

// ridgeVsKRR fits ridge regression on the map fm and exact KRR with kernel k
// on (x, y) and returns the largest difference of their predictions on xt.
func ridgeVsKRR(t *testing.T, fm kernels.FeatureMap, k kernels.Kernel, x, y, xt *mat.Dense, lambda float64) float64 {
	t.Helper()
	r, err := FitRidge(bg, fm, x, y, lambda, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	krr, err := FitKRR(bg, k, x, y, lambda, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return maxAbsDiff(predictAll(t, r, xt), predictAll(t, krr, xt))
}

// TestRidgeKernelsNystromEqualsKRR repeats the identity with the kernels
// package's Nystrom map (landmarks = all training rows, Transform =
// K(X, C) K_CC^{-1/2}).
func TestRidgeKernelsNystromEqualsKRR(t *testing.T) {
	x, y := synth(60, 2, 2)
	xt, _ := synth(40, 2, 3)
	k, err := kernels.NewGaussian(1.5)
	if err != nil {
		t.Fatal(err)
	}
	const lambda = 1e-3
	fm, err := kernels.NewNystromFromLandmarks(context.Background(), k, x, kernels.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// K_CC^{-1/2} by eigendecomposition may drop eigenvalues below its
	// rank cut-off (~1e-12 relative); with lambda n = 0.06 those directions
	// move predictions by far less than 1e-6.
	if d := ridgeVsKRR(t, fm, k, x, y, xt, lambda); d > 1e-6 {
		t.Fatalf("ridge on kernels.Nystrom(all points) differs from KRR by %g", d)
	}
}

// TestFalkonFullEqualsKRR: with M = n centres FALKON's normal equations are
// K (K + lambda n I) alpha = K y, whose solution is exact KRR's.
func TestFalkonFullEqualsKRR(t *testing.T) {
	x, y := synth(120, 3, 4)
	xt, _ := synth(50, 3, 5)
	k := testGauss{1}
	const lambda = 1e-4
	krr, err := FitKRR(bg, k, x, y, lambda, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-12
	f, err := FitFalkon(bg, k, x, y, lambda, FalkonOptions{Centers: 120, Iterations: 500, Tol: tol})
	if err != nil {
		t.Fatal(err)
	}
	// 1e-12 is at the accuracy rounding allows here (the pure-Go BLAS of
	// -tags noasm stalls at a true residual of 1.4e-12), so a stalled run
	// below 1e-11 counts as converged.
	if cg := f.CG(); !cg.Converged && !(cg.Stalled && cg.Residual < 1e-11) {
		t.Fatalf("CG did not converge: %d iterations, residual %g", cg.Iterations, cg.Residual)
	}
	// The preconditioned system is well conditioned (FALKON's point), so a
	// relative residual of 1e-12 leaves prediction errors near 1e-9 at
	// most for targets of size ~1.
	pk, pf := predictAll(t, krr, xt), predictAll(t, f, xt)
	if d := maxAbsDiff(pk, pf); d > 1e-8 {
		t.Fatalf("FALKON(M=n) differs from exact KRR by %g", d)
	}
	// Uncached K_nM (a budget too small for it) gives the same solution up
	// to rounding.
	f2, err := FitFalkon(bg, k, x, y, lambda, FalkonOptions{Centers: 120, Iterations: 500, Tol: tol,
		Options: Options{MemoryBudget: 120*120*8 + 100*1024}})
	if err != nil {
		t.Fatal(err)
	}
	if f2.CachedKnM() || !f.CachedKnM() {
		t.Fatalf("cached: %v, %v", f.CachedKnM(), f2.CachedKnM())
	}
	if d := maxAbsDiff(pf, predictAll(t, f2, xt)); d > 1e-8 {
		t.Fatalf("streamed K_nM differs from cached by %g", d)
	}
}

func TestFalkonSubsetAccuracy(t *testing.T) {
	x, y := synth(400, 2, 6)
	xt, yt := synth(200, 2, 7)
	k := testGauss{1}
	f, err := FitFalkon(bg, k, x, y, 1e-5, FalkonOptions{Centers: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := predictAll(t, f, xt)
	// noise sd is 0.05; a smooth target with 40 centres gets close to it.
	if r := RMSE(p.RawMatrix().Data, yt.RawMatrix().Data); r > 0.1 {
		t.Fatalf("FALKON M=40 test RMSE %g > 0.1", r)
	}
	if len(f.CenterIndices()) != 40 {
		t.Fatal("centre count")
	}
}

// TestParKOneCellIsFalkon: with Q = 1 the single cell holds every row in
// order, lambda_1 = lambda n / n = lambda and the same seed draws the same
// centres, so ParK runs FALKON's exact computation.
func TestParKOneCellIsFalkon(t *testing.T) {
	x, y := synth(150, 3, 8)
	xt, _ := synth(30, 3, 9)
	k := testGauss{1}
	f, err := FitFalkon(bg, k, x, y, 1e-4, FalkonOptions{Centers: 30, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p, err := FitParK(bg, k, x, y, 1e-4, ParKOptions{Cells: 1, Centers: 30, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(predictAll(t, f, xt), predictAll(t, p, xt)); d != 0 {
		t.Fatalf("ParK(Q=1) differs from FALKON by %g (same operations should give identical bits)", d)
	}
}

func TestParKPartition(t *testing.T) {
	x, y := synth(300, 2, 10)
	xt, yt := synth(100, 2, 11)
	k := testGauss{1}
	var stages []string
	p, err := FitParK(bg, k, x, y, 1e-5, ParKOptions{Cells: 4, Centers: 60, Seed: 1, Workers: 2, Partition: PartitionKMeans,
		Options: Options{Progress: func(pr zonal.Progress) {
			if len(stages) == 0 || stages[len(stages)-1] != pr.Stage {
				stages = append(stages, pr.Stage)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stages, ","); got != "centroids,lloyd,cells" {
		t.Errorf("progress stages %q", got)
	}
	total := 0
	for _, s := range p.CellSizes() {
		if s == 0 {
			t.Fatal("empty cell")
		}
		total += s
	}
	if total != 300 {
		t.Fatalf("cells hold %d rows", total)
	}
	// Every centroid is its own cell's member.
	for q := 0; q < 4; q++ {
		if c := p.Cell(rowOf(p.Centroids().(*mat.Dense), q)); c != q {
			t.Fatalf("centroid %d is assigned to cell %d", q, c)
		}
	}
	if c := p.Cell([]float64{0}); c != -1 {
		t.Fatalf("Cell of a point of the wrong length = %d, want -1", c)
	}
	pr := predictAll(t, p, xt)
	if r := RMSE(pr.RawMatrix().Data, yt.RawMatrix().Data); r > 0.15 {
		t.Fatalf("ParK test RMSE %g", r)
	}
	// Large-batch and row-by-row prediction agree.
	big, _ := synth(100, 2, 12)
	pb := predictAll(t, p, big)
	for i := 0; i < 100; i++ {
		one := mat.NewDense(1, 1, nil)
		if err := p.Predict(one, big.Slice(i, i+1, 0, 2).(*mat.Dense)); err != nil {
			t.Fatal(err)
		}
		// Gemm against the direct sum: rounding only.
		if math.Abs(one.At(0, 0)-pb.At(i, 0)) > 1e-10 {
			t.Fatalf("row %d: %g vs %g", i, one.At(0, 0), pb.At(i, 0))
		}
	}
}

func TestBadInputs(t *testing.T) {
	x, y := synth(20, 2, 1)
	k := testGauss{1}
	fm, _ := newExactMap(k, x)
	yShort := mat.NewDense(19, 1, nil)
	xNaN := mat.DenseCopyOf(x)
	xNaN.Set(3, 1, math.NaN())
	yInf := mat.DenseCopyOf(y)
	yInf.Set(5, 0, math.Inf(1))
	type fit func(x, y *mat.Dense, lambda float64) error
	fits := map[string]fit{
		"krr": func(x, y *mat.Dense, l float64) error { _, err := FitKRR(bg, k, x, y, l, Options{}); return err },
		"ridge": func(x, y *mat.Dense, l float64) error {
			_, err := FitRidge(bg, fm, x, y, l, RidgeOptions{})
			return err
		},
		"falkon": func(x, y *mat.Dense, l float64) error {
			_, err := FitFalkon(bg, k, x, y, l, FalkonOptions{Centers: 5})
			return err
		},
		"park": func(x, y *mat.Dense, l float64) error {
			_, err := FitParK(bg, k, x, y, l, ParKOptions{Cells: 2, Centers: 6})
			return err
		},
	}
	for name, f := range fits {
		for _, c := range []struct {
			what string
			x, y *mat.Dense
			l    float64
			want error
		}{
			{"label count", x, yShort, 1e-3, zonal.ErrShape},
			{"lambda 0", x, y, 0, zonal.ErrParam},
			{"lambda <0", x, y, -1, zonal.ErrParam},
			{"lambda NaN", x, y, math.NaN(), zonal.ErrParam},
			{"NaN feature", xNaN, y, 1e-3, zonal.ErrNonFinite},
			{"Inf label", x, yInf, 1e-3, zonal.ErrNonFinite},
			{"nil x", nil, y, 1e-3, zonal.ErrShape},
			{"no rows", &mat.Dense{}, y, 1e-3, zonal.ErrEmpty},
		} {
			if err := f(c.x, c.y, c.l); !errors.Is(err, c.want) {
				t.Errorf("%s, %s: err = %v, want %v", name, c.what, err, c.want)
			}
		}
	}
	if _, err := FitFalkon(bg, k, x, y, 1e-3, FalkonOptions{Centers: 21}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("M > n: %v", err)
	}
	if _, err := FitParK(bg, k, x, y, 1e-3, ParKOptions{Cells: 21, Centers: 20}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Q > n: %v", err)
	}
	if _, err := FitParK(bg, k, x, y, 1e-3, ParKOptions{Cells: 2, Centers: 21}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("ParK M > n: %v", err)
	}
	// Q larger than the number of distinct points.
	dup := mat.NewDense(10, 2, nil)
	if _, err := FitParK(bg, k, dup, mat.NewDense(10, 1, nil), 1e-3, ParKOptions{Cells: 2, Centers: 4}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("duplicate points: %v", err)
	}
	// Prediction-time checks.
	m, err := FitKRR(bg, k, x, y, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Predict(mat.NewDense(2, 1, nil), mat.NewDense(2, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("predict with 3 columns: %v", err)
	}
	bad := mat.NewDense(1, 2, []float64{math.NaN(), 0})
	if err := m.Predict(mat.NewDense(1, 1, nil), bad); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("predict NaN: %v", err)
	}
	pipe, err := NewPipeline(nil, Encoding{Task: TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipe.PredictOutputs(nil, x); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("PredictOutputs into nil: %v", err)
	}
	if err := pipe.PredictLabels(make([]float64, 1), nil); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("PredictLabels of nil: %v", err)
	}
}

func TestMemoryBudget(t *testing.T) {
	x, y := synth(100, 2, 1)
	_, err := FitKRR(bg, testGauss{1}, x, y, 1e-3, Options{MemoryBudget: 1000})
	if !errors.Is(err, zonal.ErrTooLarge) || !strings.Contains(err.Error(), "80000 bytes") {
		t.Fatalf("err = %v, want zonal.ErrTooLarge naming 80000 bytes", err)
	}
	_, err = FitFalkon(bg, testGauss{1}, x, y, 1e-3, FalkonOptions{Centers: 50, Options: Options{MemoryBudget: 1000}})
	if !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("FALKON: err = %v", err)
	}
	// ParK shares the budget among cells in proportion to their rows.
	_, err = FitParK(bg, testGauss{1}, x, y, 1e-3, ParKOptions{Cells: 2, Centers: 50, Options: Options{MemoryBudget: 1000}})
	if !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("ParK: err = %v", err)
	}
	if _, err := FitParK(bg, testGauss{1}, x, y, 1e-3, ParKOptions{Cells: 2, Centers: 50, Options: Options{MemoryBudget: 1 << 20}}); err != nil {
		t.Fatalf("ParK with 1 MiB: %v", err)
	}
}

// TestJitter: a matrix that is positive semi-definite up to rounding gets
// the jitter it needs; a kernel whose matrix is truly indefinite fails with
// zonal.ErrNotPositiveDefinite wrapping the backend pivot error.
func TestJitter(t *testing.T) {
	x, y := synth(30, 2, 1)
	// [[1,1],[1,1-1e-15]] has eigenvalue ~ -5e-16: the plain factorisation
	// fails at pivot 1, the first jitter (1e-12 of the mean diagonal) fixes it.
	fill := func(a *mat.Dense) error {
		a.Copy(mat.NewDense(2, 2, []float64{1, 1, 1, 1 - 1e-15}))
		return nil
	}
	a := mat.NewDense(2, 2, nil)
	jit, err := factorWithJitter(bg, backend.Default(), a, 0, "test", fill)
	if err != nil {
		t.Fatal(err)
	}
	if jit <= 0 || jit > 1e-11 {
		t.Fatalf("jitter %g, want about 1e-12", jit)
	}
	var err2 error
	_, err2 = FitKRR(bg, negKernel{}, x, y, 1e-12, Options{})
	if !errors.Is(err2, zonal.ErrNotPositiveDefinite) || !errors.Is(err2, zonal.ErrNotPositiveDefinite) {
		t.Fatalf("indefinite kernel: err = %v", err2)
	}
}

// negKernel is not positive definite: k(x,y) = -1 - x.y.
type negKernel struct{}

func (negKernel) Eval(x, y []float64) float64 {
	s := -1.0
	for i := range x {
		s -= x[i] * y[i]
	}
	return s
}
func (negKernel) Kind() string                   { return "neg" }
func (negKernel) String() string                 { return "neg" }
func (negKernel) MarshalBinary() ([]byte, error) { return nil, nil }

func TestCancel(t *testing.T) {
	x, y := synth(200, 2, 1)
	ctx, cancel := context.WithCancel(bg)
	calls := 0
	_, err := FitFalkon(ctx, testGauss{1}, x, y, 1e-6, FalkonOptions{Centers: 50, Iterations: 100, Tol: 1e-30,
		Options: Options{Progress: func(p zonal.Progress) {
			if p.Stage == "cg" {
				calls++
				if p.Done == 3 {
					cancel()
				}
			}
		}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if calls != 3 {
		t.Fatalf("CG ran %d iterations after cancel at 3", calls)
	}
	ctx2, cancel2 := context.WithCancel(bg)
	cancel2()
	if _, err := FitParK(ctx2, testGauss{1}, x, y, 1e-6, ParKOptions{Cells: 2, Centers: 20}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ParK: %v", err)
	}
	if _, err := FitKRR(ctx2, testGauss{1}, x, y, 1e-6, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("KRR: %v", err)
	}
	fm, _ := newExactMap(testGauss{1}, x.Slice(0, 10, 0, 2).(*mat.Dense))
	if _, err := FitRidge(ctx2, fm, x, y, 1e-6, RidgeOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ridge: %v", err)
	}
}

var _ kernels.Kernel = negKernel{}

func TestFalkonRLSCenters(t *testing.T) {
	x, y := synth(300, 2, 31)
	xt, yt := synth(100, 2, 32)
	f, err := FitFalkon(bg, testGauss{1}, x, y, 1e-5, FalkonOptions{Centers: 30, Sampling: SamplingRLS, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	idx := f.CenterIndices()
	if len(idx) != 30 {
		t.Fatalf("%d centres", len(idx))
	}
	for i := 1; i < len(idx); i++ {
		if idx[i] <= idx[i-1] {
			t.Fatal("centre indices not distinct and sorted")
		}
	}
	p := predictAll(t, f, xt)
	// Same bound as the uniform case (noise sd 0.05).
	if r := RMSE(p.RawMatrix().Data, yt.RawMatrix().Data); r > 0.1 {
		t.Fatalf("RLS-centred FALKON RMSE %g", r)
	}
	if _, err := FitFalkon(bg, testGauss{1}, x, y, 1e-5, FalkonOptions{Centers: 30, Sampling: "bogus"}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("bad sampling: %v", err)
	}
}

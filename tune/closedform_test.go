package tune

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// Tolerance of the closed forms against brute-force refits: 1e-8 relative
// (to max(1, |value|)). Both sides solve systems with the matrices
// K + c I or Z^T Z + c I, whose condition numbers here are at most about
// 1e5 (largest eigenvalue ~n = 30 against c >= 3e-4), so each side is
// accurate to ~1e5 * 2^-52 * n ~ 1e-9; the refits also go through a
// different factorisation (Cholesky against an eigendecomposition).
const closedTol = 1e-8

// twoOutputs returns y and a second column 2 y - y^2 (k = 2 outputs).
func twoOutputs(y *mat.Dense) *mat.Dense {
	n, _ := y.Dims()
	t := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		v := y.At(i, 0)
		t.Set(i, 0, v)
		t.Set(i, 1, 2*v-v*v)
	}
	return t
}

// looCase is one family: the closed form, and a refit on n-1 rows.
type looCase struct {
	name  string
	l     *loo
	refit func(x, t *mat.Dense, w []float64, lambda float64) (solvers.Model, error)
}

// looCases builds the closed forms for the row weights w (nil: unweighted)
// the way Search does: the kernel matrix or features of the scaled problem.
func looCases(t *testing.T, be backend.Backend, x, tg *mat.Dense, w []float64) []looCase {
	t.Helper()
	ctx := context.Background()
	n, _ := x.Dims()
	k := kernels.Gaussian{Sigma: 1.3}
	kf := mat.NewDense(n, n, nil)
	if err := kernelMatrix(ctx, be, k, kf, x, x); err != nil {
		t.Fatal(err)
	}
	sw := sqrtOf(w)
	scaleSym(kf, sw)
	ev := make([]float64, n)
	if err := be.SymEig(kf.RawMatrix(), ev, true); err != nil {
		t.Fatal(err)
	}
	clampEig(ev)
	krr := looCase{name: "krr", l: newLOO(be, kf, ev, tg, sw, true),
		refit: func(x, t *mat.Dense, w []float64, lambda float64) (solvers.Model, error) {
			return solvers.FitKRR(ctx, k, x, t, lambda, solvers.Options{Backend: be, Weights: w})
		}}
	fm, z := fourierFeatures(t, be, k, x, 16, 3)
	scaleRowsBy(z, sw)
	fs := newFeatureStats(be, z, tg, nil)
	evz := make([]float64, 16)
	if err := be.SymEig(fs.g.RawMatrix(), evz, true); err != nil {
		t.Fatal(err)
	}
	clampEig(evz)
	q := mat.NewDense(n, 16, nil)
	be.Gemm(blasNoTrans, blasNoTrans, 1, z.RawMatrix(), fs.g.RawMatrix(), 0, q.RawMatrix())
	ridge := looCase{name: "ridge", l: newLOO(be, q, evz, tg, sw, false),
		refit: func(x, t *mat.Dense, w []float64, lambda float64) (solvers.Model, error) {
			return solvers.FitRidge(ctx, fm, x, t, lambda, solvers.RidgeOptions{Options: solvers.Options{Backend: be, Weights: w}})
		}}
	return []looCase{krr, ridge}
}

// TestLOOMatchesRefits: the closed-form leave-one-out predictions equal n
// solvers refits on the other n-1 rows with the same absolute regulariser
// (lambda' = lambda n / (n-1)), each predicting its left-out row.
func TestLOOMatchesRefits(t *testing.T) { looMatchesRefits(t, nil) }

// looMatchesRefits is TestLOOMatchesRefits with the row weights w (nil:
// all 1) of a 30-row problem: the refit on the other rows has their
// weights and lambda' = lambda sum(w) / (sum(w) - w_i), the same absolute
// regulariser.
func looMatchesRefits(t *testing.T, w []float64) {
	be := backend.Default()
	x, y := regData(30, 3, 1)
	tg := twoOutputs(y)
	n, _ := x.Dims()
	S := weightSum(t, w, n)
	for _, c := range looCases(t, be, x, tg, w) {
		for _, lambda := range []float64{1e-5, 1e-3, 1e-1} {
			pred := mat.NewDense(n, 2, nil)
			c.l.predict(be, pred, lambda)
			out := mat.NewDense(1, 2, nil)
			worst := 0.0
			for i := 0; i < n; i++ {
				wi, wo := 1.0, []float64(nil)
				if w != nil {
					wi, wo = w[i], append(append([]float64(nil), w[:i]...), w[i+1:]...)
				}
				m, err := c.refit(without(x, i), without(tg, i), wo, lambda*S/(S-wi))
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Predict(out, x.Slice(i, i+1, 0, 3).(*mat.Dense)); err != nil {
					t.Fatal(err)
				}
				for j := 0; j < 2; j++ {
					if !relClose(pred.At(i, j), out.At(0, j), closedTol) {
						t.Fatalf("%s lambda %g row %d output %d: closed form %.15g, refit %.15g", c.name, lambda, i, j, pred.At(i, j), out.At(0, j))
					}
					worst = max(worst, abs(pred.At(i, j)-out.At(0, j)))
				}
			}
			t.Logf("%s lambda %g: largest |closed form - refit| = %.3g", c.name, lambda, worst)
		}
	}
}

// TestGCVMatchesSmoother: GCV from the eigenbasis equals n |(I-S) Y|^2 /
// tr(I-S)^2 with the smoother S read off one solvers fit on Y = I_n (the
// fit is linear in the targets, column j of its predictions is S e_j).
func TestGCVMatchesSmoother(t *testing.T) { gcvMatchesSmoother(t, nil) }

// gcvMatchesSmoother is TestGCVMatchesSmoother with the row weights w
// (nil: all 1): the weighted GCV is n^2 sum_i w_i |r_i|^2 / (sum(w)
// (n - tr S)^2), S read off one weighted fit (tr S is also the trace of
// the scaled problem's smoother D S D^-1); n |r|^2 / (n - tr S)^2 when
// every weight is 1.
func gcvMatchesSmoother(t *testing.T, w []float64) {
	be := backend.Default()
	x, y := regData(30, 3, 2)
	tg := twoOutputs(y)
	n, _ := x.Dims()
	S := weightSum(t, w, n)
	eye := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		eye.Set(i, i, 1)
	}
	for _, c := range looCases(t, be, x, tg, w) {
		for _, lambda := range []float64{1e-5, 1e-3, 1e-1} {
			m, err := c.refit(x, eye, w, lambda)
			if err != nil {
				t.Fatal(err)
			}
			s := mat.NewDense(n, n, nil)
			if err := m.Predict(s, x); err != nil {
				t.Fatal(err)
			}
			var r mat.Dense
			r.Mul(s, tg)
			r.Sub(tg, &r)
			num := 0.0
			for i := 0; i < n; i++ {
				wi := 1.0
				if w != nil {
					wi = w[i]
				}
				for j := 0; j < 2; j++ {
					num += wi * r.At(i, j) * r.At(i, j)
				}
			}
			tr := float64(n) - mat.Trace(s)
			want := float64(n) * float64(n) * num / (S * tr * tr)
			got := c.l.gcv(be, lambda)
			if !relClose(got, want, closedTol) {
				t.Fatalf("%s lambda %g: GCV closed form %.15g, from S %.15g", c.name, lambda, got, want)
			}
		}
	}
}

// TestPathMatchesFits: the k-fold lambda paths, by eigendecomposition and
// by Cholesky per lambda, predict what solvers fits on the fold's training
// rows predict on its test rows.
func TestPathMatchesFits(t *testing.T) { pathMatchesFits(t, nil) }

// pathMatchesFits is TestPathMatchesFits with the row weights w (nil:
// unweighted) of a 40-row problem: weighted paths against weighted fits.
func pathMatchesFits(t *testing.T, w []float64) {
	ctx := context.Background()
	be := backend.Default()
	x, y := regData(40, 2, 3)
	tg := twoOutputs(y)
	n, _ := x.Dims()
	folds, err := dataset.KFold(n, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	f := folds[1]
	wtr := subsetWeights(w, f.Train)
	k := kernels.Gaussian{Sigma: 0.9}
	kf := mat.NewDense(n, n, nil)
	if err := kernelMatrix(ctx, be, k, kf, x, x); err != nil {
		t.Fatal(err)
	}
	kp, err := mustSystem(t)(krrSystem(kf, tg, wtr, f.Train, f.Test)).eigPath(be)
	if err != nil {
		t.Fatal(err)
	}
	kd := mustSystem(t)(krrSystem(kf, tg, wtr, f.Train, f.Test)).directPath()
	fm, z := fourierFeatures(t, be, k, x, 20, 5)
	fs := newFeatureStats(be, z, tg, w)
	rd := mustSystem(t)(ridgeSystem(be, fs, tg, f.Train, f.Test)).directPath()
	rp, err := mustSystem(t)(ridgeSystem(be, fs, tg, f.Train, f.Test)).eigPath(be)
	if err != nil {
		t.Fatal(err)
	}
	xtr, ttr, xte := dataset.MustSelectRows(x, f.Train), dataset.MustSelectRows(tg, f.Train), dataset.MustSelectRows(x, f.Test)
	for _, lambda := range []float64{1e-4, 1e-2} {
		km, err := solvers.FitKRR(ctx, k, xtr, ttr, lambda, solvers.Options{Backend: be, Weights: wtr})
		if err != nil {
			t.Fatal(err)
		}
		rm, err := solvers.FitRidge(ctx, fm, xtr, ttr, lambda, solvers.RidgeOptions{Options: solvers.Options{Backend: be, Weights: wtr}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			p    lambdaPath
			m    solvers.Model
		}{{"krr eig", kp, km}, {"ridge eig", rp, rm}, {"krr cholesky", kd, km}, {"ridge cholesky", rd, rm}} {
			got := mat.NewDense(len(f.Test), 2, nil)
			want := mat.NewDense(len(f.Test), 2, nil)
			if err := c.p.predict(be, got, lambda); err != nil {
				t.Fatal(err)
			}
			if err := c.m.Predict(want, xte); err != nil {
				t.Fatal(err)
			}
			for i := range f.Test {
				for j := 0; j < 2; j++ {
					if !relClose(got.At(i, j), want.At(i, j), closedTol) {
						t.Fatalf("%s lambda %g test row %d: path %.15g, fit %.15g", c.name, lambda, i, got.At(i, j), want.At(i, j))
					}
				}
			}
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// fourierFeatures returns D random Fourier features of x and the map.
func fourierFeatures(t *testing.T, be backend.Backend, k kernels.Kernel, x *mat.Dense, D int, seed uint64) (kernels.FeatureMap, *mat.Dense) {
	t.Helper()
	n, d := x.Dims()
	fm, err := kernels.NewFourierMap(k, d, kernels.FourierOptions{Options: kernels.Options{Backend: be}, Features: D, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(n, D, nil)
	if err := fm.Transform(z, x); err != nil {
		t.Fatal(err)
	}
	return fm, z
}

// TestLOOUnreliableIsNaN: ridge with as many exact features as rows
// interpolates at tiny lambda (1 - H_ii ~ c / s), where the closed form
// loses its digits; those rows come out NaN, not as garbage that could win.
func TestLOOUnreliableIsNaN(t *testing.T) {
	be := backend.Default()
	x, y := regData(20, 2, 4)
	_, z := fourierFeatures(t, be, kernels.Gaussian{Sigma: 1}, x, 40, 1)
	fs := newFeatureStats(be, z, y, nil)
	ev := make([]float64, 40)
	if err := be.SymEig(fs.g.RawMatrix(), ev, true); err != nil {
		t.Fatal(err)
	}
	clampEig(ev)
	mulRightInPlace(be, z, fs.g)
	l := newLOO(be, z, ev, y, nil, false)
	pred := mat.NewDense(20, 1, nil)
	l.predict(be, pred, 1e-14)
	nan := 0
	for i := 0; i < 20; i++ {
		if math.IsNaN(pred.At(i, 0)) {
			nan++
		}
	}
	if nan == 0 {
		t.Fatal("no row flagged at lambda 1e-14 with D > n")
	}
	l.predict(be, pred, 1e-2)
	for i := 0; i < 20; i++ {
		if math.IsNaN(pred.At(i, 0)) {
			t.Fatalf("row %d NaN at lambda 1e-2", i)
		}
	}
}

// TestLOOEvalAllMatchesPredict: the batched closed form Search uses
// (evalAll, predictAt: every lambda from one GEMM of the basis and one of
// its squares) gives the per-lambda predictions of predict, for exact KRR
// and ridge, unweighted and weighted, with the mean and the fitted
// intercept, in chunks of one lambda and of all. The two sum the same
// products in another order: the bound is closedTol relative, far above
// their rounding (about r 2^-52 relative for r-term sums of bounded
// terms, 1e-14 here) and far below any difference a wrong weight or
// index would make (of the order of the predictions themselves).
func TestLOOEvalAllMatchesPredict(t *testing.T) {
	be := backend.Default()
	x, y := regData(30, 3, 4)
	tg := twoOutputs(y)
	n, _ := x.Dims()
	lambdas := []float64{1e-7, 1e-5, 1e-3, 1e-1}
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.5 + float64(i%4)
	}
	for _, weights := range [][]float64{nil, w} {
		for _, c := range looCases(t, be, x, tg, weights) {
			for _, fitted := range []bool{false, true} {
				l := c.l
				l.fitted = fitted
				want := make([]*mat.Dense, len(lambdas))
				for li, lam := range lambdas {
					want[li] = mat.NewDense(n, 2, nil)
					l.predict(be, want[li], lam)
				}
				finite := 0
				for _, chunk := range []int{1, len(lambdas)} {
					got := mat.NewDense(n, 2, nil)
					for c0 := 0; c0 < len(lambdas); c0 += chunk {
						c1 := min(c0+chunk, len(lambdas))
						l.evalAll(be, lambdas[c0:c1])
						for li := c0; li < c1; li++ {
							l.predictAt(got, li-c0)
							for i := 0; i < n; i++ {
								for j := 0; j < 2; j++ {
									g, e := got.At(i, j), want[li].At(i, j)
									if math.IsNaN(g) && math.IsNaN(e) {
										continue // the same unreliable row (minLeverageGap) both ways
									}
									finite++
									if !relClose(g, e, closedTol) {
										t.Fatalf("%s weighted %v fitted %v chunk %d lambda %g row %d output %d: evalAll %.15g, predict %.15g",
											c.name, weights != nil, fitted, chunk, lambdas[li], i, j, g, e)
									}
								}
							}
						}
					}
				}
				if finite < n {
					t.Fatalf("%s weighted %v fitted %v: only %d finite predictions compared", c.name, weights != nil, fitted, finite)
				}
			}
		}
	}
}

// TestLOOChunk: the lambda chunks of evalAll stay within looChunkBytes
// and hold at least one lambda.
func TestLOOChunk(t *testing.T) {
	for _, c := range []struct{ n, k int }{{10, 1}, {8000, 20}, {1 << 22, 50}} {
		m := looChunk(c.n, c.k)
		if m < 1 {
			t.Fatalf("n %d k %d: chunk %d", c.n, c.k, m)
		}
		if m > 1 && int64(m)*8*int64(c.n)*int64(c.k+2) > looChunkBytes {
			t.Fatalf("n %d k %d: chunk %d takes more than %d bytes", c.n, c.k, m, looChunkBytes)
		}
	}
}

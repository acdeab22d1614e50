package solvers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// streamedProblem is a 3-output regression problem with positive weights
// (a few zero), in dense and CSR form.
func streamedProblem(n int) (*mat.Dense, mat.Matrix, *mat.Dense, []float64) {
	x, y1 := synth(n, 4, 41)
	xs, _, _ := sparseSynth(n, 6, 3, 42, false)
	y := mat.NewDense(n, 3, nil)
	rng := rand.New(rand.NewPCG(43, 1))
	w := make([]float64, n)
	for i := 0; i < n; i++ {
		v := y1.At(i, 0)
		y.Set(i, 0, v)
		y.Set(i, 1, v*v-0.5)
		y.Set(i, 2, rng.NormFloat64())
		w[i] = 0.2 + 2*rng.Float64()
		if i%17 == 0 {
			w[i] = 0
		}
	}
	return x, xs, y, w
}

// withSmallBlocks sets passBlockBytes to rows rows of M float64 entries and
// GOMAXPROCS to procs for the test, so that a small problem has many
// blocks and several workers.
func withSmallBlocks(t *testing.T, rows, M, procs int) {
	old, oldMin := passBlockBytes, minPassRows
	passBlockBytes, minPassRows = int64(rows*M*8), 1
	oldP := runtime.GOMAXPROCS(procs)
	t.Cleanup(func() { passBlockBytes, minPassRows = old, oldMin; runtime.GOMAXPROCS(oldP) })
}

// TestKnM64Pass: the streamed pass equals K^T W (K w) and K^T (W y)
// computed from the whole K_nM (kernels.MatrixInto, one Gemm pair), with
// and without weights, centred and not, dense and CSR, with 3 workers
// sharing 13 blocks of 24 rows. The two sum the same products in another
// order, so they agree to rounding: relative 1e-12 (measured about 1e-15).
func TestKnM64Pass(t *testing.T) {
	const n, M = 300, 40
	withSmallBlocks(t, 24, M, 3)
	ctx := context.Background()
	xd, xs, y, w := streamedProblem(n)
	be := backend.Default()
	for _, tc := range []struct {
		name      string
		x         mat.Matrix
		w         []float64
		intercept bool
	}{{"dense", xd, nil, false}, {"dense-weighted", xd, w, false}, {"dense-fitted", xd, w, true}, {"csr-weighted-fitted", xs, w, true}} {
		t.Run(tc.name, func(t *testing.T) {
			k := kernels.Gaussian{Sigma: 1.3}
			idx := make([]int, M)
			for i := range idx {
				idx[i] = 7 * i
			}
			centers := subsetRows(tc.x, idx)
			yw := scaledRows(y, tc.w)
			q, err := newKnM64(be, k, tc.x, yw, tc.w, centers, 0, 1<<30, tc.intercept)
			if err != nil {
				t.Fatal(err)
			}
			if len(q.work) != 3 || q.rb != 24 {
				t.Fatalf("%d workers of %d rows, want 3 of 24", len(q.work), q.rb)
			}
			kd := mat.NewDense(n, M, nil)
			if err := kernels.MatrixInto(ctx, kd, k, tc.x, centers, kernels.Options{}); err != nil {
				t.Fatal(err)
			}
			// The right-hand side.
			got := mat.NewDense(M, 3, nil)
			if err := q.pass(ctx, got.RawMatrix(), nil); err != nil {
				t.Fatal(err)
			}
			want := mat.NewDense(M, 3, nil)
			want.Mul(kd.T(), yw)
			if d := relDiff(got, want); d > 1e-12 {
				t.Fatalf("right-hand side differs by %.3g relative", d)
			}
			if tc.intercept {
				wsum := 0.0
				mu := make([]float64, M)
				for i := 0; i < n; i++ {
					wi := 1.0
					if tc.w != nil {
						wi = tc.w[i]
					}
					wsum += wi
					for j := range mu {
						mu[j] += wi * kd.At(i, j)
					}
				}
				gm := q.columnMeans(wsum)
				for j := range mu {
					mu[j] /= wsum
					if d := gm[j] - mu[j]; d > 1e-13 || d < -1e-13 {
						t.Fatalf("column mean %d: %g, want %g", j, gm[j], mu[j])
					}
				}
				centreColumns(kd.RawMatrix(), mu)
			}
			u := mat.NewDense(M, 3, nil)
			for i := range u.RawMatrix().Data {
				u.RawMatrix().Data[i] = float64(i%11) - 5
			}
			ur := u.RawMatrix()
			if err := q.pass(ctx, got.RawMatrix(), &ur); err != nil {
				t.Fatal(err)
			}
			ku := mat.NewDense(n, 3, nil)
			be.Gemm(blas.NoTrans, blas.NoTrans, 1, kd.RawMatrix(), u.RawMatrix(), 0, ku.RawMatrix())
			scaleRows(ku.RawMatrix(), tc.w)
			want.Mul(kd.T(), ku)
			if d := relDiff(got, want); d > 1e-12 {
				t.Fatalf("K^T W K u differs by %.3g relative", d)
			}
			// The same pass twice: the same bits (fixed assignment of blocks
			// to workers, sums added in worker order).
			again := mat.NewDense(M, 3, nil)
			if err := q.pass(ctx, again.RawMatrix(), &ur); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got, again) {
				t.Fatal("a repeated pass differs")
			}
		})
	}
}

// TestKnM64Budget: the workers and their block rows follow the budget:
// every worker's block at a large budget, one worker at a budget that
// holds one, fewer rows when one worker's block does not fit, and
// zonal.ErrTooLarge below one row.
func TestKnM64Budget(t *testing.T) {
	const n, M, kout = 500, 50, 2
	withSmallBlocks(t, 20, M, 4)
	x, _ := synth(n, 3, 5)
	y := mat.NewDense(n, kout, nil)
	c := mat.DenseCopyOf(x.Slice(0, M, 0, 3))
	k := kernels.Gaussian{Sigma: 1}
	be := backend.Default()
	const fixed = 1000
	held := fixed + knm64Fixed(n, M, kout, true)
	perFixed := int64(M*kout+M) * 8
	row := int64(M+kout) * 8
	for _, tc := range []struct {
		limit       int64
		workers, rb int
	}{
		{1 << 30, 4, 20},
		{held + perFixed + 20*row, 1, 20},
		{held + 2*(perFixed+20*row), 2, 20},
		{held + perFixed + 7*row + 5, 1, 7},
		{held + perFixed + row, 1, 1},
	} {
		q, err := newKnM64(be, k, x, y, nil, c, fixed, tc.limit, true)
		if err != nil {
			t.Fatalf("budget %d: %v", tc.limit, err)
		}
		if len(q.work) != tc.workers || q.rb != tc.rb {
			t.Errorf("budget %d: %d workers of %d rows, want %d of %d", tc.limit, len(q.work), q.rb, tc.workers, tc.rb)
		}
	}
	if _, err := newKnM64(be, k, x, y, nil, c, fixed, held+perFixed+row-1, true); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("budget below one row: %v, want ErrTooLarge", err)
	}
}

// TestFalkonStreamed64MatchesCached: FALKON with K_nM streamed (several
// workers, many blocks) gives the model of the cached fit: the same
// centres, and predictions within 1e-9 relative, for 3 outputs, weights,
// both intercepts and CSR rows. Both runs solve the same system to a
// relative residual of 1e-12, so they differ by CG's tolerance and the
// order of sums, not by a different operator (a wrong block, weight or
// centring shows as 1e-2 or more). A repeated streamed fit gives the
// same coefficients bit for bit.
func TestFalkonStreamed64MatchesCached(t *testing.T) {
	const n, M = 400, 60
	withSmallBlocks(t, 16, M, 3)
	ctx := context.Background()
	xd, xs, y, w := streamedProblem(n)
	xt, _ := synth(50, 4, 77)
	xts, _, _ := sparseSynth(50, 6, 3, 78, false)
	k := kernels.Gaussian{Sigma: 1.4}
	for _, tc := range []struct {
		name string
		x    mat.Matrix
		xt   mat.Matrix
		w    []float64
		ic   Intercept
	}{
		{"dense", xd, xt, nil, InterceptMean},
		{"dense-weighted", xd, xt, w, InterceptMean},
		{"dense-weighted-fitted", xd, xt, w, InterceptFitted},
		{"csr-fitted", xs, xts, nil, InterceptFitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := FalkonOptions{Centers: M, Seed: 3, Iterations: 300, Tol: 1e-12, Intercept: tc.ic, Options: Options{Weights: tc.w}}
			cached, err := FitFalkon(ctx, k, tc.x, y, 1e-4, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.MemoryBudget = 200 << 10 // K_nM is 192 KB: with the factors it does not fit
			streamed, err := FitFalkon(ctx, k, tc.x, y, 1e-4, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !cached.CachedKnM() || streamed.CachedKnM() {
				t.Fatalf("cached %v and %v, want true and false", cached.CachedKnM(), streamed.CachedKnM())
			}
			for _, f := range []*Falkon{cached, streamed} {
				if cg := f.CG(); !cg.Converged && !(cg.Stalled && cg.Residual < 1e-11) {
					t.Fatalf("CG did not converge: %d iterations, residual %g", cg.Iterations, cg.Residual)
				}
			}
			ci, si := cached.CenterIndices(), streamed.CenterIndices()
			for i := range ci {
				if ci[i] != si[i] {
					t.Fatalf("centre %d: %d and %d", i, ci[i], si[i])
				}
			}
			if d := relDiff(predictAll(t, streamed, tc.xt), predictAll(t, cached, tc.xt)); d > 1e-9 {
				t.Fatalf("streamed and cached predictions differ by %.3g relative", d)
			}
			again, err := FitFalkon(ctx, k, tc.x, y, 1e-4, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(again.Alpha(), streamed.Alpha()) {
				t.Fatal("a repeated streamed fit differs")
			}
		})
	}
}

// TestFalkonStreamed64Canceled: a canceled context stops a streamed fit
// with an error wrapping context.Canceled.
func TestFalkonStreamed64Canceled(t *testing.T) {
	x, y := synth(300, 3, 9)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	opts := FalkonOptions{Centers: 40, Iterations: 50, Tol: 1e-14, Options: Options{MemoryBudget: 60 << 10, Progress: func(p zonal.Progress) {
		if p.Stage == "cg" {
			if calls++; calls == 2 {
				cancel()
			}
		}
	}}}
	_, err := FitFalkon(ctx, kernels.Gaussian{Sigma: 1}, x, y, 1e-6, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// BenchmarkKnM64Pass times one streamed float64 pass (K^T (K w)) at
// n = 20000, d = 28 (the shape of bench/scale's streamed runs) for
// M = 2000 and 10^4 centres and several block heights, GOMAXPROCS workers:
//
//	go test -run - -bench KnM64Pass ./solvers
func BenchmarkKnM64Pass(b *testing.B) {
	const n, d = 20000, 28
	x := mat.NewDense(n, d, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	y := mat.NewDense(n, 1, nil)
	for _, M := range []int{2000, 10000} {
		c := mat.DenseCopyOf(x.Slice(0, M, 0, d))
		u := mat.NewDense(M, 1, nil)
		for i := range u.RawMatrix().Data {
			u.RawMatrix().Data[i] = rng.NormFloat64()
		}
		out := mat.NewDense(M, 1, nil)
		for _, rows := range []int{0, 16, 32, 64, 128, 256} {
			b.Run(fmt.Sprintf("M=%d/rows=%d", M, rows), func(b *testing.B) {
				if rows > 0 {
					old, oldMin := passBlockBytes, minPassRows
					passBlockBytes, minPassRows = int64(rows*M*8), 1
					defer func() { passBlockBytes, minPassRows = old, oldMin }()
				}
				q, err := newKnM64(backend.Default(), kernels.Gaussian{Sigma: 5}, x, y, nil, c, 0, 1<<40, false)
				if err != nil {
					b.Fatal(err)
				}
				ur := u.RawMatrix()
				b.ResetTimer()
				for b.Loop() {
					if err := q.pass(context.Background(), out.RawMatrix(), &ur); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(q.rb), "rows")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*M), "ns/entry")
			})
		}
	}
}

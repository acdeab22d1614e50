package solvers

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// TestFalkon32StreamedPassProfile runs a fixed number of streamed float32
// FALKON passes (n = 20000, d = 28, M = 2000, K_nM streamed) for CPU
// profiles (go test -run StreamedPassProfile -cpuprofile); it only checks
// that the passes succeed and is skipped unless ZONAL_PASS32_PROFILE=1.
func TestFalkon32StreamedPassProfile(t *testing.T) {
	if os.Getenv("ZONAL_PASS32_PROFILE") != "1" {
		t.Skip("set ZONAL_PASS32_PROFILE=1 to run the profiling passes")
	}
	const passes = 8
	rng, x, y := profileProblem()
	centers := mat.DenseCopyOf(x.Slice(0, profileM, 0, profileD))
	be := backend.Default()
	const M = profileM
	fixed := int64(M) * int64(M) * 16
	q, err := newKnM32(context.Background(), be, kernels.Gaussian{Sigma: 5}, x, y, nil, centers, fixed, 64<<20,
		FalkonOptions{Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	if q.isCached() {
		t.Fatal("K_nM cached: the profile wants it streamed")
	}
	out := mat.NewDense(M, 1, nil)
	w := mat.NewDense(M, 1, nil)
	for i := 0; i < M; i++ {
		w.Set(i, 0, rng.NormFloat64())
	}
	wr := w.RawMatrix()
	for p := 0; p < passes; p++ {
		if err := q.pass(context.Background(), out.RawMatrix(), &wr); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFalkon32StreamedFitProfile is a whole streamed float32 fit on the
// problem of TestFalkon32StreamedPassProfile (8 CG iterations), for CPU
// profiles of what besides the passes an iteration costs (the
// preconditioner's triangular solves); skipped unless
// ZONAL_PASS32_PROFILE=1.
func TestFalkon32StreamedFitProfile(t *testing.T) {
	if os.Getenv("ZONAL_PASS32_PROFILE") != "1" {
		t.Skip("set ZONAL_PASS32_PROFILE=1 to run the profiling fit")
	}
	_, x, y := profileProblem()
	f, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 5}, x, y, 1e-6,
		FalkonOptions{Centers: profileM, Iterations: 8, Tol: 1e-300, Precision: zonal.Float32, Seed: 3, Options: Options{MemoryBudget: 100 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if f.CachedKnM() {
		t.Fatal("K_nM cached: the profile wants it streamed")
	}
}

// The problem of the profiling tests: n x d standard normal rows, targets
// the first coordinate, M centres.
const profileN, profileD, profileM = 20000, 28, 2000

func profileProblem() (*rand.Rand, *mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(profileN, profileD, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	y := mat.NewDense(profileN, 1, nil)
	for i := 0; i < profileN; i++ {
		y.Set(i, 0, x.At(i, 0))
	}
	return rng, x, y
}

package tensorsketch

import (
	"math"
	"testing"

	"github.com/zonal-ml/zonal/kernels"
	"gonum.org/v1/gonum/mat"
)

// TestAdaptiveUnbiased checks E[Z Z^T] = K for the whole recursive sampler
// (all levels, merging of repeated draws and permutations), in both of its
// node modes: exact conditionals, and SupportSample = 4 so that every
// prefix with more than 4 points uses the subsampled estimate with the
// uniform floor (random proposals whose probabilities are still exact).
// Over R fits with seeds 1..R, each entry of the mean of Z Z^T must be
// within 5.5 standard errors of K (Bonferroni over the 465 entries: a false
// alarm has probability < 2e-5 under a normal approximation; the seeds are
// fixed, so the outcome is deterministic).
func TestAdaptiveUnbiased(t *testing.T) {
	const n = 30
	x := randData(n, 4, 0.7, 21)
	k := kernels.Polynomial{Degree: 3, Gamma: 1, Coef0: 0.5}
	e, _ := polyExpansion(k)
	K := exactK(e, x)
	R := 800
	if testing.Short() {
		R = 300
	}
	checkUnbiasedFits(t, x, K, R, func(seed uint64, L int) (*Adaptive, error) {
		return FitAdaptive(nil, x, k, AdaptiveOptions{Samples: 40, Lambda: 0.1, Seed: seed, SupportSample: L})
	})
}

// checkUnbiasedFits fits the sampler R times (seeds 1..R) for each
// SupportSample L in {0, 4} and checks that every entry of the mean of
// Z Z^T is within 5.5 standard errors of K (entries with zero variance
// must equal K exactly).
func checkUnbiasedFits(t *testing.T, x *mat.Dense, K mat.Symmetric, R int, fit func(seed uint64, L int) (*Adaptive, error)) {
	t.Helper()
	n, _ := x.Dims()
	for _, L := range []int{0, 4} {
		sum := make([]float64, n*n)
		sum2 := make([]float64, n*n)
		for s := 1; s <= R; s++ {
			ad, err := fit(uint64(s), L)
			if err != nil {
				t.Fatal(err)
			}
			z := mat.NewDense(n, ad.Dim(), nil)
			if err := ad.Transform(z, x); err != nil {
				t.Fatal(err)
			}
			g := gram(z)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					v := g.At(i, j)
					sum[i*n+j] += v
					sum2[i*n+j] += v * v
				}
			}
		}
		worst := 0.0
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				m := sum[i*n+j] / float64(R)
				v := (sum2[i*n+j]/float64(R) - m*m) * float64(R) / float64(R-1)
				se := math.Sqrt(math.Max(v, 0) / float64(R))
				if se == 0 {
					if m != K.At(i, j) {
						t.Errorf("L=%d entry (%d,%d): constant %v != %v", L, i, j, m, K.At(i, j))
					}
					continue
				}
				worst = math.Max(worst, math.Abs(m-K.At(i, j))/se)
			}
		}
		t.Logf("SupportSample %d: largest |mean - K| / SE over the entries = %.2f", L, worst)
		if worst > 5.5 {
			t.Errorf("SupportSample %d: an entry of the mean of Z Z^T is %.1f standard errors from K", L, worst)
		}
	}
}

package tensorsketch

import (
	"testing"

	"github.com/zonal-ml/zonal/kernels"
)

// TestAdaptiveGaussianUnbiased is TestAdaptiveUnbiased for the Gaussian kernel
// (sigma = 0.7, Taylor degree 5, so all six blocks l = 0..5 and their
// block probabilities are exercised); K is the truncated kernel, which the
// features estimate without bias. Same node modes, statistics and bound
// (5.5 standard errors per entry, Bonferroni over 465 entries).
func TestAdaptiveGaussianUnbiased(t *testing.T) {
	const n = 30
	x := randData(n, 4, 0.7, 21)
	e, _ := gaussExpansion(0.7, 5)
	K := exactK(e, x)
	R := 600
	if testing.Short() {
		R = 300
	}
	checkUnbiasedFits(t, x, K, R, func(seed uint64, L int) (*Adaptive, error) {
		return FitAdaptive(nil, x, kernels.Gaussian{Sigma: 0.7}, AdaptiveOptions{Samples: 40, Lambda: 0.1, TaylorDegree: 5, Seed: seed, SupportSample: L})
	})
}

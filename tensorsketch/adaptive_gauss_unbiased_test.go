package tensorsketch

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
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
	for _, L := range []int{0, 4} {
		sum := make([]float64, n*n)
		sum2 := make([]float64, n*n)
		for s := 1; s <= R; s++ {
			ad, err := FitAdaptiveGaussian(nil, x, 0.7, 5, AdaptiveOptions{Samples: 40, Lambda: 0.1, Seed: uint64(s), SupportSample: L})
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

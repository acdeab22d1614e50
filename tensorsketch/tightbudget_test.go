package tensorsketch

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/kernels"
)

// tightBudgetRatio fits the sampler with s = ceil(2 s_lambda) draws
// (s_lambda = tr(K (K + lambda I)^{-1}), exact) for seeds 1..seeds and
// returns the mean eps_lambda of its features and the mean eps_lambda of
// s rows drawn iid from the exact ridge leverage scores (degree2Oracle),
// each eps_lambda = |(K + lambda I)^{-1/2} (Z Z^T - K) (K + lambda I)^{-1/2}|_2.
func tightBudgetRatio(t *testing.T, x mat.Matrix, k kernels.Polynomial, lambda float64, seeds int) (adaptive, exact float64, s int) {
	t.Helper()
	o := newDegree2Oracle(t, x, k, lambda)
	s = int(math.Ceil(2 * o.sd))
	bk := backend.Default()
	ev, err := kernels.NewEvaluator(context.Background(), o.K, kernels.Options{Backend: bk})
	if err != nil {
		t.Fatal(err)
	}
	eps := func(z *mat.Dense) float64 {
		t.Helper()
		m, err := ev.Measure(context.Background(), z, []float64{lambda})
		if err != nil {
			t.Fatal(err)
		}
		return m.Eps[0]
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		ex := eps(o.features(s, seed))
		ad, err := FitAdaptive(context.Background(), x, k, AdaptiveOptions{Samples: s, Lambda: lambda, Seed: seed, Options: Options{Backend: bk}})
		if err != nil {
			t.Fatal(err)
		}
		z := mat.NewDense(o.n, ad.Dim(), nil)
		if err := ad.Transform(z, x); err != nil {
			t.Fatal(err)
		}
		ea := eps(z)
		t.Logf("seed %d: eps_lambda adaptive %.3f (%d features), exact leverage %.3f; levels %+v", seed, ea, ad.Dim(), ex, ad.Levels())
		adaptive += ea / float64(seeds)
		exact += ex / float64(seeds)
	}
	t.Logf("s_lambda %.1f, s = %d: mean eps_lambda adaptive %.3f, exact leverage %.3f, ratio %.2f", o.sd, s, adaptive, exact, adaptive/exact)
	return adaptive, exact, s
}

// TestAdaptiveTightBudgetDigits: at s = 2 s_lambda draws the sampler's
// features are within 1.3x (in mean eps_lambda over seeds 1..10) of s rows
// drawn from the exact ridge leverage scores. 400 digits rows (scaled to
// [0,1]), (x.y/16 + 1)^2, lambda 1: s_lambda = 49.0, s = 99.
//
// Measured: before the fix the ratio was 1.54 (adaptive 2.53, exact 1.65;
// 1.91 over seeds 1..5): the first coordinate's marginal came from a bare
// CountSketch paired with the JL columns, there were 16 JL columns, and the
// intermediate levels drew at most s rows (see treeDegree, interDraws and
// AdaptiveOptions.Projections). After it, 1.07 (1.76 against 1.65; 1.26
// over seeds 1..5). The bound 1.3 is the accuracy asked of the
// sampler at this budget (within 30% of exact-score sampling); eps_lambda of
// either method varies by about +-25% from seed to seed at this budget,
// which the mean over ten seeds absorbs, and the remaining gap is the JL
// noise of t = 64 columns and the sampled B of the previous level. Seeds are
// fixed, so the test is deterministic.
func TestAdaptiveTightBudgetDigits(t *testing.T) {
	x := digitsSample(t, 400)
	k := kernels.Polynomial{Degree: 2, Gamma: 1.0 / 16, Coef0: 1}
	ad, ex, _ := tightBudgetRatio(t, x, k, 1, 10)
	if ad > 1.3*ex {
		t.Errorf("mean eps_lambda %.3f > 1.3 x exact-leverage %.3f at s = 2 s_lambda", ad, ex)
	}
}

// debianRows reads the first n rows of the shared debian_text set (bag of
// words counts, 23959 columns, about 41 nonzeros a row) as a CSR with every
// row scaled to unit L2 norm; the test skips when the file is absent.
func debianRows(t *testing.T, n int) *dataset.CSR {
	t.Helper()
	d, err := dataset.ReadFile(shareddata.File(t, "debian_text.libsvm.gz"), dataset.Options{MaxRows: n, NoDense: true})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Sparse
	for i := 0; i < c.Rows; i++ {
		if nr := math.Sqrt(c.RowNorm2(i)); nr > 0 {
			for p := c.RowPtr[i]; p < c.RowPtr[i+1]; p++ {
				c.Val[p] /= nr
			}
		}
	}
	return c
}

// TestAdaptiveTightBudgetDebianText is the same check on sparse text, the
// input the sampler is made for, read as a *dataset.CSR (never densified):
// 300 debian_text rows, L2-normalized, (x.y + 1)^2, lambda 4, where
// s_lambda = 99.9 and s = 200 (at lambda 1, s_lambda = 190 is most of n).
// Phi has about 2 10^5 nonzero rows (word pairs of one description), whose
// exact scores the oracle computes from the pairs' supports.
//
// Measured (seeds 1..10): before the fix ratio 2.14 (3.26 against 1.52),
// after it 1.21 (1.84 against 1.52). The 1.3 bound is justified as for
// digits; the test reads 300 rows and takes about 2 s.
func TestAdaptiveTightBudgetDebianText(t *testing.T) {
	x := debianRows(t, 300)
	k := kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: 1}
	ad, ex, _ := tightBudgetRatio(t, x, k, 4, 10)
	if ad > 1.3*ex {
		t.Errorf("mean eps_lambda %.3f > 1.3 x exact-leverage %.3f at s = 2 s_lambda", ad, ex)
	}
}

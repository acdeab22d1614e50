package tensorsketch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// multisetKey names the merged row of an ordered tuple.
func multisetKey(l int, idx []int32) string {
	s := slices.Clone(idx)
	slices.Sort(s)
	key := fmt.Sprintf("%d:", l)
	for _, i := range s {
		key += fmt.Sprintf("%d,", i)
	}
	return key
}

// enumerate walks every row of Phi reachable by the sampler and returns the
// probability with which one draw lands on each merged row (multiset),
// computed from the same conditionals the sampler draws from.
func enumerate(t *testing.T, s *rowSampler, W []float64) map[string]float64 {
	t.Helper()
	all := make([]int32, s.xr.n)
	for k := range all {
		all[k] = int32(k)
	}
	terms, pt, _, err := s.terms(W, all)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	var rec func(l int, prefix, pts []int32, U []float64, prob float64, coords []int32, p []float64)
	rec = func(l int, prefix, pts []int32, U []float64, prob float64, coords []int32, p []float64) {
		for sl, i := range coords {
			if p[sl] == 0 {
				continue
			}
			np := append(slices.Clone(prefix), i)
			pr := prob * p[sl]
			if len(np) == l {
				out[multisetKey(l, np)] += pr
				continue
			}
			var cp []int32
			var cu []float64
			for a, k := range pts {
				col, val := s.xr.row(int(k))
				for q, c := range col {
					if int32(c) == i {
						cp = append(cp, k)
						for j := 0; j < s.t; j++ {
							cu = append(cu, U[a*s.t+j]*val[q])
						}
					}
				}
			}
			kc, kp, _, _ := s.cond(l-len(np)-1, cp, cu)
			rec(l, np, cp, cu, pr, kc, kp)
		}
	}
	for i, tm := range terms {
		if tm.l == 0 {
			out["0:"] += pt[i]
			continue
		}
		rec(tm.l, nil, all, tm.U, pt[i], tm.coords, tm.p)
	}
	return out
}

// chiSquare compares observed counts (by key) against probabilities,
// pooling the cells with expected count < 5, and returns the statistic, the
// degrees of freedom and the critical value at level alpha.
func chiSquare(obs map[string]int, prob map[string]float64, n int, alpha float64) (stat float64, df int, crit float64) {
	keys := make([]string, 0, len(prob))
	for k := range prob {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var poolE, poolO float64
	cells := 0
	for _, k := range keys {
		e := prob[k] * float64(n)
		o := float64(obs[k])
		if e < 5 {
			poolE += e
			poolO += o
			continue
		}
		stat += (o - e) * (o - e) / e
		cells++
	}
	for k, o := range obs {
		if _, ok := prob[k]; !ok {
			poolO += float64(o) // a draw the distribution says is impossible
		}
	}
	if poolE > 0 {
		stat += (poolO - poolE) * (poolO - poolE) / poolE
		cells++
	}
	df = cells - 1
	crit = distuv.ChiSquared{K: float64(df)}.Quantile(1 - alpha)
	return stat, df, crit
}

// tinyProblem is a small degree-3 polynomial problem whose d'^q = 5^3 = 125
// rows of Phi can be enumerated.
func tinyProblem() (*rows, []float64, expansion, *mat.Dense) {
	x := randData(60, 4, 0.8, 11)
	e, _ := polyExpansion(kernels.Polynomial{Degree: 3, Gamma: 1, Coef0: 0.5})
	r, _ := toRows(x, -1, 0, "", nil)
	xr, om := e.prepare(r)
	return xr, om, e, x
}

// TestSamplerDrawsItsOwnDistribution checks the bookkeeping behind
// unbiasedness: the empirical frequencies of the merged rows drawn at one
// level match the probabilities the sampler attributes to them (and uses in
// the weights), by a chi-square test at level 0.001 with a fixed seed.
func TestSamplerDrawsItsOwnDistribution(t *testing.T) {
	xr, om, e, _ := tinyProblem()
	o := AdaptiveOptions{Samples: 20000, Lambda: 0.05, Seed: 3}
	if testing.Short() {
		o.Samples = 5000
	}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	s, err := newRowSampler(context.Background(), xr, om, e, o)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	// B: a previous-level sample (the sampler's own rows at a larger lambda).
	W0, _ := ridgeFactor(o.Backend, nil, xr.n, 0, o.Projections, 1, rng)
	s.rng = rand.New(rand.NewPCG(1, 1))
	b, _, _, err := s.sampleLevel(W0, func(float64) int { return 200 })
	if err != nil {
		t.Fatal(err)
	}
	Zt := make([]float64, xr.n*len(b))
	features(Zt, len(b), xr, om, b)
	W, err := ridgeFactor(o.Backend, Zt, xr.n, len(b), o.Projections, o.Lambda, rng)
	if err != nil {
		t.Fatal(err)
	}
	prob := enumerate(t, s, W)
	total := 0.0
	for _, p := range prob {
		total += p
	}
	// the probabilities of all rows sum to 1 up to rounding
	if math.Abs(total-1) > 1e-9 {
		t.Fatalf("enumerated probabilities sum to %v", total)
	}
	s.rng = rand.New(rand.NewPCG(2, 2))
	got, _, _, err := s.sampleLevel(W, func(float64) int { return o.Samples })
	if err != nil {
		t.Fatal(err)
	}
	obs := map[string]int{}
	for _, r := range got {
		obs[multisetKey(len(r.idx), r.idx)] += r.cnt
	}
	stat, df, crit := chiSquare(obs, prob, o.Samples, 0.001)
	t.Logf("chi-square %.1f on %d df (critical %.1f at alpha 0.001), %d merged rows", stat, df, crit, len(got))
	if stat > crit {
		t.Errorf("empirical row frequencies differ from the sampler's probabilities: chi2 = %.1f > %.1f (df %d)", stat, crit, df)
	}
}

// TestSamplerMatchesExactLeverage compares the sampler's draws against the
// exact ridge leverage scores tau_r = Phi_r (K + lambda I)^{-1} Phi_r^T of
// the 125 rows of Phi = X'^{(x)3} (computed densely). B is the exact Phi
// (B^T B = K), and the sampler's approximations are made fine: t = 512
// Johnson-Lindenstrauss columns, PolySketch size m = 2048 (4 sketch rows per
// JL column), mixing weight
// 1e-6, so its distribution should be within about 10% of tau/sum(tau) in
// every cell (JL error sqrt(2/t) ~ 6%), below the resolution of N = 2000 draws. Chi-square test at
// level 0.001, fixed seed. As a negative control, the same draws must
// reject plain row-norm sampling (|Phi_r|^2), which is what the sampler
// would do if B were ignored.
func TestSamplerMatchesExactLeverage(t *testing.T) {
	xr, om, e, x := tinyProblem()
	const lambda = 0.05
	o := AdaptiveOptions{Samples: 2000, Lambda: lambda, Seed: 4, Projections: 512, SketchDim: 2048, Mix: 1e-6}
	if err := o.defaults(); err != nil {
		t.Fatal(err)
	}
	s, err := newRowSampler(context.Background(), xr, om, e, o)
	if err != nil {
		t.Fatal(err)
	}
	phi := explicitPhi(prepared(x, e.poly), 3)
	R, n := phi.Dims()
	Zt := make([]float64, n*R)
	for k := 0; k < n; k++ {
		for r := 0; r < R; r++ {
			Zt[k*R+r] = phi.At(r, k)
		}
	}
	W, err := ridgeFactor(backend.Default(), Zt, n, R, o.Projections, lambda, rand.New(rand.NewPCG(8, 8)))
	if err != nil {
		t.Fatal(err)
	}
	tau := ridgeLeverage(phi, lambda)
	norms := make([]float64, R)
	for r := range norms {
		v := phi.RawRowView(r)
		norms[r] = mat.Dot(mat.NewVecDense(n, v), mat.NewVecDense(n, v))
	}
	exact := map[string]float64{}
	rowNorm := map[string]float64{}
	var st, sn float64
	for r := 0; r < R; r++ {
		st += tau[r]
		sn += norms[r]
	}
	w := xr.d
	for r := 0; r < R; r++ {
		idx := []int32{int32(r / (w * w)), int32(r / w % w), int32(r % w)}
		exact[multisetKey(3, idx)] += tau[r] / st
		rowNorm[multisetKey(3, idx)] += norms[r] / sn
	}
	s.rng = rand.New(rand.NewPCG(6, 6))
	got, _, _, err := s.sampleLevel(W, func(float64) int { return o.Samples })
	if err != nil {
		t.Fatal(err)
	}
	obs := map[string]int{}
	for _, r := range got {
		obs[multisetKey(len(r.idx), r.idx)] += r.cnt
	}
	stat, df, crit := chiSquare(obs, exact, o.Samples, 0.001)
	t.Logf("vs exact leverage: chi-square %.1f on %d df (critical %.1f at alpha 0.001); statistical dimension %.1f", stat, df, crit, st)
	if stat > crit {
		t.Errorf("sampled rows do not follow the exact ridge leverage scores: chi2 = %.1f > %.1f (df %d)", stat, crit, df)
	}
	stat, df, crit = chiSquare(obs, rowNorm, o.Samples, 0.001)
	t.Logf("vs row norms (negative control): chi-square %.1f on %d df (critical %.1f)", stat, df, crit)
	if stat <= crit {
		t.Errorf("the test cannot tell leverage from row-norm sampling here (chi2 %.1f <= %.1f)", stat, crit)
	}
}

package secular_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/secular"
)

// secProblem is a secular equation 1/rho + sum z_j^2/(d_j - x).
type secProblem struct {
	name string
	d, z []float64
	rho  float64
}

// laedProblems returns random and adversarial problems with strictly
// increasing d and nonzero z.
func laedProblems(rng *rand.Rand) []secProblem {
	var ps []secProblem
	for _, n := range []int{1, 2, 3, 4, 7, 20, 100} {
		for _, rho := range []float64{1e-10, 0.3, 1, 50, 1e10} {
			d := randVec(rng, n)
			sort.Float64s(d)
			ps = append(ps, secProblem{fmt.Sprintf("random n=%d rho=%g", n, rho), d, randVec(rng, n), rho})
		}
	}
	// A cluster of poles 1e-12 apart next to isolated ones.
	d := []float64{-3, 1, 1 + 1e-12, 1 + 2e-12, 1 + 3e-12, 1 + 4e-12, 5}
	ps = append(ps, secProblem{"cluster 1e-12", d, randVec(rng, len(d)), 1})
	// Tiny z components: roots within ~1e-20 of their poles.
	z := randVec(rng, len(d))
	z[1], z[3] = 1e-10, -1e-10
	ps = append(ps, secProblem{"tiny z", []float64{-3, 0, 1, 2, 3, 4, 5}, z, 1})
	// Widely graded poles, as in a kernel matrix spectrum 1e-18..1.
	g := make([]float64, 12)
	for j := range g {
		g[j] = math.Pow(10, float64(j-len(g)+1)*18/float64(len(g)-1))
	}
	ps = append(ps, secProblem{"graded 1e-18..1", g, randVec(rng, len(g)), 0.5})
	// Zero pole with tiny neighbours, and a huge weight.
	ps = append(ps, secProblem{"zero pole huge rho", []float64{-1e-16, 0, 1e-16, 1}, []float64{0.5, 0.5, 0.5, 0.5}, 1e16})
	return ps
}

// denseRoots are the eigenvalues of diag(d) + rho z z^T by gonum's Dsyev.
func denseRoots(t *testing.T, p secProblem) []float64 {
	n := len(p.d)
	a := general(n, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Data[i*n+j] = p.rho * p.z[i] * p.z[j]
		}
		a.Data[i*n+i] += p.d[i]
	}
	w, _ := symEig(t, a, false)
	return w
}

func TestLaed4AgainstDenseAndInterlacing(t *testing.T) {
	rng := newRand(1)
	for _, p := range laedProblems(rng) {
		n := len(p.d)
		ref := denseRoots(t, p)
		zsq := 0.0
		for _, x := range p.z {
			zsq += x * x
		}
		// ||diag(d) + rho zz^T||_2 bounds the absolute error of Dsyev's
		// roots (backward stable: c n eps ||A||) and of ours.
		norm := maxAbs(p.d) + p.rho*zsq
		delta := make([]float64, n)
		for i := 0; i < n; i++ {
			lam, err := secular.Laed4(i, p.d, p.z, p.rho, delta)
			if err != nil {
				t.Fatalf("%s: root %d: %v", p.name, i, err)
			}
			if e := math.Abs(lam - ref[i]); e > 4*float64(n)*eps*norm {
				t.Errorf("%s: root %d = %.17g, dense %.17g, diff %g > 4 n eps ||A||", p.name, i, lam, ref[i], e)
			}
			// Interlacing: d_i <= lambda_i <= d_{i+1}, last <= d_n + rho|z|^2.
			hi := p.d[n-1] + p.rho*zsq
			if i < n-1 {
				hi = p.d[i+1]
			}
			if lam < p.d[i] || lam > hi+2*eps*math.Abs(hi) {
				t.Errorf("%s: root %d = %.17g outside [%.17g, %.17g]", p.name, i, lam, p.d[i], hi)
			}
			// delta_j agrees with d_j - lambda up to the roundings of
			// (d_j - d_K) - tau, d_K + tau and d_j - lambda, and sits on the
			// correct side of every pole.
			for j := 0; j < n; j++ {
				want := p.d[j] - lam
				if math.Abs(delta[j]-want) > 4*eps*(math.Abs(p.d[j])+math.Abs(lam)) {
					t.Errorf("%s: root %d: delta[%d] = %g, d_j - lambda = %g", p.name, i, j, delta[j], want)
				}
				if (j <= i && delta[j] > 0) || (j > i && delta[j] <= 0) {
					t.Errorf("%s: root %d: delta[%d] = %g has the wrong sign", p.name, i, j, delta[j])
				}
			}
			// Secular residual with the returned offsets: bounded by the
			// rounding error of evaluating the sum (the stopping test uses
			// eps times a bound of this size).
			w, scale := 1/p.rho, 1/p.rho
			for j := 0; j < n; j++ {
				w += p.z[j] * p.z[j] / delta[j]
				scale += math.Abs(p.z[j] * p.z[j] / delta[j])
			}
			if math.Abs(w) > float64(2*n+20)*eps*scale {
				t.Errorf("%s: root %d: residual %g > (2n+20) eps * %g", p.name, i, w, scale)
			}
		}
	}
}

// bigRoot computes the i-th root to 200 bits by bisection on big.Float and
// returns the exact offsets d_j - lambda rounded to float64 (test oracle).
func bigRoot(p secProblem, i int) []float64 {
	const prec = 200
	n := len(p.d)
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	f := func(x *big.Float) int {
		s := new(big.Float).SetPrec(prec).Quo(nf(1), nf(p.rho))
		for j := 0; j < n; j++ {
			den := new(big.Float).SetPrec(prec).Sub(nf(p.d[j]), x)
			t := new(big.Float).SetPrec(prec).Mul(nf(p.z[j]), nf(p.z[j]))
			s.Add(s, t.Quo(t, den))
		}
		return s.Sign()
	}
	lo := nf(p.d[i])
	var hi *big.Float
	if i < n-1 {
		hi = nf(p.d[i+1])
	} else {
		zsq := nf(0)
		for _, x := range p.z {
			zsq.Add(zsq, new(big.Float).SetPrec(prec).Mul(nf(x), nf(x)))
		}
		hi = new(big.Float).SetPrec(prec).Add(nf(p.d[n-1]), zsq.Mul(zsq, nf(p.rho)))
	}
	for k := 0; k < prec+64; k++ {
		mid := new(big.Float).SetPrec(prec).Add(lo, hi)
		mid.Quo(mid, nf(2))
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, n)
	for j := range out {
		out[j], _ = new(big.Float).SetPrec(prec).Sub(nf(p.d[j]), lo).Float64()
	}
	return out
}

// TestLaed4RelativeOffsets checks the property the eigenvectors depend on:
// every d_j - lambda_i, including the tiny offset to the nearest pole, has a
// small relative error against a 200-bit oracle.
func TestLaed4RelativeOffsets(t *testing.T) {
	rng := newRand(2)
	worst := 0.0
	for _, p := range laedProblems(rng) {
		n := len(p.d)
		if n > 20 || (testing.Short() && n > 7) {
			continue // the oracle is slow (and slower still under -race)
		}
		delta := make([]float64, n)
		for i := 0; i < n; i++ {
			if _, err := secular.Laed4(i, p.d, p.z, p.rho, delta); err != nil {
				t.Fatal(err)
			}
			ref := bigRoot(p, i)
			for j := 0; j < n; j++ {
				rel := math.Abs(delta[j]-ref[j]) / math.Abs(ref[j])
				worst = math.Max(worst, rel)
				// Tolerance: the root's backward error is a few eps in each
				// term of the sum; the offsets inherit ~n eps relative error
				// (Gu-Eisenstat need O(eps) relative accuracy of these).
				if rel > 8*float64(n+2)*eps {
					t.Errorf("%s: root %d: delta[%d] = %.17g, exact %.17g, rel err %g", p.name, i, j, delta[j], ref[j], rel)
				}
			}
		}
	}
	t.Logf("worst relative offset error %.3g (eps = %.3g)", worst, eps)
}

// TestLaed4Iterations checks that the rational iteration, not its bisection
// safeguard, does the work: a few steps per root on average.
func TestLaed4Iterations(t *testing.T) {
	rng := newRand(3)
	total, roots, worst := 0, 0, 0
	secular.SetIterHook(func(k int) {
		total += k
		roots++
		worst = max(worst, k)
	})
	defer secular.SetIterHook(nil)
	for _, p := range laedProblems(rng) {
		delta := make([]float64, len(p.d))
		for i := range p.d {
			if _, err := secular.Laed4(i, p.d, p.z, p.rho, delta); err != nil {
				t.Fatal(err)
			}
		}
	}
	avg := float64(total) / float64(roots)
	t.Logf("%d roots, %.2f steps on average, worst %d", roots, avg, worst)
	// Quadratic convergence from the midpoint needs about 3-6 steps; plain
	// bisection would need ~50.
	if avg > 8 || worst > 20 {
		t.Errorf("average %.2f steps (want <= 8), worst %d (want <= 20)", avg, worst)
	}
}

func TestLaed4Errors(t *testing.T) {
	delta := make([]float64, 3)
	cases := []struct {
		name string
		i    int
		d, z []float64
		rho  float64
		want error
	}{
		{"empty", 0, nil, nil, 1, zonal.ErrShape},
		{"index", 3, []float64{1, 2, 3}, []float64{1, 1, 1}, 1, zonal.ErrShape},
		{"negative index", -1, []float64{1, 2, 3}, []float64{1, 1, 1}, 1, zonal.ErrShape},
		{"short z", 0, []float64{1, 2, 3}, []float64{1, 1}, 1, zonal.ErrShape},
		{"rho zero", 0, []float64{1, 2, 3}, []float64{1, 1, 1}, 0, zonal.ErrShape},
		{"rho negative", 0, []float64{1, 2, 3}, []float64{1, 1, 1}, -1, zonal.ErrShape},
		{"not increasing", 0, []float64{1, 1, 3}, []float64{1, 1, 1}, 1, zonal.ErrShape},
		{"nan d", 0, []float64{1, math.NaN(), 3}, []float64{1, 1, 1}, 1, zonal.ErrNonFinite},
		{"inf z", 0, []float64{1, 2, 3}, []float64{1, math.Inf(1), 1}, 1, zonal.ErrNonFinite},
		{"nan rho", 0, []float64{1, 2, 3}, []float64{1, 1, 1}, math.NaN(), zonal.ErrNonFinite},
	}
	for _, c := range cases {
		_, err := secular.Laed4(c.i, c.d, c.z, c.rho, delta)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

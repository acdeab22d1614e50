package tensorsketch

import (
	"math"
	"math/rand/v2"

	"github.com/zonal-ml/zonal/kernels"
	"gonum.org/v1/gonum/mat"
)

// explicitPhi forms Phi (rows: all tuples in [w]^p, columns: points) for the
// polynomial expansion on the prepared rows; for tests on tiny problems.
func explicitPhi(xr *mat.Dense, p int) *mat.Dense {
	n, w := xr.Dims()
	R := 1
	for i := 0; i < p; i++ {
		R *= w
	}
	phi := mat.NewDense(R, n, nil)
	idx := make([]int, p)
	for r := 0; r < R; r++ {
		rr := r
		for j := p - 1; j >= 0; j-- {
			idx[j] = rr % w
			rr /= w
		}
		for k := 0; k < n; k++ {
			v := 1.0
			for _, i := range idx {
				v *= xr.At(k, i)
			}
			phi.Set(r, k, v)
		}
	}
	return phi
}

// ridgeLeverage returns tau_r = Phi_r (B^T B + lambda I)^{-1} Phi_r^T for
// every row r (B = nil means B^T B = K = Phi^T Phi, the exact scores).
func ridgeLeverage(phi *mat.Dense, lambda float64) []float64 {
	R, n := phi.Dims()
	var k mat.Dense
	k.Mul(phi.T(), phi)
	for i := 0; i < n; i++ {
		k.Set(i, i, k.At(i, i)+lambda)
	}
	var inv mat.Dense
	if err := inv.Inverse(&k); err != nil {
		panic(err)
	}
	var t mat.Dense
	t.Mul(phi, &inv)
	tau := make([]float64, R)
	for r := 0; r < R; r++ {
		tau[r] = mat.Dot(t.RowView(r), phi.RowView(r))
	}
	return tau
}

// leverageFeatures samples s rows iid from tau and returns Z^T (n x s).
func leverageFeatures(phi *mat.Dense, tau []float64, s int, seed uint64) *mat.Dense {
	R, n := phi.Dims()
	sum := 0.0
	for _, v := range tau {
		sum += v
	}
	rng := rand.New(rand.NewPCG(seed, 9))
	z := mat.NewDense(n, s, nil)
	for j := 0; j < s; j++ {
		u := rng.Float64() * sum
		r := 0
		for acc := tau[0]; acc < u && r < R-1; {
			r++
			acc += tau[r]
		}
		w := 1 / math.Sqrt(float64(s)*tau[r]/sum)
		for k := 0; k < n; k++ {
			z.Set(k, j, w*phi.At(r, k))
		}
	}
	return z
}

// prepared returns the augmented dense points x' for a polynomial kernel.
func prepared(x *mat.Dense, k kernels.Polynomial) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(n, d+1, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			out.Set(i, j, math.Sqrt(k.Gamma)*x.At(i, j))
		}
		out.Set(i, d, math.Sqrt(k.Coef0))
	}
	return out
}

//go:build netlib

package netlib_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal/backend/netlib"
	"github.com/zonal-ml/zonal/backend/secular"
)

// TestLaed4 compares LAPACK's dlaed4 (through the RootFinder wrapper) with
// the Go secular.Laed4 on random problems of every small and moderate size,
// for unit and non-unit ||z||. Both are accurate to a few ulps of the
// distance to the nearest pole (dlaed4's stopping criterion is
// |f| <= 8 m u (|psi| + |phi| + |w|)); we allow 1e-12 relative to the
// largest |d_j| + rho ||z||^2.
func TestLaed4(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 3, 4, 10, 100} {
		for _, scale := range []float64{1, 0.3, 2} {
			d := make([]float64, m)
			z := make([]float64, m)
			acc := 0.0
			var zz float64
			for j := range d {
				acc += 0.1 + rng.Float64()
				d[j] = acc
				z[j] = rng.NormFloat64()
				zz += z[j] * z[j]
			}
			for j := range z {
				z[j] *= scale / math.Sqrt(zz)
			}
			rho := 0.5 + rng.Float64()
			tol := 1e-12 * (acc + rho*scale*scale)
			for i := 0; i < m; i++ {
				dl, dg := make([]float64, m), make([]float64, m)
				l1, err1 := netlib.Laed4(i, d, z, rho, dl)
				l2, err2 := secular.Laed4(i, d, z, rho, dg)
				if err1 != nil || err2 != nil {
					t.Fatalf("m=%d i=%d: errors %v, %v", m, i, err1, err2)
				}
				if math.Abs(l1-l2) > tol {
					t.Errorf("m=%d |z|=%v i=%d: dlaed4 %v, Go %v", m, scale, i, l1, l2)
				}
				// The root satisfies the secular equation and delta = d - lambda.
				f := 1.0
				for j := range d {
					f += rho * z[j] * z[j] / dl[j]
					if math.Abs(dl[j]-(d[j]-l1)) > tol {
						t.Errorf("m=%d i=%d: delta[%d] = %v, d-lambda = %v", m, i, j, dl[j], d[j]-l1)
						break
					}
				}
				// Interlacing: d_i < lambda < d_(i+1); the last root is <= d_m + rho ||z||^2.
				hi := d[m-1] + rho*scale*scale
				if i+1 < m {
					hi = d[i+1]
				}
				if !(l1 > d[i] && l1 <= hi) {
					t.Errorf("m=%d i=%d: root %v outside (%v, %v)", m, i, l1, d[i], hi)
				}
			}
		}
	}
	if _, err := netlib.Laed4(0, []float64{1, 2, 3}, []float64{1, 0, 0}, -1, make([]float64, 3)); err == nil {
		t.Error("Laed4 with rho < 0: no error")
	}
}

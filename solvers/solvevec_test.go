package solvers

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

// TestFalkonFactorsOneColumn: the one-column solves (solveVec, row dots
// and axpys) agree with the general triangular solves of the same factors
// (two columns, the second the first's copy, take the general path) for
// all four systems, within 1e-10 relative: both are backward stable on the
// well-conditioned random factors here (diagonals at least 1.5 times the
// sum of a row's off-diagonal magnitudes), so they differ by a few
// thousand ulps at most, while a wrong triangle or order is off by O(1).
func TestFalkonFactorsOneColumn(t *testing.T) {
	const n = 37
	rng := rand.New(rand.NewPCG(5, 9))
	p := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for i := range p.Data {
		p.Data[i] = rng.Float64()*2 - 1
	}
	dT := make([]float64, n)
	dA := make([]float64, n)
	for i := 0; i < n; i++ {
		dT[i] = 1.5*float64(n) + rng.Float64()
		dA[i] = 1.5*float64(n) + rng.Float64()
		p.Data[i*n+i] = dA[i]
	}
	f := &falkonFactors{be: backend.Default(), p: p, dT: dT, dA: dA}
	for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, which := range []string{"A", "T"} {
			x := blas64.General{Rows: n, Cols: 1, Stride: 1, Data: make([]float64, n)}
			two := blas64.General{Rows: n, Cols: 2, Stride: 2, Data: make([]float64, 2*n)}
			for i := 0; i < n; i++ {
				v := rng.NormFloat64()
				x.Data[i], two.Data[2*i], two.Data[2*i+1] = v, v, v
			}
			if which == "A" {
				f.solveA(tr, x)
				f.solveA(tr, two)
			} else {
				f.solveT(tr, x)
				f.solveT(tr, two)
			}
			scale := 0.0
			for i := 0; i < n; i++ {
				scale = math.Max(scale, math.Abs(two.Data[2*i]))
			}
			for i := 0; i < n; i++ {
				if d := math.Abs(x.Data[i] - two.Data[2*i]); d > 1e-10*scale {
					t.Fatalf("solve%s(%v): x[%d] = %v, general solve %v", which, tr, i, x.Data[i], two.Data[2*i])
				}
			}
			for i := 0; i < n; i++ {
				if p.Data[i*n+i] != dA[i] {
					t.Fatalf("solve%s(%v): diagonal %d not restored", which, tr, i)
				}
			}
		}
	}
}

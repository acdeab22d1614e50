package solvers

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// TestGaussianRow: the Gaussian row prediction (predictRow through
// gaussianRow) agrees with the sum of Eval's kernel values, both with the
// transposed centres kept (the row with zeros and the centre take the
// axpys over the transpose, the dense row the Gemv) and without them, as
// above maxTransposed (every row takes the Gemv). The two forms of the squared distance differ by rounding
// only: |x|^2 + |c|^2 - 2 x.c loses about eps (|x|^2 + |c|^2) to
// cancellation, here about 1e-14 on squared distances of order 10 whose
// kernel values are about exp(-1), so 1e-12 relative to the largest
// output (plus 1e-12) is ample and still catches a wrong term.
func TestGaussianRow(t *testing.T) {
	const m, d, k = 37, 11, 3
	rng := rand.New(rand.NewPCG(5, 6))
	c := mat.NewDense(m, d, nil)
	for i := range c.RawMatrix().Data {
		if rng.IntN(3) > 0 {
			c.RawMatrix().Data[i] = rng.NormFloat64()
		}
	}
	alpha := mat.NewDense(m, k, nil)
	for i := range alpha.RawMatrix().Data {
		alpha.RawMatrix().Data[i] = rng.NormFloat64()
	}
	mean := []float64{0.5, -1, 2}
	g, err := kernels.NewGaussian(2.5)
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]float64{make([]float64, d), make([]float64, d), make([]float64, d)}
	for i := range d {
		rows[0][i] = rng.NormFloat64() // dense
		if i%3 == 0 {
			rows[1][i] = rng.NormFloat64() // mostly zeros
		}
	}
	for i := 0; i < d; i += 2 {
		c.Set(4, i, 0) // at most 5 of 11 values non-zero
	}
	copy(rows[2], c.RawRowView(4)) // a centre itself: distance 0
	for _, transposed := range []bool{true, false} {
		e := newExpansion(backend.Default(), g, c, alpha, mean)
		if !transposed {
			e.cnOnce.Do(func() { // the norms only, as above maxTransposed
				e.cn = make([]float64, m)
				for j := range e.cn {
					e.cn[j] = backend.SumSq(e.be, c.RawRowView(j))
				}
			})
		}
		for r, x := range rows {
			got := make([]float64, k)
			e.predictRow(got, x)
			if (e.ct != nil) != transposed {
				t.Fatalf("transposed centres kept: %v, want %v", e.ct != nil, transposed)
			}
			want := append([]float64(nil), mean...)
			for j := range m {
				w := g.Eval(x, c.RawRowView(j))
				for t := range k {
					want[t] += w * alpha.At(j, t)
				}
			}
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			for t2 := range k {
				if diff := math.Abs(got[t2] - want[t2]); diff > 1e-12*(1+scale) || math.IsNaN(got[t2]) {
					t.Errorf("transposed %v, row %d, output %d: %g, Eval's sum %g (diff %g)", transposed, r, t2, got[t2], want[t2], diff)
				}
			}
		}
	}
}

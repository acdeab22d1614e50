package main

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
)

// TestLinearMatchesDenseSolve checks the CG ridge with implicit centring
// against the dense normal equations on the explicitly centred matrix.
func TestLinearMatchesDenseSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d, k := 40, 12, 3
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if rng.Float64() < 0.3 {
				x.Set(i, j, float64(1+rng.IntN(3)))
			}
		}
		for c := 0; c < k; c++ {
			y.Set(i, c, rng.NormFloat64())
		}
	}
	alpha := 0.5
	lr, err := fitLinear(context.Background(), dataset.NewCSRFromDense(x), y, alpha, 1e-12, 500)
	if err != nil {
		t.Fatal(err)
	}
	// Dense reference: centre X and Y, solve (Xc^T Xc + alpha I) W = Xc^T Yc.
	xc, yc := mat.DenseCopyOf(x), mat.DenseCopyOf(y)
	for _, m := range []*mat.Dense{xc, yc} {
		_, cols := m.Dims()
		for j := 0; j < cols; j++ {
			mean := mat.Sum(m.ColView(j)) / float64(n)
			for i := 0; i < n; i++ {
				m.Set(i, j, m.At(i, j)-mean)
			}
		}
	}
	var a, b, w mat.Dense
	a.Mul(xc.T(), xc)
	for j := 0; j < d; j++ {
		a.Set(j, j, a.At(j, j)+alpha)
	}
	b.Mul(xc.T(), yc)
	if err := w.Solve(&a, &b); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(&w, lr.w, 1e-9) {
		t.Errorf("CG weights differ from the dense solve by more than 1e-9:\n%v\n%v", mat.Formatted(&w), mat.Formatted(lr.w))
	}
	// Predictions on the training rows have the target means: the intercept.
	p := lr.predict(dataset.NewCSRFromDense(x))
	for c := 0; c < k; c++ {
		if got, want := mat.Sum(p.ColView(c))/float64(n), mat.Sum(y.ColView(c))/float64(n); math.Abs(got-want) > 1e-10 {
			t.Errorf("column %d: mean prediction %v, mean target %v", c, got, want)
		}
	}
}

func TestWithDensityAndSplit(t *testing.T) {
	x := dataset.NewCSRFromDense(mat.NewDense(4, 1000, nil))
	for i := 0; i < 4; i++ { // 10 entries a row: density 1%
		for j := 0; j < 10; j++ {
			x.Col = append(x.Col, 100*j+i)
			x.Val = append(x.Val, 2)
		}
		x.RowPtr[i+1] = len(x.Col)
	}
	for _, dens := range []float64{0.002, 0.05} {
		y := withDensity(x, dens, 1)
		if err := y.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := float64(y.NNZ()) / 4000; got != dens {
			t.Errorf("density %g: got %g", dens, got)
		}
	}
	labels := []float64{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2}
	tr, te := stratifiedSplit(labels, 0.2, 5)
	if len(tr) != 9 || len(te) != 3 {
		t.Fatalf("split %d/%d, want 9/3 (4+4+1 train)", len(tr), len(te))
	}
	per := map[float64]int{}
	for _, i := range te {
		per[labels[i]]++
	}
	if per[0] != 1 || per[1] != 1 || per[2] != 1 {
		t.Errorf("test rows per class %v, want one each", per)
	}
}

package tensorsketch_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/tensorsketch"
)

// TensorSketch features of the polynomial kernel (0.5 <x,y> + 1)^2: their
// inner products estimate the kernel without bias.
func ExampleNewTensorSketch() {
	k := kernels.Polynomial{Degree: 2, Gamma: 0.5, Coef0: 1}
	ts, err := tensorsketch.NewTensorSketch(k, 3, tensorsketch.SketchOptions{Features: 4096, Seed: 1})
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(2, 3, []float64{1, 0, 1, 0.5, 1, 0})
	z := mat.NewDense(2, ts.Dim(), nil)
	if err := ts.Transform(z, x); err != nil {
		panic(err)
	}
	exact := k.Eval(x.RawRowView(0), x.RawRowView(1))
	approx := mat.Dot(z.RowView(0), z.RowView(1))
	fmt.Printf("exact %.4f, |error| < 0.1: %v\n", exact, abs(approx-exact) < 0.1)
	// Output: exact 1.5625, |error| < 0.1: true
}

// PolySketch of sparse (CSR) input gives the same features as dense input.
func ExamplePolySketch_Transform() {
	k := kernels.Polynomial{Degree: 3, Gamma: 1, Coef0: 0}
	ps, err := tensorsketch.NewPolySketch(k, 4, tensorsketch.SketchOptions{Features: 64, Seed: 7})
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(2, 4, []float64{0, 2, 0, 1, 0, 0, 0, 0})
	sp := &dataset.CSR{Rows: 2, Cols: 4, RowPtr: []int{0, 2, 2}, Col: []int{1, 3}, Val: []float64{2, 1}}
	zd := mat.NewDense(2, 64, nil)
	zs := mat.NewDense(2, 64, nil)
	if err := ps.Transform(zd, x); err != nil {
		panic(err)
	}
	if err := ps.Transform(zs, sp); err != nil {
		panic(err)
	}
	fmt.Println("identical:", mat.Equal(zd, zs), "empty row is zero:", mat.Norm(zd.RowView(1), 2) == 0)
	// Output: identical: true empty row is zero: true
}

// The adaptive sampler draws rows of the (d+1)^p-row feature matrix by
// approximate ridge leverage scores; merged draws make Dim() <= Samples.
func ExampleFitAdaptive() {
	x := mat.NewDense(6, 2, []float64{1, 0, 0, 1, 1, 1, -1, 0.5, 0.3, -0.2, 0, 0})
	k := kernels.Polynomial{Degree: 2, Gamma: 1, Coef0: 1}
	ad, err := tensorsketch.FitAdaptive(context.Background(), x, k,
		tensorsketch.AdaptiveOptions{Samples: 200, Lambda: 0.01, Seed: 1})
	if err != nil {
		panic(err)
	}
	// (d+1)^p = 9 ordered rows, 6 distinct multisets: at most 6 features
	fmt.Println("features <= 6:", ad.Dim() <= 6, "levels:", len(ad.Levels()) >= 1)
	// Output: features <= 6: true levels: true
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

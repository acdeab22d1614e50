package kpca_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/kpca"
)

// Grow a mean-adjusted kernel PCA one point at a time and compare it with a
// batch fit of the same points.
func ExampleIncremental() {
	k, _ := kernels.NewGaussian(1)
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1, 2, 1, 1, 2})
	inc, _ := kpca.NewIncremental(k, 2, kpca.Options{MeanAdjust: true})
	for i := 0; i < 6; i++ {
		if err := inc.Add(x.RawRowView(i)); err != nil {
			fmt.Println(err)
			return
		}
	}
	vals, _ := inc.Eigen()
	batch, _ := kpca.Fit(context.Background(), k, x, kpca.Options{MeanAdjust: true})
	d := inc.Drift()
	fmt.Printf("points %d, rank %d\n", inc.Len(), inc.Rank())
	fmt.Printf("top eigenvalues: incremental %.6f %.6f, batch %.6f %.6f\n", vals[0], vals[1], batch.Eigenvalues()[0], batch.Eigenvalues()[1])
	fmt.Println("drift below 1e-13:", d.RelRecon < 1e-13 && d.Orth < 1e-13)
	// Output:
	// points 6, rank 5
	// top eigenvalues: incremental 1.273712 0.864665, batch 1.273712 0.864665
	// drift below 1e-13: true
}

// Batch kernel PCA: explained variance and the scores of a new point.
func ExampleFit() {
	k, _ := kernels.NewGaussian(1)
	x := mat.NewDense(5, 1, []float64{-2, -1, 0, 1, 2})
	m, _ := kpca.Fit(context.Background(), k, x, kpca.Options{MeanAdjust: true, Components: 2})
	r := m.ExplainedVarianceRatio()
	fmt.Printf("explained variance ratio: %.4f %.4f\n", r[0], r[1])
	scores := mat.NewDense(1, 2, nil)
	m.Transform(scores, mat.NewDense(1, 1, []float64{0}))
	fmt.Printf("|score| of the centre on component 1: %.4f\n", abs(scores.At(0, 0)))
	// Output:
	// explained variance ratio: 0.5358 0.3117
	// |score| of the centre on component 1: 0.0000
}

// Grow a Nystrom approximation landmark by landmark; the map is available
// after each step.
func ExampleNystrom() {
	k, _ := kernels.NewGaussian(1)
	x := mat.NewDense(4, 1, []float64{0, 0.5, 3, 3.5})
	ny, _ := kpca.NewNystrom(k, 1, kpca.Options{})
	for i := 0; i < 4; i++ {
		ny.Add(x.RawRowView(i))
		nm, _ := ny.Map()
		approx, _ := nm.Approximation(x)
		var diff mat.Dense
		diff.Sub(approx, exact(k, x))
		fmt.Printf("%d landmarks: %d features, |K - K~|_F = %.4f\n", i+1, nm.Dim(), mat.Norm(&diff, 2))
	}
	// Output:
	// 1 landmarks: 1 features, |K - K~|_F = 1.8997
	// 2 landmarks: 2 features, |K - K~|_F = 1.8818
	// 3 landmarks: 3 features, |K - K~|_F = 0.2191
	// 4 landmarks: 4 features, |K - K~|_F = 0.0000
}

func exact(k kernels.Kernel, x *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	out := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out.Set(i, j, k.Eval(x.RawRowView(i), x.RawRowView(j)))
		}
	}
	return out
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

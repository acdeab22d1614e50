package solvers_test

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// wave returns n points on [-3, 3] and y = sin(x).
func wave(n int, offset float64) (*mat.Dense, *mat.Dense) {
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		v := -3 + 6*(float64(i)+offset)/float64(n)
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(v))
	}
	return x, y
}

func rmse(m solvers.Model, x, y *mat.Dense) float64 {
	n, _ := x.Dims()
	p := mat.NewDense(n, 1, nil)
	if err := m.Predict(p, x); err != nil {
		panic(err)
	}
	return solvers.RMSE(p.RawMatrix().Data, y.RawMatrix().Data)
}

func ExampleFitKRR() {
	x, y := wave(100, 0)
	xt, yt := wave(37, 0.5)
	k, _ := kernels.NewGaussian(0.5)
	m, err := solvers.FitKRR(context.Background(), k, x, y, 1e-6, solvers.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("test RMSE below 1e-3: %v\n", rmse(m, xt, yt) < 1e-3)
	// Output: test RMSE below 1e-3: true
}

func ExampleFitFalkon() {
	x, y := wave(1000, 0)
	xt, yt := wave(37, 0.5)
	k, _ := kernels.NewGaussian(0.5)
	m, err := solvers.FitFalkon(context.Background(), k, x, y, 1e-7,
		solvers.FalkonOptions{Centers: 50, Iterations: 30, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("centres %d, test RMSE below 1e-3: %v\n", len(m.CenterIndices()), rmse(m, xt, yt) < 1e-3)
	// Output: centres 50, test RMSE below 1e-3: true
}

func ExampleFitParK() {
	x, y := wave(1000, 0)
	xt, yt := wave(37, 0.5)
	k, _ := kernels.NewGaussian(0.5)
	m, err := solvers.FitParK(context.Background(), k, x, y, 1e-7,
		solvers.ParKOptions{Cells: 4, Centers: 80, Iterations: 30, Seed: 1})
	if err != nil {
		panic(err)
	}
	// On a line, the RKHS-farthest-point cells are intervals.
	fmt.Printf("cells %d, test RMSE below 1e-2: %v\n", m.Cells(), rmse(m, xt, yt) < 1e-2)
	// Output: cells 4, test RMSE below 1e-2: true
}

// linearMap is z(x) = (1, x, x^2): ridge on it is quadratic regression.
type linearMap struct{}

func (linearMap) InputDim() int { return 1 }
func (linearMap) Dim() int      { return 3 }
func (linearMap) Transform(dst *mat.Dense, x mat.Matrix) error {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		v := x.At(i, 0)
		dst.Set(i, 0, 1)
		dst.Set(i, 1, v)
		dst.Set(i, 2, v*v)
	}
	return nil
}

func ExampleFitRidge() {
	x := mat.NewDense(50, 1, nil)
	y := mat.NewDense(50, 1, nil)
	for i := 0; i < 50; i++ {
		v := float64(i) / 10
		x.Set(i, 0, v)
		y.Set(i, 0, 2-v+0.5*v*v)
	}
	m, err := solvers.FitRidge(context.Background(), linearMap{}, x, y, 1e-12, solvers.RidgeOptions{})
	if err != nil {
		panic(err)
	}
	p := mat.NewDense(1, 1, nil)
	_ = m.Predict(p, mat.NewDense(1, 1, []float64{10}))
	fmt.Printf("f(10) = %.4f\n", p.At(0, 0))
	// Output: f(10) = 42.0000
}

func ExampleCG() {
	a := mat.NewDense(3, 3, []float64{4, 1, 0, 1, 3, 1, 0, 1, 2})
	b := mat.NewDense(3, 1, []float64{1, 2, 3})
	x := mat.NewDense(3, 1, nil)
	res, err := solvers.CG(context.Background(), solvers.DenseOperator{A: a}, b, x, solvers.CGOptions{Tol: 1e-12})
	if err != nil {
		panic(err)
	}
	fmt.Printf("converged %v in %d iterations: x = %.4f %.4f %.4f\n", res.Converged, res.Iterations, x.At(0, 0), x.At(1, 0), x.At(2, 0))
	// Output: converged true in 3 iterations: x = 0.2222 0.1111 1.4444
}

func ExampleNewEncoding() {
	labels := []float64{3, 7, 5, 7}
	enc, _ := solvers.NewEncoding(labels, solvers.TaskClassification)
	y, _ := enc.Targets(labels)
	fmt.Println(enc.Task, enc.Classes, mat.Row(nil, 1, y))
	out := make([]float64, 1)
	enc.Decode(out, mat.NewDense(1, 3, []float64{0.1, 0.7, -0.2}))
	fmt.Println(out[0])
	// Output:
	// classification [3 5 7] [-1 -1 1]
	// 5
}

func ExampleSave() {
	x, y := wave(200, 0)
	k, _ := kernels.NewGaussian(0.5)
	m, err := solvers.FitFalkon(context.Background(), k, x, y, 1e-7, solvers.FalkonOptions{Centers: 30, Seed: 1})
	if err != nil {
		panic(err)
	}
	p, err := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	if err := solvers.Save(&file, p); err != nil {
		panic(err)
	}
	q, err := solvers.Load(&file, solvers.Options{})
	if err != nil {
		panic(err)
	}
	row := mat.NewDense(1, 1, []float64{0.25})
	a, b := make([]float64, 1), make([]float64, 1)
	_ = p.PredictLabels(a, row)
	_ = q.PredictLabels(b, row)
	fmt.Println(q.Model.Kind(), a[0] == b[0])
	// Output: falkon true
}

package kernels_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

func exampleData() *mat.Dense {
	return mat.NewDense(4, 3, []float64{
		0.1, 0.2, 0.3,
		-0.5, 0.4, 0.0,
		0.9, -0.1, 0.2,
		0.0, 0.0, 0.0,
	})
}

func ExampleNewGaussian() {
	k, _ := kernels.NewGaussian(2)
	fmt.Printf("%s %.6f\n", k, k.Eval([]float64{0, 0}, []float64{1, 1}))
	g, _ := kernels.NewGaussianGamma(0.125) // sigma = 2
	fmt.Println(g.Sigma)
	// Output:
	// gaussian(sigma=2) 0.778801
	// 2
}

func ExampleNewLaplacian() {
	k, _ := kernels.NewLaplacian(2)
	fmt.Printf("%.6f\n", k.Eval([]float64{0, 0}, []float64{1, 1}))
	// Output: 0.367879
}

func ExampleNewPolynomial() {
	k, _ := kernels.NewPolynomial(2, 0.5, 1)
	fmt.Println(k.Eval([]float64{1, 2}, []float64{3, 1}), k.Taylor(1))
	// Output: 12.25 1
}

func ExampleNewExpDot() {
	k, _ := kernels.NewExpDot(1)
	fmt.Printf("%.6f\n", k.Eval([]float64{1, 0}, []float64{1, 0}))
	// Output: 2.718282
}

func ExampleNewArcCosine() {
	a0, _ := kernels.NewArcCosine(0)
	a1, _ := kernels.NewArcCosine(1)
	x, y := []float64{1, 0}, []float64{0, 2}
	fmt.Printf("%.4f %.4f\n", a0.Eval(x, y), a1.Eval(x, y))
	// Output: 0.5000 0.6366
}

func ExampleNewNTK() {
	k, _ := kernels.NewNTK(2)
	fmt.Printf("%.4f %.4f\n", k.Kappa(1), k.Kappa(0))
	// Output: 3.0000 0.6857
}

func ExampleNewDotProduct() {
	k, _ := kernels.NewDotProduct([]float64{1, 1, 0.5}) // 1 + t + t^2/2
	fmt.Println(k.Eval([]float64{1, 1}, []float64{1, 0}))
	// Output: 2.5
}

func ExampleMatrixInto() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	K := mat.NewDense(4, 4, nil)
	if err := kernels.MatrixInto(context.Background(), K, k, x, x, kernels.Options{}); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%.4f\n", mat.Formatted(K.Slice(0, 2, 0, 4)))
	// Output:
	// ⎡1.0000  0.7827  0.6907  0.9324⎤
	// ⎣0.7827  1.0000  0.3247  0.8146⎦
}

func ExampleGegenbauer() {
	// d = 2: Chebyshev, d = 3: Legendre; P(1) = 1.
	fmt.Printf("%.4f %.4f %.4f\n", kernels.Gegenbauer(2, 2, 0.5), kernels.Gegenbauer(2, 3, 0.5), kernels.Gegenbauer(7, 10, 1))
	fmt.Println(kernels.Alpha(2, 3)) // 2l+1 harmonics on S^2
	// Output:
	// -0.5000 -0.1250 1.0000
	// 5
}

func ExampleMonomialCoeffs() {
	b, _ := kernels.MonomialCoeffs(2, 3) // t^2 = 1/3 P^0 + 2/3 P^2 (Legendre)
	fmt.Printf("%.4f\n", b)
	// Output: [0.3333 0.0000 0.6667]
}

func ExampleSeriesCoeffs() {
	// The Gegenbauer coefficients of t^2 in d = 3 by Gauss-Gegenbauer quadrature.
	c, _ := kernels.SeriesCoeffs(func(t float64) float64 { return t * t }, 3, 3, 8, kernels.Options{})
	fmt.Printf("%.4f %.4f %v\n", c[0], c[2], math.Abs(c[1])+math.Abs(c[3]) < 1e-14)
	// Output: 0.3333 0.6667 true
}

func ExampleGaussGegenbauer() {
	// The weight (1-t^2)^0 (d = 3): Gauss-Legendre, nodes +-1/sqrt 3.
	t, w, _ := kernels.GaussGegenbauer(2, 3, kernels.Options{})
	fmt.Printf("%.4f %.4f\n", t, w)
	// Output: [-0.5774 0.5774] [1.0000 1.0000]
}

func ExampleNewGZKFor() {
	k, _ := kernels.NewGaussian(1)
	g, _ := kernels.NewGZKFor(k, 3, 20, 10, kernels.Options{})
	x, y := []float64{0.3, 0.1, -0.2}, []float64{-0.1, 0.4, 0.2}
	fmt.Printf("%.12f\n%.12f\n", g.Eval(x, y), k.Eval(x, y))
	// Output:
	// 0.814647316411
	// 0.814647316411
}

func ExampleNewGZK() {
	// A GZK with one radial function per degree: h_l(r) = r^l / 2^l.
	g, _ := kernels.NewGZK(3, 2, 1, func(l int, r float64, dst []float64) {
		dst[0] = math.Pow(r/2, float64(l))
	})
	fmt.Printf("%.4f\n", g.Eval([]float64{1, 0, 0}, []float64{1, 0, 0}))
	// Output: 1.3125
}

func ExampleChooseTruncation() {
	k, _ := kernels.NewGaussian(1)
	tr, _ := kernels.ChooseTruncation(k, 5, 1.5, 1e-6, 64, 32, kernels.Options{})
	fmt.Println(tr.Q, tr.S, tr.Bound <= 1e-6)
	// Output: 10 6 true
}

func ExampleNewGegenbauerMap() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	f, err := kernels.NewGegenbauerMap(context.Background(), k, x, kernels.GegenbauerOptions{Features: 4000, Q: 6, S: 4, Antithetic: true, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	z := mat.NewDense(4, f.Dim(), nil)
	_ = f.Transform(z, x)
	var zz mat.Dense
	zz.Mul(z, z.T())
	fmt.Println(f.Dim(), f.Truncation().Q, f.Truncation().S)
	fmt.Printf("k(x0,x1) = %.2f, estimate %.2f\n", k.Eval(x.RawRowView(0), x.RawRowView(1)), zz.At(0, 1))
	// Output:
	// 4000 6 4
	// k(x0,x1) = 0.78, estimate 0.79
}

func ExampleNewFourierMap() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	f, _ := kernels.NewFourierMap(k, 3, kernels.FourierOptions{Features: 20000, Seed: 1})
	z := mat.NewDense(4, f.Dim(), nil)
	_ = f.Transform(z, x)
	var zz mat.Dense
	zz.Mul(z, z.T())
	fmt.Printf("%.2f %.2f\n", k.Eval(x.RawRowView(0), x.RawRowView(2)), zz.At(0, 2))
	// Output: 0.69 0.69
}

func ExampleNewNystromFromLandmarks() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	ny, _ := kernels.NewNystromFromLandmarks(context.Background(), k, x, kernels.Options{}) // every point a landmark: exact
	z := mat.NewDense(4, ny.Dim(), nil)
	_ = ny.Transform(z, x)
	var zz mat.Dense
	zz.Mul(z, z.T())
	fmt.Printf("%.4f %.4f\n", zz.At(1, 2), k.Eval(x.RawRowView(1), x.RawRowView(2)))
	// Output: 0.3247 0.3247
}

func ExampleNewNystrom() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	ny, _ := kernels.NewNystrom(context.Background(), k, x, kernels.NystromOptions{Landmarks: 2, Seed: 7})
	fmt.Println(ny.Dim(), ny.Rank())
	// Output: 2 2
}

func ExampleRecursiveRLS() {
	x := exampleData()
	k, _ := kernels.NewGaussian(0.3)
	idx, _ := kernels.RecursiveRLS(context.Background(), k, x, 2, kernels.RLSOptions{Lambda: 1e-3, Seed: 1})
	fmt.Println(len(idx), idx[0] < idx[1])
	// Output: 2 true
}

func ExampleNewNystrom_rls() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	ny, _ := kernels.NewNystrom(context.Background(), k, x, kernels.NystromOptions{Landmarks: 3, Sampling: kernels.SamplingRLS, Lambda: 1e-2, Seed: 1})
	fmt.Println(ny.Dim())
	// Output: 3
}

func ExampleNewEvaluator() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	K, _ := kernels.Matrix(context.Background(), k, x, x, kernels.Options{})
	ev, _ := kernels.NewEvaluator(context.Background(), K, kernels.Options{})
	// Z = 0 has relative errors 1 and eps_lambda = mu_max/(mu_max + lambda).
	m, _ := ev.Measure(context.Background(), mat.NewDense(4, 2, nil), []float64{1e-3})
	fmt.Printf("%.3f %.3f %.3f\n", m.RelFro, m.RelSpec, m.Eps[0])
	// Output: 1.000 1.000 1.000
}

func ExampleEpsLambda() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	K, _ := kernels.Matrix(context.Background(), k, x, x, kernels.Options{})
	ny, _ := kernels.NewNystromFromLandmarks(context.Background(), k, x, kernels.Options{})
	z := mat.NewDense(4, 4, nil)
	_ = ny.Transform(z, x)
	e, _ := kernels.EpsLambda(context.Background(), K, z, 0.1, kernels.Options{})
	fro, _ := kernels.RelFrobenius(context.Background(), K, z, kernels.Options{})
	spec, _ := kernels.RelSpectral(context.Background(), K, z, kernels.Options{})
	fmt.Println(e < 1e-10, fro < 1e-10, spec < 1e-10)
	// Output: true true true
}

func ExampleUnmarshalMap() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	f, _ := kernels.NewFourierMap(k, 3, kernels.FourierOptions{Features: 8, Seed: 3})
	data, _ := f.MarshalBinary()
	g, _ := kernels.UnmarshalMap(f.Kind(), data)
	z1, z2 := mat.NewDense(4, 8, nil), mat.NewDense(4, 8, nil)
	_ = f.Transform(z1, x)
	_ = g.Transform(z2, x)
	fmt.Println(g.Dim(), mat.Equal(z1, z2))
	// Output: 8 true
}

func ExampleUnmarshalKernel() {
	k, _ := kernels.NewPolynomial(3, 0.5, 1)
	data, _ := k.MarshalBinary()
	k2, _ := kernels.UnmarshalKernel(k.Kind(), data)
	fmt.Println(k2)
	// Output: polynomial(degree=3, gamma=0.5, coef0=1)
}

func ExampleTruncationBound() {
	// |k - k_{q,s}| for the Gaussian kernel on points of norm <= 1.
	k, _ := kernels.NewGaussian(1)
	for _, qs := range [][2]int{{2, 1}, {6, 3}, {12, 6}} {
		bd, _ := kernels.TruncationBound(k, 4, 1, qs[0], qs[1], kernels.Options{})
		fmt.Printf("q=%d s=%d bound %.1e\n", qs[0], qs[1], bd)
	}
	// Output:
	// q=2 s=1 bound 1.3e-01
	// q=6 s=3 bound 6.5e-05
	// q=12 s=6 bound 3.2e-11
}

func ExampleSelectTruncation() {
	x := exampleData()
	k, _ := kernels.NewGaussian(1)
	small, _ := kernels.SelectTruncation(context.Background(), k, x, 16, kernels.SelectOptions{Seed: 1})
	large, _ := kernels.SelectTruncation(context.Background(), k, x, 1<<16, kernels.SelectOptions{Seed: 1})
	fmt.Println(small.Q+small.S <= large.Q+large.S)
	// Output: true
}

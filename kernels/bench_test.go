package kernels

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
)

// MNIST-shaped benchmark: d = 784 inputs, D = 4096 features, sigma = sqrt(d/2)
// (scikit-learn's gamma = 'scale' on standardized data). Each iteration
// transforms benchRows rows; the rows/s metric extrapolates to the 60000 rows
// of MNIST's training set (Transform is linear in the row count).
const (
	benchD    = 784
	benchDim  = 4096
	benchRows = 2048
)

func benchTransform(b *testing.B, build func(bk backend.Backend, x *mat.Dense) (FeatureMap, error)) {
	x := randMatrix(42, benchRows, benchD, 1)
	for _, name := range backend.Names() {
		bk, _ := backend.ByName(name)
		b.Run(name, func(b *testing.B) {
			f, err := build(bk, x)
			if err != nil {
				b.Fatal(err)
			}
			z := mat.NewDense(benchRows, f.Dim(), nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := f.Transform(z, x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

var benchKernel = Gaussian{Sigma: math.Sqrt(benchD / 2.0)}

func BenchmarkTransformGegenbauer(b *testing.B) {
	benchTransform(b, func(bk backend.Backend, x *mat.Dense) (FeatureMap, error) {
		return NewGegenbauerMap(context.Background(), benchKernel, x, GegenbauerOptions{Options: Options{Backend: bk}, Features: benchDim, Seed: 1})
	})
}

func BenchmarkTransformGegenbauerOrthAnti(b *testing.B) {
	benchTransform(b, func(bk backend.Backend, x *mat.Dense) (FeatureMap, error) {
		return NewGegenbauerMap(context.Background(), benchKernel, x, GegenbauerOptions{Options: Options{Backend: bk}, Features: benchDim, Orthogonal: true, Antithetic: true, Seed: 1})
	})
}

func BenchmarkTransformFourier(b *testing.B) {
	benchTransform(b, func(bk backend.Backend, x *mat.Dense) (FeatureMap, error) {
		return NewFourierMap(benchKernel, benchD, FourierOptions{Options: Options{Backend: bk}, Features: benchDim, Seed: 1})
	})
}

// Nystrom with 4096 landmarks drawn from a random 4096 x 784 sample (the
// setup decomposes a 4096 x 4096 kernel matrix once).
func BenchmarkTransformNystrom(b *testing.B) {
	benchTransform(b, func(bk backend.Backend, x *mat.Dense) (FeatureMap, error) {
		return NewNystromFromLandmarks(context.Background(), benchKernel, randMatrix(43, benchDim, benchD, 1), Options{Backend: bk})
	})
}

func BenchmarkRecursiveRLS(b *testing.B) {
	x := randMatrix(44, 5000, 64, 1)
	k := Gaussian{Sigma: math.Sqrt(32)}
	bk := backend.Default()
	for i := 0; i < b.N; i++ {
		if _, err := RecursiveRLS(context.Background(), k, x, 512, RLSOptions{Options: Options{Backend: bk}, Lambda: 1e-2, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatrixIntoGaussian(b *testing.B) {
	x := randMatrix(45, 2000, benchD, 1)
	dst := mat.NewDense(2000, 2000, nil)
	for _, name := range backend.Names() {
		bk, _ := backend.ByName(name)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := MatrixInto(context.Background(), dst, benchKernel, x, x, Options{Backend: bk}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

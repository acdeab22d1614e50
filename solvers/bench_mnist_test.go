package solvers_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// BenchmarkFalkonMNIST10000 times a FALKON fit (M = 1000 centres, sigma 8.63,
// one-vs-all) on the first 10000 MNIST training rows scaled to [0, 1], on
// every compiled backend:
//
//	go test -tags netlib -run XXX -bench FalkonMNIST10000 -benchtime 3x ./solvers/
func BenchmarkFalkonMNIST10000(b *testing.B) {
	path := shareddata.File(b, "mnist_train.csv.gz")
	data, err := dataset.ReadFile(path, dataset.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	x := mat.DenseCopyOf(data.X.Slice(0, n, 0, data.X.RawMatrix().Cols))
	x.Scale(1.0/255, x)
	enc, err := solvers.NewEncoding(data.Y[:n], solvers.TaskClassification)
	if err != nil {
		b.Fatal(err)
	}
	y, err := enc.Targets(data.Y[:n])
	if err != nil {
		b.Fatal(err)
	}
	k, err := kernels.NewGaussian(8.63)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range backend.Names() {
		be, err := backend.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := solvers.FitFalkon(ctx, k, x, y, 1e-6, solvers.FalkonOptions{Options: solvers.Options{Backend: be}, Centers: 1000, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

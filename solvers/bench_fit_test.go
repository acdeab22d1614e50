package solvers_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// benchDigits returns the embedded digits set, standardized, with one-vs-all
// targets and the Gaussian kernel at sigma = sqrt(d/2).
func benchDigits(b *testing.B) (*mat.Dense, *mat.Dense, kernels.Kernel) {
	b.Helper()
	data, err := dataset.Digits()
	if err != nil {
		b.Fatal(err)
	}
	std, err := dataset.FitStandardizer(data.X)
	if err != nil {
		b.Fatal(err)
	}
	if err := std.Apply(data.X); err != nil {
		b.Fatal(err)
	}
	enc, err := solvers.NewEncoding(data.Y, solvers.TaskClassification)
	if err != nil {
		b.Fatal(err)
	}
	y, err := enc.Targets(data.Y)
	if err != nil {
		b.Fatal(err)
	}
	k, err := kernels.NewGaussian(5.656854249492381)
	if err != nil {
		b.Fatal(err)
	}
	return data.X, y, k
}

// BenchmarkFit times every solver's fit on digits (1797 x 64, 10 outputs) on
// every compiled backend: go test -tags netlib -run XXX -bench Fit ./solvers/
func BenchmarkFit(b *testing.B) {
	x, y, k := benchDigits(b)
	ctx := context.Background()
	for _, name := range backend.Names() {
		be, err := backend.ByName(name)
		if err != nil {
			b.Fatal(err)
		}
		opts := solvers.Options{Backend: be}
		fits := []struct {
			name string
			fit  func() error
		}{
			{"KRR", func() error { _, err := solvers.FitKRR(ctx, k, x, y, 1e-5, opts); return err }},
			{"RidgeFourier1024", func() error {
				fm, err := kernels.NewFourierMap(k, 64, kernels.FourierOptions{Options: kernels.Options{Backend: be}, Features: 1024, Seed: 1})
				if err != nil {
					return err
				}
				_, err = solvers.FitRidge(ctx, fm, x, y, 1e-5, solvers.RidgeOptions{Options: opts})
				return err
			}},
			{"Falkon500", func() error {
				_, err := solvers.FitFalkon(ctx, k, x, y, 1e-5, solvers.FalkonOptions{Options: opts, Centers: 500, Seed: 1})
				return err
			}},
			{"Logistic500", func() error {
				_, err := solvers.FitLogistic(ctx, k, x, y, 1e-5, solvers.LogisticOptions{Options: opts, Centers: 500, Seed: 1})
				return err
			}},
			{"ParK4x500", func() error {
				_, err := solvers.FitParK(ctx, k, x, y, 1e-5, solvers.ParKOptions{Options: opts, Cells: 4, Centers: 500, Seed: 1})
				return err
			}},
		}
		for _, f := range fits {
			b.Run(name+"/"+f.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := f.fit(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

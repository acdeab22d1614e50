package pipeline

import (
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

func kernelsFourier(k kernels.Kernel, x *mat.Dense, c Config) (kernels.FeatureMap, error) {
	_, d := x.Dims()
	return kernels.NewFourierMap(k, d, kernels.FourierOptions{Features: c.Options.Features, Seed: c.Options.Seed})
}

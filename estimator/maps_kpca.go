package estimator

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/kpca"
)

func init() { RegisterMap("inc-nystrom", buildIncNystrom) }

// buildIncNystrom is the -map inc-nystrom builder: spec.Features landmarks
// drawn uniformly without replacement (seeded) from the training rows, added
// one at a time to an incremental Nystrom approximation.
func buildIncNystrom(ctx context.Context, spec MapSpec, rows mat.Matrix) (kernels.FeatureMap, error) {
	train, ok := rows.(*mat.Dense)
	if !ok {
		return nil, fmt.Errorf("%w: map inc-nystrom takes dense rows (its points are added as dense vectors); use map nystrom for sparse input, or Sparse off", zonal.ErrParam)
	}
	n, d := train.Dims()
	if spec.Kernel == nil {
		return nil, fmt.Errorf("%w: inc-nystrom: no kernel", zonal.ErrParam)
	}
	m := spec.Features
	if m <= 0 || m > n {
		return nil, fmt.Errorf("%w: inc-nystrom: %d landmarks from %d rows", zonal.ErrParam, m, n)
	}
	ny, err := kpca.NewNystrom(spec.Kernel, d, kpca.Options{Backend: spec.Backend})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x1a2b))
	perm := rng.Perm(n)
	for _, i := range perm[:m] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := ny.Add(train.RawRowView(i)); err != nil {
			return nil, err
		}
	}
	return ny.Map()
}

package estimator

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/tensorsketch"
)

// Builders of the tensorsketch package: "tensorsketch" (Pham-Pagh),
// "polysketch" (Ahle et al.) and "adaptive" (the Woodruff-Zandieh
// leverage-score row sampler), for -kernel polynomial and -kernel gaussian.
func init() {
	RegisterMap("tensorsketch", buildSketchMap)
	RegisterMap("polysketch", buildSketchMap)
	RegisterMap("adaptive", buildSketchMap)
}

// sketchTaylorTol is the entrywise truncation error allowed for the Gaussian
// kernel's Taylor expansion (see tensorsketch.TaylorDegree); the degree q
// follows from the training data's radius.
const sketchTaylorTol = 1e-3

// sketchMaxTaylor caps q so that the per-degree sketches keep a useful size.
const sketchMaxTaylor = 24

func buildSketchMap(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	return sketchMap(ctx, spec, train)
}

// sketchMap builds the sketch of spec from training rows that may be a
// *dataset.CSR (read through its nonzeros) or dense.
func sketchMap(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	_, d := train.Dims()
	so := tensorsketch.SketchOptions{Features: spec.Features, Seed: spec.Seed}
	var k kernels.Kernel
	switch kk := spec.Kernel.(type) {
	case kernels.Polynomial:
		k = kk
	case kernels.Gaussian:
		r2, err := tensorsketch.MaxSqNorm(train)
		if err != nil {
			return nil, err
		}
		if !(kk.Sigma > 0) {
			return nil, fmt.Errorf("%w: %s: gaussian sigma must be positive, got %g", zonal.ErrParam, spec.Map, kk.Sigma)
		}
		k = kk
		so.TaylorDegree = min(tensorsketch.TaylorDegree(r2/(kk.Sigma*kk.Sigma), sketchTaylorTol), sketchMaxTaylor)
	default:
		return nil, fmt.Errorf("%w: %s: kernel %v is not supported (use polynomial or gaussian)", zonal.ErrParam, spec.Map, spec.Kernel)
	}
	switch spec.Map {
	case "tensorsketch":
		return tensorsketch.NewTensorSketch(k, d, so)
	case "polysketch":
		return tensorsketch.NewPolySketch(k, d, so)
	default:
		o := sketchOptions(spec)
		o.TaylorDegree = so.TaylorDegree
		return tensorsketch.FitAdaptive(ctx, train, k, o)
	}
}

func sketchOptions(spec MapSpec) tensorsketch.AdaptiveOptions {
	return tensorsketch.AdaptiveOptions{
		Samples: spec.Features,
		Lambda:  spec.Lambda,
		Seed:    spec.Seed,
		Options: tensorsketch.Options{Backend: spec.Backend},
	}
}

package main

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/tensorsketch"
)

// Builders of the tensorsketch package: "tensorsketch" (Pham-Pagh),
// "polysketch" (Ahle et al.) and "adaptive" (the Woodruff-Zandieh
// leverage-score row sampler), for -kernel polynomial and -kernel gaussian.
func init() {
	addMapBuilder("tensorsketch", buildSketchMap)
	addMapBuilder("polysketch", buildSketchMap)
	addMapBuilder("adaptive", buildSketchMap)
}

// sketchTaylorTol is the entrywise truncation error allowed for the Gaussian
// kernel's Taylor expansion (see tensorsketch.TaylorDegree); the degree q
// follows from the training data's radius.
const sketchTaylorTol = 1e-3

// sketchMaxTaylor caps q so that the per-degree sketches keep a useful size.
const sketchMaxTaylor = 24

func buildSketchMap(ctx context.Context, spec mapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	if train == nil {
		return nil, fmt.Errorf("%s: no training data", spec.Method)
	}
	return sketchMap(ctx, spec, train)
}

// sketchMap builds the sketch of spec from training rows that may be a
// *dataset.CSR (read through its nonzeros) or dense.
func sketchMap(ctx context.Context, spec mapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	_, d := train.Dims()
	so := tensorsketch.SketchOptions{Features: spec.Features, Seed: spec.Seed}
	var k kernels.Kernel
	switch spec.KernelID {
	case "polynomial":
		k = kernels.Polynomial{Degree: spec.Degree, Gamma: spec.Gamma, Coef0: spec.Coef0}
	case "gaussian":
		r2, err := tensorsketch.MaxSqNorm(train)
		if err != nil {
			return nil, err
		}
		if !(spec.Sigma > 0) {
			return nil, fmt.Errorf("%s: gaussian sigma must be positive, got %g", spec.Method, spec.Sigma)
		}
		k = kernels.Gaussian{Sigma: spec.Sigma}
		so.TaylorDegree = min(tensorsketch.TaylorDegree(r2/(spec.Sigma*spec.Sigma), sketchTaylorTol), sketchMaxTaylor)
	default:
		return nil, fmt.Errorf("%s: kernel %q is not supported (use polynomial or gaussian)", spec.Method, spec.KernelID)
	}
	switch spec.Method {
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

func sketchOptions(spec mapSpec) tensorsketch.AdaptiveOptions {
	return tensorsketch.AdaptiveOptions{
		Samples: spec.Features,
		Lambda:  spec.Lambda,
		Seed:    spec.Seed,
		Options: tensorsketch.Options{Backend: spec.Backend},
	}
}

package estimator

import (
	"context"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

// Builders of the kernels package: random Gegenbauer features ("gegenbauer",
// with the variants "gegenbauer-orth" (block-orthogonal directions),
// "gegenbauer-anti" (antithetic pairs w, -w) and "gegenbauer-orth-anti"),
// random Fourier features ("fourier", "fourier-orth" for orthogonal random
// features), Nystrom with uniform landmarks ("nystrom") and with recursive
// ridge-leverage-score landmarks ("rls-nystrom", at spec.Lambda).
func init() {
	for _, v := range []string{"gegenbauer", "gegenbauer-orth", "gegenbauer-anti", "gegenbauer-orth-anti"} {
		RegisterMap(v, buildGegenbauer)
	}
	RegisterMap("fourier", buildFourier)
	RegisterMap("fourier-orth", buildFourier)
	RegisterMap("nystrom", buildNystrom)
	RegisterMap("rls-nystrom", buildNystrom)
}

func buildGegenbauer(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	opt := kernels.GegenbauerOptions{
		Options:    kernels.Options{Backend: spec.Backend},
		Features:   spec.Features,
		Q:          spec.Gegenbauer.Q,
		S:          spec.Gegenbauer.S,
		Tol:        spec.Gegenbauer.Tol,
		Radius:     spec.Gegenbauer.Radius,
		Orthogonal: strings.Contains(string(spec.Map), "orth"),
		Antithetic: strings.Contains(string(spec.Map), "anti"),
		Seed:       spec.Seed,
	}
	m, err := kernels.NewGegenbauerMap(ctx, spec.Kernel, train, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Map, err)
	}
	return m, nil
}

func buildFourier(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	_, d := train.Dims()
	m, err := kernels.NewFourierMap(spec.Kernel, d, kernels.FourierOptions{
		Options:    kernels.Options{Backend: spec.Backend},
		Features:   spec.Features,
		Orthogonal: spec.Map == "fourier-orth",
		Seed:       spec.Seed,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Map, err)
	}
	return m, nil
}

// buildNystrom uses min(Features, n) landmarks from the training rows.
func buildNystrom(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	n, _ := train.Dims()
	m := min(spec.Features, n)
	var (
		ny  *kernels.Nystrom
		err error
	)
	if spec.Map == "rls-nystrom" {
		ny, err = kernels.NewNystrom(ctx, spec.Kernel, train, kernels.NystromOptions{
			Options:   kernels.Options{Backend: spec.Backend},
			Landmarks: m, Sampling: kernels.SamplingRLS, Lambda: spec.Lambda, Seed: spec.Seed})
	} else {
		ny, err = kernels.NewNystrom(ctx, spec.Kernel, train, kernels.NystromOptions{
			Options:   kernels.Options{Backend: spec.Backend},
			Landmarks: m, Seed: spec.Seed})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Map, err)
	}
	return ny, nil
}

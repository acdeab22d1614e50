package estimator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/estimator"
)

// TestChooseEarly: with both input transforms to try, Fit settles the
// transform after the first golden-section evaluations and finishes the
// search on the one kept: the sigma, lambda and intercept it reports are
// those of a fit with that transform forced (whose search starts from
// scratch), and the report says how the transform was settled.
func TestChooseEarly(t *testing.T) {
	ctx := context.Background()
	x, y := smooth(400, 3, 0.05, 8)
	// Features on unlike scales: standardizing and not differ.
	for i := 0; i < 400; i++ {
		x.Set(i, 1, 20*x.At(i, 1))
	}
	_, auto, err := estimator.Fit(ctx, x, y, estimator.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(auto.Chosen.Standardize, "after 2 golden-section evaluations each") {
		t.Fatalf("standardize explained as %q", auto.Chosen.Standardize)
	}
	forced := estimator.Options{Seed: 3, Standardize: estimator.StandardizeOn}
	if !auto.Standardize {
		forced.Standardize = estimator.StandardizeOff
	}
	_, one, err := estimator.Fit(ctx, x, y, forced)
	if err != nil {
		t.Fatal(err)
	}
	if one.Kernel.Sigma != auto.Kernel.Sigma || one.Lambda != auto.Lambda || one.Intercept != auto.Intercept || one.Centers != auto.Centers {
		t.Fatalf("auto (standardize %v): sigma %g lambda %g intercept %v centres %d; forced: sigma %g lambda %g intercept %v centres %d",
			auto.Standardize, auto.Kernel.Sigma, auto.Lambda, auto.Intercept, auto.Centers, one.Kernel.Sigma, one.Lambda, one.Intercept, one.Centers)
	}
}

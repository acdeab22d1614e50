package calibrate_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/metrics"
)

// A 6%-positive problem whose scores rank well but are not probabilities:
// FitCV fits the calibrator on out-of-fold scores, and the calibrated
// probabilities have a better Brier score than the raw scores clipped to
// [0, 1] (the base rate alone scores 0.06 x 0.94 = 0.056). A score of 1,
// the typical positive, means a 55% chance of a positive.
func ExampleFitCV() {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	x, y := make([]float64, n), make([]float64, n)
	for i := range n {
		if rng.Float64() < 0.06 {
			y[i] = 1
		}
		x[i] = 2*y[i] - 1 + 0.8*rng.NormFloat64() // a score near -1 or +1
	}
	// The "model": a fixed score, so fitting on train is a no-op; a real
	// one would fit on the rows train and score the rows test.
	fitAndScore := func(train, test []int) ([]float64, error) {
		s := make([]float64, len(test))
		for t, i := range test {
			s[t] = x[i]
		}
		return s, nil
	}
	c, oof, err := calibrate.FitCV(context.Background(), calibrate.MethodPlatt, y, nil, 5, 1, fitAndScore)
	if err != nil {
		fmt.Println(err)
		return
	}
	raw, cal := make([]float64, n), make([]float64, n)
	for i, s := range oof {
		raw[i] = min(max(s, 0), 1)
		cal[i] = c.Apply(s)
	}
	bRaw, _ := metrics.BinaryBrier(raw, y, nil)
	bCal, _ := metrics.BinaryBrier(cal, y, nil)
	fmt.Printf("Brier: raw %.3f, calibrated %.3f\n", bRaw, bCal)
	fmt.Printf("P(positive | score 1) = %.2f\n", c.Apply(1))
	// Output:
	// Brier: raw 0.039, calibrated 0.030
	// P(positive | score 1) = 0.55
}

package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
)

// Isotonic is an isotonic-regression calibrator: a nondecreasing
// piecewise-linear function through the knots (X[i], Y[i]), constant
// beyond the first and the last knot. X is strictly increasing and Y
// nondecreasing, in [0, 1].
type Isotonic struct {
	X, Y []float64
}

// FitIsotonic fits the nondecreasing function of the score closest in
// weighted least squares to the 0/1 labels (1 for the larger label value),
// by the pool-adjacent-violators algorithm: rows are sorted by score, rows
// with equal scores are merged into one point (their weighted mean label
// and summed weight; rows of weight 0 are dropped), and adjacent blocks
// whose means decrease are pooled into their weighted mean until the means
// increase strictly. The fitted value of a block is the fraction of
// positives among its rows, so it is a probability.
//
// The calibrator keeps, for each block, its first and last score with the
// block's value: between blocks Apply interpolates linearly, outside the
// fitted scores it clips to the first or last value (the behaviour of
// scikit-learn's IsotonicRegression(out_of_bounds='clip')). Isotonic
// regression assumes nothing about the shape of the score-to-probability
// map, so it beats Platt scaling when the map is not a sigmoid and there
// are many calibration rows (thousands); with few it overfits, in steps.
//
// Errors: those of FitPlatt except ErrNoConvergence.
func FitIsotonic(score, y, w []float64) (*Isotonic, error) {
	pos, err := binaryInput(score, y, w)
	if err != nil {
		return nil, err
	}
	order := make([]int, 0, len(score))
	for i := range score {
		if weight(w, i) > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(score[a], score[b]) })
	// Points: distinct scores with their summed weight and weighted label.
	var xs, sw, swy []float64
	for _, i := range order {
		t := 0.0
		if y[i] == pos {
			t = 1
		}
		wi := weight(w, i)
		if n := len(xs); n > 0 && xs[n-1] == score[i] {
			sw[n-1] += wi
			swy[n-1] += wi * t
			continue
		}
		xs, sw, swy = append(xs, score[i]), append(sw, wi), append(swy, wi*t)
	}
	return pav(xs, sw, swy), nil
}

// block is a run of points pooled by PAV: the indices lo..hi of its first
// and last point, its total weight and weighted sum of targets.
type block struct {
	lo, hi  int
	sw, swy float64
}

func (b block) mean() float64 { return b.swy / b.sw }

// pav pools the points (xs[i], swy[i]/sw[i]) of weights sw (xs strictly
// increasing, sw > 0) into blocks of strictly increasing means and returns
// the knots of the fit.
func pav(xs, sw, swy []float64) *Isotonic {
	stack := make([]block, 0, len(xs))
	for i := range xs {
		b := block{i, i, sw[i], swy[i]}
		for len(stack) > 0 && stack[len(stack)-1].mean() >= b.mean() {
			top := stack[len(stack)-1]
			b = block{top.lo, b.hi, top.sw + b.sw, top.swy + b.swy}
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, b)
	}
	c := &Isotonic{}
	for _, b := range stack {
		// Pooled means are weighted means of 0/1 targets: in [0, 1] up to
		// rounding, which the clamp removes.
		m := min(max(b.mean(), 0), 1)
		c.X, c.Y = append(c.X, xs[b.lo]), append(c.Y, m)
		if b.hi > b.lo {
			c.X, c.Y = append(c.X, xs[b.hi]), append(c.Y, m)
		}
	}
	return c
}

// Apply returns the fitted function at score: linear interpolation between
// the knots, Y[0] at or below X[0], the last Y at or above the last X, NaN
// for a NaN score (and for a calibrator without knots, which Validate
// refuses).
func (c *Isotonic) Apply(score float64) float64 {
	n := len(c.X)
	if math.IsNaN(score) || n == 0 || len(c.Y) != n {
		return math.NaN()
	}
	if score <= c.X[0] {
		return c.Y[0]
	}
	if score >= c.X[n-1] {
		return c.Y[n-1]
	}
	// X[i-1] < score < X[i] or score = X[i].
	i, found := slices.BinarySearch(c.X, score)
	if found {
		return c.Y[i]
	}
	x0, x1, y0, y1 := c.X[i-1], c.X[i], c.Y[i-1], c.Y[i]
	return y0 + (y1-y0)*((score-x0)/(x1-x0))
}

// Method returns MethodIsotonic.
func (c *Isotonic) Method() Method { return MethodIsotonic }

// Validate checks the knots: at least one, as many X as Y, X finite and
// strictly increasing, Y nondecreasing in [0, 1].
//
// Errors: zonal.ErrFormat otherwise.
func (c *Isotonic) Validate() error {
	if len(c.X) == 0 || len(c.X) != len(c.Y) {
		return fmt.Errorf("%w: isotonic calibrator with %d scores and %d values", zonal.ErrFormat, len(c.X), len(c.Y))
	}
	for i := range c.X {
		if math.IsNaN(c.X[i]) || math.IsInf(c.X[i], 0) || !(c.Y[i] >= 0 && c.Y[i] <= 1) {
			return fmt.Errorf("%w: isotonic knot %d is (%g, %g)", zonal.ErrFormat, i, c.X[i], c.Y[i])
		}
		if i > 0 && (c.X[i] <= c.X[i-1] || c.Y[i] < c.Y[i-1]) {
			return fmt.Errorf("%w: isotonic knots %d and %d, (%g, %g) and (%g, %g), are not increasing", zonal.ErrFormat, i-1, i, c.X[i-1], c.Y[i-1], c.X[i], c.Y[i])
		}
	}
	return nil
}

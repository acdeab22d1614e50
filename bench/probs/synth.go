package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// The synthetic set's name and default size, positive rate and noise.
const (
	synthName  = "synthetic"
	synthRows  = 20000
	synthCols  = 10
	synthRate  = 0.02
	synthNoise = 0.5
)

// synthSpec is the synthetic problem's size, positive rate and noise.
type synthSpec struct {
	Rows  int
	Rate  float64
	Noise float64
}

// check refuses a synthetic problem that cannot have both classes in a
// stratified split.
func (s synthSpec) check() error {
	switch {
	case s.Rows < 100:
		return fmt.Errorf("%w: -synth-rows must be at least 100, got %d", zonal.ErrParam, s.Rows)
	case !(s.Rate > 0 && s.Rate < 0.5):
		return fmt.Errorf("%w: -synth-rate must be in (0, 0.5), got %g", zonal.ErrParam, s.Rate)
	case float64(s.Rows)*s.Rate < 10:
		return fmt.Errorf("%w: -synth-rows %d at rate %g gives fewer than 10 positives", zonal.ErrParam, s.Rows, s.Rate)
	case !(s.Noise >= 0) || math.IsInf(s.Noise, 0):
		return fmt.Errorf("%w: -synth-noise must be finite and >= 0, got %g", zonal.ErrParam, s.Noise)
	}
	return nil
}

// synthScore is the synthetic problem's smooth nonlinear score of a row
// of synthCols features: a periodic term, an interaction, a quadratic, a
// saturating term of two features and a linear part in the last four.
func synthScore(x []float64) float64 {
	return math.Sin(2*x[0]) + x[1]*x[2] + (x[3]*x[3]-1)/2 + math.Tanh(x[4]+x[5]) +
		0.3*(x[6]+x[7]+x[8]+x[9])
}

// synthetic draws the seeded synthetic binary problem: s.Rows rows of
// synthCols features x ~ N(0, I), the observed score
//
//	z = synthScore(x) + s.Noise sd(synthScore) e,  e ~ N(0, 1),
//
// with sd the standard deviation of the score over the drawn rows, and the
// label 1 for the round(s.Rate s.Rows) rows of largest z (the threshold at
// z's upper s.Rate quantile), 0 for the rest. So the positive rate is
// exactly s.Rate up to rounding, and the noise makes the classes overlap
// (at Noise 0.5 about a fifth of the score's variance is noise). The same
// spec and seed give the same rows.
func synthetic(s synthSpec, seed uint64) (*dataset.Data, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x2fb05))
	x := mat.NewDense(s.Rows, synthCols, nil)
	score := make([]float64, s.Rows)
	for i := range score {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = rng.NormFloat64()
		}
		score[i] = synthScore(r)
	}
	mean := 0.0
	for _, v := range score {
		mean += v
	}
	mean /= float64(s.Rows)
	ss := 0.0
	for _, v := range score {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(s.Rows))
	for i := range score {
		score[i] += s.Noise * sd * rng.NormFloat64()
	}
	pos := int(math.Round(s.Rate * float64(s.Rows)))
	order := make([]int, s.Rows)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	y := make([]float64, s.Rows)
	for _, i := range order[:pos] {
		y[i] = 1
	}
	return &dataset.Data{X: x, Y: y}, nil
}

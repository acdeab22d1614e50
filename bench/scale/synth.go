//go:build linux

package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// synth is the seeded synthetic problem: rows x ~ N(0, I_d) and the smooth
// function
//
//	g(x) = sum_j a_j exp(-||x - c_j||^2 / (2 w^2)),  w = sqrt(d),
//
// a sum of Bumps Gaussian bumps with centres c_j ~ N(0, I_d) and amplitudes
// a_j ~ N(0, 1), standardised to f = (g - mean) / std with the mean and
// standard deviation of g over a fixed calibration draw of calibRows rows.
// The width sqrt(d) makes ||x - c_j||^2 / (2 w^2) about 1 for typical rows,
// so every bump varies smoothly over the whole data cloud instead of being a
// spike that almost no row sees. Regression labels are f(x) + Noise e,
// classification labels are 1 when f(x) + Noise e exceeds the median of f
// over the calibration draw (balanced classes) and 0 otherwise, e ~ N(0, 1)
// drawn per row.
//
// Rows come in blocks of blockRows; block b of a stream is drawn from its own
// generator PCG(seed, stream<<32 | b), so a block never depends on another
// one: n rows are the first n rows of any larger draw, the rows are made
// block by block into the caller's array with no other copy, and the test
// rows (stream testStream) are a draw independent of the training rows.
type synth struct {
	d       int
	noise   float64
	seed    uint64
	width   float64
	centres [][]float64
	amp     []float64
	mean    float64
	std     float64
	median  float64 // of the standardised f over the calibration draw
}

const (
	blockRows   = 4096
	calibRows   = 1 << 14
	trainStream = 1
	testStream  = 2
	calibStream = 3
	funcStream  = 4
)

func newSynth(seed uint64, d, bumps int, noise float64) *synth {
	s := &synth{d: d, noise: noise, seed: seed, width: math.Sqrt(float64(d))}
	rng := rand.New(rand.NewPCG(seed, funcStream<<32))
	for range bumps {
		c := make([]float64, d)
		for i := range c {
			c[i] = rng.NormFloat64()
		}
		s.centres = append(s.centres, c)
		s.amp = append(s.amp, rng.NormFloat64())
	}
	s.std = 1
	x := make([]float64, calibRows*d)
	g := make([]float64, calibRows)
	s.rows(x, nil, calibStream, calibRows, false)
	var sum, sum2 float64
	for i := range g {
		g[i] = s.raw(x[i*d : (i+1)*d])
		sum += g[i]
	}
	s.mean = sum / calibRows
	for _, v := range g {
		sum2 += (v - s.mean) * (v - s.mean)
	}
	s.std = math.Sqrt(sum2 / (calibRows - 1))
	for i := range g {
		g[i] = (g[i] - s.mean) / s.std
	}
	slices.Sort(g)
	s.median = (g[calibRows/2-1] + g[calibRows/2]) / 2
	return s
}

// raw is g(x), before standardisation.
func (s *synth) raw(x []float64) float64 {
	var g float64
	inv := 1 / (2 * s.width * s.width)
	for j, c := range s.centres {
		var r2 float64
		for i, v := range x {
			t := v - c[i]
			r2 += t * t
		}
		g += s.amp[j] * math.Exp(-r2*inv)
	}
	return g
}

// f is the standardised noiseless function.
func (s *synth) f(x []float64) float64 { return (s.raw(x) - s.mean) / s.std }

// rows fills the n x d row-major x and, when y is not nil, the n labels of
// stream, block by block (classify: 0/1 labels, else regression labels).
func (s *synth) rows(x, y []float64, stream uint64, n int, classify bool) {
	d := s.d
	for b := 0; b*blockRows < n; b++ {
		i0, i1 := b*blockRows, min(n, (b+1)*blockRows)
		var yb []float64
		if y != nil {
			yb = y[i0:i1]
		}
		s.block(x[i0*d:i1*d], yb, stream, b, i1-i0, classify)
	}
}

// block fills the first k (at most blockRows) rows of block b of stream
// into the k x d row-major x and, when y is not nil, their labels: the rows
// i = b blockRows, ..., b blockRows + k - 1 of rows.
func (s *synth) block(x, y []float64, stream uint64, b, k int, classify bool) {
	d := s.d
	rng := rand.New(rand.NewPCG(s.seed, stream<<32|uint64(b)))
	for i := range k {
		row := x[i*d : (i+1)*d]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		e := rng.NormFloat64() // drawn for every row, so x does not depend on y
		if y == nil {
			continue
		}
		v := s.f(row) + s.noise*e
		if classify {
			if v > s.median {
				v = 1
			} else {
				v = 0
			}
		}
		y[i] = v
	}
}

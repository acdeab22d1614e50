package main

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// Synthetic sets: data no rule of the estimator was shaped on, generated
// from a fixed seed (nothing stored). They are not in the default suite
// (catalogue); name them in -sets. Each imitates a kind of problem users
// bring rather than any shared set:
//
//   - synth-smooth: regression, 15000 x 9. Skewed positive features of
//     different scales (log-normal sizes, integer grades, a uniform), the
//     target the log of a smooth multiplicative price-like function plus
//     noise of sd 0.08: smooth, low noise, low dimension, where more
//     centres and a well-converged solve pay.
//   - synth-classes: classification, 26 classes, 12000 x 16. Each class
//     two Gaussian blobs in 16 dimensions, rounded and clipped to the
//     integers 0..15: many classes, few features, integer-valued.
//   - synth-rare: classification, 8000 x 10, about 7% positives: the rows
//     whose smooth score plus noise is in its top 7%. The one-vs-all
//     targets are far from centred, where the constant of the model
//     matters.
//   - synth-trend: regression, 6000 x 20. A large offset, a linear trend
//     in five features, a small smooth part and noise: a problem a narrow
//     Gaussian kernel alone fits badly far from the data.
func synthSets() []dataSet {
	gen := func(name string, task solvers.Task, f func(r *rand.Rand) (*mat.Dense, []float64)) dataSet {
		return dataSet{Name: name, Task: task, generated: true, load: func() (*dataset.Data, *dataset.Data, error) {
			x, y := f(rand.New(rand.NewPCG(synthSeed, uint64(len(name)))))
			return &dataset.Data{X: x, Y: y}, nil, nil
		}}
	}
	c, r := solvers.TaskClassification, solvers.TaskRegression
	return []dataSet{
		gen("synth-smooth", r, synthSmooth),
		gen("synth-classes", c, synthClasses),
		gen("synth-rare", c, synthRare),
		gen("synth-trend", r, synthTrend),
	}
}

// synthSeed seeds every synthetic set (with the name's length as the
// stream, so the sets differ).
const synthSeed = 20261202

func synthSmooth(rng *rand.Rand) (*mat.Dense, []float64) {
	const n, d = 15000, 9
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		size := math.Exp(0.45 * rng.NormFloat64())          // log-normal, the main driver
		g1, g2, g3 := rng.IntN(5), rng.IntN(7), rng.IntN(8) // integer grades
		depth := 60 + 1.5*rng.NormFloat64()
		table := 57 + 2*rng.NormFloat64()
		// three dimensions that track size with their own noise
		a := 5.7 * math.Cbrt(size) * (1 + 0.01*rng.NormFloat64())
		b := a * (1 + 0.01*rng.NormFloat64())
		h := 0.62 * a * (1 + 0.015*rng.NormFloat64())
		row := []float64{size, float64(g1), float64(g2), float64(g3), depth, table, a, b, h}
		x.SetRow(i, row)
		logp := 8 + 1.7*math.Log(size) + 0.05*float64(g1) - 0.07*float64(g2) + 0.09*float64(g3) -
			0.02*math.Abs(depth-61.5) - 0.3*math.Log(size)*math.Log(size) + 0.01*float64(g2)*float64(g3)
		y[i] = logp + 0.08*rng.NormFloat64()
	}
	return x, y
}

func synthClasses(rng *rand.Rand) (*mat.Dense, []float64) {
	const n, d, k, blobs = 12000, 16, 26, 2
	centres := make([][]float64, k*blobs)
	for j := range centres {
		c := make([]float64, d)
		for f := range c {
			c[f] = 3 + 9*rng.Float64()
		}
		centres[j] = c
	}
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		cls := rng.IntN(k)
		c := centres[cls*blobs+rng.IntN(blobs)]
		for f := 0; f < d; f++ {
			v := math.Round(c[f] + 1.6*rng.NormFloat64())
			x.Set(i, f, math.Min(15, math.Max(0, v)))
		}
		y[i] = float64(cls)
	}
	return x, y
}

func synthRare(rng *rand.Rand) (*mat.Dense, []float64) {
	const n, d, rate = 8000, 10, 0.07
	x := mat.NewDense(n, d, nil)
	z := make([]float64, n)
	for i := 0; i < n; i++ {
		row := make([]float64, d)
		for f := range row {
			row[f] = rng.NormFloat64()
		}
		x.SetRow(i, row)
		s := math.Sin(1.5*row[0]) + row[1]*row[2] + 0.5*(row[3]*row[3]-1) + math.Tanh(row[4]-row[5])
		z[i] = s + 0.6*rng.NormFloat64()
	}
	cut := quantile(z, 1-rate)
	y := make([]float64, n)
	for i, v := range z {
		if v > cut {
			y[i] = 1
		}
	}
	return x, y
}

func synthTrend(rng *rand.Rand) (*mat.Dense, []float64) {
	const n, d = 6000, 20
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	beta := []float64{2, -1.5, 1, 0.8, -0.5}
	for i := 0; i < n; i++ {
		row := make([]float64, d)
		for f := range row {
			row[f] = rng.NormFloat64()
		}
		x.SetRow(i, row)
		v := 40.0
		for f, b := range beta {
			v += b * row[f]
		}
		v += 0.5*math.Sin(2*row[5]) + 0.3*row[6]*row[7]
		y[i] = v + 0.5*rng.NormFloat64()
	}
	return x, y
}

// quantile is the q-quantile of v (the order statistic at floor(q n)).
func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

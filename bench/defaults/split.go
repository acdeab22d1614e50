package main

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// trainFraction is the share of rows the suite trains on (80/20 splits).
const trainFraction = 0.8

// stratifiedSplit draws a seeded train/test partition of the rows of y,
// each list sorted. For classification every class is split on its own:
// its rows in a seeded random order, the first round(frac n_c) of them for
// training, so both parts keep the class proportions (up to rounding) and
// a small class is not left out of the test rows by chance. For
// regression it is dataset.Split's plain seeded split. The same y, task,
// frac and seed give the same rows on every run.
func stratifiedSplit(y []float64, task solvers.Task, frac float64, seed uint64) (train, test []int) {
	if task != solvers.TaskClassification {
		return dataset.Split(len(y), frac, seed)
	}
	byClass := map[float64][]int{}
	for i, v := range y {
		byClass[v] = append(byClass[v], i)
	}
	classes := make([]float64, 0, len(byClass))
	for v := range byClass {
		classes = append(classes, v)
	}
	slices.Sort(classes) // a fixed order of draws, independent of map order
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	for _, c := range classes {
		rows := byClass[c]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		k := int(math.Round(frac * float64(len(rows))))
		train = append(train, rows[:k]...)
		test = append(test, rows[k:]...)
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test
}

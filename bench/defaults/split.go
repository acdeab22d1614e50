package main

import (
	"maps"
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
// training (at least one for each part when the class has two rows or
// more), so both parts keep the class proportions up to rounding and no
// class of two rows or more is missing from the test rows. For regression
// it is dataset.Split's plain seeded split. The same y, task, frac and
// seed give the same rows on every run.
func stratifiedSplit(y []float64, task solvers.Task, frac float64, seed uint64) (train, test []int) {
	if task != solvers.TaskClassification {
		return dataset.Split(len(y), frac, seed)
	}
	byClass := map[float64][]int{}
	for i, v := range y {
		byClass[v] = append(byClass[v], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	// Classes in sorted order: the draws do not depend on map order.
	for _, c := range slices.Sorted(maps.Keys(byClass)) {
		rows := byClass[c]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		k := int(math.Round(frac * float64(len(rows))))
		if len(rows) >= 2 {
			k = min(max(k, 1), len(rows)-1)
		}
		train = append(train, rows[:k]...)
		test = append(test, rows[k:]...)
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test
}

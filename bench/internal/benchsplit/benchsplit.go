// Package benchsplit gives the bench programs one seeded stratified
// train/test split, so that programs measuring the same sets (defaults,
// probs) and the Python scripts they dump their rows for score the same
// rows.
package benchsplit

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// Stratified draws a seeded train/test partition of the rows of the class
// labels y, each list sorted: every class is split on its own, its rows in
// a seeded random order and the first round(frac n_c) of them for training
// (at least one for each part when the class has two rows or more), so
// both parts keep the class proportions up to rounding and no class of two
// rows or more is missing from the test rows. The same y, frac and seed
// give the same rows on every run.
func Stratified(y []float64, frac float64, seed uint64) (train, test []int) {
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

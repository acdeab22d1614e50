package main

import (
	"github.com/zonal-ml/zonal/bench/internal/benchsplit"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// trainFraction is the share of rows the suite trains on (80/20 splits).
const trainFraction = 0.8

// stratifiedSplit draws a seeded train/test partition of the rows of y,
// each list sorted. For classification it is benchsplit.Stratified: every
// class split on its own, so both parts keep the class proportions up to
// rounding and no class of two rows or more is missing from the test rows.
// For regression it is dataset.Split's plain seeded split. The same y,
// task, frac and seed give the same rows on every run.
func stratifiedSplit(y []float64, task solvers.Task, frac float64, seed uint64) (train, test []int) {
	if task != solvers.TaskClassification {
		return dataset.Split(len(y), frac, seed)
	}
	return benchsplit.Stratified(y, frac, seed)
}

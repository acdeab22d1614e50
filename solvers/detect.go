package solvers

import (
	"math"
	"slices"
)

// MinClassRows is the fewest rows every label value must have for
// DetectTask to read more than two integer values as classes.
const MinClassRows = 5

// DetectTask decides from the structure of the labels y whether they are
// class labels or a regression target, with no fixed cap on the number of
// classes:
//
//   - any non-integer (or non-finite) value, or fewer than two distinct
//     values: TaskRegression (a constant target has nothing to classify);
//   - exactly two distinct integer values: TaskClassification;
//   - C > 2 distinct integer values: TaskClassification when every value
//     occurs at least MinClassRows times (26 letters or 100 classes on a
//     few thousand rows), TaskRegression otherwise (counts, ages and scores
//     such as the shared diabetes and Ozone targets have values seen once).
//
// The rule cannot tell an ordinal integer target whose every level is
// frequent from classes; callers let the user override it (TaskRegression).
func DetectTask(y []float64) Task {
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
			return TaskRegression
		}
	}
	s := slices.Clone(y)
	slices.Sort(s)
	distinct, minRun := 0, len(s)
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		distinct++
		minRun = min(minRun, j-i)
		i = j
	}
	switch {
	case distinct < 2:
		return TaskRegression
	case distinct == 2:
		return TaskClassification
	case minRun >= MinClassRows:
		return TaskClassification
	}
	return TaskRegression
}

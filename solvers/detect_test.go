package solvers

import "testing"

func TestDetectTask(t *testing.T) {
	rep := func(vals []float64, times int) []float64 {
		var out []float64
		for r := 0; r < times; r++ {
			out = append(out, vals...)
		}
		return out
	}
	letters := make([]float64, 26)
	hundred := make([]float64, 100)
	for i := range letters {
		letters[i] = float64(i + 1)
	}
	for i := range hundred {
		hundred[i] = float64(i)
	}
	// A regression-like integer target: a bell of counts with singletons in the tails.
	var ordinal []float64
	for v := 1; v <= 40; v++ {
		c := 1 + 20 - min(20, 2*detectAbs(v-20))
		for r := 0; r < c; r++ {
			ordinal = append(ordinal, float64(v))
		}
	}
	unique := make([]float64, 300)
	for i := range unique {
		unique[i] = float64(3 * i)
	}
	cases := []struct {
		name string
		y    []float64
		want Task
	}{
		{"26 letters x 30", rep(letters, 30), TaskClassification},
		{"100 classes x 6", rep(hundred, 6), TaskClassification},
		{"binary, unbalanced", append(rep([]float64{0}, 50), 1), TaskClassification},
		{"+-1", rep([]float64{-1, 1}, 3), TaskClassification},
		{"100 classes x 4 (too few rows each)", rep(hundred, 4), TaskRegression},
		{"ordinal with singletons", ordinal, TaskRegression},
		{"mostly unique integers", unique, TaskRegression},
		{"non-integer", rep([]float64{0, 0.5, 1}, 10), TaskRegression},
		{"constant", rep([]float64{3}, 10), TaskRegression},
		{"empty", nil, TaskRegression},
	}
	for _, c := range cases {
		if got := DetectTask(c.y); got != c.want {
			t.Errorf("%s: DetectTask = %v, want %v", c.name, got, c.want)
		}
	}
}

func detectAbs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
)

// checkPartition fails unless the lists are sorted, disjoint and cover 0..n-1.
func checkPartition(t *testing.T, n int, parts ...[]int) {
	t.Helper()
	seen := make([]bool, n)
	total := 0
	for _, p := range parts {
		if !slices.IsSorted(p) {
			t.Fatalf("list not sorted: %v", p)
		}
		for _, i := range p {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("index %d out of range or repeated", i)
			}
			seen[i] = true
		}
		total += len(p)
	}
	if total != n {
		t.Fatalf("parts cover %d of %d rows", total, n)
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		n      int
		frac   float64
		nTrain int
	}{
		{10, 0.8, 8}, {11, 0.5, 6}, {1000, 0.75, 750}, {2, 0.01, 1}, {2, 0.99, 1},
		{5, 0, 0}, {5, 1, 5}, {5, -3, 0}, {5, 7, 5}, {5, math.NaN(), 0}, {1, 0.5, 1}, {0, 0.5, 0},
	} {
		train, test := Split(c.n, c.frac, 42)
		if len(train) != c.nTrain {
			t.Errorf("Split(%d, %v): %d training rows, want %d", c.n, c.frac, len(train), c.nTrain)
		}
		checkPartition(t, c.n, train, test)
		if train == nil || test == nil {
			t.Errorf("Split(%d, %v) returned a nil list", c.n, c.frac)
		}
	}
	// Deterministic in the seed, different across seeds.
	a1, b1 := Split(100, 0.7, 7)
	a2, b2 := Split(100, 0.7, 7)
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) {
		t.Fatal("same seed, different split")
	}
	a3, _ := Split(100, 0.7, 8)
	if slices.Equal(a1, a3) {
		t.Fatal("seeds 7 and 8 give the same split")
	}
}

// TestPermutationUniform checks the seeded Fisher-Yates: each of the 24
// permutations of 4 elements over 24000 seeds has expected count 1000 and
// binomial standard deviation ~31; 6 sd (186) bounds each count with
// negligible false-alarm probability (24 * 2e-9), while a biased shuffle
// (e.g. j drawn from [0, n) instead of [0, i]) moves counts by ~300+.
func TestPermutationUniform(t *testing.T) {
	counts := map[[4]int]int{}
	for seed := range uint64(24000) {
		p := permutation(4, seed)
		counts[[4]int(p)]++
	}
	if len(counts) != 24 {
		t.Fatalf("%d distinct permutations, want 24", len(counts))
	}
	for p, c := range counts {
		if math.Abs(float64(c)-1000) > 186 {
			t.Errorf("permutation %v drawn %d times, want 1000 ± 186", p, c)
		}
	}
	// Split membership: each of 10 rows is in the 30% training part with
	// probability 0.3; over 4000 seeds the count is 1200 ± 6*29.
	var inTrain [10]int
	for seed := range uint64(4000) {
		train, _ := Split(10, 0.3, seed)
		for _, i := range train {
			inTrain[i]++
		}
	}
	for i, c := range inTrain {
		if math.Abs(float64(c)-1200) > 6*29 {
			t.Errorf("row %d in train %d times, want 1200 ± 174", i, c)
		}
	}
}

func TestBoundedUintLargeBound(t *testing.T) {
	// The rejection branch of Lemire's method matters for bounds near 2^64:
	// with bound 2^63+1, values must stay below the bound, and the top half
	// [2^62, 2^63] must get about half of the draws.
	src := newTestPCG(3)
	const bound = 1<<63 + 1
	high := 0
	for range 2000 {
		v := boundedUint(src, bound)
		if v >= bound {
			t.Fatalf("value %d >= bound", v)
		}
		if v >= 1<<62 {
			high++
		}
	}
	// Binomial(2000, 1/2): sd 22; 6 sd = 134.
	if math.Abs(float64(high)-1000) > 134 {
		t.Errorf("%d of 2000 draws in the upper half", high)
	}
}

func TestKFold(t *testing.T) {
	for _, c := range []struct{ n, k int }{{10, 2}, {10, 3}, {17, 5}, {5, 5}, {1000, 10}} {
		folds, err := KFold(c.n, c.k, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(folds) != c.k {
			t.Fatalf("%d folds, want %d", len(folds), c.k)
		}
		tests := make([][]int, c.k)
		for f, fold := range folds {
			checkPartition(t, c.n, fold.Train, fold.Test)
			if sz := len(fold.Test); sz != c.n/c.k && sz != c.n/c.k+1 {
				t.Errorf("n %d k %d: fold %d tests %d rows", c.n, c.k, f, sz)
			}
			tests[f] = fold.Test
		}
		// Every row is tested exactly once (the test parts partition 0..n-1).
		all := slices.Concat(tests...)
		slices.Sort(all)
		checkPartition(t, c.n, all)
	}
	for _, c := range []struct{ n, k int }{{10, 1}, {10, 11}, {0, 2}, {5, -1}} {
		if _, err := KFold(c.n, c.k, 1); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("KFold(%d, %d): %v, want zonal.ErrParam", c.n, c.k, err)
		}
	}
}

func TestSubsample(t *testing.T) {
	s, err := Subsample(100, 30, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 30 || !slices.IsSorted(s) || len(slices.Compact(slices.Clone(s))) != 30 || s[0] < 0 || s[29] >= 100 {
		t.Fatalf("Subsample: %v", s)
	}
	s2, _ := Subsample(100, 30, 5)
	if !slices.Equal(s, s2) {
		t.Fatal("same seed, different subsample")
	}
	if all, _ := Subsample(7, 7, 1); !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("m = n: %v", all)
	}
	if none, err := Subsample(7, 0, 1); err != nil || len(none) != 0 {
		t.Fatalf("m = 0: %v %v", none, err)
	}
	for _, c := range []struct{ n, m int }{{5, 6}, {5, -1}, {-1, 0}} {
		if _, err := Subsample(c.n, c.m, 1); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("Subsample(%d, %d): %v", c.n, c.m, err)
		}
	}
}

func TestDataSubset(t *testing.T) {
	d, err := ReadFile("testdata/small.libsvm", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := d.Subset([]int{4, 0})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.Y, []float64{3, 1}) || !slices.Equal(sub.X.RawRowView(0), smallX[4]) ||
		!slices.Equal(sub.X.RawRowView(1), smallX[0]) || !slices.Equal(sub.Sparse.ToDense().RawRowView(0), smallX[4]) {
		t.Fatalf("Subset: Y %v", sub.Y)
	}
	sub.X.Set(0, 0, 123)
	if d.X.At(4, 0) == 123 {
		t.Fatal("Subset shares X")
	}
	if _, err := d.Subset([]int{5}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("row 5 of 5: %v", err)
	}
	if _, err := d.Subset(nil); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("no rows: %v", err)
	}
	c := d.Clone()
	c.Sparse.Val[0] = 99
	c.Y[0] = 99
	if d.Sparse.Val[0] == 99 || d.Y[0] == 99 {
		t.Fatal("Clone shares memory")
	}
}

func ExampleSplit() {
	train, test := Split(10, 0.8, 1)
	fmt.Println(len(train), len(test))
	// The same seed always gives the same rows.
	again, _ := Split(10, 0.8, 1)
	fmt.Println(fmt.Sprint(train) == fmt.Sprint(again))
	// Output:
	// 8 2
	// true
}

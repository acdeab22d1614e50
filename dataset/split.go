package dataset

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/zonal-ml/zonal"
)

// streamSplit is the second PCG word for every permutation this package
// draws; the caller's seed is the first. With it fixed, a seed alone
// determines the result.
const streamSplit uint64 = 0x7a6f6e616c646174 // "zonaldat" in ASCII

// permutation returns a uniformly random permutation of 0..n-1 drawn by
// Fisher-Yates from PCG(seed, streamSplit), using Lemire's unbiased bounded
// integers on the raw PCG output. The code does not depend on math/rand's
// own Shuffle or IntN, whose streams a Go release may change, so a seed
// gives the same permutation in every Go version.
func permutation(n int, seed uint64) []int {
	src := rand.NewPCG(seed, streamSplit)
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(boundedUint(src, uint64(i)+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// boundedUint returns a uniform integer in [0, bound) (bound > 0), by
// Lemire's multiply-and-reject method.
func boundedUint(src *rand.PCG, bound uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), bound)
	if lo < bound {
		thresh := -bound % bound
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), bound)
		}
	}
	return hi
}

// Split draws a random train/test partition of the rows 0..n-1, determined
// by seed: round(frac*n) rows for training and the rest for testing, each
// list in increasing order. frac is clamped to [0, 1] (NaN counts as 0);
// when 0 < frac < 1 and n >= 2 both parts get at least one row. Callers
// taking frac from users should reject values outside (0, 1) themselves.
// n <= 0 gives two empty lists.
func Split(n int, frac float64, seed uint64) (train, test []int) {
	if n <= 0 {
		return []int{}, []int{}
	}
	if !(frac > 0) {
		frac = 0
	}
	frac = min(frac, 1)
	nTrain := int(math.Round(frac * float64(n)))
	if frac > 0 && frac < 1 && n >= 2 {
		nTrain = min(max(nTrain, 1), n-1)
	}
	p := permutation(n, seed)
	train = slices.Clone(p[:nTrain])
	test = slices.Clone(p[nTrain:])
	slices.Sort(train)
	slices.Sort(test)
	return train, test
}

// Fold is one train/test partition of a cross-validation.
type Fold struct {
	Train, Test []int // row indices, increasing
}

// KFold partitions the rows 0..n-1 into k random folds of sizes differing
// by at most one (fold f tests on rows p[f*n/k : (f+1)*n/k] of a seeded
// permutation p and trains on the others). Every row is tested exactly
// once. It is an error (zonal.ErrParam) unless 2 <= k <= n.
func KFold(n, k int, seed uint64) ([]Fold, error) {
	if k < 2 || k > n {
		return nil, fmt.Errorf("%w: KFold needs 2 <= k <= n, got k = %d, n = %d", zonal.ErrParam, k, n)
	}
	p := permutation(n, seed)
	folds := make([]Fold, k)
	for f := range folds {
		lo, hi := f*n/k, (f+1)*n/k
		test := slices.Clone(p[lo:hi])
		train := make([]int, 0, n-(hi-lo))
		train = append(train, p[:lo]...)
		train = append(train, p[hi:]...)
		slices.Sort(test)
		slices.Sort(train)
		folds[f] = Fold{Train: train, Test: test}
	}
	return folds, nil
}

// Subsample returns m distinct rows of 0..n-1 drawn uniformly without
// replacement, determined by seed, in increasing order. It is an error
// (zonal.ErrParam) unless 0 <= m <= n.
func Subsample(n, m int, seed uint64) ([]int, error) {
	if n < 0 || m < 0 || m > n {
		return nil, fmt.Errorf("%w: Subsample needs 0 <= m <= n, got m = %d, n = %d", zonal.ErrParam, m, n)
	}
	p := permutation(n, seed)[:m]
	slices.Sort(p)
	return p, nil
}

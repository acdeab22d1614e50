package pipeline

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/estimator"
)

// randomBlocks returns count blocks of 30, 35, ... rows: features A (m
// columns) and targets Y (k columns), entries uniform in [0, 1).
func randomBlocks(rng *rand.Rand, count, m, k int) [][2]*mat.Dense {
	var blocks [][2]*mat.Dense
	for b := 0; b < count; b++ {
		n := 30 + 5*b
		a, y := mat.NewDense(n, m, nil), mat.NewDense(n, k, nil)
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = rng.Float64()
		}
		for i := range y.RawMatrix().Data {
			y.RawMatrix().Data[i] = rng.Float64()
		}
		blocks = append(blocks, [2]*mat.Dense{a, y})
	}
	return blocks
}

// checkSums fails t unless got has ref's shape and row count and every
// entry of G, B, S and Ysum agrees with ref's to tol relative to the
// largest entry of that array.
func checkSums(t *testing.T, what string, got, ref Sums, tol float64) {
	t.Helper()
	if got.N != ref.N || got.M != ref.M || got.K != ref.K {
		t.Fatalf("%s: N %d M %d K %d, want N %d M %d K %d", what, got.N, got.M, got.K, ref.N, ref.M, ref.K)
	}
	for _, c := range []struct {
		name     string
		got, ref []float64
	}{{"G", got.G, ref.G}, {"B", got.B, ref.B}, {"S", got.S, ref.S}, {"Ysum", got.Ysum, ref.Ysum}} {
		if len(c.got) != len(c.ref) {
			t.Fatalf("%s: %s has %d entries, want %d", what, c.name, len(c.got), len(c.ref))
		}
		scale := 0.0
		for _, v := range c.ref {
			scale = max(scale, math.Abs(v))
		}
		for i := range c.ref {
			if math.Abs(c.got[i]-c.ref[i]) > tol*scale {
				t.Fatalf("%s: %s[%d] = %.17g, want %.17g", what, c.name, i, c.got[i], c.ref[i])
			}
		}
	}
}

// TestSumsOrder: one accumulator per group of files, merged by the
// combiner, gives the sums the previous implementation gave (one Sums per
// bundle of blocks, merged one by one) up to the order of the additions:
// every entry agrees to 1e-12 relative to the largest entry of its sum
// (each entry sums 690 products of values in [0, 1): the rounding of a
// reordered sum is below 690 eps of that scale, 1.6e-13).
func TestSumsOrder(t *testing.T) {
	be := backend.Default()
	const m, k = 40, 3
	blocks := randomBlocks(rand.New(rand.NewPCG(1, 2)), 12, m, k)
	var fn sumsFn
	// Previous: a Sums per bundle of 2 blocks, added one after the other.
	old := fn.CreateAccumulator()
	for b := 0; b < len(blocks); b += 2 {
		var bundle Sums
		bundle.addBlock(be, blocks[b][0], blocks[b][1])
		bundle.addBlock(be, blocks[b+1][0], blocks[b+1][1])
		var err error
		if old, err = fn.AddInput(old, bundle); err != nil {
			t.Fatal(err)
		}
	}
	// Now: 3 groups, each one accumulator over its blocks, then merged.
	groups := make([]Sums, 3)
	for b, blk := range blocks {
		groups[b%3].addBlock(be, blk[0], blk[1])
	}
	now := fn.CreateAccumulator()
	for _, g := range groups {
		var err error
		if now, err = fn.MergeAccumulators(now, g); err != nil {
			t.Fatal(err)
		}
	}
	if now.M != m || now.K != k {
		t.Fatalf("M %d K %d, want %d %d", now.M, now.K, m, k)
	}
	checkSums(t, "groups against bundles", now, old, 1e-12)
}

// TestSumsLayouts: however the blocks are split into partial sums (one
// sum, one per block, bundles of 5, 3 groups merged in reverse, a merge
// tree, empty sums in between, a shuffled order), the combiner's result is
// the single-process computation A^T A, A^T Y, A^T 1, 1^T Y on all rows
// stacked (gonum's Mul, not the backend's Syrk) to 1e-12 relative to the
// largest entry of each array (690 terms in [0, 1) per entry: the rounding
// of any summation order is below 690 eps of that scale, 1.6e-13). A merge
// adds into its left operand's arrays and allocates nothing; sums of
// other shapes are an error.
func TestSumsLayouts(t *testing.T) {
	be := backend.Default()
	const m, k = 24, 2
	rng := rand.New(rand.NewPCG(3, 4))
	blocks := randomBlocks(rng, 12, m, k)

	// The single-process sums on the stacked rows.
	var as, ys []*mat.Dense
	for _, b := range blocks {
		as, ys = append(as, b[0]), append(ys, b[1])
	}
	a, y := stack(as), stack(ys)
	n, _ := a.Dims()
	var g, bm mat.Dense
	g.Mul(a.T(), a)
	bm.Mul(a.T(), y)
	ref := Sums{M: m, K: k, N: n, G: g.RawMatrix().Data, B: bm.RawMatrix().Data, S: make([]float64, m), Ysum: make([]float64, k)}
	for j := 0; j < m; j++ {
		ref.S[j] = mat.Sum(a.ColView(j))
	}
	for j := 0; j < k; j++ {
		ref.Ysum[j] = mat.Sum(y.ColView(j))
	}

	var fn sumsFn
	partial := func(idx ...int) Sums {
		var s Sums
		for _, i := range idx {
			s.addBlock(be, blocks[i][0], blocks[i][1])
		}
		return s
	}
	merge := func(x, y Sums) Sums {
		t.Helper()
		s, err := fn.MergeAccumulators(x, y)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	add := func(parts []Sums) Sums {
		t.Helper()
		acc := fn.CreateAccumulator()
		for _, p := range parts {
			var err error
			if acc, err = fn.AddInput(acc, p); err != nil {
				t.Fatal(err)
			}
		}
		return fn.ExtractOutput(acc)
	}
	all := make([]int, len(blocks))
	for i := range all {
		all[i] = i
	}
	perBlock := func(order []int) []Sums {
		var out []Sums
		for _, i := range order {
			out = append(out, partial(i))
		}
		return out
	}
	layouts := map[string]func() Sums{
		"one sum":   func() Sums { return add([]Sums{partial(all...)}) },
		"per block": func() Sums { return add(perBlock(all)) },
		"bundles of 5": func() Sums {
			return add([]Sums{partial(0, 1, 2, 3, 4), partial(5, 6, 7, 8, 9), partial(10, 11)})
		},
		"3 groups, reversed": func() Sums {
			g := [3][]int{}
			for i := range all {
				g[i%3] = append(g[i%3], i)
			}
			return merge(merge(merge(fn.CreateAccumulator(), partial(g[2]...)), partial(g[1]...)), partial(g[0]...))
		},
		"merge tree": func() Sums {
			level := perBlock(all)
			for len(level) > 1 {
				var next []Sums
				for i := 0; i < len(level); i += 2 {
					if i+1 < len(level) {
						next = append(next, merge(level[i], level[i+1]))
					} else {
						next = append(next, level[i])
					}
				}
				level = next
			}
			return level[0]
		},
		"empty sums between": func() Sums {
			var parts []Sums
			for _, p := range perBlock(all) {
				parts = append(parts, Sums{}, p, fn.CreateAccumulator())
			}
			return add(parts)
		},
		"shuffled": func() Sums {
			order := rng.Perm(len(blocks))
			return add(perBlock(order))
		},
	}
	for name, layout := range layouts {
		checkSums(t, name, layout(), ref, 1e-12)
	}

	// In place and without allocation.
	x, z := partial(0, 1), partial(2)
	x0 := &x.G[0]
	got := merge(x, z)
	if &got.G[0] != x0 {
		t.Error("MergeAccumulators did not add into its left operand's arrays")
	}
	if allocs := testing.AllocsPerRun(10, func() { got = merge(got, z) }); allocs != 0 {
		t.Errorf("MergeAccumulators allocates %v times a merge, want 0", allocs)
	}
	// Another shape.
	var other Sums
	other.addBlock(be, mat.NewDense(3, m+1, nil), mat.NewDense(3, k, nil))
	if _, err := fn.MergeAccumulators(got, other); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("merging %d and %d features: error %v, want ErrShape", m, m+1, err)
	}
}

// stack returns the rows of ms one under the other.
func stack(ms []*mat.Dense) *mat.Dense {
	rows, cols := 0, 0
	for _, x := range ms {
		r, c := x.Dims()
		rows, cols = rows+r, c
	}
	out := mat.NewDense(rows, cols, nil)
	at := 0
	for _, x := range ms {
		r, _ := x.Dims()
		out.Slice(at, at+r, 0, cols).(*mat.Dense).Copy(x)
		at += r
	}
	return out
}

// TestSumsPerWorker: the falkon pass over 6 shards in blocks of 16 rows
// (more than 100 blocks, in however many bundles prism makes) allocates
// exactly one M x M accumulator per file group, 2 with Workers 2 and 1
// with Workers 1 (counted by the sumAllocs hook: prism runs the workers in
// this process), and both layouts give the same model (predictions to
// 1e-9 relative: only the order of the additions differs).
func TestSumsPerWorker(t *testing.T) {
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 6)
	var models []*mat.Dense
	for _, w := range []int{2, 1} {
		c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 40, Seed: 2, Scale: 1.0 / 16},
			Workers: w, Model: filepath.Join(dir, "m.zonal")}
		before := sumAllocs.Load()
		m := runFit(t, c, Input{Glob: glob, BlockRows: 16})
		if got := sumAllocs.Load() - before; got != int64(w) {
			t.Errorf("Workers %d: %d M x M accumulators allocated, want %d (one per group)", w, got, w)
		}
		models = append(models, outputs(t, m, data.X))
	}
	if r := relDiff(models[0], models[1]); !(r < 1e-9) {
		t.Errorf("2 groups against 1: predictions differ by %g relative, want < 1e-9", r)
	}
}

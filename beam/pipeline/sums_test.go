package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
)

// TestSumsOrder: one accumulator per group of files, merged by the
// combiner, gives the sums the previous implementation gave (one Sums per
// bundle of blocks, merged one by one) up to the order of the additions:
// every entry agrees to 1e-12 relative to the largest entry of its sum
// (each entry sums 600 products of values in [0, 1): the rounding of a
// reordered sum is below 600 eps of that scale, 1.3e-13).
func TestSumsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	be := backend.Default()
	const m, k = 40, 3
	var blocks [][2]*mat.Dense
	for b := 0; b < 12; b++ {
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
	var fn sumsFn
	// Previous: a Sums per bundle of 2 blocks, added one after the other.
	old := fn.CreateAccumulator()
	for b := 0; b < len(blocks); b += 2 {
		var bundle Sums
		bundle.addBlock(be, blocks[b][0], blocks[b][1])
		bundle.addBlock(be, blocks[b+1][0], blocks[b+1][1])
		old = fn.AddInput(old, bundle)
	}
	// Now: 3 groups, each one accumulator over its blocks, then merged.
	groups := make([]Sums, 3)
	for b, blk := range blocks {
		groups[b%3].addBlock(be, blk[0], blk[1])
	}
	now := fn.CreateAccumulator()
	for _, g := range groups {
		now = fn.MergeAccumulators(now, g)
	}
	if now.N != old.N || now.M != m || now.K != k {
		t.Fatalf("N %d M %d K %d, want N %d M %d K %d", now.N, now.M, now.K, old.N, m, k)
	}
	for _, c := range []struct {
		name     string
		got, ref []float64
	}{{"G", now.G, old.G}, {"B", now.B, old.B}, {"S", now.S, old.S}, {"Ysum", now.Ysum, old.Ysum}} {
		scale := 0.0
		for _, v := range c.ref {
			scale = max(scale, math.Abs(v))
		}
		for i := range c.ref {
			if math.Abs(c.got[i]-c.ref[i]) > 1e-12*scale {
				t.Fatalf("%s[%d] = %.17g, previously %.17g", c.name, i, c.got[i], c.ref[i])
			}
		}
	}
}

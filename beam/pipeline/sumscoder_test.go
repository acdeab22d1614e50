package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// equalSums reports whether a and b are the same bit for bit.
func equalSums(a, b Sums) bool {
	return a.M == b.M && a.K == b.K && a.N == b.N && slices.Equal(a.G, b.G) && slices.Equal(a.B, b.B) &&
		slices.Equal(a.S, b.S) && slices.Equal(a.Ysum, b.Ysum)
}

// TestSumsCoder checks that decodeSums(encodeSums(s)) is s bit for bit: the
// packed form for a G summed by addBlock (exactly symmetric, about half the
// bytes of the whole), the whole form for an asymmetric G, and an empty Sums;
// and that the combiner's result is unchanged when every partial sum goes
// through the coder (as between prism's stages) before it is merged.
func TestSumsCoder(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	const m, k = 23, 3
	k0 := kernels.Gaussian{Sigma: 1}
	c := randomBlocks(rng, 1, 4, 1)[0][0].Slice(0, m, 0, 4)
	var parts []Sums
	for _, blk := range randomBlocks(rng, 6, 4, k) {
		a, err := kernels.Matrix(ctx, k0, blk[0], c, kernels.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var s Sums
		s.addBlock(backend.Default(), a, blk[1])
		parts = append(parts, s)
	}
	clone := func(s Sums) Sums {
		return Sums{M: s.M, K: s.K, N: s.N, G: slices.Clone(s.G), B: slices.Clone(s.B), S: slices.Clone(s.S), Ysum: slices.Clone(s.Ysum)}
	}
	for i, s := range parts {
		b, err := encodeSums(s)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != sumsPacked || len(b) > 8*(m*(m+1)/2+m*k+m+k)+32 {
			t.Fatalf("part %d: version %d, %d bytes: want the packed form", i, b[0], len(b))
		}
		got, err := decodeSums(b)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSums(got, s) {
			t.Fatalf("part %d: decoded sums differ from the encoded ones", i)
		}
	}
	// The combiner on decoded parts gives the same bits as on the parts.
	var want, got Sums
	fn := sumsFn{}
	for _, s := range parts {
		var err error
		if want, err = fn.MergeAccumulators(want, clone(s)); err != nil {
			t.Fatal(err)
		}
		b, err := encodeSums(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := decodeSums(b)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = fn.MergeAccumulators(got, d); err != nil {
			t.Fatal(err)
		}
		// The accumulator itself crosses a coder too (runner-side merges).
		if b, err = encodeSums(got); err != nil {
			t.Fatal(err)
		}
		if got, err = decodeSums(b); err != nil {
			t.Fatal(err)
		}
	}
	if !equalSums(got, want) {
		t.Fatal("merged decoded partial sums differ from the merged partial sums")
	}
	// An asymmetric G is written whole.
	asym := clone(parts[0])
	asym.G[1] += 1
	b, err := encodeSums(asym)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := decodeSums(b); err != nil || b[0] != sumsWhole || !equalSums(d, asym) {
		t.Fatalf("asymmetric G: version %d, err %v, equal %v", b[0], err, equalSums(d, asym))
	}
	// The empty Sums (CreateAccumulator's).
	if b, err = encodeSums(Sums{}); err != nil {
		t.Fatal(err)
	}
	if d, err := decodeSums(b); err != nil || !equalSums(d, Sums{}) {
		t.Fatalf("empty sums: %+v, %v", d, err)
	}
	// Bad input is an error, not a panic.
	if _, err := encodeSums(Sums{M: 2, K: 1, N: 1, G: make([]float64, 3)}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("bad shape: %v, want ErrShape", err)
	}
	full, _ := encodeSums(parts[0])
	for _, bad := range [][]byte{nil, {9}, {sumsPacked}, full[:len(full)-1]} {
		if _, err := decodeSums(bad); !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("decode %d bytes: %v, want ErrFormat", len(bad), err)
		}
	}
}

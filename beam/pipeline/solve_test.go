package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// solveNystromCopies is the previous solveNystrom, which kept K_MM and
// made a new M x M matrix for each step (six or seven in all): the
// reference the in-place solve must reproduce bit for bit.
func solveNystromCopies(ctx context.Context, k kernels.Kernel, c *mat.Dense, s Sums, lambda float64) (*mat.Dense, []float64, error) {
	be := backend.Default()
	m, _ := c.Dims()
	kmm, err := kernels.Matrix(ctx, k, c, c, kernels.Options{})
	if err != nil {
		return nil, nil, err
	}
	t := mat.NewDense(m, m, nil)
	if err := cholJitter(be, t, 1e-14*float64(m), func(a *mat.Dense) { a.Copy(kmm) }); err != nil {
		return nil, nil, err
	}
	l := t.RawMatrix()
	h := mat.NewDense(m, m, append([]float64(nil), s.G...))
	be.TriSolve(blas.NoTrans, l, h.RawMatrix())
	ht := mat.DenseCopyOf(h.T())
	be.TriSolve(blas.NoTrans, l, ht.RawMatrix())
	h = mat.DenseCopyOf(ht.T())
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			v := (h.At(i, j) + h.At(j, i)) / 2
			h.Set(i, j, v)
			h.Set(j, i, v)
		}
	}
	saved := mat.DenseCopyOf(h)
	if err := cholJitter(be, h, lambda*float64(s.N), func(a *mat.Dense) { a.Copy(saved) }); err != nil {
		return nil, nil, err
	}
	b, mean := s.centred()
	br := b.RawMatrix()
	be.TriSolve(blas.NoTrans, l, br)
	be.CholSolve(h.RawMatrix(), br)
	be.TriSolve(blas.Trans, l, br)
	return b, mean, nil
}

// TestSolveNystromInPlace checks that the solve in the sums' own array
// gives exactly (bit for bit) the coefficients of the previous solve with
// copies, for well-conditioned centres and for duplicated centres (K_MM
// singular: the jitter retries recompute K_MM into T), and that a sum for
// another centre count is an error.
func TestSolveNystromInPlace(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	k := kernels.Gaussian{Sigma: 1.5}
	for _, tc := range []struct {
		name string
		dup  bool
	}{{"distinct", false}, {"duplicated centres", true}} {
		const m, d, kk = 40, 5, 3
		c := mat.NewDense(m, d, nil)
		for i := range c.RawMatrix().Data {
			c.RawMatrix().Data[i] = rng.NormFloat64()
		}
		if tc.dup {
			for j := 0; j < d; j++ {
				c.Set(1, j, c.At(0, j))
			}
		}
		var s Sums
		for _, blk := range randomBlocks(rng, 4, d, kk) {
			a, err := kernels.Matrix(ctx, k, blk[0], c, kernels.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.addBlock(backend.Default(), a, blk[1])
		}
		ref := Sums{M: s.M, K: s.K, N: s.N, G: slices.Clone(s.G), B: slices.Clone(s.B), S: slices.Clone(s.S), Ysum: slices.Clone(s.Ysum)}
		want, wantMean, err := solveNystromCopies(ctx, k, c, ref, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		got, gotMean, err := solveNystrom(ctx, k, c, s, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.RawMatrix().Data, want.RawMatrix().Data) || !slices.Equal(gotMean, wantMean) {
			t.Fatalf("%s: in-place solve differs from the solve with copies (max |diff| %g)", tc.name, maxAbsDiff(got, want))
		}
	}
	c := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	if _, _, err := solveNystrom(ctx, k, c, Sums{M: 4, K: 1, N: 1, G: make([]float64, 16)}, 1e-6); err == nil {
		t.Fatal("sums for 4 centres against 3 centres: no error")
	}
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

// TestTransposeSquare checks the in-place transpose against mat's.
func TestTransposeSquare(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		a := mat.NewDense(n, n, nil)
		for i := range a.RawMatrix().Data {
			a.RawMatrix().Data[i] = float64(i)
		}
		want := mat.DenseCopyOf(a.T())
		transposeSquare(a.RawMatrix())
		if !mat.Equal(a, want) {
			t.Fatalf("n = %d: got %v, want %v", n, mat.Formatted(a), mat.Formatted(want))
		}
	}
}

package purego

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// panicMsg returns the value f panics with ("" if it returns).
func panicMsg(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestGonumPanics checks that the blas.Float64 adapter, whose arguments are
// validated only in its own methods (the asm kernels below do not check),
// panics on invalid Dgemm and Dsyrk arguments with exactly gonum's message.
func TestGonumPanics(t *testing.T) {
	s := func(n int) []float64 { return make([]float64, n) }
	nt, tr := blas.NoTrans, blas.Trans
	type gemmArgs struct {
		tA, tB  blas.Transpose
		m, n, k int
		a       []float64
		lda     int
		b       []float64
		ldb     int
		c       []float64
		ldc     int
	}
	gemms := []gemmArgs{
		{'x', nt, 2, 2, 2, s(4), 2, s(4), 2, s(4), 2},
		{nt, 'x', 2, 2, 2, s(4), 2, s(4), 2, s(4), 2},
		{nt, nt, -1, 2, 2, s(4), 2, s(4), 2, s(4), 2},
		{nt, nt, 2, -1, 2, s(4), 2, s(4), 2, s(4), 2},
		{nt, nt, 2, 2, -1, s(4), 2, s(4), 2, s(4), 2},
		{nt, nt, 2, 2, 2, s(4), 1, s(4), 2, s(4), 2},
		{tr, nt, 3, 2, 2, s(6), 2, s(4), 2, s(6), 2},
		{nt, nt, 2, 2, 2, s(4), 2, s(4), 1, s(4), 2},
		{nt, nt, 2, 2, 2, s(4), 2, s(4), 2, s(4), 1},
		{nt, nt, 2, 2, 2, s(3), 2, s(4), 2, s(4), 2},
		{nt, nt, 2, 2, 2, s(4), 2, s(3), 2, s(4), 2},
		{nt, nt, 2, 2, 2, s(4), 2, s(4), 2, s(3), 2},
		{nt, tr, 2, 3, 2, s(4), 2, s(5), 2, s(6), 3},
	}
	for i, g := range gemms {
		want := panicMsg(func() {
			gonum.Implementation{}.Dgemm(g.tA, g.tB, g.m, g.n, g.k, 1, g.a, g.lda, g.b, g.ldb, 0, g.c, g.ldc)
		})
		got := panicMsg(func() {
			Implementation{}.Dgemm(g.tA, g.tB, g.m, g.n, g.k, 1, g.a, g.lda, g.b, g.ldb, 0, g.c, g.ldc)
		})
		if want == "" {
			t.Fatalf("Dgemm case %d: gonum does not panic; the case is wrong", i)
		}
		if got != want {
			t.Errorf("Dgemm case %d: panic %q, gonum's is %q", i, got, want)
		}
	}
	type syrkArgs struct {
		ul   blas.Uplo
		t    blas.Transpose
		n, k int
		a    []float64
		lda  int
		c    []float64
		ldc  int
	}
	syrks := []syrkArgs{
		{'x', nt, 2, 2, s(4), 2, s(4), 2},
		{blas.Lower, 'x', 2, 2, s(4), 2, s(4), 2},
		{blas.Lower, nt, -1, 2, s(4), 2, s(4), 2},
		{blas.Lower, nt, 2, -1, s(4), 2, s(4), 2},
		{blas.Upper, nt, 2, 3, s(6), 2, s(4), 2},
		{blas.Lower, tr, 3, 2, s(6), 2, s(9), 3},
		{blas.Lower, nt, 2, 2, s(4), 2, s(4), 1},
		{blas.Lower, nt, 2, 2, s(3), 2, s(4), 2},
		{blas.Upper, nt, 2, 2, s(4), 2, s(3), 2},
	}
	for i, g := range syrks {
		want := panicMsg(func() {
			gonum.Implementation{}.Dsyrk(g.ul, g.t, g.n, g.k, 1, g.a, g.lda, 0, g.c, g.ldc)
		})
		got := panicMsg(func() {
			Implementation{}.Dsyrk(g.ul, g.t, g.n, g.k, 1, g.a, g.lda, 0, g.c, g.ldc)
		})
		if want == "" {
			t.Fatalf("Dsyrk case %d: gonum does not panic; the case is wrong", i)
		}
		if got != want {
			t.Errorf("Dsyrk case %d: panic %q, gonum's is %q", i, got, want)
		}
	}
}

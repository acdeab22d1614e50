package kpca

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestHelmertBorderIdentity checks the identity behind the mean-adjusted
// Add (package documentation, "One bordered update"): with K'_m = U diag(d)
// U^T (U n x (m-1), the batch eigenvectors in 1^perp) and g, kappa, h from
// helmertBorder,
//
//	K'_{m+1} = B [diag(d) U^T g; g^T U kappa] B^T,  B = [[U; 0] h],
//
// B has orthonormal columns, and U^T g recovers g (g lies in span U =
// 1^perp of R^m). Entries are <= 1 and every product has <= m+1 terms:
// 1e-12 absolute is rounding with margin; a wrong h, sign or scale shows
// at the 1e-2 level.
func TestHelmertBorderIdentity(t *testing.T) {
	k := gaussian(t, 1.5)
	x := randPoints(5, 22, 3, 1)
	full := kernelMatrix(t, k, x)
	for m := 2; m < 22; m++ {
		km := mat.DenseCopyOf(full.Slice(0, m, 0, m))
		rowSum := make([]float64, m)
		total := 0.0
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				rowSum[i] += km.At(i, j)
			}
			total += rowSum[i]
		}
		a := make([]float64, m)
		for i := range a {
			a[i] = full.At(i, m)
		}
		g, kappa, h := helmertBorder(rowSum, total, a, full.At(m, m))
		// U: eigenvectors of K'_m orthogonal to 1 (drop the one closest to 1/sqrt(m)).
		vals, vecs := batchEig(t, centredBatch(km))
		drop, best := 0, -1.0
		for j := range vals {
			if s := math.Abs(mat.Sum(vecs.ColView(j))); s > best {
				drop, best = j, s
			}
		}
		var cols []int
		for j := range vals {
			if j != drop {
				cols = append(cols, j)
			}
		}
		r := len(cols)
		bm := mat.NewDense(m+1, r+1, nil)
		inner := mat.NewDense(r+1, r+1, nil)
		z := make([]float64, r)
		for jj, j := range cols {
			for i := 0; i < m; i++ {
				bm.Set(i, jj, vecs.At(i, j))
				z[jj] += vecs.At(i, j) * g[i]
			}
			inner.Set(jj, jj, vals[j])
			inner.Set(jj, r, z[jj])
			inner.Set(r, jj, z[jj])
		}
		inner.Set(r, r, kappa)
		for i := 0; i <= m; i++ {
			bm.Set(i, r, h[i])
		}
		var bt, got mat.Dense
		bt.Mul(bm, inner)
		got.Mul(&bt, bm.T())
		want := centredBatch(full.Slice(0, m+1, 0, m+1).(*mat.Dense))
		var diff mat.Dense
		diff.Sub(&got, want)
		if dd := mat.Norm(&diff, math.Inf(1)); dd > 1e-12 {
			t.Fatalf("m=%d: bordered form differs from K'_{m+1} by %g", m, dd)
		}
		var gram mat.Dense
		gram.Mul(bm.T(), bm)
		for i := 0; i <= r; i++ {
			for j := 0; j <= r; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(gram.At(i, j)-want) > 1e-12 {
					t.Fatalf("m=%d: B^T B - I at (%d,%d) = %g", m, i, j, gram.At(i, j)-want)
				}
			}
		}
		// U U^T g = g: the border lies in the held span.
		for i := 0; i < m; i++ {
			s := 0.0
			for jj := range cols {
				s += bm.At(i, jj) * z[jj]
			}
			if math.Abs(s-g[i]) > 1e-12 {
				t.Fatalf("m=%d: (U U^T g)_%d = %g, g = %g", m, i, s, g[i])
			}
		}
	}
}

// TestBorderedAgreesWithTwoUpdates grows the same decompositions with one
// bordered update and with the paper's two rank-one updates per point
// (with and without mean adjustment, full and truncated): the eigenvalues
// agree to 1e-12 relative to the largest (both are backward stable; each
// step errs by ~m eps), and the bordered path's orthogonality is at most
// 1e-12.
func TestBorderedAgreesWithTwoUpdates(t *testing.T) {
	x := randPoints(11, 60, 3, 1)
	k := gaussian(t, 1.2)
	for _, b := range backends(t) {
		for _, mean := range []bool{false, true} {
			for _, comps := range []int{0, 10} {
				name := fmt.Sprintf("%s/mean=%v/r=%d", b.Name(), mean, comps)
				one, _ := NewIncremental(k, 3, Options{Backend: b, MeanAdjust: mean, Components: comps})
				two, _ := NewIncremental(k, 3, Options{Backend: b, MeanAdjust: mean, Components: comps})
				two.twoUpdate = true
				if err := one.AddRows(context.Background(), x); err != nil {
					t.Fatal(err)
				}
				if err := two.AddRows(context.Background(), x); err != nil {
					t.Fatal(err)
				}
				v1, _ := one.Eigen()
				v2, _ := two.Eigen()
				if len(v1) != len(v2) {
					t.Fatalf("%s: %d vs %d eigenvalues", name, len(v1), len(v2))
				}
				for j := range v1 {
					if math.Abs(v1[j]-v2[j]) > 1e-12*v1[0] {
						t.Fatalf("%s: eigenvalue %d: bordered %g, two updates %g", name, j, v1[j], v2[j])
					}
				}
				if comps > 0 && math.Abs(one.TruncationBound()-two.TruncationBound()) > 1e-9*v1[0] {
					t.Fatalf("%s: truncation bounds %g vs %g", name, one.TruncationBound(), two.TruncationBound())
				}
				if d := one.Drift(); d.Orth > 1e-12 {
					t.Fatalf("%s: bordered drift %+v", name, d)
				}
				st1, st2 := one.Stats(), two.Stats()
				if st1.Updates != 0 || st1.Bordered < 59 || st2.Bordered != 0 || st2.Updates < 100 {
					t.Fatalf("%s: stats %+v and %+v", name, st1, st2)
				}
			}
		}
	}
}

package check

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

// TestScale checks every part and the special betas on a 5x4 view with
// stride 6: inside the part C becomes beta*C (exactly; beta = 0 clears NaN),
// everything else, padding included, is untouched.
func TestScale(t *testing.T) {
	const m, n, ld = 5, 4, 6
	for _, part := range []Part{Full, Lower, Upper} {
		for _, beta := range []float64{0, 1, -2.5} {
			c := make([]float64, (m-1)*ld+n)
			for i := range c {
				c[i] = float64(i) + 1
			}
			c[0], c[ld+3] = math.NaN(), math.NaN()
			orig := append([]float64(nil), c...)
			Scale(part, m, n, beta, c, ld)
			for i := 0; i < m; i++ {
				for j := 0; j < ld && i*ld+j < len(c); j++ {
					in := j < n && (part == Full || part == Lower && j <= i || part == Upper && j >= i)
					got, old := c[i*ld+j], orig[i*ld+j]
					want := old
					if in && beta != 1 {
						want = beta * old
						if beta == 0 {
							want = 0
						}
					}
					if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
						t.Fatalf("part %d beta %v: C[%d,%d] = %v, want %v", part, beta, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestReflect checks MirrorLower and TransposeSquare across several 32x32
// tiles (n = 70, stride 73) against the definitions.
func TestReflect(t *testing.T) {
	const n, ld = 70, 73
	fill := func() []float64 {
		a := make([]float64, (n-1)*ld+n)
		for i := range a {
			a[i] = float64(i)
		}
		return a
	}
	orig := fill()
	m := blas64.General{Rows: n, Cols: n, Stride: ld, Data: fill()}
	MirrorLower(m)
	tr := fill()
	TransposeSquare(n, tr, ld)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			wantM := orig[i*ld+j]
			if j > i {
				wantM = orig[j*ld+i]
			}
			if m.Data[i*ld+j] != wantM {
				t.Fatalf("MirrorLower: [%d,%d] = %v, want %v", i, j, m.Data[i*ld+j], wantM)
			}
			if tr[i*ld+j] != orig[j*ld+i] {
				t.Fatalf("TransposeSquare: [%d,%d] = %v, want %v", i, j, tr[i*ld+j], orig[j*ld+i])
			}
		}
		for j := n; j < ld && i*ld+j < len(orig); j++ {
			if m.Data[i*ld+j] != orig[i*ld+j] || tr[i*ld+j] != orig[i*ld+j] {
				t.Fatalf("padding at [%d,%d] changed", i, j)
			}
		}
	}
}

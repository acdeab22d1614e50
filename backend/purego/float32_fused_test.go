package purego_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/purego"
)

// plain hides every optional interface of the backend it wraps, so that the
// package backend functions take their generic path.
type plain struct{ backend.Backend }

// points32 returns k random float32 points of dimension d (row stride
// d+pad) and their squared norms, summed in float64 and rounded once.
func points32(rng *rand.Rand, k, d, pad int) (blas32.General, []float32) {
	g := blas32.General{Rows: k, Cols: d, Stride: d + pad, Data: make([]float32, max(0, (k-1)*(d+pad)+d))}
	nn := make([]float32, k)
	for i := 0; i < k; i++ {
		var s float64
		for p := 0; p < d; p++ {
			v := float32(rng.NormFloat64())
			g.Data[i*g.Stride+p] = v
			s += float64(v) * float64(v)
		}
		nn[i] = float32(s)
	}
	return g, nn
}

// gaussTol is the stated accuracy of a single-precision kernel entry k64
// (the float64 kernel of the same float32 points): the squared distance is
// off by at most (d+4) 2^-23 (|x|^2 + |y|^2) (the norms rounded to float32,
// d float32 products and sums, three roundings forming the argument), which
// moves the value by gamma times that relative, and the exponential adds
// under 1 ulp (2^-23 relative); 2^-140 absolute covers subnormal results.
func gaussTol(k64 float64, gamma float32, d int, xn, yn float32) float64 {
	return k64*(float64(gamma)*float64(d+4)*0x1p-23*(float64(xn)+float64(yn))+0x1p-23) + 0x1p-140
}

// TestGaussianBlock32 runs purego's GaussianBlock32 on shapes inside one
// GEMM block, across several blocks in each dimension and with ragged
// edges, with strided views and gaps in dst that must stay untouched, and compares
// it with the float64 kernel of the same points (gaussTol) and with the
// generic single-precision path of package backend (twice gaussTol, both
// being that close to float64).
func TestGaussianBlock32(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	b := purego.New()
	shapes := [][3]int{{1, 1, 1}, {5, 9, 0}, {33, 17, 3}, {100, 41, 7}, {77, 300, 50}, {70, 3000, 2}, {64, 8, 784}, {531, 4200, 9}, {300, 70, 700}}
	for _, small := range []bool{false} {
		for _, sh := range shapes {
			m, n, d := sh[0], sh[1], sh[2]
			t.Run(fmt.Sprintf("small=%v/%dx%dx%d", small, m, n, d), func(t *testing.T) {
				x, xn := points32(rng, m, d, 1)
				y, yn := points32(rng, n, d, 2)
				gamma := float32(0.5 / float64(max(d, 1)))
				const sentinel = -7
				ld := n + 3
				dst := blas32.General{Rows: m, Cols: n, Stride: ld, Data: make([]float32, m*ld)}
				for i := range dst.Data {
					dst.Data[i] = sentinel
				}
				ref := blas32.General{Rows: m, Cols: n, Stride: n, Data: make([]float32, m*n)}
				backend.GaussianBlock32(b, x, y, xn, yn, gamma, dst)
				backend.GaussianBlock32(plain{b}, x, y, xn, yn, gamma, ref)
				worst := 0.0
				for i := 0; i < m; i++ {
					for j := 0; j < ld; j++ {
						got := dst.Data[i*ld+j]
						if j >= n {
							if got != sentinel {
								t.Fatalf("dst[%d,%d] = %v outside the block", i, j, got)
							}
							continue
						}
						var s float64
						for p := 0; p < d; p++ {
							e := float64(x.Data[i*x.Stride+p]) - float64(y.Data[j*y.Stride+p])
							s += e * e
						}
						k64 := math.Exp(-float64(gamma) * s)
						tol := gaussTol(k64, gamma, d, xn[i], yn[j])
						if e := math.Abs(float64(got) - k64); e > tol {
							t.Fatalf("K[%d,%d] = %v, float64 %v (tol %.3g)", i, j, got, k64, tol)
						} else if e/tol > worst {
							worst = e / tol
						}
						if e := math.Abs(float64(got) - float64(ref.Data[i*n+j])); e > 2*tol {
							t.Fatalf("K[%d,%d] = %v, generic path %v (tol %.3g)", i, j, got, ref.Data[i*n+j], 2*tol)
						}
					}
				}
				t.Logf("max error %.3f of the tolerance", worst)
			})
		}
	}
}

// TestExp32 compares purego's Exp32 with the float64 exponential rounded to
// float32 (within the stated 1 ulp: 2^-23 relative, or 2^-149 for subnormal results),
// in place and into a longer dst, and checks the special cases.
func TestExp32(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	b := purego.New()
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 100, 1001} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(-105 + 195*rng.Float64())
		}
		dst := make([]float32, n+3)
		dst[n] = 42
		b.Exp32(dst, src)
		if dst[n] != 42 {
			t.Fatalf("n=%d: wrote past len(src)", n)
		}
		for i, x := range src {
			want := math.Exp(float64(x))
			if math.IsInf(float64(float32(want)), 1) {
				if !math.IsInf(float64(dst[i]), 1) {
					t.Fatalf("Exp32(%v) = %v, want +Inf", x, dst[i])
				}
				continue
			}
			if e := math.Abs(float64(dst[i]) - want); e > want*0x1p-23+0x1p-149 {
				t.Fatalf("Exp32(%v) = %v, want %v", x, dst[i], want)
			}
		}
		b.Exp32(src, src)
		for i := range src {
			if math.Float32bits(src[i]) != math.Float32bits(dst[i]) {
				t.Fatalf("n=%d: in place differs at %d", n, i)
			}
		}
	}
	sp := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, 89, -104}
	got := make([]float32, len(sp))
	b.Exp32(got, sp)
	if !(got[0] != got[0]) || !math.IsInf(float64(got[1]), 1) || got[2] != 0 || got[3] != 1 || !math.IsInf(float64(got[4]), 1) || got[5] != 0 {
		t.Fatalf("special cases: %v", got)
	}
}

// TestFloat32FusedShapes: bad arguments panic with an error wrapping
// zonal.ErrShape before anything is computed.
func TestFloat32FusedShapes(t *testing.T) {
	b := purego.New()
	g := func(r, c int) blas32.General {
		return blas32.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float32, r*max(c, 1))}
	}
	cases := map[string]func(){
		"Exp32 short dst": func() { b.Exp32(make([]float32, 2), make([]float32, 3)) },
		"dims":            func() { b.GaussianBlock32(g(3, 2), g(4, 3), make([]float32, 3), make([]float32, 4), 1, g(3, 4)) },
		"dst":             func() { b.GaussianBlock32(g(3, 2), g(4, 2), make([]float32, 3), make([]float32, 4), 1, g(4, 3)) },
		"norms":           func() { b.GaussianBlock32(g(3, 2), g(4, 2), make([]float32, 2), make([]float32, 4), 1, g(3, 4)) },
		"short data": func() {
			x := g(3, 2)
			x.Data = x.Data[:5]
			b.GaussianBlock32(x, g(4, 2), make([]float32, 3), make([]float32, 4), 1, g(3, 4))
		},
	}
	for name, f := range cases {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok || !errors.Is(err, zonal.ErrShape) {
					t.Errorf("%s: panic %v, want an error wrapping zonal.ErrShape", name, r)
				}
			}()
			f()
		}()
	}
}

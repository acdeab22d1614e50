package backend_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

func rand32(rng *rand.Rand, r, c int) (blas32.General, blas64.General) {
	g := blas32.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float32, r*max(c, 1))}
	h := blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*max(c, 1))}
	for i := range g.Data {
		g.Data[i] = float32(rng.NormFloat64())
		h.Data[i] = float64(g.Data[i])
	}
	return g, h
}

// The float32 products agree with the float64 ones on the same (float32)
// inputs to float32 rounding: |err| <= 8 k eps32 max|a||b| is a loose bound
// on a dot product of length k accumulated in float32.
func TestFloat32Products(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sz := range [][3]int{{0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {1, 1, 1}, {17, 9, 33}, {64, 65, 70}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tr := range [][2]blas.Transpose{{blas.NoTrans, blas.NoTrans}, {blas.Trans, blas.NoTrans}, {blas.NoTrans, blas.Trans}, {blas.Trans, blas.Trans}} {
				ar, ac := m, k
				if tr[0] == blas.Trans {
					ar, ac = k, m
				}
				br, bc := k, n
				if tr[1] == blas.Trans {
					br, bc = n, k
				}
				a32, a64 := rand32(rng, ar, ac)
				b32, b64 := rand32(rng, br, bc)
				c32, c64 := rand32(rng, m, n)
				backend.Sgemm(b, tr[0], tr[1], 0.5, a32, b32, 2, c32)
				b.Gemm(tr[0], tr[1], 0.5, a64, b64, 2, c64)
				tol := 8 * float64(k+2) * 6e-8 * 16
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if d := math.Abs(float64(c32.Data[i*c32.Stride+j]) - c64.Data[i*c64.Stride+j]); d > tol {
							t.Fatalf("%s Sgemm %v %v: C[%d,%d] = %g, float64 %g", name, sz, tr, i, j, c32.Data[i*c32.Stride+j], c64.Data[i*c64.Stride+j])
						}
					}
				}
			}
			for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				ar, ac := m, k
				if tr == blas.Trans {
					ar, ac = k, m
				}
				a32, a64 := rand32(rng, ar, ac)
				c32, c64 := rand32(rng, m, m)
				backend.Ssyrk(b, tr, 1, a32, 0, c32)
				b.Syrk(tr, 1, a64, 0, c64)
				tol := 8 * float64(k+2) * 6e-8 * 16
				for i := 0; i < m; i++ {
					for j := 0; j < m; j++ {
						if d := math.Abs(float64(c32.Data[i*c32.Stride+j]) - c64.Data[i*c64.Stride+j]); d > tol {
							t.Fatalf("%s Ssyrk %v %v: C[%d,%d] = %g, float64 %g", name, sz, tr, i, j, c32.Data[i*c32.Stride+j], c64.Data[i*c64.Stride+j])
						}
					}
				}
			}
		}
	}
}

// GaussianBlock32 matches GaussianBlock within float32 rounding of the
// distance (relative 1e-4 on entries of size up to 1 for distances of order
// 10: gamma*|d| ulp error times e^-x <= 1).
func TestGaussianBlock32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b := backend.Default()
	x32, x64 := rand32(rng, 23, 7)
	y32, y64 := rand32(rng, 19, 7)
	norms := func(g blas64.General) ([]float64, []float32) {
		n64 := make([]float64, g.Rows)
		n32 := make([]float32, g.Rows)
		for i := range n64 {
			for _, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
				n64[i] += v * v
			}
			n32[i] = float32(n64[i])
		}
		return n64, n32
	}
	xn64, xn32 := norms(x64)
	yn64, yn32 := norms(y64)
	d32 := blas32.General{Rows: 23, Cols: 19, Stride: 19, Data: make([]float32, 23*19)}
	d64 := blas64.General{Rows: 23, Cols: 19, Stride: 19, Data: make([]float64, 23*19)}
	backend.GaussianBlock32(b, x32, y32, xn32, yn32, 0.3, d32)
	backend.GaussianBlock(b, x64, y64, xn64, yn64, 0.3, d64)
	for i := range d64.Data {
		if d := math.Abs(float64(d32.Data[i]) - d64.Data[i]); d > 1e-4 {
			t.Fatalf("entry %d: %g, float64 %g", i, d32.Data[i], d64.Data[i])
		}
	}
}

// Exp32 on every backend (and the generic path, b = nil) is within 1 ulp of
// the exact exponential (2^-23 relative, 2^-149 absolute for subnormal
// results: the bound of purego's vector exponential; the generic path
// rounds the float64 exponential, 0.5 ulp), with exact special cases.
func TestExp32Accuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := []float32{0, 1, -1, 80, -100, 88.72283, 88.72284, -103.97207, -103.97208, float32(math.Inf(1)), float32(math.Inf(-1))}
	for i := 0; i < 1000; i++ {
		src = append(src, float32(-105+195*rng.Float64()))
	}
	bs := []backend.Backend{nil}
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	for _, b := range bs {
		dst := make([]float32, len(src))
		backend.Exp32(b, dst, src)
		for i, v := range src {
			want := math.Exp(float64(v))
			if math.IsInf(float64(float32(want)), 1) || want == 0 || v == 0 {
				if dst[i] != float32(want) {
					t.Errorf("%T: Exp32(%g) = %g, want %g", b, v, dst[i], float32(want))
				}
				continue
			}
			if e := math.Abs(float64(dst[i]) - want); e > want*0x1p-23+0x1p-149 {
				t.Errorf("%T: Exp32(%g) = %g, want %g", b, v, dst[i], want)
			}
		}
		nan := []float32{float32(math.NaN())}
		if backend.Exp32(b, nan, nan); nan[0] == nan[0] {
			t.Errorf("%T: Exp32(NaN) = %g", b, nan[0])
		}
	}
}

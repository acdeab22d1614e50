package backend_test

import (
	"fmt"
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

// view32 is an r x c float32 view with stride c+pad whose padding is NaN
// (reading it would poison the result, writing it is detected by
// unchanged), and its values widened to a float64 view of the same shape.
type view32 struct {
	g    blas32.General
	snap []float32
	wide blas64.General
}

func newView32(rng *rand.Rand, r, c, pad int, nanInside bool) *view32 {
	stride := max(c+pad, 1)
	v := &view32{g: blas32.General{Rows: r, Cols: c, Stride: stride, Data: make([]float32, r*stride+pad)}}
	v.wide = blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: make([]float64, r*max(c, 1))}
	for i := range v.g.Data {
		v.g.Data[i] = float32(math.NaN())
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			x := float32(2*rng.Float64() - 1)
			v.wide.Data[i*v.wide.Stride+j] = float64(x)
			if nanInside {
				x = float32(math.NaN()) // beta == 0: must be ignored
			}
			v.g.Data[i*stride+j] = x
		}
	}
	v.snap = append([]float32(nil), v.g.Data...)
	return v
}

// unchanged reports the first padding element of v that differs from its
// snapshot bit for bit.
func (v *view32) unchanged(t *testing.T, what string) {
	t.Helper()
	for p, x := range v.g.Data {
		i, j := p/v.g.Stride, p%v.g.Stride
		if i < v.g.Rows && j < v.g.Cols {
			continue
		}
		if math.Float32bits(x) != math.Float32bits(v.snap[p]) {
			t.Fatalf("%s: padding element %d written", what, p)
		}
	}
}

func absOf(g blas64.General) blas64.General {
	h := g
	h.Data = make([]float64, len(g.Data))
	for i, v := range g.Data {
		h.Data[i] = math.Abs(v)
	}
	return h
}

// gamma32 is gamma_k = k u / (1 - k u) for the float32 unit roundoff
// u = 2^-24.
func gamma32(k int) float64 {
	ku := float64(k) * 0x1p-24
	return ku / (1 - ku)
}

// TestFloat32ProductsBound: every backend's Sgemm and Ssyrk (its own
// Float32Products, or the generic fallback) agree with the same backend's
// float64 Gemm and Syrk on the same float32 inputs within the float32 error
// bound of a k-term product, |fl32(alpha A B + beta C) - (alpha A B + beta
// C)| <= gamma32(k+2) (|alpha||A||B| + |beta||C|) elementwise (Higham, Thm
// 3.5, any summation order, blocked or FMA; the float64 reference's own
// error, 2^29 times smaller, is neglected), with the bound doubled for
// slack. Operands are views with NaN padding (non-unit strides) that must
// be neither read nor written; with beta == 0 the NaN in C must be ignored.
// Shapes cover edge tiles, several cache blocks, the goroutine split and the
// split along k.
func TestFloat32ProductsBound(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {7, 17, 2}, {65, 33, 129}, {300, 290, 310}, {13, 40, 3000}}
	if testing.Short() {
		shapes = shapes[:3]
	}
	trs := []blas.Transpose{blas.NoTrans, blas.Trans}
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := b.(backend.Float32Products); !ok {
			t.Errorf("backend %s does not implement Float32Products", name)
		}
		for si, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tA := range trs {
				for _, tB := range trs {
					rng := rand.New(rand.NewPCG(uint64(si), 9))
					ar, ac, br, bc := m, k, k, n
					if tA == blas.Trans {
						ar, ac = k, m
					}
					if tB == blas.Trans {
						br, bc = n, k
					}
					av, bv := newView32(rng, ar, ac, 1, false), newView32(rng, br, bc, 2, false)
					for _, beta := range []float32{-0.5, 0} {
						cv := newView32(rng, m, n, 3, beta == 0)
						what := fmt.Sprintf("%s Sgemm %c%c %dx%dx%d beta=%g", name, tA, tB, m, n, k, beta)
						backend.Sgemm(b, tA, tB, 1.5, av.g, bv.g, beta, cv.g)
						cv.unchanged(t, what)
						want := blas64.General{Rows: m, Cols: n, Stride: max(n, 1), Data: append([]float64(nil), cv.wide.Data...)}
						b.Gemm(tA, tB, 1.5, av.wide, bv.wide, float64(beta), want)
						bound := blas64.General{Rows: m, Cols: n, Stride: max(n, 1), Data: make([]float64, len(want.Data))}
						b.Gemm(tA, tB, 1.5, absOf(av.wide), absOf(bv.wide), 0, bound)
						compare32(t, what, cv.g, want, bound, math.Abs(float64(beta)), cv.wide, k)
					}
				}
			}
			// Ssyrk: C = A A^T (NoTrans, A n x k) and A^T A (Trans, A k x n).
			for _, tr := range trs {
				rng := rand.New(rand.NewPCG(uint64(si), 10))
				ar, ac := m, k
				if tr == blas.Trans {
					ar, ac = k, m
				}
				av := newView32(rng, ar, ac, 1, false)
				for _, beta := range []float32{-0.5, 0} {
					cv := newView32(rng, m, m, 2, beta == 0)
					// Ssyrk reads only the lower triangle of C: make the old C
					// symmetric so the float64 reference sees the same values.
					for i := 0; i < m; i++ {
						for j := i + 1; j < m; j++ {
							cv.g.Data[i*cv.g.Stride+j] = cv.g.Data[j*cv.g.Stride+i]
							cv.wide.Data[i*cv.wide.Stride+j] = cv.wide.Data[j*cv.wide.Stride+i]
						}
					}
					what := fmt.Sprintf("%s Ssyrk %c n=%d k=%d beta=%g", name, tr, m, k, beta)
					backend.Ssyrk(b, tr, 0.75, av.g, beta, cv.g)
					cv.unchanged(t, what)
					want := blas64.General{Rows: m, Cols: m, Stride: max(m, 1), Data: append([]float64(nil), cv.wide.Data...)}
					b.Syrk(tr, 0.75, av.wide, float64(beta), want)
					bound := blas64.General{Rows: m, Cols: m, Stride: max(m, 1), Data: make([]float64, len(want.Data))}
					b.Syrk(tr, 0.75, absOf(av.wide), 0, bound)
					compare32(t, what, cv.g, want, bound, math.Abs(float64(beta)), cv.wide, k)
				}
			}
		}
	}
}

// compare32 checks |got - want| <= 2 gamma32(k+2) (bound + absBeta |c0|)
// entry by entry (bound = |alpha||op(A)||op(B)|, c0 the old C).
func compare32(t *testing.T, what string, got blas32.General, want, bound blas64.General, absBeta float64, c0 blas64.General, k int) {
	t.Helper()
	g := 2 * gamma32(k+2)
	for i := 0; i < got.Rows; i++ {
		for j := 0; j < got.Cols; j++ {
			x := float64(got.Data[i*got.Stride+j])
			w := want.Data[i*want.Stride+j]
			tol := g * (bound.Data[i*bound.Stride+j] + absBeta*math.Abs(c0.Data[i*c0.Stride+j]))
			if !(math.Abs(x-w) <= tol) {
				t.Fatalf("%s: C[%d,%d] = %v, float64 %v (tolerance %.3g)", what, i, j, x, w, tol)
			}
		}
	}
}

// onlyBackend hides the optional interfaces of a backend, selecting the
// generic implementations of the package functions.
type onlyBackend struct{ backend.Backend }

// TestPrepareGaussian32: blocks against prepared centres have the bits of
// GaussianBlock32 on the same backend, through the backend's preparation
// (purego packs the centres once) and through the generic one; shape
// errors panic.
func TestPrepareGaussian32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, be := range []backend.Backend{b, onlyBackend{b}} {
			x32, _ := rand32(rng, 29, 9)
			y32, _ := rand32(rng, 37, 9)
			xn := make([]float32, 29)
			yn := make([]float32, 37)
			for i := range xn {
				xn[i] = float32(i%5) + 9
			}
			for i := range yn {
				yn[i] = float32(i%3) + 9
			}
			want := blas32.General{Rows: 29, Cols: 37, Stride: 40, Data: make([]float32, 29*40)}
			got := blas32.General{Rows: 29, Cols: 37, Stride: 40, Data: make([]float32, 29*40)}
			backend.GaussianBlock32(be, x32, y32, xn, yn, 0.2, want)
			c := backend.PrepareGaussian32(be, y32, yn, 0.2)
			c.GaussianBlock32(x32, xn, got)
			for i := range want.Data {
				if math.Float32bits(want.Data[i]) != math.Float32bits(got.Data[i]) {
					t.Fatalf("%s %T: entry %d = %v, GaussianBlock32 %v", name, be, i, got.Data[i], want.Data[i])
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("%s %T: wrong norms did not panic", name, be)
					}
				}()
				c.GaussianBlock32(x32, xn[:3], got)
			}()
		}
	}
}

// TestRows32Products: DotRows32 and AxpyRows32 against float64 loops on
// the widened entries, on every backend and the generic path, within the
// (n + 4) 2^-52 sum |terms| of a float64 sum.
func TestRows32Products(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, be := range []backend.Backend{b, onlyBackend{b}} {
			k, _ := rand32(rng, 11, 53)
			v := make([]float64, 53)
			tv := make([]float64, 11)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			for i := range tv {
				tv[i] = rng.NormFloat64()
			}
			dst := make([]float64, 11)
			acc := make([]float64, 53)
			backend.DotRows32(be, dst, k, v)
			backend.AxpyRows32(be, acc, k, tv)
			for i := range dst {
				want, abs := 0.0, 0.0
				for j := range v {
					p := float64(k.Data[i*k.Stride+j]) * v[j]
					want, abs = want+p, abs+math.Abs(p)
				}
				if math.Abs(dst[i]-want) > 57*0x1p-52*abs {
					t.Fatalf("%s: DotRows32[%d] = %v, want %v", name, i, dst[i], want)
				}
			}
			for j := range acc {
				want, abs := 0.0, 0.0
				for i := range tv {
					p := tv[i] * float64(k.Data[i*k.Stride+j])
					want, abs = want+p, abs+math.Abs(p)
				}
				if math.Abs(acc[j]-want) > 15*0x1p-52*abs {
					t.Fatalf("%s: AxpyRows32[%d] = %v, want %v", name, j, acc[j], want)
				}
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("%s: wrong shape did not panic", name)
					}
				}()
				backend.DotRows32(be, dst[:3], k, v)
			}()
		}
	}
}

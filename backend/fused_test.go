package backend_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// plain hides every optional interface of the backend it wraps: only the
// Backend methods are promoted, so the fused functions take their generic
// path (b.Gemm and the shared element-wise kernels).
type plain struct{ backend.Backend }

// fusedBackends returns every compiled-in backend, each also wrapped in
// plain, so both paths of every fused function are exercised.
func fusedBackends(t *testing.T) map[string]backend.Backend {
	out := map[string]backend.Backend{}
	for _, name := range backend.Names() {
		b, err := backend.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
		out[name+"/generic"] = plain{b}
	}
	return out
}

func stridedGeneral(rng *rand.Rand, r, c, stride int) blas64.General {
	g := blas64.General{Rows: r, Cols: c, Stride: stride, Data: make([]float64, max(0, (r-1)*stride+c))}
	for i := range g.Data {
		g.Data[i] = 2*rng.Float64() - 1
	}
	return g
}

// TestGaussianBlock compares backend.GaussianBlock, on the fused and the
// generic path of every backend, with exp(-gamma |x_i - y_j|^2) computed
// pairwise by math.Exp. The distances of entries in [-1, 1] are at most 4d,
// so the error of |x|^2 + |y|^2 - 2 x.y is at most about 3 (d+2) u 4d
// absolutely; times gamma and the value of exp (<= 1), plus a few ulp of the
// exponential itself: tol = gamma 12 d (d+2) u + 4 u.
func TestGaussianBlock(t *testing.T) {
	const u = 0x1p-53
	rng := rand.New(rand.NewPCG(5, 6))
	for name, b := range fusedBackends(t) {
		for _, sh := range [][3]int{{1, 1, 1}, {7, 5, 3}, {33, 70, 17}, {130, 9, 64}, {3, 4, 0}} {
			m, n, d := sh[0], sh[1], sh[2]
			x := stridedGeneral(rng, m, d, d+1)
			y := stridedGeneral(rng, n, d, d+3)
			xn, yn := rowNorms(x), rowNorms(y)
			dst := stridedGeneral(rng, m, n, n+2) // old contents must be ignored
			dst.Data[0] = math.NaN()
			gamma := 0.7
			backend.GaussianBlock(b, x, y, xn, yn, gamma, dst)
			tol := gamma*12*float64(d)*float64(d+2)*u + 4*u
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					d2 := 0.0
					for k := 0; k < d; k++ {
						v := x.Data[i*x.Stride+k] - y.Data[j*y.Stride+k]
						d2 += v * v
					}
					want := math.Exp(-gamma * d2)
					if got := dst.Data[i*dst.Stride+j]; !(math.Abs(got-want) <= tol) {
						t.Fatalf("%s %v: K[%d,%d] = %v, want %v (tol %g)", name, sh, i, j, got, want, tol)
					}
				}
			}
		}
		// A shape mismatch panics with an error wrapping zonal.ErrShape on
		// both paths.
		x := stridedGeneral(rng, 3, 2, 2)
		y := stridedGeneral(rng, 4, 2, 2)
		bad := stridedGeneral(rng, 3, 5, 5)
		expectShapePanic(t, name+" GaussianBlock dst", func() {
			backend.GaussianBlock(b, x, y, rowNorms(x), rowNorms(y), 1, bad)
		})
		good := stridedGeneral(rng, 3, 4, 4)
		expectShapePanic(t, name+" GaussianBlock norms", func() {
			backend.GaussianBlock(b, x, y, rowNorms(x)[:2], rowNorms(y), 1, good)
		})
	}
}

func rowNorms(g blas64.General) []float64 {
	out := make([]float64, g.Rows)
	for i := range out {
		for _, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			out[i] += v * v
		}
	}
	return out
}

func expectShapePanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, zonal.ErrShape) {
			t.Fatalf("%s: recovered %v, want a panic wrapping zonal.ErrShape", what, r)
		}
	}()
	f()
}

// TestElementwise checks Exp (within 4 ulp of math.Exp, which is itself
// within 1 ulp, on [-700, 700] and at the special values), the Gegenbauer
// recurrence against closed forms (Chebyshev T_l(t) = cos(l acos t) for d = 2,
// Legendre P_2, P_3 for d = 3; within 64 u), AxpySlice and SumSq against plain
// loops (within n u of the sums' magnitude), with a nil backend and with every
// compiled-in backend on both paths.
func TestElementwise(t *testing.T) {
	const u = 0x1p-53
	bs := fusedBackends(t)
	bs["nil"] = nil
	rng := rand.New(rand.NewPCG(7, 8))
	for name, b := range bs {
		for _, n := range []int{0, 1, 3, 4, 5, 8, 13, 64, 65} {
			src := make([]float64, n)
			for i := range src {
				src[i] = 1400*rng.Float64() - 700
			}
			if n >= 4 {
				src[0], src[1], src[2], src[3] = math.NaN(), math.Inf(1), math.Inf(-1), 0
			}
			dst := make([]float64, n+1)
			dst[n] = 42
			backend.Exp(b, dst, src)
			if dst[n] != 42 {
				t.Fatalf("%s: Exp wrote past len(src)", name)
			}
			for i, v := range src {
				want := math.Exp(v)
				got := dst[i]
				switch {
				case math.IsNaN(want):
					if !math.IsNaN(got) {
						t.Fatalf("%s: Exp(NaN) = %v", name, got)
					}
				case math.IsInf(want, 0) || want == 0:
					if got != want {
						t.Fatalf("%s: Exp(%v) = %v, want %v", name, v, got, want)
					}
				case math.Abs(got-want) > 8*u*want:
					t.Fatalf("%s: Exp(%v) = %v, want %v", name, v, got, want)
				}
			}

			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i], y[i] = 2*rng.Float64()-1, 2*rng.Float64()-1
			}
			want := append([]float64(nil), y...)
			for i := range want {
				want[i] += -1.5 * x[i]
			}
			backend.AxpySlice(b, -1.5, x, y)
			for i := range y {
				if math.Abs(y[i]-want[i]) > 4*u {
					t.Fatalf("%s: AxpySlice[%d] = %v, want %v", name, i, y[i], want[i])
				}
			}
			ss := 0.0
			for _, v := range x {
				ss += v * v
			}
			if got := backend.SumSq(b, x); math.Abs(got-ss) > float64(n+1)*u*ss {
				t.Fatalf("%s: SumSq = %v, want %v", name, got, ss)
			}

			tt := make([]float64, n)
			for i := range tt {
				tt[i] = 2*rng.Float64() - 1
			}
			const q = 6
			out := make([]float64, (q+1)*n)
			backend.GegenbauerRecurrence(b, out, tt, q, 2)
			for l := 0; l <= q; l++ {
				for i, v := range tt {
					if w := math.Cos(float64(l) * math.Acos(v)); math.Abs(out[l*n+i]-w) > 64*u {
						t.Fatalf("%s: T_%d(%v) = %v, want %v", name, l, v, out[l*n+i], w)
					}
				}
			}
			backend.GegenbauerRecurrence(b, out, tt, 3, 3)
			for i, v := range tt {
				p2, p3 := (3*v*v-1)/2, (5*v*v*v-3*v)/2
				if math.Abs(out[2*n+i]-p2) > 64*u || math.Abs(out[3*n+i]-p3) > 64*u {
					t.Fatalf("%s: Legendre at %v: %v %v, want %v %v", name, v, out[2*n+i], out[3*n+i], p2, p3)
				}
			}
		}
		expectShapePanic(t, name+" Exp", func() { backend.Exp(b, make([]float64, 2), make([]float64, 3)) })
		expectShapePanic(t, name+" AxpySlice", func() { backend.AxpySlice(b, 1, make([]float64, 2), make([]float64, 3)) })
		expectShapePanic(t, name+" Gegenbauer out", func() {
			backend.GegenbauerRecurrence(b, make([]float64, 5), make([]float64, 2), 2, 3)
		})
		expectShapePanic(t, name+" Gegenbauer d", func() {
			backend.GegenbauerRecurrence(b, make([]float64, 6), make([]float64, 2), 2, 1)
		})
	}
}

// spy implements every optional interface by recording the call, to check
// that the functions dispatch to a backend's own implementation.
type spy struct {
	backend.Backend
	calls map[string]int
}

func (s spy) GaussianBlock(x, y blas64.General, xn, yn []float64, gamma float64, dst blas64.General) {
	s.calls["GaussianBlock"]++
}
func (s spy) Exp(dst, src []float64)                          { s.calls["Exp"]++ }
func (s spy) GegenbauerRecurrence(out, t []float64, q, d int) { s.calls["GegenbauerRecurrence"]++ }
func (s spy) AxpySlice(alpha float64, x, y []float64)         { s.calls["AxpySlice"]++ }
func (s spy) SumSq(x []float64) float64                       { s.calls["SumSq"]++; return -1 }

var (
	_ backend.GaussianBlocker    = spy{}
	_ backend.Exper              = spy{}
	_ backend.GegenbauerRecurrer = spy{}
	_ backend.SliceAxpyer        = spy{}
	_ backend.SumSquarer         = spy{}
)

func TestFusedDispatch(t *testing.T) {
	s := spy{Backend: backend.Default(), calls: map[string]int{}}
	g := blas64.General{Rows: 1, Cols: 1, Stride: 1, Data: []float64{1}}
	backend.GaussianBlock(s, g, g, []float64{1}, []float64{1}, 1, g)
	backend.Exp(s, []float64{0}, []float64{0})
	backend.GegenbauerRecurrence(s, []float64{0}, []float64{0}, 0, 2)
	backend.AxpySlice(s, 1, []float64{0}, []float64{0})
	if backend.SumSq(s, []float64{1}) != -1 {
		t.Fatal("SumSq did not use the backend's SumSq")
	}
	for _, m := range []string{"GaussianBlock", "Exp", "GegenbauerRecurrence", "AxpySlice", "SumSq"} {
		if s.calls[m] != 1 {
			t.Errorf("%s: backend implementation called %d times, want 1", m, s.calls[m])
		}
	}
	// purego's fused Gaussian block is found by the type assertion.
	pg, err := backend.ByName("purego")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pg.(backend.GaussianBlocker); !ok {
		t.Fatal("purego does not implement backend.GaussianBlocker")
	}
}

// TestRowProducts checks DotRows and AxpyRows on every backend (and its
// generic path) against plain loops on a strided 11 x 53 block: the sums
// differ only in order and FMA rounding, within (terms + 4) 2^-52 sum
// |terms|; and that a shape mismatch panics with zonal.ErrShape.
func TestRowProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for name, be := range fusedBackends(t) {
		k := stridedGeneral(rng, 11, 53, 57)
		v, tv := make([]float64, 53), make([]float64, 11)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for i := range tv {
			tv[i] = rng.NormFloat64()
		}
		dst, acc := make([]float64, 11), make([]float64, 53)
		backend.DotRows(be, dst, k, v)
		backend.AxpyRows(be, acc, k, tv)
		for i := range dst {
			want, abs := 0.0, 0.0
			for j := range v {
				p := k.Data[i*k.Stride+j] * v[j]
				want, abs = want+p, abs+math.Abs(p)
			}
			if math.Abs(dst[i]-want) > 57*0x1p-52*abs {
				t.Fatalf("%s: DotRows[%d] = %v, want %v", name, i, dst[i], want)
			}
		}
		for j := range acc {
			want, abs := 0.0, 0.0
			for i := range tv {
				p := tv[i] * k.Data[i*k.Stride+j]
				want, abs = want+p, abs+math.Abs(p)
			}
			if math.Abs(acc[j]-want) > 15*0x1p-52*abs {
				t.Fatalf("%s: AxpyRows[%d] = %v, want %v", name, j, acc[j], want)
			}
		}
		expectShapePanic(t, name+" DotRows", func() { backend.DotRows(be, dst[:3], k, v) })
		expectShapePanic(t, name+" AxpyRows", func() { backend.AxpyRows(be, acc, k, tv[:3]) })
	}
}

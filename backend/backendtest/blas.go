package backendtest

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

// gemmShapes returns the (m, n, k) cases: every combination of the edge sizes
// 0, 1, 2, 7 and 17, plus sizes beyond typical block and micro-kernel edges.
func gemmShapes() [][3]int {
	edge := []int{0, 1, 2, 7, 17}
	var s [][3]int
	for _, m := range edge {
		for _, n := range edge {
			for _, k := range edge {
				s = append(s, [3]int{m, n, k})
			}
		}
	}
	s = append(s, [3]int{65, 33, 129}, [3]int{13, 97, 70}, [3]int{130, 7, 257})
	if !testing.Short() {
		s = append(s, [3]int{257, 131, 65}, [3]int{200, 260, 300}, [3]int{1, 515, 400}, [3]int{515, 1, 400})
	}
	return s
}

// alphaBeta are the scalar cases; beta == 0 runs with NaN in C.
var alphaBeta = [][2]float64{{1, 0}, {-0.5, 1.5}, {0, 2}, {2, 1}, {0, 0}}

func testGemm(t *testing.T, b backend.Backend) {
	rng := newRand(1)
	for _, sh := range gemmShapes() {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range transposes {
			for _, tB := range transposes {
				for ci, ab := range alphaBeta {
					alpha, beta := ab[0], ab[1]
					pad := (m + n + k + ci) % 3 // strides from cols to cols+2
					ar, ac := m, k
					if tA == blas.Trans {
						ar, ac = k, m
					}
					br, bc := k, n
					if tB == blas.Trans {
						br, bc = n, k
					}
					a := randView(rng, ar, ac, pad)
					bb := randView(rng, br, bc, pad+1)
					c := randView(rng, m, n, pad)
					if beta == 0 {
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								c.set(i, j, math.NaN())
							}
						}
						c.snapshot()
					}
					want, scale := refGemm(tA, tB, m, n, k, alpha, a.dense(), bb.dense(), beta, c.dense())
					b.Gemm(tA, tB, alpha, a.g, bb.g, beta, c.g)
					name := caseName("Gemm %s%s m=%d n=%d k=%d alpha=%v beta=%v", tname(tA), tname(tB), m, n, k, alpha, beta)
					a.checkUnchanged(t, name+" A")
					bb.checkUnchanged(t, name+" B")
					c.checkGuard(t, name+" C")
					// Tolerance: both results within gamma_(k+2)*scale of the exact one.
					g := 2 * gamma(k+2)
				rows:
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							if got := c.at(i, j); !within(got, want[i][j], g*scale[i][j]) {
								t.Errorf("%s: C[%d,%d] = %v, want %v (tol %g)", name, i, j, got, want[i][j], g*scale[i][j])
								break rows
							}
						}
					}
				}
			}
		}
	}
}

func testSyrk(t *testing.T, b backend.Backend) {
	rng := newRand(2)
	shapes := [][2]int{{0, 0}, {0, 3}, {3, 0}, {1, 1}, {1, 5}, {5, 1}, {2, 2}, {7, 3}, {3, 7}, {17, 17}, {33, 65}, {65, 33}, {100, 10}, {129, 70}}
	if !testing.Short() {
		shapes = append(shapes, [2]int{200, 150}, [2]int{300, 40}, [2]int{64, 1000})
	}
	for _, sh := range shapes {
		n, k := sh[0], sh[1]
		for _, tr := range transposes {
			for ci, ab := range alphaBeta {
				alpha, beta := ab[0], ab[1]
				pad := (n + k + ci) % 3
				ar, ac := n, k
				if tr == blas.Trans {
					ar, ac = k, n
				}
				a := randView(rng, ar, ac, pad)
				// C symmetric; its strict upper triangle is NaN because only the
				// lower triangle may be read. With beta == 0 all of C is NaN.
				c := newView(n, n, 2-pad, func(i, j int) float64 {
					if beta == 0 || j > i {
						return math.NaN()
					}
					return 2*rng.Float64() - 1
				})
				cl := c.dense()
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						cl[i][j] = cl[j][i]
					}
				}
				tB := blas.Trans
				if tr == blas.Trans {
					tB = blas.NoTrans
				}
				ad := a.dense()
				want, scale := refGemm(tr, tB, n, n, k, alpha, ad, ad, beta, cl)
				b.Syrk(tr, alpha, a.g, beta, c.g)
				name := caseName("Syrk %s n=%d k=%d alpha=%v beta=%v", tname(tr), n, k, alpha, beta)
				a.checkUnchanged(t, name+" A")
				c.checkGuard(t, name+" C")
				g := 2 * gamma(k+2)
			rows:
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						got := c.at(i, j)
						if !within(got, want[i][j], g*scale[i][j]) {
							t.Errorf("%s: C[%d,%d] = %v, want %v (tol %g)", name, i, j, got, want[i][j], g*scale[i][j])
							break rows
						}
						if math.Float64bits(got) != math.Float64bits(c.at(j, i)) {
							t.Errorf("%s: C not exactly symmetric at [%d,%d]: %v vs %v", name, i, j, got, c.at(j, i))
							break rows
						}
					}
				}
			}
		}
	}
}

// vecView is a strided vector of length n with increment inc (negative: BLAS
// order from the end) inside an array whose other elements are NaN.
type vecView struct {
	v    blas64.Vector
	snap []float64
}

func newVec(n, inc int, f func(i int) float64) *vecView {
	ai := inc
	if ai < 0 {
		ai = -ai
	}
	data := make([]float64, max(n, 1)*ai+1)
	for i := range data {
		data[i] = math.NaN()
	}
	v := &vecView{v: blas64.Vector{N: n, Inc: inc, Data: data}}
	for i := 0; i < n; i++ {
		data[v.pos(i)] = f(i)
	}
	v.snap = append([]float64(nil), data...)
	return v
}

// pos is the array index of logical element i.
func (v *vecView) pos(i int) int {
	if v.v.Inc > 0 {
		return i * v.v.Inc
	}
	return (v.v.N - 1 - i) * -v.v.Inc
}

func (v *vecView) at(i int) float64 { return v.v.Data[v.pos(i)] }

func (v *vecView) values() []float64 {
	out := make([]float64, v.v.N)
	for i := range out {
		out[i] = v.at(i)
	}
	return out
}

// checkGuard reports changes to elements that are not part of the vector.
func (v *vecView) checkGuard(t *testing.T, name string) {
	t.Helper()
	in := map[int]bool{}
	for i := 0; i < v.v.N; i++ {
		in[v.pos(i)] = true
	}
	for p, x := range v.v.Data {
		if !in[p] && math.Float64bits(x) != math.Float64bits(v.snap[p]) {
			t.Errorf("%s: element %d outside the vector was written", name, p)
			return
		}
	}
}

func (v *vecView) checkUnchanged(t *testing.T, name string) {
	t.Helper()
	for p, x := range v.v.Data {
		if math.Float64bits(x) != math.Float64bits(v.snap[p]) {
			t.Errorf("%s: input vector modified at element %d", name, p)
			return
		}
	}
}

var incs = []int{1, 2, -1, -3}

func testGemv(t *testing.T, b backend.Backend) {
	rng := newRand(3)
	dims := []int{0, 1, 2, 7, 33, 130}
	for _, m := range dims {
		for _, n := range dims {
			for _, tr := range transposes {
				for ii, inc := range incs {
					for _, ab := range alphaBeta {
						alpha, beta := ab[0], ab[1]
						a := randView(rng, m, n, ii%3)
						xl, yl := n, m
						if tr == blas.Trans {
							xl, yl = m, n
						}
						x := newVec(xl, inc, func(int) float64 { return 2*rng.Float64() - 1 })
						y := newVec(yl, incs[(ii+1)%4], func(int) float64 {
							if beta == 0 {
								return math.NaN()
							}
							return 2*rng.Float64() - 1
						})
						xm := [][]float64{x.values()}
						ym := [][]float64{y.values()}
						// y^T = alpha * x^T op(A)^T + beta y^T, as a 1 x yl product.
						tA := blas.Trans
						if tr == blas.Trans {
							tA = blas.NoTrans
						}
						want, scale := refGemm(blas.NoTrans, tA, 1, yl, xl, alpha, xm, a.dense(), beta, ym)
						b.Gemv(tr, alpha, a.g, x.v, beta, y.v)
						name := caseName("Gemv %s m=%d n=%d incX=%d incY=%d alpha=%v beta=%v", tname(tr), m, n, x.v.Inc, y.v.Inc, alpha, beta)
						a.checkUnchanged(t, name+" A")
						x.checkUnchanged(t, name+" x")
						y.checkGuard(t, name+" y")
						g := 2 * gamma(xl+2)
						for i := 0; i < yl; i++ {
							if got := y.at(i); !within(got, want[0][i], g*scale[0][i]) {
								t.Errorf("%s: y[%d] = %v, want %v", name, i, got, want[0][i])
								break
							}
						}
					}
				}
			}
		}
	}
}

func testLevel1(t *testing.T, b backend.Backend) {
	rng := newRand(4)
	for _, n := range []int{0, 1, 2, 3, 7, 16, 33, 1000, 1023} {
		for _, ix := range incs {
			for _, iy := range incs {
				x := newVec(n, ix, func(int) float64 { return 2*rng.Float64() - 1 })
				y := newVec(n, iy, func(int) float64 { return 2*rng.Float64() - 1 })
				xs, ys := x.values(), y.values()
				name := caseName("n=%d incX=%d incY=%d", n, ix, iy)

				// Dot: |error| <= gamma_n sum |x_i y_i| for any order; the
				// reference has the same bound.
				var want, scale float64
				for i := range xs {
					want += xs[i] * ys[i]
					scale += math.Abs(xs[i] * ys[i])
				}
				if got := b.Dot(x.v, y.v); !within(got, want, 2*gamma(n+1)*scale) {
					t.Errorf("Dot %s = %v, want %v", name, got, want)
				}
				x.checkUnchanged(t, "Dot "+name+" x")
				y.checkUnchanged(t, "Dot "+name+" y")

				// Axpy: one multiply and one add per element (or one FMA):
				// |error| <= 2u(|alpha x_i| + |y_i|).
				const alpha = -1.75
				b.Axpy(alpha, x.v, y.v)
				for i := range ys {
					w := ys[i] + alpha*xs[i]
					if got := y.at(i); !within(got, w, 2*eps*(math.Abs(alpha*xs[i])+math.Abs(ys[i]))) {
						t.Errorf("Axpy %s: y[%d] = %v, want %v", name, i, got, w)
						break
					}
				}
				y.checkGuard(t, "Axpy "+name)
				x.checkUnchanged(t, "Axpy "+name+" x")

				// Scal: one correctly rounded multiply per element, so exact.
				b.Scal(alpha, x.v)
				for i := range xs {
					if got, w := x.at(i), alpha*xs[i]; got != w {
						t.Errorf("Scal %s: x[%d] = %v, want %v exactly", name, i, got, w)
						break
					}
				}
				x.checkGuard(t, "Scal "+name)
			}
		}
	}
	// NaN and Inf propagate through the level-1 operations.
	x := newVec(3, 1, func(i int) float64 { return []float64{1, math.NaN(), 2}[i] })
	y := newVec(3, 1, func(i int) float64 { return []float64{1, 1, math.Inf(1)}[i] })
	if d := b.Dot(x.v, y.v); !math.IsNaN(d) {
		t.Errorf("Dot with NaN = %v, want NaN", d)
	}
	b.Axpy(1, x.v, y.v)
	if !math.IsNaN(y.at(1)) || !math.IsInf(y.at(2), 1) || y.at(0) != 2 {
		t.Errorf("Axpy with NaN/Inf = %v, want [2 NaN +Inf]", y.values())
	}
}

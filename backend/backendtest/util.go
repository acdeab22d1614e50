package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// eps is the unit roundoff u = 2^-53.
const eps = 0x1p-53

// gamma returns gamma_k = k*u/(1-k*u).
func gamma(k int) float64 {
	ku := float64(k) * eps
	return ku / (1 - ku)
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// view is an r x c matrix stored with stride c+pad inside a larger array whose
// padding (the pad columns of every row, and pad extra trailing elements) is
// NaN. snap keeps the array as it was before an operation.
type view struct {
	g    blas64.General
	snap []float64
}

// newView returns an r x c view filled by f(i, j), padding NaN.
func newView(r, c, pad int, f func(i, j int) float64) *view {
	stride := c + pad
	if stride == 0 {
		stride = 1
	}
	n := r*stride + pad
	data := make([]float64, n)
	for i := range data {
		data[i] = math.NaN()
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			data[i*stride+j] = f(i, j)
		}
	}
	v := &view{g: blas64.General{Rows: r, Cols: c, Stride: stride, Data: data}}
	v.snapshot()
	return v
}

func randView(rng *rand.Rand, r, c, pad int) *view {
	return newView(r, c, pad, func(int, int) float64 { return 2*rng.Float64() - 1 })
}

func (v *view) snapshot() { v.snap = append(v.snap[:0], v.g.Data...) }

func (v *view) at(i, j int) float64 { return v.g.Data[i*v.g.Stride+j] }

func (v *view) set(i, j int, x float64) { v.g.Data[i*v.g.Stride+j] = x }

// inside reports whether the array index p belongs to the view.
func (v *view) inside(p int) bool {
	if v.g.Rows == 0 || v.g.Cols == 0 {
		return false
	}
	i, j := p/v.g.Stride, p%v.g.Stride
	return i < v.g.Rows && j < v.g.Cols
}

// checkGuard reports any change outside the view since the last snapshot.
func (v *view) checkGuard(t *testing.T, name string) {
	t.Helper()
	for p, x := range v.g.Data {
		if !v.inside(p) && math.Float64bits(x) != math.Float64bits(v.snap[p]) {
			t.Errorf("%s: element %d outside the %dx%d view (stride %d) was written: %v", name, p, v.g.Rows, v.g.Cols, v.g.Stride, x)
			return
		}
	}
}

// checkUnchanged reports any change anywhere since the last snapshot (inputs).
func (v *view) checkUnchanged(t *testing.T, name string) {
	t.Helper()
	for p, x := range v.g.Data {
		if math.Float64bits(x) != math.Float64bits(v.snap[p]) {
			t.Errorf("%s: input modified at element %d", name, p)
			return
		}
	}
}

// dense copies the view's r x c contents.
func (v *view) dense() [][]float64 {
	out := make([][]float64, v.g.Rows)
	for i := range out {
		out[i] = append([]float64(nil), v.g.Data[i*v.g.Stride:i*v.g.Stride+v.g.Cols]...)
	}
	return out
}

func denseOf(g blas64.General) [][]float64 {
	return (&view{g: g}).dense()
}

// opAt returns op(M)[i][j].
func opAt(t blas.Transpose, m [][]float64, i, j int) float64 {
	if t == blas.NoTrans {
		return m[i][j]
	}
	return m[j][i]
}

// refGemm returns alpha*op(A)*op(B) + beta*C and the error scale
// |alpha||op(A)||op(B)| + |beta||C| (beta == 0 ignores C), both m x n.
func refGemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a, b [][]float64, beta float64, c [][]float64) (val, scale [][]float64) {
	val, scale = make([][]float64, m), make([][]float64, m)
	for i := 0; i < m; i++ {
		val[i], scale[i] = make([]float64, n), make([]float64, n)
		for j := 0; j < n; j++ {
			var s, sa float64
			for l := 0; l < k; l++ {
				x, y := opAt(tA, a, i, l), opAt(tB, b, l, j)
				s += x * y
				sa += math.Abs(x * y)
			}
			val[i][j] = alpha * s
			scale[i][j] = math.Abs(alpha) * sa
			if beta != 0 {
				val[i][j] += beta * c[i][j]
				scale[i][j] += math.Abs(beta * c[i][j])
			}
		}
	}
	return val, scale
}

// within reports whether |got - want| <= tol, treating equal infinities and
// NaN == NaN as equal.
func within(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol
}

// randOrthogonal returns a random n x n orthogonal matrix (Q of the QR
// factorization of a Gaussian matrix), row-major with stride n.
func randOrthogonal(rng *rand.Rand, n int) [][]float64 {
	q := make([][]float64, n)
	if n == 0 {
		return q
	}
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var qm mat.Dense
	qr.QTo(&qm)
	for i := range q {
		q[i] = make([]float64, n)
		for j := range q[i] {
			q[i][j] = qm.At(i, j)
		}
	}
	return q
}

// symFromSpectrum returns Q diag(lambda) Q^T.
func symFromSpectrum(q [][]float64, lambda []float64) [][]float64 {
	n := len(lambda)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for l := 0; l < n; l++ {
				s += q[i][l] * lambda[l] * q[j][l]
			}
			a[i][j], a[j][i] = s, s
		}
	}
	return a
}

// spd returns a random symmetric positive definite n x n matrix G G^T/n + I
// (eigenvalues in [1, ~5]: condition number below 5).
func spd(rng *rand.Rand, n int) [][]float64 {
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, n)
		for j := range g[i] {
			g[i][j] = rng.NormFloat64()
		}
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for l := 0; l < n; l++ {
				s += g[i][l] * g[j][l]
			}
			s /= float64(max(n, 1))
			if i == j {
				s++
			}
			a[i][j], a[j][i] = s, s
		}
	}
	return a
}

func maxAbs(m [][]float64) float64 {
	var s float64
	for _, r := range m {
		for _, x := range r {
			s = math.Max(s, math.Abs(x))
		}
	}
	return s
}

// orthoErr returns ||V^T V - I||_max for the columns of the n x m view v.
func orthoErr(v blas64.General) float64 {
	var e float64
	for p := 0; p < v.Cols; p++ {
		for q := 0; q <= p; q++ {
			var s float64
			for i := 0; i < v.Rows; i++ {
				s += v.Data[i*v.Stride+p] * v.Data[i*v.Stride+q]
			}
			if p == q {
				s--
			}
			e = math.Max(e, math.Abs(s))
		}
	}
	return e
}

// shortOr returns small under -short and full otherwise.
func shortOr(small, full int) int {
	if testing.Short() {
		return small
	}
	return full
}

func tname(t blas.Transpose) string {
	if t == blas.NoTrans {
		return "N"
	}
	return "T"
}

func caseName(format string, args ...any) string { return fmt.Sprintf(format, args...) }

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans}

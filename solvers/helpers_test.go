package solvers

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

// testGauss is a Gaussian kernel under a kind of its own, so the tests'
// model files do not depend on which kernels another package registers.
type testGauss struct{ sigma float64 }

func (g testGauss) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		t := x[i] - y[i]
		s += t * t
	}
	return math.Exp(-s / (2 * g.sigma * g.sigma))
}
func (g testGauss) Kind() string   { return "solvers-test-gauss" }
func (g testGauss) String() string { return fmt.Sprintf("test-gauss(%g)", g.sigma) }
func (g testGauss) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(g.sigma)), nil
}

// exactMap is the Nystrom map on landmarks C: z(x) = L^{-1} k(C, x) with
// L L^T = K_CC, so z(x).z(y) = k(x,C) K_CC^{-1} k(C,y), which equals k(x,y)
// whenever x or y is a landmark. Its Transform does not allocate.
type exactMap struct {
	k    testGauss
	c, l *mat.Dense
}

func newExactMap(k testGauss, c *mat.Dense) (*exactMap, error) {
	m, _ := c.Dims()
	kcc := mat.NewDense(m, m, nil)
	if err := kernels.MatrixInto(context.Background(), kcc, k, c, c, kernels.Options{}); err != nil {
		return nil, err
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(m, kcc.RawMatrix().Data)) {
		return nil, fmt.Errorf("K_CC not positive definite")
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	return &exactMap{k: k, c: mat.DenseCopyOf(c), l: mat.DenseCopyOf(&lt)}, nil
}

func (e *exactMap) InputDim() int { _, d := e.c.Dims(); return d }
func (e *exactMap) Dim() int      { m, _ := e.c.Dims(); return m }
func (e *exactMap) Kind() string  { return "solvers-test-exact" }
func (e *exactMap) Transform(dst *mat.Dense, x mat.Matrix) error {
	xd := x.(*mat.Dense)
	n, _ := xd.Dims()
	m := e.Dim()
	for i := 0; i < n; i++ {
		z := rowOf(dst, i)
		xr := rowOf(xd, i)
		for j := 0; j < m; j++ {
			z[j] = e.k.Eval(xr, rowOf(e.c, j))
		}
		for j := 0; j < m; j++ { // forward substitution L z = k
			lj := rowOf(e.l, j)
			s := z[j]
			for t := 0; t < j; t++ {
				s -= lj[t] * z[t]
			}
			z[j] = s / lj[j]
		}
	}
	return nil
}
func (e *exactMap) MarshalBinary() ([]byte, error) {
	en := &enc{}
	en.f64(e.k.sigma)
	en.dense(e.c)
	en.dense(e.l)
	return en.b, nil
}

func init() {
	kernels.RegisterKernel("solvers-test-gauss", func(b []byte) (kernels.Kernel, error) {
		if len(b) != 8 {
			return nil, fmt.Errorf("bad test kernel")
		}
		return testGauss{math.Float64frombits(binary.LittleEndian.Uint64(b))}, nil
	})
	kernels.RegisterMap("solvers-test-exact", func(b []byte) (kernels.FeatureMap, error) {
		d := &dec{b: b}
		s := d.f64("sigma")
		c, l := d.dense("c"), d.dense("l")
		if d.err != nil {
			return nil, d.err
		}
		m, _ := c.Dims()
		if lr, lc := l.Dims(); lr != m || lc != m || !(s > 0) {
			return nil, fmt.Errorf("bad test map")
		}
		return &exactMap{k: testGauss{s}, c: c, l: l}, nil
	})
}

// synth returns n rows in [-2,2]^d and y = sin(x1) + x2^2/4 + noise.
func synth(n, d int, seed uint64) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		r := rowOf(x, i)
		for j := range r {
			r[j] = 4*rng.Float64() - 2
		}
		y.Set(i, 0, math.Sin(r[0])+r[min(1, d-1)]*r[min(1, d-1)]/4+0.05*rng.NormFloat64())
	}
	return x, y
}

func predictAll(t testing.TB, m Model, x mat.Matrix) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	out := mat.NewDense(n, m.Outputs(), nil)
	if err := m.Predict(out, x); err != nil {
		t.Fatal(err)
	}
	return out
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}

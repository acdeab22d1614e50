package solvers

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// shifted draws n rows of 2 features, the first 1 in 10 of class 1 (around
// (1, 1)) and the others class 0 (around the origin): a strongly shifted
// prior, 10% positives.
func shifted(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		c := 0.0
		if i%10 == 0 {
			c = 1
		}
		y[i] = c
		x.Set(i, 0, c+rng.NormFloat64())
		x.Set(i, 1, c+rng.NormFloat64())
	}
	return x, y
}

// biasGradient is sum_i w_i (p_i - y_i) / sum w per output: the gradient
// of the mean loss in the intercept, from the model's probabilities on the
// training rows (y_i the one-hot targets).
func biasGradient(t *testing.T, m Model, x *mat.Dense, tg *mat.Dense, w []float64) []float64 {
	t.Helper()
	F := predictAll(t, m, x)
	n, K := F.Dims()
	g := make([]float64, K)
	p := make([]float64, K)
	ws := 0.0
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		ws += wi
		f := rowOf(F, i)
		if K == 1 {
			y := 0.0
			if tg.At(i, 0) > 0 {
				y = 1
			}
			g[0] += wi * (1/(1+math.Exp(-f[0])) - y)
			continue
		}
		softmaxInto(p, f)
		for c := range p {
			y := 0.0
			if tg.At(i, c) > 0 {
				y = 1
			}
			g[c] += wi * (p[c] - y)
		}
	}
	for c := range g {
		g[c] /= ws
	}
	return g
}

// TestLogisticInterceptGradient: on 10% positives, a binary fit with a
// fitted intercept (unweighted and weighted) has zero gradient in b,
// sum_i w_i (p_i - y_i) = 0, to its gradient tolerance; without the
// intercept, at a lambda whose penalty holds alpha back, it does not (the
// condition the intercept removes).
func TestLogisticInterceptGradient(t *testing.T) {
	x, y := shifted(200, 3)
	_, tg := encoded(t, y)
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 0.5 + float64(i%4)
	}
	for _, wt := range [][]float64{nil, w} {
		const tol = 1e-10
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 40, GradTol: tol, Intercept: InterceptFitted, Options: Options{Weights: wt}})
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Diagnostics(); !d.Converged {
			t.Fatalf("weighted %v: %s", wt != nil, d)
		}
		// |g_b| <= GradTol times the gradient norm at alpha = 0, b = 0,
		// which is of order 1 here: 1e-6 leaves four orders of magnitude
		// for it.
		if g := biasGradient(t, m, x, tg, wt); math.Abs(g[0]) > 1e-6 {
			t.Errorf("weighted %v: b gradient %g, intercept %v", wt != nil, g[0], m.Intercept())
		}
		n0, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1, LogisticOptions{Centers: 40, Options: Options{Weights: wt}})
		if err != nil {
			t.Fatal(err)
		}
		if g := biasGradient(t, n0, x, tg, wt); math.Abs(g[0]) < 1e-2 {
			t.Errorf("weighted %v: without intercept at lambda 1 the b gradient is %g, expected it far from 0", wt != nil, g[0])
		}
		if b := n0.Intercept(); b[0] != 0 {
			t.Errorf("a fit without intercept has b = %v", b)
		}
	}
}

// TestLogisticInterceptHugeLambda: with lambda so large that alpha is ~0
// the fit is the constant log-odds of the (weighted) prior.
func TestLogisticInterceptHugeLambda(t *testing.T) {
	x, y := shifted(200, 4)
	_, tg := encoded(t, y)
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 1 + float64(i%3)
	}
	for _, wt := range [][]float64{nil, w} {
		pos, all := 0.0, 0.0
		for i, v := range y {
			wi := 1.0
			if wt != nil {
				wi = wt[i]
			}
			all += wi
			if v == 1 { // the larger label is the +1 output
				pos += wi
			}
		}
		want := math.Log(pos / (all - pos))
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e8, LogisticOptions{Centers: 30, Intercept: InterceptFitted, Options: Options{Weights: wt}})
		if err != nil {
			t.Fatal(err)
		}
		F := predictAll(t, m, x)
		for i := 0; i < 200; i++ {
			if d := math.Abs(F.At(i, 0) - want); d > 1e-4 {
				t.Fatalf("weighted %v: row %d logit %g, the prior's log-odds %g", wt != nil, i, F.At(i, 0), want)
			}
		}
	}
}

// TestLogisticInterceptMultinomial: a multinomial fit with intercept on
// unbalanced classes has b summing to zero, zero gradient in every b_c,
// probabilities summing to 1, and predicts identically after a save and
// load; the binary one too.
func TestLogisticInterceptMultinomial(t *testing.T) {
	for _, K := range []int{2, 3} {
		x, y := blobs(150, K, 1.5, 8)
		for i := range y {
			if i%6 == 1 {
				y[i] = 0 // class 0 takes half the rows
			}
		}
		enc, tg := encoded(t, y)
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 30, GradTol: 1e-10, Intercept: InterceptFitted})
		if err != nil {
			t.Fatal(err)
		}
		b := m.Intercept()
		if K > 2 {
			s := 0.0
			for _, v := range b {
				s += v
			}
			if math.Abs(s) > 1e-12 || b[0] == 0 {
				t.Errorf("K=%d: b = %v sums to %g", K, b, s)
			}
		}
		for c, g := range biasGradient(t, m, x, tg, nil) {
			if math.Abs(g) > 1e-6 {
				t.Errorf("K=%d: b gradient of output %d is %g", K, c, g)
			}
		}
		p, err := NewPipeline(nil, enc, m)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Save(&buf, p); err != nil {
			t.Fatal(err)
		}
		q, err := Load(bytes.NewReader(buf.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{5, 150} { // direct rows and kernel blocks
			xs := x.Slice(0, rows, 0, 2).(*mat.Dense)
			if a, c := predictAll(t, p.Model, xs), predictAll(t, q.Model, xs); !mat.Equal(a, c) {
				t.Errorf("K=%d, %d rows: logits differ after loading by %g", K, rows, maxAbsDiff(a, c))
			}
			pa := mat.NewDense(rows, K, nil)
			if err := q.PredictProba(pa, xs); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < rows; i++ {
				s := 0.0
				for _, v := range rowOf(pa, i) {
					s += v
				}
				if math.Abs(s-1) > 1e-12 {
					t.Fatalf("K=%d: row %d probabilities sum to %v", K, i, s)
				}
			}
		}
		if got := q.Model.(*Logistic).Intercept(); !equalFloats(got, b) {
			t.Errorf("K=%d: loaded b %v, fitted %v", K, got, b)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLogisticInterceptHessian checks the augmented preconditioned Newton
// operator P^-T H P^-1 against central differences of the gradient in
// (u, b) at a random iterate, binary and multinomial, weighted: for z
// random, v = P^-1 z, (g(x + h v) - g(x - h v)) / 2h = H v to O(h^2), and
// the operator at z is P^-T of that (the b part, multinomial, with its
// component along q removed, which H v does not have).
func TestLogisticInterceptHessian(t *testing.T) {
	for _, K := range []int{2, 3} {
		x, y := blobs(60, K, 1.5, 2)
		_, tg := encoded(t, y)
		rng := rand.New(rand.NewPCG(uint64(K), 9))
		w := make([]float64, len(y))
		for i := range w {
			w[i] = 0.5 + rng.Float64()
		}
		loss, err := newLogisticLoss(tg, w)
		if err != nil {
			t.Fatal(err)
		}
		const lambda = 1e-2
		s, _, err := newNewtonState(context.Background(), testGauss{1}, x, loss, uniformCenters(60, 20, 1), LogisticOptions{Intercept: InterceptFitted})
		if err != nil {
			t.Fatal(err)
		}
		M, k := s.M, s.K
		mk := M * k
		u0 := mat.NewDense(M, k, nil)
		for i := range u0.RawMatrix().Data {
			u0.RawMatrix().Data[i] = 0.3 * rng.NormFloat64()
		}
		b0 := make([]float64, k)
		for j := range b0 {
			b0[j] = rng.NormFloat64()
		}
		if k > 1 {
			zeroSum(b0)
		}
		// at sets the iterate to (u, b) and returns its gradient.
		at := func(u *mat.Dense, b []float64) []float64 {
			s.u.Copy(u)
			s.alpha.Copy(u)
			s.fac.solveT(blas.NoTrans, s.alpha.RawMatrix())
			ar := s.alpha.RawMatrix()
			if err := s.blocks.pass(context.Background(), nil, &ar, func(i0 int, blk blas64.General) {
				addRows(blk, b)
				copyGeneral(s.F.Slice(i0, i0+blk.Rows, 0, k).(*mat.Dense).RawMatrix(), blk)
			}); err != nil {
				t.Fatal(err)
			}
			copy(s.b, b)
			s.loss.derivs(s.D, s.P, s.F)
			if err := s.gradient(lambda); err != nil {
				t.Fatal(err)
			}
			return append(append([]float64(nil), s.g.RawMatrix().Data...), s.gb...)
		}
		at(u0, b0)
		op, sq, q, err := s.newtonSystem(lambda)
		if err != nil {
			t.Fatal(err)
		}
		if len(sq) != k || (k > 1) != (q != nil) {
			t.Fatalf("K=%d: b block of %d, q %v", K, len(sq), q)
		}
		z := mat.NewDense(mk+k, 1, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = rng.NormFloat64()
		}
		got := mat.NewDense(mk+k, 1, nil)
		if err := op.F(context.Background(), got.RawMatrix(), z.RawMatrix()); err != nil {
			t.Fatal(err)
		}
		// v = P^-1 z.
		delta := mat.NewDense(M, k, append([]float64(nil), z.RawMatrix().Data[:mk]...))
		s.fac.solveA(blas.NoTrans, delta.RawMatrix())
		c := make([]float64, k)
		for j := range c {
			c[j] = z.At(mk+j, 0) / sq[j]
		}
		const h = 1e-5
		shift := func(sign float64) []float64 {
			u := mat.NewDense(M, k, nil)
			u.Add(u0, scaled(sign*h, delta))
			b := make([]float64, k)
			for j := range b {
				b[j] = b0[j] + sign*h*c[j]
			}
			return at(u, b)
		}
		gp, gm := shift(1), shift(-1)
		fd := make([]float64, mk+k)
		for i := range fd {
			fd[i] = (gp[i] - gm[i]) / (2 * h)
		}
		// P^-T of the difference: A^-T on the u part, 1/sqrt(db) on b.
		want := blas64.General{Rows: M, Cols: k, Stride: k, Data: fd[:mk]}
		s.fac.solveA(blas.Trans, want)
		for j := range c {
			fd[mk+j] /= sq[j]
		}
		if q != nil {
			projectOut(fd[mk:], q)
		}
		scale := 0.0
		for _, v := range fd {
			scale = math.Max(scale, math.Abs(v))
		}
		for i, v := range fd {
			if d := math.Abs(got.At(i, 0) - v); d > 1e-6*scale {
				t.Errorf("K=%d: operator entry %d (b part from %d) = %g, finite difference %g", K, i, mk, got.At(i, 0), v)
			}
		}
	}
}

// TestLogisticInterceptOptions: an unknown intercept is a ParamError; the
// mean intercept is today's fit (no constant), bit for bit.
func TestLogisticInterceptOptions(t *testing.T) {
	x, y := blobs(60, 2, 2, 1)
	_, tg := encoded(t, y)
	_, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 10, Intercept: "lsq"})
	var pe *zonal.ParamError
	if !errors.As(err, &pe) || pe.Param != "Intercept" {
		t.Fatalf("unknown intercept: %v", err)
	}
	a, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 10})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 10, Intercept: InterceptMean})
	if err != nil {
		t.Fatal(err)
	}
	ba, _ := a.MarshalBinary()
	bb, _ := b.MarshalBinary()
	if !bytes.Equal(ba, bb) || a.Intercept()[0] != 0 {
		t.Error("Intercept mean differs from the default fit")
	}
}

// TestLogisticInterceptAbsentClass: a class without rows (of positive
// weight) sends its intercept towards -Inf, unbounded; the fit still ends
// with finite logits and that class's probabilities near 0 (b starts at
// log 1e-12 there).
func TestLogisticInterceptAbsentClass(t *testing.T) {
	x, y := blobs(90, 3, 2, 6)
	_, tg := encoded(t, y)
	w := make([]float64, len(y))
	for i := range w {
		if y[i] != 2 {
			w[i] = 1
		}
	}
	m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 20, Intercept: InterceptFitted, Options: Options{Weights: w}})
	if err != nil {
		t.Fatal(err)
	}
	F := predictAll(t, m, x)
	p := make([]float64, 3)
	for i := 0; i < 90; i++ {
		softmaxInto(p, rowOf(F, i))
		if math.IsNaN(p[2]) || p[2] > 1e-6 {
			t.Fatalf("row %d: probability %g of the absent class (logits %v, b %v)", i, p[2], rowOf(F, i), m.Intercept())
		}
	}
	t.Logf("%s, b %v", m.Diagnostics(), m.Intercept())
}

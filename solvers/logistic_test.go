package solvers

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// blobs draws n rows of d = 2 features around K centres on a circle of
// radius sep (unit-variance Gaussian noise), labels 0..K-1 (cycled, so
// the classes are balanced).
func blobs(n, K int, sep float64, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		c := i % K
		a := 2 * math.Pi * float64(c) / float64(K)
		x.Set(i, 0, sep*math.Cos(a)+rng.NormFloat64())
		x.Set(i, 1, sep*math.Sin(a)+rng.NormFloat64())
		y[i] = float64(c)
	}
	return x, y
}

// encoded returns the classification encoding of y and its targets.
func encoded(t *testing.T, y []float64) (Encoding, *mat.Dense) {
	t.Helper()
	enc, err := NewEncoding(y, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := enc.Targets(y)
	if err != nil {
		t.Fatal(err)
	}
	return enc, tg
}

// TestLogisticLossDerivatives checks the loss's gradient rows against
// central differences of its value, and its Hessian products against
// central differences of the gradient, for the binary and the multinomial
// loss with unequal weights. Step h = 1e-5 on logits of size ~1: the
// central difference's truncation error is ~h^2 |f”'| ~ 1e-10 and its
// rounding ~1e-16/h ~ 1e-11, so 1e-8 leaves room.
func TestLogisticLossDerivatives(t *testing.T) {
	for _, K := range []int{1, 4} {
		rng := rand.New(rand.NewPCG(uint64(K), 3))
		n := 7
		y := make([]float64, n)
		for i := range y {
			y[i] = float64(i % max(K, 2))
		}
		_, tg := encoded(t, y)
		w := make([]float64, n)
		for i := range w {
			w[i] = 0.5 + rng.Float64()
		}
		l, err := newLogisticLoss(tg, w)
		if err != nil {
			t.Fatal(err)
		}
		F := mat.NewDense(n, K, nil)
		for i := range F.RawMatrix().Data {
			F.RawMatrix().Data[i] = 2 * rng.NormFloat64()
		}
		D, P := mat.NewDense(n, K, nil), mat.NewDense(n, K, nil)
		l.derivs(D, P, F)
		row := make([]float64, K)
		const h = 1e-5
		for i := 0; i < n; i++ {
			for j := 0; j < K; j++ {
				e := mat.NewDense(n, K, nil)
				e.Set(i, j, 1)
				fd := (l.value(F, e, h, row) - l.value(F, e, -h, row)) / (2 * h)
				if math.Abs(fd-D.At(i, j)) > 1e-8 {
					t.Errorf("K=%d: gradient (%d,%d) = %g, finite difference %g", K, i, j, D.At(i, j), fd)
				}
			}
		}
		// Hessian product in a random direction G.
		G := mat.NewDense(n, K, nil)
		for i := range G.RawMatrix().Data {
			G.RawMatrix().Data[i] = rng.NormFloat64()
		}
		HG := mat.DenseCopyOf(G)
		l.hessRows(0, HG.RawMatrix(), P)
		Fp, Fm := mat.NewDense(n, K, nil), mat.NewDense(n, K, nil)
		Fp.Add(F, scaled(h, G))
		Fm.Sub(F, scaled(h, G))
		Dp, Dm, Pt := mat.NewDense(n, K, nil), mat.NewDense(n, K, nil), mat.NewDense(n, K, nil)
		l.derivs(Dp, Pt, Fp)
		l.derivs(Dm, Pt, Fm)
		for i := 0; i < n; i++ {
			for j := 0; j < K; j++ {
				fd := (Dp.At(i, j) - Dm.At(i, j)) / (2 * h)
				if math.Abs(fd-HG.At(i, j)) > 1e-8 {
					t.Errorf("K=%d: Hessian product (%d,%d) = %g, finite difference %g", K, i, j, HG.At(i, j), fd)
				}
			}
		}
	}
}

// TestLogisticClassifies fits well separated blobs (binary and 3 classes)
// and checks accuracy, probabilities summing to 1, decisions equal to the
// probabilities' argmax, and rough calibration: the mean predicted
// probability of each class is its frequency among the test rows.
func TestLogisticClassifies(t *testing.T) {
	for _, K := range []int{2, 3} {
		x, y := blobs(400, K, 4, uint64(K))
		xt, yt := blobs(400, K, 4, uint64(K)+100)
		enc, tg := encoded(t, y)
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-4, LogisticOptions{Centers: 60, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Diagnostics(); !d.Converged || d.Solver != SolverNewton || d.NewtonSteps == 0 {
			t.Errorf("K=%d: %s", K, d)
		}
		p, err := NewPipeline(nil, enc, m)
		if err != nil {
			t.Fatal(err)
		}
		if !p.HasProbabilities() {
			t.Fatal("a logistic pipeline has no probabilities")
		}
		n, _ := xt.Dims()
		prob := mat.NewDense(n, K, nil)
		if err := p.PredictProba(prob, xt); err != nil {
			t.Fatal(err)
		}
		pred := make([]float64, n)
		if err := p.PredictLabels(pred, xt); err != nil {
			t.Fatal(err)
		}
		right := 0
		meanP := make([]float64, K)
		freq := make([]float64, K)
		for i := 0; i < n; i++ {
			row := prob.RawRowView(i)
			s := 0.0
			for _, v := range row {
				if v < 0 || v > 1 {
					t.Fatalf("K=%d: row %d probability %g", K, i, v)
				}
				s += v
			}
			// Rows are normalised by one division: 1e-12 is far above
			// the rounding of a few additions.
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("K=%d: row %d sums to %g", K, i, s)
			}
			if am := argmax(row); enc.Classes[am] != pred[i] {
				t.Fatalf("K=%d: row %d label %g, probabilities %v", K, i, pred[i], row)
			}
			if pred[i] == yt[i] {
				right++
			}
			for c := range row {
				meanP[c] += row[c] / float64(n)
			}
			freq[int(yt[i])] += 1 / float64(n)
		}
		// Blobs 4 standard deviations apart: the Bayes error is below 3%
		// for K = 3 (neighbour distance 6.9) and 0.3% for K = 2.
		if acc := float64(right) / float64(n); acc < 0.95 {
			t.Errorf("K=%d: test accuracy %.3f", K, acc)
		}
		// The logistic loss's optimality condition makes the mean fitted
		// probability of each class its training frequency (up to the
		// penalty); on fresh rows of the same law 0.03 allows the
		// sampling error of 400 rows (sd ~0.024 of a frequency 1/3).
		for c := range meanP {
			if math.Abs(meanP[c]-freq[c]) > 0.05 {
				t.Errorf("K=%d: class %d mean probability %.3f, frequency %.3f", K, c, meanP[c], freq[c])
			}
		}
	}
}

func argmax(v []float64) int {
	b := 0
	for j, x := range v {
		if x > v[b] {
			b = j
		}
	}
	return b
}

// TestLogisticRoundTrip saves and loads logistic pipelines: the loaded
// model predicts bit for bit the same logits and probabilities, and has
// probabilities without a calibration.
func TestLogisticRoundTrip(t *testing.T) {
	for _, K := range []int{2, 4} {
		x, y := blobs(120, K, 3, 7)
		enc, tg := encoded(t, y)
		m, err := FitLogistic(context.Background(), testGauss{1.5}, x, tg, 1e-3, LogisticOptions{Centers: 30})
		if err != nil {
			t.Fatal(err)
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
		if q.Model.Kind() != KindLogistic || !q.HasProbabilities() || q.Calibration != nil {
			t.Fatalf("loaded %s, probabilities %v", q.Model.Kind(), q.HasProbabilities())
		}
		if q.Model.(Diagnosed).Diagnostics().Known() {
			t.Error("a loaded model reports fit diagnostics")
		}
		for _, rows := range []int{5, 120} { // direct rows and kernel blocks
			xs := x.Slice(0, rows, 0, 2).(*mat.Dense)
			a, b := predictAll(t, p.Model, xs), predictAll(t, q.Model, xs)
			if !mat.Equal(a, b) {
				t.Errorf("K=%d, %d rows: logits differ after loading by %g", K, rows, maxAbsDiff(a, b))
			}
			pa, pb := mat.NewDense(rows, K, nil), mat.NewDense(rows, K, nil)
			if err := p.PredictProba(pa, xs); err != nil {
				t.Fatal(err)
			}
			if err := q.PredictProba(pb, xs); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(pa, pb) {
				t.Errorf("K=%d: probabilities differ after loading", K)
			}
		}
		again, err := MarshalPipeline(q)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, buf.Bytes()) {
			t.Error("re-saving the loaded pipeline gives other bytes")
		}
	}
}

// denseLogistic minimises sum_i w_i loss_i(K alpha) + lambda/2 alpha^T K
// alpha by Newton's method on the explicit n K x n K system (C K + lambda
// I) delta = -(d + lambda alpha), C the block diagonal of the rows' loss
// Hessians and d the rows' weighted loss gradients: the Newton system
// premultiplied by K^-1, solved by LU, with backtracking. It returns the
// fitted logits K alpha.
func denseLogistic(t *testing.T, kmat *mat.Dense, l *logisticLoss, lambda float64) *mat.Dense {
	n, _ := kmat.Dims()
	K := l.K
	alpha := mat.NewDense(n, K, nil)
	F := mat.NewDense(n, K, nil)
	D, P := mat.NewDense(n, K, nil), mat.NewDense(n, K, nil)
	row := make([]float64, K)
	obj := func(a *mat.Dense) float64 {
		var f, ka mat.Dense
		f.Mul(kmat, a)
		ka.Mul(kmat, a)
		return l.value(&f, nil, 0, row) + lambda/2*frobDot(a, &ka)
	}
	for it := 0; it < 100; it++ {
		F.Mul(kmat, alpha)
		l.derivs(D, P, F)
		g := mat.NewDense(n, K, nil)
		g.Add(D, scaled(lambda, alpha))
		if g.Norm(2) < 1e-13 {
			break
		}
		// Column (j, c) of C K: the Hessian products of K e_j in output c.
		A := mat.NewDense(n*K, n*K, nil)
		for j := 0; j < n; j++ {
			for c := 0; c < K; c++ {
				G := mat.NewDense(n, K, nil)
				for i := 0; i < n; i++ {
					G.Set(i, c, kmat.At(i, j))
				}
				l.hessRows(0, G.RawMatrix(), P)
				for i := 0; i < n; i++ {
					for e := 0; e < K; e++ {
						A.Set(i*K+e, j*K+c, G.At(i, e))
					}
				}
				A.Set(j*K+c, j*K+c, A.At(j*K+c, j*K+c)+lambda)
			}
		}
		b := mat.NewVecDense(n*K, nil)
		for i := range n * K {
			b.SetVec(i, -g.RawMatrix().Data[i])
		}
		var delta mat.VecDense
		if err := delta.SolveVec(A, b); err != nil {
			t.Fatal(err)
		}
		dm := mat.NewDense(n, K, slices.Clone(delta.RawVector().Data))
		f0 := obj(alpha)
		step := 1.0
		for ; step > 1e-12; step /= 2 {
			trial := mat.NewDense(n, K, nil)
			trial.Add(alpha, scaled(step, dm))
			if obj(trial) <= f0 {
				alpha = trial
				break
			}
		}
	}
	F.Mul(kmat, alpha)
	return F
}

// TestLogisticOptimality compares FitLogistic with all rows as centres
// against the dense Newton solution of the same objective (binary,
// multinomial, weighted): the fitted logits agree and the fit reports a
// small gradient.
func TestLogisticOptimality(t *testing.T) {
	const lambda = 1e-2
	cases := []struct {
		name     string
		K        int
		weighted bool
	}{{"binary", 2, false}, {"multinomial", 3, false}, {"weighted binary", 2, true}, {"weighted multinomial", 3, true}}
	for _, tc := range cases {
		x, y := blobs(30, tc.K, 1.5, 5)
		_, tg := encoded(t, y)
		n := len(y)
		var w []float64
		if tc.weighted {
			w = make([]float64, n)
			for i := range w {
				w[i] = float64(i%3) * 0.7 // some zero weights
			}
		}
		k := testGauss{1}
		m, err := FitLogistic(context.Background(), k, x, tg, lambda, LogisticOptions{Centers: n, GradTol: 1e-10, Options: Options{Weights: w}})
		if err != nil {
			t.Fatal(err)
		}
		if d := m.Diagnostics(); !d.Converged || d.Residual > 1e-10 {
			t.Errorf("%s: %s", tc.name, d)
		}
		l, err := newLogisticLoss(tg, w)
		if err != nil {
			t.Fatal(err)
		}
		kmat := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				kmat.Set(i, j, k.Eval(x.RawRowView(i), x.RawRowView(j)))
			}
		}
		want := denseLogistic(t, kmat, l, lambda)
		got := predictAll(t, m, x)
		// The objective is lambda-strongly convex in u = T alpha, so
		// ||u - u*|| <= ||g|| / lambda, and the logits K_nM T^-1 u move by
		// at most ||K||^(1/2) <= n^(1/2) times that; with a relative
		// gradient 1e-10 of a gradient at zero below 1 this is about
		// 1e-7. The penalty alpha^T (K + 1e-14 n I) alpha of the fit
		// differs from the dense alpha^T K alpha by ~1e-13.
		t.Logf("%s: %s, logits differ by %g", tc.name, m.Diagnostics(), maxAbsDiff(got, want))
		if d := maxAbsDiff(got, want); d > 1e-6 {
			t.Errorf("%s: logits differ from the dense Newton solution by %g", tc.name, d)
		}
	}
}

// TestLogisticPathAndStreaming: the solution does not depend on the lambda
// path (none, automatic, given) nor on whether K_nM is cached, to the
// accuracy the gradient tolerance guarantees (see TestLogisticOptimality).
func TestLogisticPathAndStreaming(t *testing.T) {
	x, y := blobs(150, 3, 2, 9)
	_, tg := encoded(t, y)
	fit := func(o LogisticOptions) *mat.Dense {
		o.Centers, o.GradTol = 40, 1e-10
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-4, o)
		if err != nil {
			t.Fatal(err)
		}
		// Five CG iterations a step make Newton converge linearly, more
		// slowly than MaxNewtonSteps allows for 1e-10: 1e-7 is asked of it.
		if d := m.Diagnostics(); !d.Converged && (o.Iterations == 0 || d.Residual > 1e-7) {
			t.Errorf("%+v: %s", o, d)
		}
		return predictAll(t, m, x)
	}
	ref := fit(LogisticOptions{})
	// 150 x 40 K_nM is 48 KB: a 60 KB budget holds the rest but not it.
	for name, o := range map[string]LogisticOptions{
		"no path":   {LambdaPath: []float64{}},
		"given":     {LambdaPath: []float64{1, 1e-2}},
		"streamed":  {Options: Options{MemoryBudget: 60 << 10}},
		"fixed CG":  {Iterations: 5},
		"one steps": {NewtonSteps: 1},
	} {
		// lambda = 1e-4: ||u - u*|| <= 1e-10 g0 / 1e-4, logits within
		// ~1e-5 (see TestLogisticOptimality's bound).
		t.Logf("%s: differ by %g", name, maxAbsDiff(fit(o), ref))
		if d := maxAbsDiff(fit(o), ref); d > 1e-4 {
			t.Errorf("%s: logits differ by %g", name, d)
		}
	}
}

// TestLogisticWeightsAsRepeats: integer weights give the fit on the data
// with each row repeated that many times (weight 0: dropped), with the
// same centres, with and without a fitted intercept.
func TestLogisticWeightsAsRepeats(t *testing.T) {
	for _, ic := range []Intercept{InterceptMean, InterceptFitted} {
		t.Run(ic.String(), func(t *testing.T) { testLogisticWeightsAsRepeats(t, ic) })
	}
}

func testLogisticWeightsAsRepeats(t *testing.T, ic Intercept) {
	x, y := blobs(40, 2, 1.5, 4)
	_, tg := encoded(t, y)
	n := len(y)
	w := make([]float64, n)
	var rows []int
	var cidx, eidx []int // centres: rows of x, and their first copies in the expanded data
	for i := range w {
		w[i] = float64(i % 3)
		for r := 0; r < int(w[i]); r++ {
			if r == 0 && i%2 == 0 {
				cidx = append(cidx, i)
				eidx = append(eidx, len(rows))
			}
			rows = append(rows, i)
		}
	}
	xe := gatherRows(x, rows)
	te := gatherRows(tg, rows)
	k := testGauss{1}
	opts := LogisticOptions{GradTol: 1e-10, Intercept: ic}
	fit := func(x, tg *mat.Dense, w []float64, idx []int) *mat.Dense {
		l, err := newLogisticLoss(tg, w)
		if err != nil {
			t.Fatal(err)
		}
		path, _ := logisticPath(1e-3, nil)
		o := opts
		o.Weights = w
		m, err := fitLogistic(context.Background(), k, x, l, path, 1, idx, o)
		if err != nil {
			t.Fatal(err)
		}
		return predictAll(t, m[0], x.Slice(0, 10, 0, 2).(*mat.Dense))
	}
	a := fit(x, tg, w, cidx)
	// Predict the same rows: the first 10 rows of x.
	l, _ := newLogisticLoss(te, nil)
	path, _ := logisticPath(1e-3, nil)
	me, err := fitLogistic(context.Background(), k, xe, l, path, 1, eidx, opts)
	if err != nil {
		t.Fatal(err)
	}
	b := predictAll(t, me[0], x.Slice(0, 10, 0, 2).(*mat.Dense))
	// Both minimise the same objective: agreement to the gradient
	// tolerance's bound (TestLogisticOptimality).
	if d := maxAbsDiff(a, b); d > 1e-6 {
		t.Errorf("weighted fit and repeated rows differ by %g", d)
	}
}

// TestLogisticBadInput checks the errors of FitLogistic.
func TestLogisticBadInput(t *testing.T) {
	x, y := blobs(20, 2, 2, 1)
	_, tg := encoded(t, y)
	_, tg3 := encoded(t, []float64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1})
	half := mat.DenseCopyOf(tg)
	half.Set(3, 0, 0.5)
	two := mat.DenseCopyOf(tg3)
	two.Set(0, 1, 1)
	none := mat.DenseCopyOf(tg3)
	none.Set(0, 0, -1)
	nan := mat.DenseCopyOf(x)
	nan.Set(1, 1, math.NaN())
	ok := LogisticOptions{Centers: 5}
	with := func(f func(*LogisticOptions)) LogisticOptions { o := ok; f(&o); return o }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		k      testGauss
		x      *mat.Dense
		y      *mat.Dense
		lambda float64
		o      LogisticOptions
		want   error
	}{
		{"lambda 0", nil, testGauss{1}, x, tg, 0, ok, zonal.ErrParam},
		{"lambda NaN", nil, testGauss{1}, x, tg, math.NaN(), ok, zonal.ErrParam},
		{"no centres", nil, testGauss{1}, x, tg, 1e-3, LogisticOptions{}, zonal.ErrParam},
		{"too many centres", nil, testGauss{1}, x, tg, 1e-3, LogisticOptions{Centers: 21}, zonal.ErrParam},
		{"target 0.5", nil, testGauss{1}, x, half, 1e-3, ok, zonal.ErrParam},
		{"two classes a row", nil, testGauss{1}, x, two, 1e-3, ok, zonal.ErrParam},
		{"no class", nil, testGauss{1}, x, none, 1e-3, ok, zonal.ErrParam},
		{"label count", nil, testGauss{1}, x, tg.Slice(0, 10, 0, 1).(*mat.Dense), 1e-3, ok, zonal.ErrShape},
		{"NaN feature", nil, testGauss{1}, nan, tg, 1e-3, ok, zonal.ErrNonFinite},
		{"negative weight", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.Weights = make([]float64, 20); o.Weights[2] = -1 }), zonal.ErrParam},
		{"zero weights", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.Weights = make([]float64, 20) }), zonal.ErrParam},
		{"NaN weight", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.Weights = make([]float64, 20); o.Weights[0] = math.NaN() }), zonal.ErrNonFinite},
		{"weight count", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.Weights = make([]float64, 3) }), zonal.ErrShape},
		{"path rising", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.LambdaPath = []float64{1e-2, 1e-1} }), zonal.ErrParam},
		{"path below lambda", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.LambdaPath = []float64{1e-4} }), zonal.ErrParam},
		{"negative steps", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.NewtonSteps = -1 }), zonal.ErrParam},
		{"budget", nil, testGauss{1}, x, tg, 1e-3, with(func(o *LogisticOptions) { o.MemoryBudget = 100 }), zonal.ErrTooLarge},
		{"canceled", canceled, testGauss{1}, x, tg, 1e-3, ok, context.Canceled},
	}
	for _, c := range cases {
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		_, err := FitLogistic(ctx, c.k, c.x, c.y, c.lambda, c.o)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := FitLogistic(context.Background(), nil, x, tg, 1e-3, ok); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("nil kernel: %v", err)
	}
	if _, err := FitLogistic(context.Background(), testGauss{1}, x, nil, 1e-3, ok); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("nil targets: %v", err)
	}
}

// TestLogisticThreshold: a binary logistic pipeline decides at other
// thresholds by its probabilities, without a calibration.
func TestLogisticThreshold(t *testing.T) {
	x, y := blobs(60, 2, 2, 2)
	enc, tg := encoded(t, y)
	m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-3, LogisticOptions{Centers: 20})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(nil, enc, m)
	if err != nil {
		t.Fatal(err)
	}
	prob := mat.NewDense(60, 2, nil)
	if err := p.PredictProba(prob, x); err != nil {
		t.Fatal(err)
	}
	for _, th := range []float64{0.2, 0.5, 0.8} {
		lab := make([]float64, 60)
		if err := p.PredictLabelsAt(lab, x, th); err != nil {
			t.Fatal(err)
		}
		for i := range lab {
			want := enc.Classes[0]
			if prob.At(i, 1) > th {
				want = enc.Classes[1]
			}
			if lab[i] != want {
				t.Fatalf("threshold %g row %d: label %g, probability %g", th, i, lab[i], prob.At(i, 1))
			}
		}
	}
}

// TestLogisticPathModels: every model of FitLogisticPath is the solution
// FitLogistic finds at its lambda (to the gradient tolerance's accuracy,
// see TestLogisticOptimality), and bad lambdas are refused.
func TestLogisticPathModels(t *testing.T) {
	x, y := blobs(100, 3, 2, 12)
	_, tg := encoded(t, y)
	lambdas := []float64{1e-1, 1e-2, 1e-3}
	o := LogisticOptions{Centers: 30, GradTol: 1e-10}
	ms, err := FitLogisticPath(context.Background(), testGauss{1}, x, tg, lambdas, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(lambdas) {
		t.Fatalf("%d models for %d lambdas", len(ms), len(lambdas))
	}
	for i, l := range lambdas {
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, l, o)
		if err != nil {
			t.Fatal(err)
		}
		if ms[i].Lambda() != l || !ms[i].Diagnostics().Converged {
			t.Errorf("model %d: lambda %g, %s", i, ms[i].Lambda(), ms[i].Diagnostics())
		}
		if d := maxAbsDiff(predictAll(t, ms[i], x), predictAll(t, m, x)); d > 1e-6 {
			t.Errorf("lambda %g: path model and direct fit differ by %g", l, d)
		}
	}
	for _, bad := range [][]float64{nil, {1e-2, 1e-1}, {1e-2, 1e-2}, {0}} {
		if _, err := FitLogisticPath(context.Background(), testGauss{1}, x, tg, bad, o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("lambdas %v: %v", bad, err)
		}
	}
}

// TestLogisticPathStepsEveryLambda: each lambda of a path takes at least
// one Newton step from the model of the lambda before, however small the
// change of the penalty against the gradient at alpha = 0: at a loose
// GradTol down to lambda 1e-9 every model is a new one (more Newton steps
// in all than the one before, other predictions). Without the step the
// small lambdas' warm starts met the tolerance and the path returned one
// model for all of them.
func TestLogisticPathStepsEveryLambda(t *testing.T) {
	x, y := blobs(100, 3, 2, 12)
	_, tg := encoded(t, y)
	lambdas := []float64{1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9}
	ms, err := FitLogisticPath(context.Background(), testGauss{1}, x, tg, lambdas, LogisticOptions{Centers: 30, GradTol: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ms); i++ {
		prev, cur := ms[i-1].Newton(), ms[i].Newton()
		if d := maxAbsDiff(predictAll(t, ms[i], x), predictAll(t, ms[i-1], x)); !(cur.Steps > prev.Steps) || d == 0 {
			t.Errorf("lambda %g: %d Newton steps in all after %d at %g, predictions moved by %g: not solved at its lambda",
				lambdas[i], cur.Steps, prev.Steps, lambdas[i-1], d)
		}
	}
}

// TestLogisticLossOfLogits: LogisticLoss of a model's logits is the mean
// of -log(probability of the true class) of the pipeline's probabilities,
// and bad shapes are refused.
func TestLogisticLossOfLogits(t *testing.T) {
	for _, K := range []int{2, 3} {
		x, y := blobs(80, K, 1.5, 21)
		enc, tg := encoded(t, y)
		m, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-2, LogisticOptions{Centers: 20})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := NewPipeline(nil, enc, m)
		out := predictAll(t, m, x)
		got, err := LogisticLoss(out, tg, nil)
		if err != nil {
			t.Fatal(err)
		}
		prob := mat.NewDense(80, K, nil)
		if err := p.PredictProba(prob, x); err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for i, v := range y {
			want -= math.Log(prob.At(i, int(v))) / 80
		}
		// Probabilities of moderate logits: log of a rounded probability
		// is within ~1e-15 relative of the loss computed from the logit.
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("K=%d: LogisticLoss %v, mean -log p %v", K, got, want)
		}
		if _, err := LogisticLoss(out.Slice(0, 10, 0, enc.Outputs()).(*mat.Dense), tg, nil); !errors.Is(err, zonal.ErrShape) {
			t.Errorf("K=%d: shapes: %v", K, err)
		}
	}
}

// TestLogisticCSR: CSR rows give the dense fit's model (the kernel blocks
// sum in another order: agreement to the gradient tolerance's bound, see
// TestLogisticOptimality), with CSR centres.
func TestLogisticCSR(t *testing.T) {
	x, y := blobs(80, 3, 2, 13)
	_, tg := encoded(t, y)
	o := LogisticOptions{Centers: 25, GradTol: 1e-10}
	md, err := FitLogistic(context.Background(), testGauss{1}, x, tg, 1e-3, o)
	if err != nil {
		t.Fatal(err)
	}
	xs := dataset.NewCSRFromDense(x)
	ms, err := FitLogistic(context.Background(), testGauss{1}, xs, tg, 1e-3, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ms.Centers().(*dataset.CSR); !ok {
		t.Errorf("centres of a CSR fit are %T", ms.Centers())
	}
	if d := maxAbsDiff(predictAll(t, md, x), predictAll(t, ms, xs)); d > 1e-6 {
		t.Errorf("CSR and dense fits differ by %g", d)
	}
}

// TestLogisticWarmStart: a fit started from a path model at a larger
// lambda (LogisticOptions.Start) reaches the cold fit's solution (logits
// within 1e-6 at a gradient tolerance of 1e-10) in fewer Newton steps,
// binary and multinomial, with and without the fitted intercept; a start
// with other centres, another intercept or no iterate (a loaded model) is
// refused.
func TestLogisticWarmStart(t *testing.T) {
	ctx := context.Background()
	for _, K := range []int{2, 3} {
		for _, ic := range []Intercept{InterceptMean, InterceptFitted} {
			x, y := blobs(120, K, 2, 21)
			_, tg := encoded(t, y)
			o := LogisticOptions{Centers: 30, GradTol: 1e-10, Seed: 4, Intercept: ic}
			grid, err := FitLogisticPath(ctx, testGauss{1}, x, tg, []float64{1e-1, 1e-2}, o)
			if err != nil {
				t.Fatal(err)
			}
			fine := []float64{5.6e-2, 3.2e-2, 1.8e-2}
			wo := o
			wo.Start = grid[0]
			warm, err := FitLogisticPath(ctx, testGauss{1}, x, tg, fine, wo)
			if err != nil {
				t.Fatal(err)
			}
			cold, err := FitLogisticPath(ctx, testGauss{1}, x, tg, fine, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range fine {
				if d := maxAbsDiff(predictAll(t, warm[i], x), predictAll(t, cold[i], x)); d > 1e-6 || !warm[i].Diagnostics().Converged {
					t.Errorf("K %d %s lambda %g: warm and cold fits differ by %g (%s)", K, ic, fine[i], d, warm[i].Diagnostics())
				}
			}
			ws, cs := warm[len(fine)-1].Newton(), cold[len(fine)-1].Newton()
			t.Logf("K %d %s: warm %d steps %d CG, cold %d steps %d CG", K, ic, ws.Steps, ws.CGIterations, cs.Steps, cs.CGIterations)
			if !(ws.Steps < cs.Steps) || ws.PathSteps != 0 {
				t.Errorf("K %d %s: warm start took %d Newton steps (%d on a path), the cold fit %d", K, ic, ws.Steps, ws.PathSteps, cs.Steps)
			}
			if len(ws.Path) != len(fine) {
				t.Errorf("K %d %s: warm path %v, want the %d lambdas alone", K, ic, ws.Path, len(fine))
			}
			other := o
			other.Intercept = InterceptFitted
			if ic == InterceptFitted {
				other.Intercept = InterceptMean
			}
			loaded := *grid[0]
			loaded.u = nil
			fewer := o
			fewer.Centers = 29
			for name, bad := range map[string]LogisticOptions{"other intercept": other, "loaded": o, "other centres": fewer} {
				bad.Start = grid[0]
				if name == "loaded" {
					bad.Start = &loaded
				}
				if _, err := FitLogistic(ctx, testGauss{1}, x, tg, 1e-2, bad); !errors.Is(err, zonal.ErrParam) {
					t.Errorf("K %d %s, start with %s: %v, want ErrParam", K, ic, name, err)
				}
			}
		}
	}
}

// TestLogisticPathStop: Stop sees every model as it is solved, and true
// ends the path with the models so far, those of FitLogisticPath without
// Stop.
func TestLogisticPathStop(t *testing.T) {
	x, y := blobs(100, 2, 2, 13)
	_, tg := encoded(t, y)
	lambdas := []float64{1e-1, 1e-2, 1e-3, 1e-4}
	o := LogisticOptions{Centers: 30}
	all, err := FitLogisticPath(context.Background(), testGauss{1}, x, tg, lambdas, o)
	if err != nil {
		t.Fatal(err)
	}
	var seen []float64
	o.Stop = func(m *Logistic) bool { seen = append(seen, m.Lambda()); return len(seen) == 2 }
	ms, err := FitLogisticPath(context.Background(), testGauss{1}, x, tg, lambdas, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || !slices.Equal(seen, lambdas[:2]) {
		t.Fatalf("stopped after 2: %d models, Stop saw %v", len(ms), seen)
	}
	for i, m := range ms {
		if d := maxAbsDiff(predictAll(t, m, x), predictAll(t, all[i], x)); d != 0 || m.Newton().Steps != all[i].Newton().Steps {
			t.Errorf("model %d differs from the unstopped path's by %g", i, d)
		}
	}
}

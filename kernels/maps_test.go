package kernels

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

func transform(t *testing.T, f FeatureMap, x *mat.Dense) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	z := mat.NewDense(n, f.Dim(), nil)
	if err := f.Transform(z, x); err != nil {
		t.Fatal(err)
	}
	return z
}

func gram(z *mat.Dense) *mat.Dense {
	var g mat.Dense
	g.Mul(z, z.T())
	return &g
}

// checkUnbiased averages Z Z^T over many seeds and compares each entry with
// want. By the central limit theorem the mean of S independent estimates is
// within 5 standard errors of its expectation except with probability 6e-7
// per entry (a few dozen entries here); the seeds are fixed, so the test is
// deterministic. A biased map (wrong constant, wrong sign) fails by many
// standard errors.
func checkUnbiased(t *testing.T, name string, seeds int, build func(seed uint64) FeatureMap, x, want *mat.Dense) {
	t.Helper()
	n, _ := x.Dims()
	sum := mat.NewDense(n, n, nil)
	sq := mat.NewDense(n, n, nil)
	for s := 0; s < seeds; s++ {
		g := gram(transform(t, build(uint64(s)+1000), x))
		sum.Add(sum, g)
		g.MulElem(g, g)
		sq.Add(sq, g)
	}
	S := float64(seeds)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			mean := sum.At(i, j) / S
			v := math.Max(sq.At(i, j)/S-mean*mean, 0)
			se := math.Sqrt(v / S)
			if d := math.Abs(mean - want.At(i, j)); d > 5*se+1e-12 {
				t.Errorf("%s: E[ZZ^T](%d,%d) = %.5f, kernel %.5f (%.1f standard errors)", name, i, j, mean, want.At(i, j), d/se)
			}
		}
	}
}

func TestGegenbauerUnbiased(t *testing.T) {
	b := backend.Default()
	x := randMatrix(11, 6, 3, 0.6)
	x.Set(5, 0, 0)
	x.Set(5, 1, 0)
	x.Set(5, 2, 0) // the x = 0 case
	k := Gaussian{1.1}
	g := mustGZK(t, k, 3, 6, 3)
	want, _ := Matrix(context.Background(), g, x, x, Options{Backend: b})
	seeds := 3000
	if testing.Short() {
		seeds = 500
	}
	for _, o := range []GegenbauerOptions{{}, {Orthogonal: true}, {Antithetic: true}, {Orthogonal: true, Antithetic: true}} {
		o := o
		o.Q, o.S, o.Features = 6, 3, 12
		checkUnbiased(t, "gegenbauer", seeds, func(seed uint64) FeatureMap {
			o.Seed = seed
			o.Backend = b
			f, err := NewGegenbauerMap(context.Background(), k, x, o)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}, x, want)
	}
	// A user GZK (polynomial radial functions) through the same map.
	ug, _ := NewGZK(3, 2, 1, func(l int, r float64, dst []float64) { dst[0] = ipow(r, l) / float64(l+1) })
	want, _ = Matrix(context.Background(), ug, x, x, Options{Backend: b})
	checkUnbiased(t, "user gzk", seeds, func(seed uint64) FeatureMap {
		f, err := NewGegenbauerMap(context.Background(), ug, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 8, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}, x, want)
}

func TestFourierUnbiased(t *testing.T) {
	b := backend.Default()
	x := randMatrix(12, 6, 4, 0.6)
	seeds := 3000
	if testing.Short() {
		seeds = 800
	}
	for _, c := range []struct {
		k    Kernel
		orth bool
	}{{Gaussian{1.3}, false}, {Gaussian{1.3}, true}, {Laplacian{2}, false}} {
		want, _ := Matrix(context.Background(), c.k, x, x, Options{Backend: b})
		checkUnbiased(t, c.k.String(), seeds, func(seed uint64) FeatureMap {
			f, err := NewFourierMap(c.k, 4, FourierOptions{Options: Options{Backend: b}, Features: 10, Orthogonal: c.orth, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}, x, want)
	}
}

func TestErrorFallsAsInverseSqrtD(t *testing.T) {
	// E|ZZ^T - K|_F^2 is proportional to 1/m for independent directions, so
	// the RMS error over seeds at 16 times the features is 4 times smaller.
	// 24 seeds estimate each mean square within ~30%, so the ratio of RMS
	// errors lies in [3, 5.4] (sqrt(16 * 0.7/1.3) .. sqrt(16 * 1.3/0.7)).
	b := backend.Default()
	x := randMatrix(13, 40, 5, 0.5)
	k := Gaussian{1.5}
	gz := mustGZK(t, k, 5, 5, 3)
	kg, _ := Matrix(context.Background(), gz, x, x, Options{Backend: b})
	kk, _ := Matrix(context.Background(), k, x, x, Options{Backend: b})
	rms := func(build func(D int, seed uint64) FeatureMap, want *mat.Dense, D int) float64 {
		s := 0.0
		for seed := uint64(0); seed < 24; seed++ {
			var e mat.Dense
			e.Sub(gram(transform(t, build(D, seed), x)), want)
			f := mat.Norm(&e, 2) / mat.Norm(want, 2)
			s += f * f
		}
		return math.Sqrt(s / 24)
	}
	gb := func(D int, seed uint64) FeatureMap {
		f, err := NewGegenbauerMap(context.Background(), k, x, GegenbauerOptions{Options: Options{Backend: b}, Features: D, Q: 5, S: 3, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fb := func(D int, seed uint64) FeatureMap {
		f, err := NewFourierMap(k, 5, FourierOptions{Options: Options{Backend: b}, Features: D, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name  string
		build func(int, uint64) FeatureMap
		want  *mat.Dense
		d     int
	}{{"gegenbauer", gb, kg, 48}, {"fourier", fb, kk, 48}} {
		r1, r2 := rms(c.build, c.want, c.d), rms(c.build, c.want, 16*c.d)
		if ratio := r1 / r2; ratio < 3 || ratio > 5.4 {
			t.Errorf("%s: rel. Frobenius error %.4f at D=%d, %.4f at D=%d: ratio %.2f, want ~4", c.name, r1, c.d, r2, 16*c.d, ratio)
		}
	}
}

func TestGegenbauerZeroRowAndAutoTruncation(t *testing.T) {
	b := backend.Default()
	x := randMatrix(14, 20, 4, 1)
	for j := 0; j < 4; j++ {
		x.Set(0, j, 0)
	}
	f, err := NewGegenbauerMap(context.Background(), Gaussian{2}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 300, Tol: 1e-4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	tr := f.Truncation()
	if tr.Bound > 1e-4 || f.Dim() > 300 || f.Dim()%tr.S != 0 || f.Dim() < 300-tr.S {
		t.Fatalf("auto truncation %+v, Dim %d", tr, f.Dim())
	}
	z := transform(t, f, x)
	// z(0) keeps the l = 0 term only: each direction contributes
	// h_{0,j}(0)^2/m = [j == 0]/m, so |z(0)|^2 = k(0,0) = 1 exactly.
	r := z.RawRowView(0)
	if n2 := dot(r, r); math.Abs(n2-1) > 1e-14 {
		t.Fatalf("|z(0)|^2 = %.17g, want 1", n2)
	}
}

func TestNystromExactOnAllPoints(t *testing.T) {
	// With every point as a landmark, Z Z^T = K K^{-1} K = K; K is well
	// conditioned here (points far apart relative to sigma), so 1e-10.
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		x := randMatrix(15, 30, 3, 2)
		k := Gaussian{0.7}
		ny, err := NewNystromFromLandmarks(context.Background(), k, x, Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		kk, _ := Matrix(context.Background(), k, x, x, Options{Backend: b})
		var e mat.Dense
		e.Sub(gram(transform(t, ny, x)), kk)
		if v := mat.Norm(&e, math.Inf(1)); v > 1e-10 || ny.Rank() != 30 {
			t.Fatalf("|ZZ^T - K| = %g, rank %d", v, ny.Rank())
		}
	})
}

func TestRecursiveRLS(t *testing.T) {
	b := backend.Default()
	// 300 nearly identical points and 5 isolated ones: at lambda = 0.1 the
	// isolated points have ridge leverage ~1/(1+lambda) = 0.91 and the whole
	// cluster about 1 (one direction of the feature space). Sampling 12 points
	// proportionally to leverage takes each isolated point with probability
	// ~0.9; uniform sampling takes 12*5/305 = 0.2 of them on average. Over 10
	// seeds we require RLS to average >= 3.5 and uniform <= 1.5, and RLS to
	// have the smaller average eps_lambda.
	x := mat.NewDense(305, 2, nil)
	rx := randMatrix(16, 305, 2, 0.01)
	for i := 0; i < 300; i++ {
		x.SetRow(i, rx.RawRowView(i))
	}
	for i := 0; i < 5; i++ {
		x.Set(300+i, 0, 10*float64(i+1))
		x.Set(300+i, 1, -5)
	}
	k := Gaussian{1}
	kk, _ := Matrix(context.Background(), k, x, x, Options{Backend: b})
	ev, err := NewEvaluator(context.Background(), kk, Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	const lam = 0.1
	var outR, outU, epsR, epsU float64
	for seed := uint64(0); seed < 10; seed++ {
		idx, err := RecursiveRLS(context.Background(), k, x, 12, RLSOptions{Options: Options{Backend: b}, Lambda: lam, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if len(idx) != 12 {
			t.Fatalf("got %d indices", len(idx))
		}
		seen := map[int]bool{}
		for i, v := range idx {
			if v < 0 || v >= 305 || seen[v] || (i > 0 && idx[i-1] >= v) {
				t.Fatalf("indices not distinct/sorted/in range: %v", idx)
			}
			seen[v] = true
			if v >= 300 {
				outR++
			}
		}
		again, _ := RecursiveRLS(context.Background(), k, x, 12, RLSOptions{Options: Options{Backend: b}, Lambda: lam, Seed: seed})
		for i := range idx {
			if again[i] != idx[i] {
				t.Fatal("not deterministic for a seed")
			}
		}
		nr, err := NewNystromFromLandmarks(context.Background(), k, dataset.MustSelectRows[mat.Matrix](x, idx), Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		nu, _ := NewNystrom(context.Background(), k, x, NystromOptions{Options: Options{Backend: b}, Landmarks: 12, Seed: seed})
		for _, c := range nu.Landmarks().RawMatrix().Data {
			if c >= 10 {
				outU++
			}
		}
		mr, _ := ev.Measure(context.Background(), transform(t, nr, x), []float64{lam})
		mu, _ := ev.Measure(context.Background(), transform(t, nu, x), []float64{lam})
		epsR += mr.Eps[0]
		epsU += mu.Eps[0]
	}
	if outR/10 < 3.5 || outU/10 > 1.5 || epsR >= epsU {
		t.Fatalf("isolated points chosen: RLS %.1f, uniform %.1f; mean eps_lambda RLS %.3f, uniform %.3f", outR/10, outU/10, epsR/10, epsU/10)
	}
	// adaptive lambda works too, and m = n returns everything.
	if idx, err := RecursiveRLS(context.Background(), k, x, 40, RLSOptions{Options: Options{Backend: b}, Lambda: 0, Seed: 1}); err != nil || len(idx) != 40 {
		t.Fatalf("adaptive lambda: %v %d", err, len(idx))
	}
	if idx, _ := RecursiveRLS(context.Background(), k, x, 305, RLSOptions{Options: Options{Backend: b}, Lambda: 0, Seed: 1}); len(idx) != 305 || idx[304] != 304 {
		t.Fatal("m = n must return all rows")
	}
	for _, m := range []int{0, 306} {
		if _, err := RecursiveRLS(context.Background(), k, x, m, RLSOptions{Options: Options{Backend: b}, Lambda: 1e-3, Seed: 1}); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("m=%d: %v", m, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RecursiveRLS(ctx, k, x, 10, RLSOptions{Options: Options{Backend: b}, Lambda: 1e-3, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestMeasures(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		x := randMatrix(17, 25, 3, 1)
		kk, _ := Matrix(context.Background(), Gaussian{1}, x, x, Options{Backend: b})
		ev, err := NewEvaluator(context.Background(), kk, Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		// Z = 0: E = -K, so every relative error is 1 and
		// eps_lambda = max mu/(mu+lambda).
		var es mat.EigenSym
		es.Factorize(mat.NewSymDense(25, kk.RawMatrix().Data), true)
		mu := es.Values(nil)
		top := mu[len(mu)-1]
		m, err := ev.Measure(context.Background(), mat.NewDense(25, 4, nil), []float64{0.1, 10})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.RelFro-1) > 1e-12 || math.Abs(m.RelSpec-1) > 1e-12 ||
			math.Abs(m.Eps[0]-top/(top+0.1)) > 1e-12 || math.Abs(m.Eps[1]-top/(top+10)) > 1e-12 {
			t.Fatalf("Z=0: %+v (top eigenvalue %g)", m, top)
		}
		// Z = U diag(sqrt(mu)): exact, all errors at round-off.
		var u mat.Dense
		es.VectorsTo(&u)
		z := mat.NewDense(25, 25, nil)
		for j, v := range mu {
			for i := 0; i < 25; i++ {
				z.Set(i, j, u.At(i, j)*math.Sqrt(math.Max(v, 0)))
			}
		}
		m, _ = ev.Measure(context.Background(), z, []float64{1e-3})
		if m.RelFro > 1e-12 || m.RelSpec > 1e-12 || m.Eps[0] > 1e-9 {
			t.Fatalf("exact Z: %+v", m)
		}
		// A random Z against the definition computed densely with gonum.
		z = randMatrix(18, 25, 6, 0.3)
		lam := 0.5
		got, _ := EpsLambda(context.Background(), kk, z, lam, Options{Backend: b})
		var isq mat.Dense // (K + lam I)^{-1/2}
		s := mat.NewDense(25, 25, nil)
		for j, v := range mu {
			for i := 0; i < 25; i++ {
				s.Set(i, j, u.At(i, j)/math.Sqrt(math.Max(v, 0)+lam))
			}
		}
		isq.Mul(s, u.T())
		var e, t1, t2 mat.Dense
		e.Sub(gram(z), kk)
		t1.Mul(&isq, &e)
		t2.Mul(&t1, &isq)
		var es2 mat.EigenSym
		es2.Factorize(mat.NewSymDense(25, t2.RawMatrix().Data), false)
		vals := es2.Values(nil)
		want := math.Max(math.Abs(vals[0]), math.Abs(vals[24]))
		if math.Abs(got-want) > 1e-10*math.Max(1, want) {
			t.Fatalf("eps_lambda %g, dense definition %g", got, want)
		}
		rf, _ := RelFrobenius(context.Background(), kk, z, Options{Backend: b})
		if math.Abs(rf-mat.Norm(&e, 2)/mat.Norm(kk, 2)) > 1e-12 {
			t.Fatalf("rel_fro %g", rf)
		}
		if _, err := EpsLambda(context.Background(), kk, z, 0, Options{Backend: b}); !errors.Is(err, zonal.ErrParam) {
			t.Fatalf("lambda 0: %v", err)
		}
		if _, err := RelSpectral(context.Background(), kk, randMatrix(1, 24, 2, 1), Options{Backend: b}); !errors.Is(err, zonal.ErrShape) {
			t.Fatalf("row mismatch: %v", err)
		}
	})
}

func TestMapsBadInput(t *testing.T) {
	b := backend.Default()
	x := randMatrix(19, 10, 4, 1)
	g, _ := NewGegenbauerMap(context.Background(), Gaussian{1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 12, Q: 3, S: 2})
	f, _ := NewFourierMap(Gaussian{1}, 4, FourierOptions{Options: Options{Backend: b}, Features: 8})
	ny, _ := NewNystrom(context.Background(), Gaussian{1}, x, NystromOptions{Options: Options{Backend: b}, Landmarks: 5, Seed: 1})
	nan := mat.DenseCopyOf(x)
	nan.Set(1, 1, math.NaN())
	for _, m := range []FeatureMap{g, f, ny} {
		if err := m.Transform(mat.NewDense(10, m.Dim(), nil), randMatrix(1, 10, 3, 1)); !errors.Is(err, zonal.ErrShape) {
			t.Errorf("%T d mismatch: %v", m, err)
		}
		if err := m.Transform(mat.NewDense(9, m.Dim(), nil), x); !errors.Is(err, zonal.ErrShape) {
			t.Errorf("%T dst rows: %v", m, err)
		}
		if err := m.Transform(mat.NewDense(10, m.Dim(), nil), nan); !errors.Is(err, zonal.ErrNonFinite) {
			t.Errorf("%T NaN: %v", m, err)
		}
		if err := m.Transform(&mat.Dense{}, &mat.Dense{}); !errors.Is(err, zonal.ErrEmpty) {
			t.Errorf("%T empty: %v", m, err)
		}
	}
	cases := []struct {
		err  error
		want error
	}{
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Gaussian{1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 13, Q: 3, S: 2})
			return e
		}(), zonal.ErrParam}, // D not a multiple of s
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Gaussian{1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 6, Q: 3, S: 2, Antithetic: true})
			return e
		}(), zonal.ErrParam}, // antithetic needs pairs
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Gaussian{1}, &mat.Dense{}, GegenbauerOptions{Options: Options{Backend: b}, Features: 8})
			return e
		}(), zonal.ErrEmpty},
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Gaussian{1}, nan, GegenbauerOptions{Options: Options{Backend: b}, Features: 8})
			return e
		}(), zonal.ErrNonFinite},
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Laplacian{1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 8})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewGegenbauerMap(context.Background(), Gaussian{1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 0})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewFourierMap(Gaussian{1}, 4, FourierOptions{Options: Options{Backend: b}, Features: 7})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewFourierMap(Laplacian{1}, 4, FourierOptions{Options: Options{Backend: b}, Features: 8, Orthogonal: true})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewFourierMap(NTK{1}, 4, FourierOptions{Options: Options{Backend: b}, Features: 8})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewNystrom(context.Background(), Gaussian{1}, x, NystromOptions{Options: Options{Backend: b}, Landmarks: 11, Seed: 1})
			return e
		}(), zonal.ErrParam},
		{func() error {
			_, e := NewNystromFromLandmarks(context.Background(), Gaussian{1}, &mat.Dense{}, Options{Backend: b})
			return e
		}(), zonal.ErrEmpty},
		{func() error {
			_, e := NewNystromFromLandmarks(context.Background(), Gaussian{1}, nan, Options{Backend: b})
			return e
		}(), zonal.ErrNonFinite},
	}
	for i, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("case %d: got %v, want %v", i, c.err, c.want)
		}
	}
}

func TestMapsMarshalAndConcurrency(t *testing.T) {
	b := backend.Default()
	x := randMatrix(20, 300, 5, 1)
	q, s := 0, 0 // automatic (q, s): the pilot path
	if testing.Short() {
		q, s = 3, 2 // the pilot is costly under -race; its own test covers it
	}
	g, _ := NewGegenbauerMap(context.Background(), Gaussian{1.5}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 64, Q: q, S: s, Antithetic: true, Orthogonal: true, Seed: 4})
	p, _ := NewGegenbauerMap(context.Background(), Polynomial{3, 0.5, 1}, x, GegenbauerOptions{Options: Options{Backend: b}, Features: 60, Q: q, S: s, Seed: 4})
	f, _ := NewFourierMap(Gaussian{1.5}, 5, FourierOptions{Options: Options{Backend: b}, Features: 64, Orthogonal: true, Seed: 4})
	ny, _ := NewNystrom(context.Background(), Gaussian{1.5}, x, NystromOptions{Options: Options{Backend: b}, Landmarks: 40, Seed: 4})
	for _, m := range []PersistentMap{g, p, f, ny} {
		want := transform(t, m, x)
		data, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := UnmarshalMap(m.Kind(), data)
		if err != nil {
			t.Fatalf("%s: %v", m.Kind(), err)
		}
		if !mat.EqualApprox(transform(t, m2, x), want, 1e-12) {
			t.Errorf("%s: decoded map transforms differently", m.Kind())
		}
		if _, err := UnmarshalMap(m.Kind(), data[:len(data)-3]); err == nil {
			t.Errorf("%s: truncated encoding accepted", m.Kind())
		}
		// Concurrent use gives identical results (run under -race in CI).
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				z := mat.NewDense(300, m.Dim(), nil)
				if err := m.Transform(z, x); err != nil || !mat.Equal(z, want) {
					t.Errorf("%s: concurrent Transform differs (%v)", m.Kind(), err)
				}
			}()
		}
		wg.Wait()
	}
}

func TestSelectTruncationPredictsError(t *testing.T) {
	// On 60 rows (all of them in the pilot) the predicted mean squared
	// relative Frobenius error of SelectTruncation must match the mean over
	// 100 seeds of the measured one. The pilot's second moment uses 4096
	// directions (a few % noise) and the empirical mean of 100 squared errors
	// ~15%: accept a ratio in [0.6, 1.6].
	b := backend.Default()
	x := randMatrix(21, 60, 4, 1)
	k := Gaussian{1.4}
	pt, err := newPilot(context.Background(), k, x, SelectOptions{Options: Options{Backend: b}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	kk, _ := Matrix(context.Background(), k, x, x, Options{Backend: b})
	seeds := 100
	if testing.Short() {
		seeds = 40 // wider noise (~25%) still inside [0.6, 1.6]
	}
	for _, qs := range [][2]int{{2, 1}, {3, 2}, {6, 3}} {
		q, s := qs[0], qs[1]
		D := 16 * s
		sum := 0.0
		for seed := 0; seed < seeds; seed++ {
			f, err := NewGegenbauerMap(context.Background(), k, x, GegenbauerOptions{Options: Options{Backend: b}, Features: D, Q: q, S: s, Seed: uint64(seed)})
			if err != nil {
				t.Fatal(err)
			}
			var e mat.Dense
			e.Sub(gram(transform(t, f, x)), kk)
			r := mat.Norm(&e, 2) / mat.Norm(kk, 2)
			sum += r * r
		}
		got, want := sum/float64(seeds), pt.predict(q, s, D)
		if ratio := got / want; ratio < 0.6 || ratio > 1.6 {
			t.Errorf("q=%d s=%d: measured mean squared rel. error %.4g, predicted %.4g", q, s, got, want)
		}
	}
	// More features afford a larger truncation (less bias, more variance).
	small, err := SelectTruncation(context.Background(), k, x, 8, SelectOptions{Options: Options{Backend: b}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	large, _ := SelectTruncation(context.Background(), k, x, 1<<20, SelectOptions{Options: Options{Backend: b}, Seed: 3})
	if large.Q+large.S <= small.Q+small.S || math.IsNaN(large.Bound) {
		t.Errorf("D=8: %+v, D=2^20: %+v", small, large)
	}
	if _, err := SelectTruncation(context.Background(), k, x, 0, SelectOptions{Options: Options{Backend: b}, Seed: 3}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("D=0: %v", err)
	}
	if _, err := SelectTruncation(context.Background(), Laplacian{1}, x, 10, SelectOptions{Options: Options{Backend: b}, Seed: 3}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("laplacian: %v", err)
	}
}

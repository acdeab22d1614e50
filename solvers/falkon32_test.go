package solvers

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// relDiff is |a - b|_F / |b - mean(b)|_F: the difference of two predictions
// relative to the spread of the reference.
func relRMSDiff(a, b *mat.Dense) float64 {
	n, k := b.Dims()
	var num, den float64
	for j := 0; j < k; j++ {
		mu := 0.0
		for i := 0; i < n; i++ {
			mu += b.At(i, j)
		}
		mu /= float64(n)
		for i := 0; i < n; i++ {
			num += (a.At(i, j) - b.At(i, j)) * (a.At(i, j) - b.At(i, j))
			den += (b.At(i, j) - mu) * (b.At(i, j) - mu)
		}
	}
	return math.Sqrt(num / den)
}

func argmaxRows(m *mat.Dense) []int {
	n, _ := m.Dims()
	out := make([]int, n)
	for i := range out {
		r := rowOf(m, i)
		for j, v := range r {
			if v > r[out[i]] {
				out[i] = j
			}
		}
	}
	return out
}

// float32Problem is the smooth regression problem of the float32 FALKON
// tests (n = 3000, d = 4, 500 test rows, Gaussian sigma 1.5, M = 250,
// lambda 1e-5, CG run to convergence) with its float64 fit and that fit's
// test predictions.
type float32Problem struct {
	x, y, xt *mat.Dense
	k        kernels.Kernel
	base     FalkonOptions
	f64      *Falkon
	want     *mat.Dense
}

// float32Lambda is float32Problem's lambda.
const float32Lambda = 1e-5

func newFloat32Problem(t *testing.T) float32Problem {
	t.Helper()
	p := float32Problem{k: kernels.Gaussian{Sigma: 1.5}, base: FalkonOptions{Centers: 250, Seed: 3, Iterations: 100, Tol: 1e-12}}
	p.x, p.y = synth(3000, 4, 31)
	p.xt, _ = synth(500, 4, 32)
	var err error
	if p.f64, err = FitFalkon(context.Background(), p.k, p.x, p.y, float32Lambda, p.base); err != nil {
		t.Fatal(err)
	}
	p.want = predictAll(t, p.f64, p.xt)
	return p
}

// TestFalkonFloat32Synthetic: on a smooth regression problem (n = 3000,
// d = 4, M = 250, lambda 1e-5, CG run to convergence) the float32 fit
// predicts the float64 fit's outputs within 1e-4 relative RMS (measured:
// about 7e-6; the entries' rounding, 6e-8, amplified by the conditioning
// that lambda leaves), whether K_nM is cached or streamed, and reports the
// caching it did.
func TestFalkonFloat32Synthetic(t *testing.T) {
	p := newFloat32Problem(t)
	x, y, xt, k, base, f64, want := p.x, p.y, p.xt, p.k, p.base, p.f64, p.want
	ctx := context.Background()
	o32 := base
	o32.Precision = zonal.Float32
	cached, err := FitFalkon(ctx, k, x, y, 1e-5, o32)
	if err != nil {
		t.Fatal(err)
	}
	if !cached.CachedKnM() || cached.Precision() != zonal.Float32 || f64.Precision() != zonal.Float64 {
		t.Fatalf("cached %v, precisions %v and %v", cached.CachedKnM(), cached.Precision(), f64.Precision())
	}
	o32.MemoryBudget = 3 << 20 // factors (1 MB) fit, K_nM (3 MB in float32) does not
	streamed, err := FitFalkon(ctx, k, x, y, 1e-5, o32)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.CachedKnM() {
		t.Fatal("float32 K_nM cached under a 3 MiB budget")
	}
	for name, m := range map[string]*Falkon{"cached": cached, "streamed": streamed} {
		got := predictAll(t, m, xt)
		if r := relRMSDiff(got, want); r > 1e-4 {
			t.Errorf("%s float32: relative RMS difference %.3g from float64, want <= 1e-4", name, r)
		} else {
			t.Logf("%s float32: relative RMS difference %.3g from float64", name, r)
		}
		if r := relRMSDiff(got, want); r == 0 {
			t.Errorf("%s float32 predicts exactly as float64: no float32 arithmetic?", name)
		}
	}
}

// TestFalkonFloat32Digits: on digits (1437 training rows, 360 test rows,
// M = 300) the float32 model predicts the float64 model's label on at
// least 99.9% of the test rows (with 360 rows: on every one).
func TestFalkonFloat32Digits(t *testing.T) {
	data, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	std, err := dataset.FitStandardizer(data.X)
	if err != nil {
		t.Fatal(err)
	}
	if err := std.Apply(data.X); err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoding(data.Y, TaskClassification)
	if err != nil {
		t.Fatal(err)
	}
	y, err := enc.Targets(data.Y)
	if err != nil {
		t.Fatal(err)
	}
	const ntr = 1437
	xtr, ytr := data.X.Slice(0, ntr, 0, 64).(*mat.Dense), y.Slice(0, ntr, 0, 10).(*mat.Dense)
	xte := data.X.Slice(ntr, 1797, 0, 64).(*mat.Dense)
	k := kernels.Gaussian{Sigma: 5.656854249492381}
	ctx := context.Background()
	opts := FalkonOptions{Centers: 300, Seed: 1}
	f64, err := FitFalkon(ctx, k, mat.DenseCopyOf(xtr), ytr, 1e-7, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Precision = zonal.Float32
	f32, err := FitFalkon(ctx, k, mat.DenseCopyOf(xtr), ytr, 1e-7, opts)
	if err != nil {
		t.Fatal(err)
	}
	xt := mat.DenseCopyOf(xte)
	p64, p32 := predictAll(t, f64, xt), predictAll(t, f32, xt)
	l64, l32 := argmaxRows(p64), argmaxRows(p32)
	agree := 0
	for i := range l64 {
		if l64[i] == l32[i] {
			agree++
		}
	}
	frac := float64(agree) / float64(len(l64))
	t.Logf("digits: labels agree on %d of %d test rows; relative RMS difference of outputs %.3g", agree, len(l64), relRMSDiff(p32, p64))
	if frac < 0.999 {
		t.Fatalf("float32 and float64 FALKON agree on %.4f of the labels, want >= 0.999", frac)
	}
}

// TestFalkonFloat32Budget: with a budget between the float32 and the
// float64 size of K_nM, the float32 fit caches K_nM and the float64 fit
// streams it.
func TestFalkonFloat32Budget(t *testing.T) {
	const n, M, kout = 4000, 200, 1
	x, y := synth(n, 3, 41)
	fixed := int64(2*M*M*8 + 6*M*kout*8)
	limit := fixed + int64(n)*M*6 // float64 K_nM needs 8 n M, float32 4 n M plus small scratch
	opts := FalkonOptions{Options: Options{MemoryBudget: limit}, Centers: M, Seed: 2}
	f64, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-5, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Precision = zonal.Float32
	f32, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-5, opts)
	if err != nil {
		t.Fatal(err)
	}
	if f64.CachedKnM() || !f32.CachedKnM() {
		t.Fatalf("budget %d: float64 cached %v (want false), float32 cached %v (want true)", limit, f64.CachedKnM(), f32.CachedKnM())
	}
	// A budget the factors fit (FitFalkon's own count of them, plus the
	// M*8 it asks beyond) but not the float32 centres and one streamed row.
	opts.MemoryBudget = int64(M)*M*8 + factorScratch(M)*8 + 6*int64(M)*kout*8 + int64(M)*8
	if _, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-5, opts); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("budget of the factors only: %v, want ErrTooLarge", err)
	}
}

// TestFalkonFloat32Progress: the float32 cache reports its "kernel" stage.
func TestFalkonFloat32Progress(t *testing.T) {
	x, y := synth(5000, 2, 51)
	last := 0
	opts := FalkonOptions{Centers: 50, Precision: zonal.Float32, Options: Options{Progress: func(p zonal.Progress) {
		if p.Stage == "kernel" {
			last = p.Done
		}
	}}}
	if _, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-4, opts); err != nil {
		t.Fatal(err)
	}
	if last != 5000 {
		t.Fatalf("last kernel report at %d rows, want 5000", last)
	}
}

// TestFloat32ModelFile: a float32 FALKON, ParK or ridge model is written as format
// 2 with its precision, loads as float32 and predicts exactly what it did
// (single rows and batches); float64 models stay format 1; corrupt
// precision sections are refused.
func TestFloat32ModelFile(t *testing.T) {
	x, y := synth(600, 3, 61)
	xt, _ := synth(100, 3, 62)
	k := kernels.Gaussian{Sigma: 1.3}
	ctx := context.Background()
	fk, err := FitFalkon(ctx, k, x, y, 1e-5, FalkonOptions{Centers: 60, Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := FitParK(ctx, k, x, y, 1e-5, ParKOptions{Cells: 3, Centers: 90, Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	if pk.Precision() != zonal.Float32 {
		t.Fatalf("ParK precision %v", pk.Precision())
	}
	f64, err := FitFalkon(ctx, k, x, y, 1e-5, FalkonOptions{Centers: 60})
	if err != nil {
		t.Fatal(err)
	}
	fm, err := kernels.NewFourierMap(k, 3, kernels.FourierOptions{Features: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rg, err := FitRidge(ctx, fm, x, y, 1e-5, RidgeOptions{Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	reg := Encoding{Task: TaskRegression}
	for _, m := range []Model{fk, pk, f64, rg} {
		p, err := NewPipeline(nil, reg, m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalPipeline(p)
		if err != nil {
			t.Fatal(err)
		}
		wantV := uint16(1)
		if m.(precisioner).Precision() == zonal.Float32 {
			wantV = 2
		}
		if v := binary.LittleEndian.Uint16(b[8:]); v != wantV {
			t.Fatalf("%s (%v): format %d, want %d", m.Kind(), m.(precisioner).Precision(), v, wantV)
		}
		q, err := UnmarshalPipeline(b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Model.(precisioner).Precision(); got != m.(precisioner).Precision() {
			t.Fatalf("%s: loaded precision %v, saved %v", m.Kind(), got, m.(precisioner).Precision())
		}
		want, got := predictAll(t, m, xt), predictAll(t, q.Model, xt)
		if d := maxAbsDiff(got, want); d != 0 {
			t.Fatalf("%s: loaded model predicts differently (max %g)", m.Kind(), d)
		}
		again, err := MarshalPipeline(q)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%s: re-saving changed the file (%v)", m.Kind(), err)
		}
		if wantV == 1 {
			continue
		}
		// Corruptions: precision byte 0 or 7, the file declared version 1.
		for _, c := range []struct {
			name string
			mod  func([]byte)
		}{
			{"precision 0", func(b []byte) { b[len(b)-5] = 0 }},
			{"precision 7", func(b []byte) { b[len(b)-5] = 7 }},
			{"version 1", func(b []byte) { binary.LittleEndian.PutUint16(b[8:], 1) }},
		} {
			bad := bytes.Clone(b)
			c.mod(bad)
			binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.ChecksumIEEE(bad[:len(bad)-4]))
			if _, err := UnmarshalPipeline(bad, Options{}); !errors.Is(err, zonal.ErrFormat) {
				t.Errorf("%s with %s: %v, want ErrFormat", m.Kind(), c.name, err)
			}
		}
	}
	// The float32 model's batch prediction (float32 kernel blocks) and its
	// single rows (float64 kernel evaluations) differ by float32 rounding
	// only.
	batch := predictAll(t, fk, xt)
	for i := 0; i < 100; i++ {
		one := predictAll(t, fk, xt.Slice(i, i+1, 0, 3).(*mat.Dense))
		if d := math.Abs(one.At(0, 0) - batch.At(i, 0)); d > 1e-4*(1+math.Abs(one.At(0, 0))) {
			t.Fatalf("row %d: single %v, batch %v", i, one.At(0, 0), batch.At(i, 0))
		}
	}
}

func TestFalkonBadPrecision(t *testing.T) {
	x, y := synth(50, 2, 71)
	k := kernels.Gaussian{Sigma: 1}
	if _, err := FitFalkon(context.Background(), k, x, y, 1e-3, FalkonOptions{Centers: 10, Precision: 9}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("FALKON precision 9: %v, want ErrParam", err)
	}
	if _, err := FitParK(context.Background(), k, x, y, 1e-3, ParKOptions{Cells: 2, Centers: 10, Precision: 9}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("ParK precision 9: %v, want ErrParam", err)
	}
}

// TestFalkonFloat32Products keeps the measurement behind the line drawn in
// falkon32.go: with float32 products in the CG passes (products32) CG
// stalls far above the residual it reaches with float64 products on the
// widened float32 entries (measured at lambda 1e-6, 100 iterations: 2e-3
// against 1.4e-6; asserted: at least 10 times higher).
func TestFalkonFloat32Products(t *testing.T) {
	if testing.Short() {
		t.Skip("two 100-iteration fits")
	}
	x, y := synth(3000, 4, 31)
	opts := FalkonOptions{Centers: 250, Seed: 3, Iterations: 100, Tol: 1e-12, Precision: zonal.Float32}
	final := func() float64 {
		f, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1.5}, x, y, 1e-6, opts)
		if err != nil {
			t.Fatal(err)
		}
		h := f.CG().History
		return h[len(h)-1]
	}
	wide := final()
	products32 = true
	defer func() { products32 = false }()
	p32 := final()
	t.Logf("final CG residual: %.3g with float64 products, %.3g with float32 products", wide, p32)
	if !(p32 > 10*wide) {
		t.Fatalf("float32 products reach residual %.3g, float64 products %.3g: the note in falkon32.go is out of date", p32, wide)
	}
}

// TestFalkonFloat32Cancel: cancelling during the CG of a float32 fit (cached
// or streamed K_nM) returns an error wrapping context.Canceled.
func TestFalkonFloat32Cancel(t *testing.T) {
	x, y := synth(2000, 3, 81)
	for _, budget := range []int64{0, 900 << 10} { // cached, streamed (K_nM 800 KB, the rest 690 KB)
		ctx, cancel := context.WithCancel(context.Background())
		opts := FalkonOptions{Centers: 100, Precision: zonal.Float32, Options: Options{MemoryBudget: budget, Progress: func(p zonal.Progress) {
			if p.Stage == "cg" {
				cancel()
			}
		}}}
		_, err := FitFalkon(ctx, kernels.Gaussian{Sigma: 1}, x, y, 1e-6, opts)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("budget %d: %v, want context.Canceled", budget, err)
		}
	}
}

// TestFalkonFloat32ConcurrentPredict: batch predictions of one float32
// model from several goroutines (the float32 centres are prepared once,
// lazily) equal the sequential ones.
func TestFalkonFloat32ConcurrentPredict(t *testing.T) {
	x, y := synth(500, 3, 91)
	xt, _ := synth(400, 3, 92)
	f, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-5, FalkonOptions{Centers: 50, Precision: zonal.Float32})
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]*mat.Dense, 4)
	errs := make(chan error, 4)
	for g := range outs {
		outs[g] = mat.NewDense(400, 1, nil)
		go func() { errs <- f.Predict(outs[g], xt) }()
	}
	for range outs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := predictAll(t, f, xt)
	for g, o := range outs {
		if d := maxAbsDiff(o, want); d != 0 {
			t.Fatalf("goroutine %d: predictions differ by %g", g, d)
		}
	}
}

// TestFalkonFloat32ParallelProducts: the widened products of a float32
// pass shared among workers (productWorkers) sum in a fixed order, so
// two fits with the same GOMAXPROCS are bit for bit the same, and a fit
// with one worker differs from one with three only by the order of the
// float64 sums: both solve the same system to CG's relative residual
// 1e-9, so their predictions agree to about that times the system's
// condition (measured: 2.5e-9 relative); 1e-6 relative allows a
// condition of 1e3 on any backend, while a wrong sum (a strip lost or
// counted twice) moves them by far more.
func TestFalkonFloat32ParallelProducts(t *testing.T) {
	x, y := synth(3000, 3, 91)
	fit := func(procs int) *mat.Dense {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		// 1.2 MiB: K_nM (3000 x 120 float32, 1.4 MB) is streamed.
		f, err := FitFalkon(context.Background(), kernels.Gaussian{Sigma: 1}, x, y, 1e-5,
			FalkonOptions{Centers: 120, Precision: zonal.Float32, Seed: 2, Options: Options{MemoryBudget: 1200 << 10}})
		if err != nil {
			t.Fatal(err)
		}
		if f.CachedKnM() {
			t.Fatal("K_nM cached: the test wants it streamed")
		}
		return predictAll(t, f, x)
	}
	a, b := fit(3), fit(3)
	if !mat.Equal(a, b) {
		t.Fatalf("two fits with 3 workers differ by %g", maxAbsDiff(a, b))
	}
	one := fit(1)
	scale := mat.Norm(one, math.Inf(1))
	if d := maxAbsDiff(one, a); d > 1e-6*scale {
		t.Fatalf("1 worker against 3: predictions differ by %g (scale %g)", d, scale)
	}
}

// TestFalkonFloat32StreamedRoutes: streamed float32 passes (per-worker
// blocks) solve the system the cached ones do, on the float32 Gaussian
// route (dense rows) and on the float64 route (a Laplacian kernel; sparse
// rows): the K_nM entries are the same bits either way and only the order
// of the float64 sums differs, so the predictions agree to CG's residual
// (1e-9) times a modest condition; 1e-6 of their scale allows 1e3, while a
// block lost or counted twice moves them by far more.
func TestFalkonFloat32StreamedRoutes(t *testing.T) {
	x, y := synth(2000, 3, 93)
	for _, tc := range []struct {
		name string
		k    kernels.Kernel
		x    mat.Matrix
	}{
		{"gaussian dense", kernels.Gaussian{Sigma: 1}, x},
		{"laplacian dense", kernels.Laplacian{Sigma: 2}, x},
		{"gaussian csr", kernels.Gaussian{Sigma: 1}, dataset.NewCSRFromDense(x)},
	} {
		fit := func(budget int64) *mat.Dense {
			f, err := FitFalkon(context.Background(), tc.k, tc.x, y, 1e-5,
				FalkonOptions{Centers: 100, Precision: zonal.Float32, Seed: 4, Options: Options{MemoryBudget: budget}})
			if err != nil {
				t.Fatal(err)
			}
			if f.CachedKnM() != (budget > 1<<20) {
				t.Fatalf("%s: budget %d: cached %v", tc.name, budget, f.CachedKnM())
			}
			return predictAll(t, f, x)
		}
		// 600 KiB: K_nM (2000 x 100 float32, 800 KB) does not fit beside
		// the factors and is streamed.
		cached, streamed := fit(1<<30), fit(600<<10)
		scale := mat.Norm(cached, math.Inf(1))
		if d := maxAbsDiff(streamed, cached); d > 1e-6*scale {
			t.Fatalf("%s: streamed and cached predictions differ by %g (scale %g)", tc.name, d, scale)
		}
	}
}

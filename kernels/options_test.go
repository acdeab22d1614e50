package kernels

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// countingBackend counts the Gemm calls that reach it, to show that
// Options.Backend is the backend an operation (or a map's Transform) uses.
type countingBackend struct {
	backend.Backend
	gemm atomic.Int64
}

func (c *countingBackend) Gemm(ta, tb blas.Transpose, alpha float64, a, b blas64.General, beta float64, dst blas64.General) {
	c.gemm.Add(1)
	c.Backend.Gemm(ta, tb, alpha, a, b, beta, dst)
}

// progressLog records progress reports (serialised, as the callback may be
// called from workers).
type progressLog struct {
	mu   sync.Mutex
	reps []zonal.Progress
}

func (l *progressLog) fn() zonal.ProgressFunc {
	return func(p zonal.Progress) { l.mu.Lock(); l.reps = append(l.reps, p); l.mu.Unlock() }
}

// check asserts that the reports of stage are non-decreasing in Done and that
// the last one is Done == Total == total.
func (l *progressLog) check(t *testing.T, stage string, total int) {
	t.Helper()
	last := -1
	n := 0
	for _, p := range l.reps {
		if p.Stage != stage {
			continue
		}
		n++
		if p.Done < last || p.Total != total {
			t.Errorf("%s: report %+v after Done=%d (want Total %d)", stage, p, last, total)
		}
		last = p.Done
	}
	if n == 0 || last != total {
		t.Errorf("%s: %d reports, last Done %d, want %d", stage, n, last, total)
	}
}

// MatrixInto with a progress callback works in chunks of whole row blocks;
// every entry must be bit-for-bit the one-call value, for the fused
// Gaussian, Gemm-based and pairwise kernels, for K(X, X) and K(X, Y).
func TestMatrixIntoProgressSameEntries(t *testing.T) {
	ctx := context.Background()
	// Two and a bit chunks of 4*GOMAXPROCS row blocks against Y; K(X, X) on
	// at most 2600 rows (more than one chunk on up to 5 cores).
	n := 2*blockRows*4*runtime.GOMAXPROCS(0) + 37
	x := randMatrix(31, n, 5, 0.7)
	y := randMatrix(32, 37, 5, 0.7)
	xs := randMatrix(33, min(n, 2600), 5, 0.7)
	for _, k := range []Kernel{Gaussian{1.2}, Polynomial{3, 0.5, 1}, Laplacian{2}, NTK{2}} {
		for _, c := range [][2]*mat.Dense{{x, y}, {xs, xs}} {
			nx, _ := c[0].Dims()
			ny, _ := c[1].Dims()
			want := mat.NewDense(nx, ny, nil)
			if err := MatrixInto(ctx, want, k, c[0], c[1], Options{}); err != nil {
				t.Fatal(err)
			}
			var log progressLog
			got := mat.NewDense(nx, ny, nil)
			if err := MatrixInto(ctx, got, k, c[0], c[1], Options{Progress: log.fn()}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.RawMatrix().Data, want.RawMatrix().Data) {
				t.Errorf("%v, %dx%d: entries differ with a progress callback", k, nx, ny)
			}
			log.check(t, "kernel", nx)
		}
	}
}

func TestOptionsBackendIsUsed(t *testing.T) {
	ctx := context.Background()
	x := randMatrix(33, 50, 4, 1)
	cb := &countingBackend{Backend: backend.Default()}
	if _, err := Matrix(ctx, Polynomial{2, 1, 1}, x, x, Options{Backend: cb}); err != nil {
		t.Fatal(err)
	}
	if cb.gemm.Load() == 0 {
		t.Error("Matrix did not use Options.Backend")
	}
	f, err := NewFourierMap(Gaussian{1}, 4, FourierOptions{Options: Options{Backend: cb}, Features: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := cb.gemm.Load()
	transform(t, f, x)
	if cb.gemm.Load() == before {
		t.Error("FourierMap.Transform did not use the map's backend")
	}
	ny, err := NewNystrom(ctx, Polynomial{2, 1, 1}, x, NystromOptions{Options: Options{Backend: cb}, Landmarks: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	before = cb.gemm.Load()
	transform(t, ny, x)
	if cb.gemm.Load() == before {
		t.Error("Nystrom.Transform did not use the map's backend")
	}
}

func TestLongOperationsCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := randMatrix(34, 300, 4, 1)
	k := Gaussian{1.3}
	cases := map[string]error{
		"MatrixInto": MatrixInto(ctx, mat.NewDense(300, 300, nil), k, x, x, Options{}),
		"Matrix":     func() error { _, e := Matrix(ctx, k, x, x, Options{}); return e }(),
		"NewNystrom": func() error {
			_, e := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 20, Seed: 1})
			return e
		}(),
		"NewNystrom rls": func() error {
			_, e := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 20, Sampling: SamplingRLS, Seed: 1})
			return e
		}(),
		"NewNystromFromLandmarks": func() error { _, e := NewNystromFromLandmarks(ctx, k, x, Options{}); return e }(),
		"RecursiveRLS":            func() error { _, e := RecursiveRLS(ctx, k, x, 20, RLSOptions{}); return e }(),
		"SelectTruncation":        func() error { _, e := SelectTruncation(ctx, k, x, 64, SelectOptions{}); return e }(),
		"NewGegenbauerMap": func() error {
			_, e := NewGegenbauerMap(ctx, k, x, GegenbauerOptions{Features: 64})
			return e
		}(),
		"NewEvaluator": func() error {
			kk, _ := Matrix(context.Background(), k, x, x, Options{})
			_, e := NewEvaluator(ctx, kk, Options{})
			return e
		}(),
	}
	for name, err := range cases {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
}

func TestMemoryBudget(t *testing.T) {
	ctx := context.Background()
	x := randMatrix(35, 200, 4, 1)
	k := Gaussian{1}
	small := Options{MemoryBudget: 1 << 10} // 1 KiB: 128 floats
	cases := map[string]error{
		"Matrix": func() error { _, e := Matrix(ctx, k, x, x, small); return e }(),
		"NewNystromFromLandmarks": func() error {
			_, e := NewNystromFromLandmarks(ctx, k, x.Slice(0, 20, 0, 4).(*mat.Dense), small)
			return e
		}(),
		"NewNystrom": func() error {
			_, e := NewNystrom(ctx, k, x, NystromOptions{Options: small, Landmarks: 20})
			return e
		}(),
		"RecursiveRLS": func() error { _, e := RecursiveRLS(ctx, k, x, 20, RLSOptions{Options: small}); return e }(),
		"NewFourierMap": func() error {
			_, e := NewFourierMap(k, 4, FourierOptions{Options: small, Features: 128})
			return e
		}(),
		"NewGegenbauerMap": func() error {
			_, e := NewGegenbauerMap(ctx, k, x, GegenbauerOptions{Options: small, Features: 400, Q: 3, S: 2})
			return e
		}(),
		"NewEvaluator": func() error {
			kk, _ := Matrix(ctx, k, x, x, Options{})
			_, e := NewEvaluator(ctx, kk, small)
			return e
		}(),
		"GaussGegenbauer": func() error { _, _, e := GaussGegenbauer(64, 3, small); return e }(),
	}
	for name, err := range cases {
		if !errors.Is(err, zonal.ErrTooLarge) {
			t.Errorf("%s over a 1 KiB budget: %v", name, err)
		}
	}
	// The default budget (2 GiB) refuses a 20000 x 20000 kernel matrix
	// (3.2 GB) before allocating it, and a raised budget is honoured by the
	// check (not run: it would allocate).
	big := randMatrix(36, 20000, 1, 1)
	if _, err := Matrix(ctx, k, big, big, Options{}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Errorf("default budget: %v", err)
	}
}

func TestNystromOptions(t *testing.T) {
	ctx := context.Background()
	x := randMatrix(37, 120, 3, 1)
	k := Gaussian{1.1}
	a, err := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 15, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 15, Sampling: SamplingUniform, Seed: 5})
	if !mat.Equal(a.c, b.c) {
		t.Error(`Sampling "" and SamplingUniform chose different landmarks`)
	}
	// The RLS path uses the landmarks RecursiveRLS returns, in its order.
	idx, err := RecursiveRLS(ctx, k, x, 15, RLSOptions{Lambda: 1e-2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !sort.IntsAreSorted(idx) {
		t.Errorf("RecursiveRLS indices not ascending: %v", idx)
	}
	var log progressLog
	r, err := NewNystrom(ctx, k, x, NystromOptions{Options: Options{Progress: log.fn()}, Landmarks: 15, Sampling: SamplingRLS, Lambda: 1e-2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(r.c, dataset.MustSelectRows[mat.Matrix](x, idx)) {
		t.Error("NewNystrom with SamplingRLS did not use RecursiveRLS's landmarks")
	}
	levels := 0
	for n := 120; n > 15; n = (n + 1) / 2 {
		levels++
	}
	log.check(t, "level", levels)
	log.check(t, "landmarks", 15)
	if _, err := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 15, Sampling: "greedy"}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("unknown sampling: %v", err)
	}
	if _, err := NewNystrom(ctx, k, nil, NystromOptions{Landmarks: 15}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("nil data: %v", err)
	}
}

func TestSelectTruncationProgress(t *testing.T) {
	x := randMatrix(38, 40, 3, 1)
	var log progressLog
	if _, err := SelectTruncation(context.Background(), Gaussian{1}, x, 64, SelectOptions{Options: Options{Progress: log.fn()}, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	log.check(t, "pilot", pilotDirections)
}

// Every kind this package defines is decoded through the registry, and the
// registry holds exactly those (plus what other imported packages add).
func TestRegistryHoldsEveryKind(t *testing.T) {
	ks := append(allKernels(t), mustGZK(t, Gaussian{1.5}, 4, 6, 3))
	seen := map[string]bool{}
	for _, k := range ks {
		seen[k.Kind()] = true
	}
	for kind := range seen {
		if !kernelCodecs.has(kind) {
			t.Errorf("kernel kind %q is not registered", kind)
		}
	}
	for _, kind := range kernelCodecs.kinds() {
		if !seen[kind] {
			t.Errorf("registered kernel kind %q has no kernel in the test list", kind)
		}
	}
	for _, kind := range []string{"fourier", "gegenbauer", "nystrom"} {
		if !mapCodecs.has(kind) {
			t.Errorf("map kind %q is not registered", kind)
		}
	}
}

func TestMalformedEncodingsWrapErrFormat(t *testing.T) {
	for _, kind := range []string{"gaussian", "polynomial", "dotproduct", "gzk"} {
		if _, err := UnmarshalKernel(kind, []byte{1, 2, 3}); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("kernel %s: %v", kind, err)
		}
	}
	// A well-formed encoding of an invalid parameter is malformed too, and
	// says which parameter.
	if _, err := UnmarshalKernel("gaussian", putFloats(nil, -1)); !errors.Is(err, zonal.ErrFormat) || !errors.Is(err, zonal.ErrParam) {
		t.Errorf("negative sigma: %v", err)
	}
	for _, kind := range []string{"fourier", "gegenbauer", "nystrom"} {
		if _, err := UnmarshalMap(kind, []byte{1, 0, 0}); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("map %s: %v", kind, err)
		}
	}
}

func TestGegenbauerAllInvalidDimension(t *testing.T) {
	p := []float64{7, 7, 7}
	GegenbauerAll(p, 1, 0.5)
	for _, v := range p {
		if !math.IsNaN(v) {
			t.Fatalf("GegenbauerAll with d = 1 gave %v, want NaN", p)
		}
	}
}

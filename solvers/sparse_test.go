package solvers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// sparseSynth returns n rows of dimension d with about nnz nonzeros each
// (distinct random columns, values in [-1, 1]) as a CSR, its dense form when
// dense is true (nil otherwise), and y = sum of the row's values at columns
// below d/2 minus those above, plus a sine of the first stored value.
func sparseSynth(n, d, nnz int, seed uint64, dense bool) (*dataset.CSR, *mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &dataset.CSR{Rows: n, Cols: d, RowPtr: make([]int, n+1)}
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		cols := map[int]bool{}
		for len(cols) < min(nnz, d) {
			cols[rng.IntN(d)] = true
		}
		keys := make([]int, 0, len(cols))
		for c := range cols {
			keys = append(keys, c)
		}
		slices.Sort(keys)
		t := 0.0
		for _, c := range keys {
			v := 2*rng.Float64() - 1
			s.Col = append(s.Col, c)
			s.Val = append(s.Val, v)
			if c < d/2 {
				t += v
			} else {
				t -= v
			}
		}
		y.Set(i, 0, t+math.Sin(3*s.Val[s.RowPtr[i]]))
		s.RowPtr[i+1] = len(s.Col)
	}
	var x *mat.Dense
	if dense {
		x = s.ToDense()
	}
	return s, x, y
}

// relDiff is max |a - b| over max |b| (or 1 if b is zero).
func relDiff(a, b *mat.Dense) float64 {
	return maxAbsDiff(a, b) / math.Max(mat.Norm(b, math.Inf(1)), 1e-300)
}

// sparseTol bounds the relative differences between a fit on the dense
// rows and on their CSR: the kernel entries may differ by rounding (a
// sparse dot product sums in another order than Gemm), which the
// well-conditioned systems below (lambda n >= 0.2 next to kernel values in
// [0, 1]) amplify by at most about 1e4; 1e-9 leaves a margin of 1e3 over that.
const sparseTol = 1e-9

// checkSame fits on dense and CSR rows and compares coefficients and
// predictions (on dense and CSR test rows, both ways round).
func checkSame(t *testing.T, coef func(Model) *mat.Dense, fit func(x mat.Matrix) (Model, error), xd *mat.Dense, xs *dataset.CSR, td *mat.Dense, ts *dataset.CSR) (Model, Model) {
	t.Helper()
	md, err := fit(xd)
	if err != nil {
		t.Fatal("dense fit:", err)
	}
	ms, err := fit(xs)
	if err != nil {
		t.Fatal("CSR fit:", err)
	}
	if coef != nil {
		if r := relDiff(coef(ms), coef(md)); !(r <= sparseTol) {
			t.Fatalf("coefficients differ by %.3g relative (tolerance %g)", r, sparseTol)
		}
	}
	want := predictAll(t, md, td)
	n, _ := td.Dims()
	for name, c := range map[string]struct {
		m Model
		x mat.Matrix
	}{"dense model, CSR rows": {md, ts}, "CSR model, dense rows": {ms, td}, "CSR model, CSR rows": {ms, ts}} {
		got := mat.NewDense(n, md.Outputs(), nil)
		if err := c.m.Predict(got, c.x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r := relDiff(got, want); !(r <= sparseTol) {
			t.Fatalf("%s: predictions differ by %.3g relative (tolerance %g)", name, r, sparseTol)
		}
		// Single rows (the small-batch path) too.
		one := mat.NewDense(1, md.Outputs(), nil)
		if err := c.m.Predict(one, rowRange(c.x, 3, 4)); err != nil {
			t.Fatalf("%s, one row: %v", name, err)
		}
		if d := math.Abs(one.At(0, 0) - want.At(3, 0)); !(d <= sparseTol*math.Max(1, math.Abs(want.At(3, 0)))) {
			t.Fatalf("%s, one row: %g, want %g", name, one.At(0, 0), want.At(3, 0))
		}
	}
	return md, ms
}

// TestSparseDenseSameModel fits every solver on the same rows held densely
// and as a CSR and checks that the models agree to sparseTol (relative
// coefficients and predictions), that the CSR fit keeps CSR centres and
// the same centre rows, and that each model predicts dense and CSR rows
// alike.
func TestSparseDenseSameModel(t *testing.T) {
	xs, xd, y := sparseSynth(240, 60, 8, 1, true)
	ts, td, _ := sparseSynth(50, 60, 8, 2, true)
	k, err := kernels.NewGaussian(1.5)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alpha := func(m Model) *mat.Dense {
		switch m := m.(type) {
		case *KRR:
			return m.Alpha()
		case *Falkon:
			return m.Alpha()
		}
		return m.(*Ridge).Weights()
	}
	t.Run("krr", func(t *testing.T) {
		md, ms := checkSame(t, alpha, func(x mat.Matrix) (Model, error) { return FitKRR(ctx, k, x, y, 1e-3, Options{}) }, xd, xs, td, ts)
		if !isCSR(ms.(*KRR).exp.centers) || isCSR(md.(*KRR).exp.centers) {
			t.Fatal("KRR centres do not keep the input's storage")
		}
	})
	for _, samp := range []Sampling{SamplingUniform, SamplingRLS} {
		t.Run("falkon-"+samp.String(), func(t *testing.T) {
			md, ms := checkSame(t, alpha, func(x mat.Matrix) (Model, error) {
				return FitFalkon(ctx, k, x, y, 1e-3, FalkonOptions{Centers: 40, Sampling: samp, Seed: 3})
			}, xd, xs, td, ts)
			fd, fs := md.(*Falkon), ms.(*Falkon)
			if !slices.Equal(fd.CenterIndices(), fs.CenterIndices()) {
				t.Fatalf("centre rows differ: %v vs %v", fd.CenterIndices(), fs.CenterIndices())
			}
			if _, ok := fs.Centers().(*dataset.CSR); !ok || !mat.Equal(fd.Centers(), fs.Centers()) {
				t.Fatalf("CSR fit's centres are %T, or not the dense fit's rows", fs.Centers())
			}
		})
	}
	for _, part := range []Partition{PartitionKMeans, PartitionGreedy, PartitionSubsample} {
		t.Run("park-"+part.String(), func(t *testing.T) {
			md, ms := checkSame(t, nil, func(x mat.Matrix) (Model, error) {
				return FitParK(ctx, k, x, y, 1e-3, ParKOptions{Cells: 3, Centers: 60, Partition: part, Seed: 5, Cap: 1.5, Overlap: 0.1, Budget: BudgetEffDim, Validation: 0.1})
			}, xd, xs, td, ts)
			pd, ps := md.(*ParK), ms.(*ParK)
			if !slices.Equal(pd.CellSizes(), ps.CellSizes()) {
				t.Fatalf("cell sizes differ: %v vs %v", pd.CellSizes(), ps.CellSizes())
			}
			if _, ok := ps.Centroids().(*dataset.CSR); !ok || !mat.Equal(pd.Centroids(), ps.Centroids()) {
				t.Fatalf("CSR fit's centroids are %T, or not the dense fit's rows", ps.Centroids())
			}
			for q := range ps.cells {
				if r := relDiff(ps.cells[q].alpha, pd.cells[q].alpha); !(r <= sparseTol) {
					t.Fatalf("cell %d: coefficients differ by %.3g relative", q, r)
				}
				if !isCSR(ps.cells[q].centers) {
					t.Fatalf("cell %d centres are %T", q, ps.cells[q].centers)
				}
			}
			// Cell of a dense row against CSR centroids.
			for i := 0; i < 10; i++ {
				r := rowOf(td, i)
				if a, b := pd.Cell(r), ps.Cell(r); a != b {
					t.Fatalf("row %d: cell %d (dense centroids) vs %d (CSR)", i, a, b)
				}
			}
		})
	}
	t.Run("ridge-fourier", func(t *testing.T) {
		fm, err := kernels.NewFourierMap(k, 60, kernels.FourierOptions{Features: 64, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, alpha, func(x mat.Matrix) (Model, error) { return FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{}) }, xd, xs, td, ts)
	})
	t.Run("ridge-nystrom", func(t *testing.T) {
		fm, err := kernels.NewNystrom(ctx, k, xd, kernels.NystromOptions{Landmarks: 30, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, alpha, func(x mat.Matrix) (Model, error) { return FitRidge(ctx, fm, x, y, 1e-3, RidgeOptions{}) }, xd, xs, td, ts)
	})
}

// TestSparseModelRoundTrip saves models fitted on CSR rows and loads them:
// the centres (and ParK's centroids) come back as the same CSR, the
// predictions bit for bit, and re-saving gives the same bytes.
func TestSparseModelRoundTrip(t *testing.T) {
	xs, _, y := sparseSynth(150, 40, 6, 3, false)
	ts, _, _ := sparseSynth(40, 40, 6, 4, false)
	k, _ := kernels.NewGaussian(1.2)
	ctx := context.Background()
	fits := map[string]func() (Model, error){
		"krr":    func() (Model, error) { return FitKRR(ctx, k, xs, y, 1e-3, Options{}) },
		"falkon": func() (Model, error) { return FitFalkon(ctx, k, xs, y, 1e-3, FalkonOptions{Centers: 30, Seed: 1}) },
		"park": func() (Model, error) {
			return FitParK(ctx, k, xs, y, 1e-3, ParKOptions{Cells: 3, Centers: 45, Seed: 1, Cap: 1.5})
		},
	}
	for name, fit := range fits {
		t.Run(name, func(t *testing.T) {
			m, err := fit()
			if err != nil {
				t.Fatal(err)
			}
			q := roundTrip(t, m)
			var c0, c1 []mat.Matrix
			switch m := m.(type) {
			case *ParK:
				l := q.(*ParK)
				c0, c1 = append(c0, m.Centroids()), append(c1, l.Centroids())
				for i := range m.cells {
					c0, c1 = append(c0, m.cells[i].centers), append(c1, l.cells[i].centers)
				}
			case *KRR:
				c0, c1 = append(c0, m.exp.centers), append(c1, q.(*KRR).exp.centers)
			case *Falkon:
				c0, c1 = append(c0, m.Centers()), append(c1, q.(*Falkon).Centers())
			}
			for i := range c0 {
				if !isCSR(c1[i]) || !mat.Equal(c0[i], c1[i]) {
					t.Fatalf("matrix %d: loaded %T, not the saved CSR", i, c1[i])
				}
			}
			n, _ := ts.Dims()
			a, bb := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
			if err := m.Predict(a, ts); err != nil {
				t.Fatal(err)
			}
			if err := q.Predict(bb, ts); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a, bb) {
				t.Fatalf("loaded model predicts differently (max diff %g)", maxAbsDiff(a, bb))
			}
			b, err1 := m.(PersistentModel).MarshalBinary()
			b2, err2 := q.(PersistentModel).MarshalBinary()
			if err1 != nil || err2 != nil || !bytes.Equal(b, b2) {
				t.Fatal("re-saving the loaded model changed the bytes")
			}
		})
	}
}

// TestSparseMatrixFieldCorrupt feeds the CSR matrix field malformed parts:
// each is an error wrapping zonal.ErrFormat.
func TestSparseMatrixFieldCorrupt(t *testing.T) {
	good := &dataset.CSR{Rows: 2, Cols: 5, RowPtr: []int{0, 2, 3}, Col: []int{1, 4, 0}, Val: []float64{1, 2, 3}}
	e := &enc{}
	e.matrix(good)
	d := &dec{b: e.b}
	if m := d.matrix("m"); d.end() != nil || !mat.Equal(m, good) {
		t.Fatalf("round trip: %v", d.err)
	}
	cases := map[string]func(s *dataset.CSR){
		"column out of range":    func(s *dataset.CSR) { s.Col[1] = 5 },
		"columns not increasing": func(s *dataset.CSR) { s.Col[1] = 1 },
		"row pointer":            func(s *dataset.CSR) { s.RowPtr[1] = 4 },
		"NaN":                    func(s *dataset.CSR) { s.Val[2] = math.NaN() },
	}
	for name, mutate := range cases {
		s := &dataset.CSR{Rows: 2, Cols: 5, RowPtr: slices.Clone(good.RowPtr), Col: slices.Clone(good.Col), Val: slices.Clone(good.Val)}
		mutate(s)
		e := &enc{}
		e.matrix(s)
		d := &dec{b: e.b}
		d.matrix("m")
		if err := d.end(); !errors.Is(err, zonal.ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
	// Unknown tag, and a truncated field.
	e = &enc{}
	e.matrix(good)
	bad := slices.Clone(e.b)
	bad[8] = 9
	if d := (&dec{b: bad}); d.matrix("m") != nil || !errors.Is(d.err, zonal.ErrFormat) {
		t.Errorf("unknown tag: %v", d.err)
	}
	if d := (&dec{b: e.b[:len(e.b)-3]}); d.matrix("m") != nil || !errors.Is(d.err, zonal.ErrFormat) {
		t.Errorf("truncated: %v", d.err)
	}
}

// TestSparseBadInput: CSR inputs with inconsistent parts, out-of-range
// columns, NaN values or the wrong width, and matrix types other than Dense
// and CSR, give the documented wrapped errors from every solver and from
// Predict.
func TestSparseBadInput(t *testing.T) {
	xs, _, y := sparseSynth(60, 20, 4, 5, false)
	k, _ := kernels.NewGaussian(1)
	ctx := context.Background()
	fm, err := kernels.NewFourierMap(k, 20, kernels.FourierOptions{Features: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fits := map[string]func(x mat.Matrix) error{
		"krr": func(x mat.Matrix) error { _, err := FitKRR(ctx, k, x, y, 1e-2, Options{}); return err },
		"falkon": func(x mat.Matrix) error {
			_, err := FitFalkon(ctx, k, x, y, 1e-2, FalkonOptions{Centers: 10})
			return err
		},
		"park": func(x mat.Matrix) error {
			_, err := FitParK(ctx, k, x, y, 1e-2, ParKOptions{Cells: 2, Centers: 10})
			return err
		},
		"ridge": func(x mat.Matrix) error { _, err := FitRidge(ctx, fm, x, y, 1e-2, RidgeOptions{}); return err },
	}
	clone := func() *dataset.CSR {
		return &dataset.CSR{Rows: xs.Rows, Cols: xs.Cols, RowPtr: slices.Clone(xs.RowPtr), Col: slices.Clone(xs.Col), Val: slices.Clone(xs.Val)}
	}
	short := clone()
	short.RowPtr = short.RowPtr[:len(short.RowPtr)-1]
	wide := clone()
	wide.Col[5] = wide.Cols + 3
	nan := clone()
	nan.Val[7] = math.NaN()
	inf := clone()
	inf.Val[0] = math.Inf(-1)
	var nilCSR *dataset.CSR
	bad := []struct {
		name string
		x    mat.Matrix
		want error
	}{
		{"RowPtr shorter than Rows+1", short, zonal.ErrShape},
		{"column beyond Cols", wide, zonal.ErrRange},
		{"NaN value", nan, zonal.ErrNonFinite},
		{"Inf value", inf, zonal.ErrNonFinite},
		{"nil CSR", nilCSR, zonal.ErrShape},
		{"transposed CSR", xs.T(), zonal.ErrShape},
	}
	for name, fit := range fits {
		for _, c := range bad {
			if err := fit(c.x); !errors.Is(err, c.want) {
				t.Errorf("%s, %s: err = %v, want %v", name, c.name, err, c.want)
			}
		}
	}
	// Predict: the same, plus a CSR of the wrong width.
	m, err := FitFalkon(ctx, k, xs, y, 1e-2, FalkonOptions{Centers: 10})
	if err != nil {
		t.Fatal(err)
	}
	p, err := FitParK(ctx, k, xs, y, 1e-2, ParKOptions{Cells: 2, Centers: 10})
	if err != nil {
		t.Fatal(err)
	}
	r, err := FitRidge(ctx, fm, xs, y, 1e-2, RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	narrow, _, _ := sparseSynth(60, 19, 4, 5, false)
	bad = append(bad, struct {
		name string
		x    mat.Matrix
		want error
	}{"19 columns for a 20-feature model", narrow, zonal.ErrShape})
	for _, model := range []Model{m, p, r} {
		for _, c := range bad {
			n, _ := xs.Dims()
			if err := model.Predict(mat.NewDense(n, 1, nil), c.x); !errors.Is(err, c.want) {
				t.Errorf("%s Predict, %s: err = %v, want %v", model.Kind(), c.name, err, c.want)
			}
		}
	}
}

// peakHeap runs f and returns the largest growth of the heap's object
// bytes (runtime/metrics /memory/classes/heap/objects:bytes: live objects
// and garbage not yet swept) over its value before f, sampled every 100
// microseconds while f runs, and f's duration.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	close(done)
	<-stopped
	return max(peak.Load(), base) - base
}

// TestSparseMemoryBudget fits every solver on 300 CSR rows of dimension
// d = 10^6 (50 nonzeros a row) under a 16 MiB memory budget and checks that
// the fit and a prediction of 40 CSR rows succeed with a peak heap growth
// of at most 64 MiB: one dense block of 32 rows of that dimension would be
// 256 MiB, the dense n x d matrix 2.4 GB, while an O(d) scratch vector per
// worker (8 MB) is allowed.
//
// The kernels package must form kernel blocks of CSR rows, CheckScale,
// RecursiveRLS and the Nystrom map without densifying them. A probe on 64
// CSR rows of dimension 10^5 runs first: densifying them costs 51 MB of
// allocations, an O(d) scratch 0.8 MB; above 16 MB the test is skipped
// (naming the function) rather than allowed to allocate gigabytes.
func TestSparseMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const (
		n, d, nnz = 300, 1_000_000, 50
		limit     = 16 << 20
		maxPeak   = 64 << 20
	)
	k, _ := kernels.NewGaussian(4)
	ctx := context.Background()
	probe, _, _ := sparseSynth(64, 100_000, nnz, 11, false)
	for name, f := range map[string]func(){
		"kernels.Matrix":     func() { _, _ = kernels.Matrix(ctx, k, probe, probe, kernels.Options{}) },
		"kernels.CheckScale": func() { _ = kernels.CheckScale(k, probe) },
		"kernels.RecursiveRLS": func() {
			_, _ = kernels.RecursiveRLS(ctx, k, probe, 8, kernels.RLSOptions{Lambda: 1e-3, Seed: 1})
		},
		"kernels.NewNystrom": func() {
			_, _ = kernels.NewNystrom(ctx, k, probe, kernels.NystromOptions{Landmarks: 8, Seed: 1})
		},
	} {
		if a := testctx.Allocated(f); a > 16<<20 {
			t.Skipf("%s densifies CSR rows (64 rows of dimension 10^5 allocated %d bytes); this test runs once kernels handle CSR rows sparsely", name, a)
		}
	}
	xs, _, y := sparseSynth(n, d, nnz, 9, false)
	ts, _, _ := sparseSynth(40, d, nnz, 10, false)
	opts := Options{MemoryBudget: limit}
	fits := []struct {
		name string
		fit  func() (Model, error)
	}{
		{"krr", func() (Model, error) { return FitKRR(ctx, k, xs, y, 1e-3, opts) }},
		{"falkon-uniform", func() (Model, error) {
			return FitFalkon(ctx, k, xs, y, 1e-3, FalkonOptions{Options: opts, Centers: 40, Seed: 1})
		}},
		{"falkon-rls", func() (Model, error) {
			return FitFalkon(ctx, k, xs, y, 1e-3, FalkonOptions{Options: opts, Centers: 40, Sampling: SamplingRLS, Seed: 1})
		}},
		{"park-kmeans", func() (Model, error) {
			return FitParK(ctx, k, xs, y, 1e-3, ParKOptions{Options: opts, Cells: 3, Centers: 60, Seed: 1, Budget: BudgetEffDim})
		}},
		{"park-greedy", func() (Model, error) {
			return FitParK(ctx, k, xs, y, 1e-3, ParKOptions{Options: opts, Cells: 3, Centers: 60, Seed: 1, Partition: PartitionGreedy, Cap: 1.5})
		}},
		{"ridge-nystrom", func() (Model, error) {
			fm, err := kernels.NewNystrom(ctx, k, xs, kernels.NystromOptions{Options: kernels.Options{MemoryBudget: limit}, Landmarks: 40, Seed: 1})
			if err != nil {
				return nil, fmt.Errorf("Nystrom map: %w", err)
			}
			return FitRidge(ctx, fm, xs, y, 1e-3, RidgeOptions{Options: opts})
		}},
	}
	for _, c := range fits {
		t.Run(c.name, func(t *testing.T) {
			var m Model
			var err error
			a := peakHeap(func() {
				if m, err = c.fit(); err != nil {
					return
				}
				err = m.Predict(mat.NewDense(40, 1, nil), ts)
			})
			if err != nil {
				t.Fatal(err)
			}
			if a > maxPeak {
				t.Fatalf("fit and predict grew the heap by %d bytes, more than %d: something formed dense rows of dimension %d", a, maxPeak, d)
			}
			t.Logf("peak heap growth %.1f MiB", float64(a)/(1<<20))
		})
	}
}

// TestPeakHeapSeesAllocation checks the measure of TestSparseMemoryBudget:
// a 32 MiB slice held for a moment shows as at least 24 MiB of growth. The
// measure is heap growth over a baseline taken after a GC, so memory that
// the runtime, the ticker goroutine or another test frees meanwhile is
// subtracted (CI saw 31.7 MiB); a meter that missed the slice would report
// close to zero, and TestSparseMemoryBudget's 64 MiB bound is 4x a 16 MiB
// budget, so an under-count of a few MiB cannot hide a dense block.
func TestPeakHeapSeesAllocation(t *testing.T) {
	var keep []float64
	a := peakHeap(func() {
		keep = make([]float64, 4<<20)
		keep[len(keep)-1] = 1
		time.Sleep(time.Millisecond)
	})
	runtime.KeepAlive(keep)
	if a < 24<<20 {
		t.Fatalf("peak heap growth %d bytes for a 32 MiB slice", a)
	}
}

// TestSparseAssembledModels: NewFalkonModel and NewParKModel take the CSR
// centres and centroids of a CSR fit, keep them CSR, and predict what the
// fitted models predict (FALKON bit for bit; ParK within 1e-12 relative,
// its k(c_q, c_q) being recomputed); a CSR with a NaN is refused.
func TestSparseAssembledModels(t *testing.T) {
	xs, _, y := sparseSynth(150, 40, 6, 12, false)
	ts, _, _ := sparseSynth(40, 40, 6, 13, false)
	k, _ := kernels.NewGaussian(1.2)
	ctx := context.Background()
	f, err := FitFalkon(ctx, k, xs, y, 1e-3, FalkonOptions{Centers: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	nf, err := NewFalkonModel(k, f.Centers(), f.Alpha(), f.exp.mean, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !isCSR(nf.Centers()) {
		t.Fatalf("assembled centres are %T", nf.Centers())
	}
	if !mat.Equal(predictAll(t, nf, ts), predictAll(t, f, ts)) {
		t.Fatal("assembled FALKON predicts differently")
	}
	p, err := FitParK(ctx, k, xs, y, 1e-3, ParKOptions{Cells: 3, Centers: 45, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cells := make([]*Falkon, p.Cells())
	for q, e := range p.cells {
		if cells[q], err = NewFalkonModel(k, e.centers, e.alpha, e.mean, 1e-3, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	np, err := NewParKModel(k, p.Centroids(), cells, 1e-3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := relDiff(predictAll(t, np, ts), predictAll(t, p, ts)); !(r <= 1e-12) {
		t.Fatalf("assembled ParK predictions differ by %.3g relative", r)
	}
	bad := f.Centers().(*dataset.CSR)
	bad = &dataset.CSR{Rows: bad.Rows, Cols: bad.Cols, RowPtr: bad.RowPtr, Col: bad.Col, Val: slices.Clone(bad.Val)}
	bad.Val[3] = math.NaN()
	if _, err := NewFalkonModel(k, bad, f.Alpha(), nil, 1e-3, Options{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN centre: err = %v, want ErrNonFinite", err)
	}
	if _, err := NewParKModel(k, bad.T(), cells, 1e-3, Options{}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("transposed centroids: err = %v, want ErrShape", err)
	}
}

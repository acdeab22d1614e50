package kpca

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/cputime"
)

// benchAddCase is one BenchmarkAdd configuration: m points held, mean
// adjustment, Components (0: full) and the update path.
type benchAddCase struct {
	m, r      int
	mean      bool
	twoUpdate bool
}

func (c benchAddCase) name() string {
	path := "bordered"
	if c.twoUpdate {
		path = "two-update"
	}
	s := fmt.Sprintf("mean=%v/m=%d", c.mean, c.m)
	if c.r > 0 {
		s += fmt.Sprintf("/r=%d", c.r)
	}
	return s + "/" + path
}

// benchSizes are the m of BenchmarkAdd (full decompositions) and
// BenchmarkBatchEig; benchTruncated the (m, r) of the truncated mode.
var (
	benchSizes     = []int{250, 500, 1000, 2000}
	benchTruncated = [][2]int{{2000, 50}}
)

// benchAddCases lists every BenchmarkAdd case: each size with and without
// mean adjustment, by the bordered update and by the paper's two rank-one
// updates, and the truncated mode (both paths).
func benchAddCases() []benchAddCase {
	var cs []benchAddCase
	for _, mean := range []bool{false, true} {
		for _, m := range benchSizes {
			for _, two := range []bool{false, true} {
				cs = append(cs, benchAddCase{m: m, mean: mean, twoUpdate: two})
			}
		}
		for _, mr := range benchTruncated {
			for _, two := range []bool{false, true} {
				cs = append(cs, benchAddCase{m: mr[0], r: mr[1], mean: mean, twoUpdate: two})
			}
		}
	}
	return cs
}

// benchState returns a decomposition of the first c.m of c.m+1 points
// (Init: one batch eigendecomposition) with room for one more, and the
// point to add. Data: points in R^10, Gaussian kernel with sigma = 4.5
// (~ the median distance of standard normal points in R^10), so the
// spectrum decays like a real data set's rather than deflating trivially.
func benchState(tb testing.TB, bk backend.Backend, c benchAddCase) (*Incremental, []float64) {
	x := randPoints(1, c.m+1, 10, 1)
	inc, err := NewIncremental(gaussian(tb, 4.5), 10, Options{MeanAdjust: c.mean, Components: c.r, Backend: bk})
	if err != nil {
		tb.Fatal(err)
	}
	if err := inc.Init(context.Background(), x.Slice(0, c.m, 0, 10)); err != nil {
		tb.Fatal(err)
	}
	// Room for exactly one more point (no doubling of the n x n buffers).
	budget := inc.opts.MemoryBudget
	inc.opts.MemoryBudget = inc.stateBytes(c.m + 1)
	if err := inc.grow(c.m + 1); err != nil {
		tb.Fatal(err)
	}
	inc.opts.MemoryBudget = budget
	inc.twoUpdate = c.twoUpdate
	return inc, x.RawRowView(c.m)
}

// benchMemo holds one batch start of BenchmarkAdd.
type benchMemo struct {
	once sync.Once
	inc  *Incremental
	p    []float64
}

// BenchmarkAdd times one Add to a decomposition of m points (one bordered
// update, or the paper's expansion and two rank-one updates), with and
// without mean adjustment, full and truncated to the top r pairs, against
// BenchmarkBatchEig at the same m. Each iteration adds the same point to a
// fresh Clone of the state (the Clone is not timed); the batch start is
// computed once per (backend, mean, m, r) and shared by the two paths.
// cpu-ns/op is the process CPU time (all threads) per Add: stable when
// other jobs share the machine, unlike ns/op.
func BenchmarkAdd(b *testing.B) {
	for _, bk := range backends(b) {
		// The two paths of a configuration are adjacent in benchAddCases:
		// one batch start serves both, and is dropped before the next.
		var cur benchAddCase
		var memo *benchMemo
		for _, c := range benchAddCases() {
			key := c
			key.twoUpdate = false
			if memo == nil || key != cur {
				cur, memo = key, &benchMemo{}
			}
			memo := memo
			b.Run(bk.Name()+"/"+c.name(), func(b *testing.B) {
				memo.once.Do(func() { memo.inc, memo.p = benchState(b, bk, key) })
				inc, p := memo.inc, memo.p
				if inc == nil {
					b.Fatal("no batch start")
				}
				var cpu time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					cl := inc.Clone()
					cl.twoUpdate = c.twoUpdate
					b.StartTimer()
					t0 := cputime.Process()
					if err := cl.Add(p); err != nil {
						b.Fatal(err)
					}
					cpu += cputime.Process() - t0
				}
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkBatchEig times the backend's full symmetric eigendecomposition
// (values and vectors) of the kernel matrices of BenchmarkAdd after the
// addition (m+1 points; centred with mean adjustment).
func BenchmarkBatchEig(b *testing.B) {
	for _, bk := range backends(b) {
		for _, mean := range []bool{false, true} {
			for _, m := range benchSizes {
				b.Run(fmt.Sprintf("%s/mean=%v/m=%d", bk.Name(), mean, m), func(b *testing.B) {
					a := batchBenchMatrix(b, m, mean).RawMatrix()
					work := blas64.General{Rows: a.Rows, Cols: a.Cols, Stride: a.Stride, Data: make([]float64, len(a.Data))}
					w := make([]float64, a.Rows)
					var cpu time.Duration
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						copy(work.Data, a.Data)
						b.StartTimer()
						t0 := cputime.Process()
						if err := bk.SymEig(work, w, true); err != nil {
							b.Fatal(err)
						}
						cpu += cputime.Process() - t0
					}
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// batchBenchMatrix is the (centred) kernel matrix of BenchmarkAdd's m+1
// points.
func batchBenchMatrix(tb testing.TB, m int, mean bool) *mat.Dense {
	k := kernelMatrix(tb, gaussian(tb, 4.5), randPoints(1, m+1, 10, 1))
	if mean {
		k = centredBatch(k)
	}
	return k
}

// TestBenchCases checks, without timing anything, that the benchmarks
// cover what the lead measures (m = 500, 1000, 2000 with and without mean
// adjustment, both paths, and the truncated mode at r = 50, m = 2000) and
// that the setup and one Add of every kind of case work (at m = 40, where
// it is fast; the Add must agree with the batch matrix: relative
// reconstruction <= 1e-12, or the truncation bound).
func TestBenchCases(t *testing.T) {
	want := map[string]bool{}
	for _, mean := range []bool{false, true} {
		for _, m := range []int{500, 1000, 2000} {
			for _, p := range []string{"bordered", "two-update"} {
				want[fmt.Sprintf("mean=%v/m=%d/%s", mean, m, p)] = true
			}
		}
		want[fmt.Sprintf("mean=%v/m=2000/r=50/bordered", mean)] = true
	}
	for _, c := range benchAddCases() {
		delete(want, c.name())
	}
	if len(want) > 0 {
		t.Fatalf("BenchmarkAdd lacks %v", want)
	}
	sizes := map[int]bool{}
	for _, m := range benchSizes {
		sizes[m] = true
	}
	if !sizes[500] || !sizes[1000] || !sizes[2000] {
		t.Fatalf("BenchmarkBatchEig sizes %v", benchSizes)
	}
	for _, bk := range backends(t) {
		for _, c := range []benchAddCase{{m: 40}, {m: 40, mean: true}, {m: 40, twoUpdate: true}, {m: 40, r: 5, mean: true}} {
			inc, p := benchState(t, bk, c)
			cl := inc.Clone()
			if err := cl.Add(p); err != nil {
				t.Fatal(err)
			}
			d := cl.Drift()
			if c.r == 0 && (d.RelRecon > 1e-12 || d.Orth > 1e-12) {
				t.Fatalf("%s %s: drift %+v", bk.Name(), c.name(), d)
			}
			if c.r > 0 && d.Orth > 1e-12 {
				t.Fatalf("%s %s: drift %+v", bk.Name(), c.name(), d)
			}
			if a := batchBenchMatrix(t, 40, c.mean); !mat.EqualApprox(a, cl.Matrix(), 1e-12) {
				t.Fatalf("%s %s: batch matrix differs from the grown one", bk.Name(), c.name())
			}
		}
	}
}

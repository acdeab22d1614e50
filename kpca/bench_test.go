package kpca

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/internal/cputime"
)

// BenchmarkAdd times one Add (expansion + 2 rank-one updates, with or without mean adjustment) to a
// decomposition of m points, against BenchmarkBatchEig at the same m.
// Data: points in R^10, Gaussian kernel with sigma = sqrt(10) (~ the median
// distance of standard normal points), so the spectrum decays like a real
// data set's rather than deflating trivially.
func BenchmarkAdd(b *testing.B) {
	for _, bk := range backends(b) {
		for _, mean := range []bool{false, true} {
			for _, m := range []int{250, 500, 1000, 2000} {
				b.Run(fmt.Sprintf("%s/mean=%v/m=%d", bk.Name(), mean, m), func(b *testing.B) {
					x := randPoints(1, m+1, 10, 1)
					inc, err := NewIncremental(gaussian(b, 4.5), 10, Options{MeanAdjust: mean, Backend: bk})
					if err != nil {
						b.Fatal(err)
					}
					if err := inc.Init(context.Background(), x.Slice(0, m, 0, 10)); err != nil {
						b.Fatal(err)
					}
					if err := inc.grow(m + 1); err != nil {
						b.Fatal(err)
					}
					p := x.RawRowView(m)
					var cpu time.Duration
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						c := inc.Clone()
						b.StartTimer()
						t0 := cputime.Process()
						if err := c.Add(p); err != nil {
							b.Fatal(err)
						}
						cpu += cputime.Process() - t0
					}
					// CPU time of the process (all threads): stable when
					// other jobs share the machine, unlike ns/op.
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// BenchmarkBatchEig times the backend's full symmetric eigendecomposition
// (values and vectors) of the same kernel matrices as BenchmarkAdd.
func BenchmarkBatchEig(b *testing.B) {
	for _, bk := range backends(b) {
		for _, mean := range []bool{false, true} {
			for _, m := range []int{250, 500, 1000, 2000} {
				b.Run(fmt.Sprintf("%s/mean=%v/m=%d", bk.Name(), mean, m), func(b *testing.B) {
					x := randPoints(1, m+1, 10, 1)
					inc, _ := NewIncremental(gaussian(b, 4.5), 10, Options{MeanAdjust: mean, Backend: bk})
					if err := inc.Init(context.Background(), x); err != nil {
						b.Fatal(err)
					}
					a := inc.Matrix().RawMatrix()
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

package backend_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

// Benchmarks for every compiled-in backend, reporting GFLOP/s with the
// conventional flop counts: Gemm 2n^3, Syrk (X^T X of a k x n X) k*n^2 (one
// triangle), Cholesky n^3/3. Besides wall-clock GFLOP/s they report
// GFLOP/cpu-s, the flops per second of CPU time summed over all threads: on a
// machine shared with other work it is far more stable than wall-clock
// throughput, and on an idle machine GFLOP/s ~= GFLOP/cpu-s * cores used.
// Run with
//
//	go test -run XXX -bench . ./backend/                # purego only
//	go test -tags netlib -run XXX -bench . ./backend/   # purego and netlib

func randGeneral(r, c int, seed uint64) blas64.General {
	rng := rand.New(rand.NewPCG(seed, 1))
	g := blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
	for i := range g.Data {
		g.Data[i] = 2*rng.Float64() - 1
	}
	return g
}

func gflops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// forEachBackend runs f as a sub-benchmark per compiled-in backend and, where
// the platform reports CPU time, adds the GFLOP/cpu-s metric for flopsPerOp.
// The CPU time includes the untimed setup inside f, which is small for every
// benchmark here except Cholesky's matrix copy (n^2 moves against n^3/3 flops).
func forEachBackend(b *testing.B, flopsPerOp float64, f func(b *testing.B, be backend.Backend)) {
	for _, name := range backend.Names() {
		be, _ := backend.ByName(name)
		b.Run(name, func(b *testing.B) {
			c0, ok := cpuTime()
			f(b, be)
			c1, _ := cpuTime()
			if ok && c1 > c0 {
				b.ReportMetric(flopsPerOp*float64(b.N)/(c1-c0).Seconds()/1e9, "GFLOP/cpu-s")
			}
		})
	}
}

func BenchmarkGemm(b *testing.B) {
	for _, n := range []int{256, 1024} {
		x, y := randGeneral(n, n, 1), randGeneral(n, n, 2)
		c := randGeneral(n, n, 3)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			forEachBackend(b, 2*math.Pow(float64(n), 3), func(b *testing.B, be backend.Backend) {
				for b.Loop() {
					be.Gemm(blas.NoTrans, blas.NoTrans, 1, x, y, 0, c)
				}
				gflops(b, 2*math.Pow(float64(n), 3))
			})
		})
	}
}

// tallX is the 1e5 x 512 input of the X^T X benchmark (400 MB), made once.
var tallX = sync.OnceValue(func() blas64.General { return randGeneral(100000, 512, 4) })

func BenchmarkSyrkTall(b *testing.B) {
	const k, n = 100000, 512
	x := tallX()
	c := randGeneral(n, n, 5)
	b.Run("1e5x512", func(b *testing.B) {
		forEachBackend(b, float64(k)*n*n, func(b *testing.B, be backend.Backend) {
			for b.Loop() {
				be.Syrk(blas.Trans, 1, x, 0, c)
			}
			gflops(b, float64(k)*n*n)
		})
	})
}

func BenchmarkCholesky(b *testing.B) {
	const n = 2048
	// A = X X^T / n + I, symmetric positive definite.
	x := randGeneral(n, n, 6)
	spd := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	be0, _ := backend.ByName("purego")
	be0.Syrk(blas.NoTrans, 1/float64(n), x, 0, spd)
	for i := 0; i < n; i++ {
		spd.Data[i*n+i]++
	}
	a := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
		forEachBackend(b, math.Pow(n, 3)/3, func(b *testing.B, be backend.Backend) {
			for b.Loop() {
				b.StopTimer()
				copy(a.Data, spd.Data)
				b.StartTimer()
				if err := be.Cholesky(a); err != nil {
					b.Fatal(err)
				}
			}
			gflops(b, math.Pow(n, 3)/3)
		})
	})
}

func BenchmarkRankOneUpdate(b *testing.B) {
	const m = 1000
	// U = I - 2 w w^T / (w^T w): a dense orthogonal matrix.
	w := randGeneral(m, 1, 7).Data
	var ww float64
	for _, v := range w {
		ww += v * v
	}
	u := blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			u.Data[i*m+j] = -2 * w[i] * w[j] / ww
		}
		u.Data[i*m+i]++
	}
	d := make([]float64, m)
	for i := range d {
		d[i] = float64(i) / m
	}
	v := randGeneral(m, 1, 8).Data
	dOut := make([]float64, m)
	uOut := blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
	b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
		forEachBackend(b, 2*math.Pow(m, 3), func(b *testing.B, be backend.Backend) {
			for b.Loop() {
				if err := be.RankOneUpdate(d, u, 0.5, v, dOut, uOut); err != nil {
					b.Fatal(err)
				}
			}
			// The U * Utilde product dominates: 2 m^3 flops.
			gflops(b, 2*math.Pow(m, 3))
		})
	})
}

// BenchmarkTriSolve: FALKON's CG solves, op(F) X = B with an n x n triangle
// and 10 right-hand sides (n^2 nrhs flops), lower (TriSolve) and upper
// (TriSolveUpper), each transposed or not.
func BenchmarkTriSolve(b *testing.B) {
	const n, nrhs = 4096, 10
	f := randGeneral(n, n, 8)
	for i := 0; i < n; i++ {
		for j := range f.Data[i*n : i*n+n] {
			f.Data[i*n+j] /= n
		}
		f.Data[i*n+i] = 1 + math.Abs(f.Data[i*n+i])
	}
	x0 := randGeneral(n, nrhs, 9)
	x := randGeneral(n, nrhs, 9)
	for _, up := range []bool{false, true} {
		for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			name := fmt.Sprintf("lower/%c", tr)
			if up {
				name = fmt.Sprintf("upper/%c", tr)
			}
			b.Run(name, func(b *testing.B) {
				forEachBackend(b, n*n*nrhs, func(b *testing.B, be backend.Backend) {
					for b.Loop() {
						copy(x.Data, x0.Data) // n nrhs moves against n^2 nrhs flops; keeps X from decaying to subnormals
						if up {
							backend.TriSolveUpper(be, tr, f, x)
						} else {
							be.TriSolve(tr, f, x)
						}
					}
					gflops(b, n*n*nrhs)
				})
			})
		}
	}
}

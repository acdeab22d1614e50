//go:build netlib && linux

package asm

// Benchmarks against OpenBLAS in the same run (build tag netlib):
//
//	go test -tags netlib -run XXX -bench VsOpenBLAS -benchtime 1x ./asm/
//
// Each case runs OpenBLAS and every asm path with the same thread count
// (OpenBLAS through openblas_set_num_threads, asm through setThreads) and
// reports GFLOP/s and the ratio of each path to OpenBLAS. The sgemm cases
// also report each alternative float32 kernel of a path (metrics named
// path-kernel, e.g. avx512-avx512_8x48/openblas), so a measurement can pick
// the default. With -short only the tiny sgemm n=64 case runs, once, to
// check that the benchmark works without loading the machine:
//
//	go test -tags netlib -short -run XXX -bench VsOpenBLAS -benchtime 1x ./backend/internal/asm/

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"

	"github.com/zonal-ml/zonal/backend/internal/asm/internal/openblas"
)

type benchCase struct {
	name  string
	flops float64
	setup func(rng *rand.Rand) (ours, theirs func())
	sgemm bool // ours is Sgemm/Ssyrk: also time the alternative float32 kernels
}

// sgemmCase is C = A B for n x n float32 matrices against OpenBLAS sgemm.
func sgemmCase(n int) benchCase {
	return benchCase{
		name:  fmt.Sprintf("sgemm/n=%d", n),
		flops: 2 * float64(n) * float64(n) * float64(n),
		sgemm: true,
		setup: func(rng *rand.Rand) (func(), func()) {
			a, b, c := randOf[float32](rng, n*n), randOf[float32](rng, n*n), make([]float32, n*n)
			return func() { Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n) },
				func() { netlib.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n) }
		},
	}
}

func benchCases() []benchCase {
	if testing.Short() {
		return []benchCase{sgemmCase(64)}
	}
	var cases []benchCase
	for _, n := range []int{256, 1024, 2048} {
		cases = append(cases, benchCase{
			name:  fmt.Sprintf("dgemm/n=%d", n),
			flops: 2 * float64(n) * float64(n) * float64(n),
			setup: func(rng *rand.Rand) (func(), func()) {
				a, b, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
				return func() { Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n) },
					func() { netlib.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n) }
			},
		})
	}
	for _, n := range []int{256, 1024, 2048} {
		cases = append(cases, sgemmCase(n))
	}
	const tall, wide = 100000, 512
	cases = append(cases, benchCase{
		name:  "dgemm/tall=1e5x512*512x512",
		flops: 2 * tall * wide * wide,
		setup: func(rng *rand.Rand) (func(), func()) {
			a, b, c := randSlice(rng, tall*wide), randSlice(rng, wide*wide), make([]float64, tall*wide)
			return func() { Dgemm(blas.NoTrans, blas.NoTrans, tall, wide, wide, 1, a, wide, b, wide, 0, c, wide) },
				func() {
					netlib.Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, tall, wide, wide, 1, a, wide, b, wide, 0, c, wide)
				}
		},
	}, benchCase{
		name:  "syrk/XtX=1e5x512",
		flops: tall * wide * wide, // one triangle
		setup: func(rng *rand.Rand) (func(), func()) {
			a, c := randSlice(rng, tall*wide), make([]float64, wide*wide)
			return func() { Dsyrk(blas.Lower, blas.Trans, wide, tall, 1, a, wide, 0, c, wide) },
				func() { netlib.Implementation{}.Dsyrk(blas.Lower, blas.Trans, wide, tall, 1, a, wide, 0, c, wide) }
		},
	})
	const nc = 2048
	cases = append(cases, benchCase{
		name:  "cholesky/n=2048",
		flops: float64(nc) * nc * nc / 3,
		setup: func(rng *rand.Rand) (func(), func()) {
			a := spdFast(rng, nc)
			w := make([]float64, len(a))
			// The copy is part of both timings (0.1% of the flops).
			return func() {
					copy(w, a)
					if p, _ := Dpotrf(nc, w, nc); p >= 0 {
						panic("not positive definite")
					}
				}, func() {
					copy(w, a)
					if info := openblas.DpotrfLowerRowMajor(nc, w, nc); info != 0 {
						panic("not positive definite")
					}
				}
		},
	})
	return cases
}

// BenchmarkVsOpenBLAS runs, for each case and thread count, OpenBLAS and
// every asm path alternately (reps rounds; the generic path once, it is
// slow) and reports the best GFLOP/s of each and the ratios to OpenBLAS.
// With one thread it also reports ratios of thread CPU time (metrics
// ending in -cpu), which other processes on the machine do not inflate.
// Alternating and keeping the best time makes the ratios robust against
// other load on a shared machine.
func BenchmarkVsOpenBLAS(b *testing.B) {
	reps := 5
	if testing.Short() {
		reps = 1
	}
	prevThreads := setThreads(0)
	defer setThreads(prevThreads)
	prevPath := Path()
	defer SetPath(prevPath)
	for _, th := range []int{1, 2} {
		for _, bc := range benchCases() {
			rng := rand.New(rand.NewPCG(1, 2))
			ours, theirs := bc.setup(rng)
			b.Run(fmt.Sprintf("threads=%d/%s", th, bc.name), func(b *testing.B) {
				openblas.SetThreads(th)
				setThreads(th)
				best := map[string]time.Duration{}
				bestCPU := map[string]time.Duration{}
				if th == 1 {
					// Everything runs on this goroutine's thread: its CPU
					// time is the compute time whatever else the machine runs.
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				// Repeat short cases so one timing lasts about 0.1 s at
				// 50 GFLOP/s (the CPU clock ticks in milliseconds).
				iters := max(1, int(5e9/bc.flops))
				if testing.Short() {
					iters = 1
				}
				timeit := func(name string, f func()) {
					c0 := threadCPU()
					start := time.Now()
					for i := 0; i < iters; i++ {
						f()
					}
					d := time.Since(start) / time.Duration(iters)
					c := (threadCPU() - c0) / time.Duration(iters)
					if old, ok := best[name]; !ok || d < old {
						best[name] = d
					}
					if old, ok := bestCPU[name]; !ok || c < old {
						bestCPU[name] = c
					}
				}
				vs := benchVariants(bc)
				defer setSgemmKernel(nil)
				for i := 0; i < b.N; i++ {
					for r := 0; r < reps; r++ {
						timeit("openblas", theirs)
						for _, v := range vs {
							if v.path == "generic" && r > 0 {
								continue
							}
							SetPath(v.path)
							setSgemmKernel(v.kern)
							timeit(v.label, ours)
						}
					}
				}
				gf := func(name string) float64 { return bc.flops / best[name].Seconds() / 1e9 }
				b.ReportMetric(gf("openblas"), "openblas-GFLOP/s")
				for _, v := range vs {
					b.ReportMetric(gf(v.label), v.label+"-GFLOP/s")
					b.ReportMetric(gf(v.label)/gf("openblas"), v.label+"/openblas")
				}
				if th == 1 {
					cpu := func(name string) float64 { return bc.flops / bestCPU[name].Seconds() / 1e9 }
					b.ReportMetric(cpu("openblas"), "openblas-cpuGFLOP/s")
					for _, v := range vs {
						b.ReportMetric(cpu(v.label)/cpu("openblas"), v.label+"/openblas-cpu")
					}
				}
			})
		}
	}
}

// benchVariant is one timed configuration: a code path and, for the sgemm
// cases, a float32 kernel of it (nil: the path's default).
type benchVariant struct {
	label, path string
	kern        *gemmKernel[float32]
}

// benchVariants lists every path, and for the sgemm cases each alternative
// float32 kernel of a path after its default.
func benchVariants(bc benchCase) []benchVariant {
	var vs []benchVariant
	for _, p := range Paths() {
		vs = append(vs, benchVariant{label: p, path: p})
		if !bc.sgemm {
			continue
		}
		for _, k := range sgemmKernels[p][1:] {
			vs = append(vs, benchVariant{label: p + "-" + k.name, path: p, kern: k})
		}
	}
	return vs
}

//go:build linux

package main

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
)

// calibration holds the rates the predicted iteration times are computed
// from: the backend's Gemm (float64) and Sgemm (float32) on an N x N x N
// product, and its vector exponential, each the best of reps timed runs after
// one warm-up. CExp (CExp32) is one exponential in flops-equivalents: the
// Gemm (Sgemm) rate over the exp rate. The exponentials are timed as the
// fused kernel block runs them: on every core at once (GOMAXPROCS
// goroutines, as the Gemm uses every core), each over its own chunk of
// expChunk arguments that stays in cache (the block's strip is exponentiated
// while it is in cache), not one core streaming the whole array from
// memory, which overstated c_exp about 2x to 4x (59 to 142 on the 2-core
// machine, against about 60 from the fused kernel's share of a CPU profile).
type calibration struct {
	Backend     string  `json:"backend"`
	GemmN       int     `json:"gemm_n"`
	GemmGFLOPS  float64 `json:"gemm_gflops"`
	SgemmGFLOPS float64 `json:"sgemm_gflops"`
	ExpPerSec   float64 `json:"exp_per_second"`
	Exp32PerSec float64 `json:"exp32_per_second"`
	CExp        float64 `json:"c_exp"`
	CExp32      float64 `json:"c_exp32"`
}

const calibReps = 3

func best(reps int, f func()) float64 {
	f() // warm-up: page faults, thread start-up
	b := 0.0
	for r := range reps {
		t := time.Now()
		f()
		if s := time.Since(t).Seconds(); r == 0 || s < b {
			b = s
		}
	}
	return max(b, 1e-9)
}

// calibrate measures the rates on be with an n^3 Gemm and expLen exponentials.
func calibrate(be backend.Backend, n, expLen int) calibration {
	rng := rand.New(rand.NewPCG(1, 2))
	a64 := make([]float64, n*n)
	b64 := make([]float64, n*n)
	a32 := make([]float32, n*n)
	b32 := make([]float32, n*n)
	for i := range a64 {
		a64[i], b64[i] = rng.Float64(), rng.Float64()
		a32[i], b32[i] = float32(a64[i]), float32(b64[i])
	}
	g := func(d []float64) blas64.General { return blas64.General{Rows: n, Cols: n, Stride: n, Data: d} }
	g32 := func(d []float32) blas32.General { return blas32.General{Rows: n, Cols: n, Stride: n, Data: d} }
	c64 := make([]float64, n*n)
	c32 := make([]float32, n*n)
	flops := 2 * float64(n) * float64(n) * float64(n)
	c := calibration{Backend: be.Name(), GemmN: n}
	c.GemmGFLOPS = flops / best(calibReps, func() { be.Gemm(blas.NoTrans, blas.NoTrans, 1, g(a64), g(b64), 0, g(c64)) }) / 1e9
	c.SgemmGFLOPS = flops / best(calibReps, func() { backend.Sgemm(be, blas.NoTrans, blas.NoTrans, 1, g32(a32), g32(b32), 0, g32(c32)) }) / 1e9
	// Arguments like a Gaussian kernel's, -||x - c||^2 / (2 sigma^2) in [-4, 0].
	src := make([]float64, expLen)
	src32 := make([]float32, expLen)
	for i := range src {
		src[i] = -4 * rng.Float64()
		src32[i] = float32(src[i])
	}
	dst := make([]float64, expLen)
	dst32 := make([]float32, expLen)
	c.ExpPerSec = float64(expLen) / best(calibReps, func() {
		inChunks(expLen, func(lo, hi int) { backend.Exp(be, dst[lo:hi], src[lo:hi]) })
	})
	c.Exp32PerSec = float64(expLen) / best(calibReps, func() {
		inChunks(expLen, func(lo, hi int) { backend.Exp32(be, dst32[lo:hi], src32[lo:hi]) })
	})
	c.CExp = c.GemmGFLOPS * 1e9 / c.ExpPerSec
	c.CExp32 = c.SgemmGFLOPS * 1e9 / c.Exp32PerSec
	return c
}

// expChunk is the arguments of one exponential call in the calibration:
// 4096 (32 KiB of float64 arguments and results, 16 KiB of float32), in L1
// and L2 like a strip of a kernel block.
const expChunk = 4096

// inChunks runs f over the first expChunk arguments, n / expChunk times in
// all, shared among GOMAXPROCS goroutines: every call works on data in
// cache, and all cores run at once.
func inChunks(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	calls := max(1, n/expChunk)
	var wg sync.WaitGroup
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := g * expChunk % max(1, n-expChunk+1)
			for c := g; c < calls; c += w {
				f(lo, min(lo+expChunk, n))
			}
		}()
	}
	wg.Wait()
}

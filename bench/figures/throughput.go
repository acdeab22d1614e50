package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/purego"
)

// config is one backend and, for purego, one SIMD code path.
type config struct {
	name string
	b    backend.Backend
	path string // SIMD code path for purego; "" for netlib
}

func configs() ([]config, error) {
	var cs []config
	if netlibBuilt {
		b, err := backend.ByName("netlib")
		if err != nil {
			return nil, err
		}
		cs = append(cs, config{"netlib (OpenBLAS)", b, ""})
	} else {
		fmt.Fprintln(os.Stderr, "  (built without -tags netlib: no OpenBLAS line)")
	}
	pg, err := backend.ByName("purego")
	if err != nil {
		return nil, err
	}
	for _, p := range purego.CPUPaths() {
		cs = append(cs, config{"purego " + p, pg, p})
	}
	return cs, nil
}

func randGeneral(r, c int, rng *rand.Rand) blas64.General {
	g := blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
	for i := range g.Data {
		g.Data[i] = rng.Float64()*2 - 1
	}
	return g
}

// gflops times f (best of repeats lasting at least 0.2 s in all) and returns
// flops / seconds / 1e9.
func gflops(flops float64, f func()) float64 {
	f() // warm-up
	best := 0.0
	var total time.Duration
	for reps := 0; reps < 3 || total < 200*time.Millisecond; reps++ {
		start := time.Now()
		f()
		el := time.Since(start)
		total += el
		if g := flops / el.Seconds() / 1e9; g > best {
			best = g
		}
		if reps > 50 {
			break
		}
	}
	return best
}

// figBackend draws GFLOP/s against n for Gemm, X^T X and Cholesky.
func figBackend(out string, quick bool) error {
	cs, err := configs()
	if err != nil {
		return err
	}
	gemmN := []int{128, 256, 512, 1024, 2048}
	syrkK := []int{64, 128, 256, 512}
	syrkRows := 20000
	cholN := []int{256, 512, 1024, 2048}
	if quick {
		gemmN, syrkK, syrkRows, cholN = []int{128, 256, 512, 1024}, []int{64, 256}, 5000, []int{256, 512, 1024}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var gemm, syrk, chol []series
	for _, c := range cs {
		prev := ""
		if c.path != "" {
			var err error
			if prev, err = purego.SetCPUPath(c.path); err != nil {
				return err
			}
		}
		for _, n := range gemmN {
			if c.path == "generic" && n > 1024 {
				continue // minutes per point, and the slope is clear below
			}
			a, b, cc := randGeneral(n, n, rng), randGeneral(n, n, rng), randGeneral(n, n, rng)
			g := gflops(2*float64(n)*float64(n)*float64(n), func() {
				c.b.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, cc)
			})
			fmt.Fprintf(os.Stderr, "  %-20s gemm n=%-5d %6.1f GFLOP/s\n", c.name, n, g)
			gemm = add(gemm, c.name, float64(n), g)
		}
		for _, k := range syrkK {
			a, cc := randGeneral(syrkRows, k, rng), randGeneral(k, k, rng)
			g := gflops(float64(syrkRows)*float64(k)*float64(k), func() {
				c.b.Syrk(blas.Trans, 1, a, 0, cc)
			})
			fmt.Fprintf(os.Stderr, "  %-20s X^T X %dx%-4d %6.1f GFLOP/s\n", c.name, syrkRows, k, g)
			syrk = add(syrk, c.name, float64(k), g)
		}
		for _, n := range cholN {
			if c.path == "generic" && n > 1024 {
				continue
			}
			x := randGeneral(n, n, rng)
			spd := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1.0/float64(n), x, x, 0, spd)
			for i := 0; i < n; i++ {
				spd.Data[i*n+i] += 1
			}
			work := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
			var ferr error
			g := gflops(float64(n)*float64(n)*float64(n)/3, func() {
				copy(work.Data, spd.Data)
				if err := c.b.Cholesky(work); err != nil {
					ferr = err
				}
			})
			if ferr != nil {
				return ferr
			}
			fmt.Fprintf(os.Stderr, "  %-20s chol n=%-5d %6.1f GFLOP/s\n", c.name, n, g)
			chol = add(chol, c.name, float64(n), g)
		}
		if prev != "" {
			if _, err := purego.SetCPUPath(prev); err != nil {
				return err
			}
		}
	}
	if err := (chart{title: "Gemm C = A B (n x n), 2 threads", xlabel: "n", ylabel: "GFLOP/s", logX: true, xticks: toF(gemmN)}).save(out, "backend_gemm", gemm); err != nil {
		return err
	}
	if err := (chart{title: fmt.Sprintf("X^T X for X of %d x n (%d n^2 flops: one triangle)", syrkRows, syrkRows), xlabel: "n", ylabel: "GFLOP/s", logX: true, xticks: toF(syrkK)}).save(out, "backend_syrk", syrk); err != nil {
		return err
	}
	return (chart{title: "Cholesky n x n (n^3/3 flops)", xlabel: "n", ylabel: "GFLOP/s", logX: true, xticks: toF(cholN)}).save(out, "backend_cholesky", chol)
}

func toF(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

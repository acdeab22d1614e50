package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// TestGaussianBlock compares with the direct formula
// exp(-gamma*|x_i - y_j|^2) (differences formed explicitly). The expansion
// |x|^2 + |y|^2 - 2x.y loses absolute accuracy about d*eps*(|x|^2+|y|^2) in
// the squared distance, so the kernel value is within
// gamma*8*(d+2)*eps*(|x|^2+|y|^2) relative (plus 2 ulp of exp).
func TestGaussianBlock(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(51, 52))
		shapes := [][3]int{{0, 3, 2}, {3, 0, 2}, {1, 1, 1}, {5, 7, 3}, {13, 9, 0}, {37, 29, 16}, {300, 41, 64}, {50, 333, 5}}
		for _, sh := range shapes {
			m, n, d := sh[0], sh[1], sh[2]
			ldx, ldy, ldd := d+1, d+2, max(1, n)+rng.IntN(3)
			x := randSlice(rng, max(0, (m-1)*ldx+d))
			y := randSlice(rng, max(0, (n-1)*ldy+d))
			xn := make([]float64, m)
			yn := make([]float64, n)
			for i := range xn {
				xn[i] = SumSq(x[i*ldx : i*ldx+d])
			}
			for j := range yn {
				yn[j] = SumSq(y[j*ldy : j*ldy+d])
			}
			gamma := 0.3
			dst, check := guarded(rng, max(0, (m-1)*ldd+n))
			GaussianBlock(dst, ldd, x, ldx, y, ldy, m, n, d, xn, yn, gamma)
			check(t)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					var s float64
					for p := 0; p < d; p++ {
						e := x[i*ldx+p] - y[j*ldy+p]
						s += e * e
					}
					want := math.Exp(-gamma * s)
					tol := gamma*8*float64(d+2)*0x1p-52*(xn[i]+yn[j]) + 4*0x1p-52
					if got := dst[i*ldd+j]; math.Abs(got-want) > tol*want+1e-300 {
						t.Fatalf("%v: K[%d,%d] = %v, want %v", sh, i, j, got, want)
					}
				}
			}
		}
	})
}

// TestGaussianBlockClampAndNaN: identical points give exactly 1 (the
// rounding-negative squared distance is clamped to 0), NaN inputs give NaN
// in their row only.
func TestGaussianBlockClampAndNaN(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(53, 54))
		const m, d = 23, 9
		x := randSlice(rng, m*d)
		for i := range x {
			x[i] *= 1e3
		}
		xn := make([]float64, m)
		for i := range xn {
			xn[i] = SumSq(x[i*d : i*d+d])
		}
		// Shrink the norms by 1e-12 relative, far more than the 1e-15 by which
		// summation orders can differ, so xn+xn-2x.x comes out negative and
		// must be clamped.
		for i := range xn {
			xn[i] *= 1 - 1e-12
		}
		k := make([]float64, m*m)
		GaussianBlock(k, m, x, d, x, d, m, m, d, xn, xn, 1e-3)
		for i := 0; i < m; i++ {
			if k[i*m+i] != 1 {
				t.Fatalf("K[%d,%d] = %v, want exactly 1", i, i, k[i*m+i])
			}
			for j := 0; j < m; j++ {
				if v := k[i*m+j]; !(v >= 0 && v <= 1) {
					t.Fatalf("K[%d,%d] = %v out of [0,1]", i, j, v)
				}
			}
		}
		x[4*d+2] = math.NaN()
		GaussianBlock(k, m, x, d, x, d, m, m, d, xn, xn, 1e-3)
		for i := 0; i < m; i++ {
			for j := 0; j < m; j++ {
				if nan := math.IsNaN(k[i*m+j]); nan != (i == 4 || j == 4) {
					t.Fatalf("K[%d,%d] = %v", i, j, k[i*m+j])
				}
			}
		}
	})
}

// BenchmarkGaussianBlock compares the fused kernel block with the GEMM of
// the same shape alone (n x d times d x m), at a FALKON-sized shape: n=20000,
// m=2000, d=64. The two alternate (5 rounds) and the best time of each is
// kept; "gaussian/gemm" is the throughput ratio (1 = the exponentials are
// free). threads=1 also reports the ratio of thread CPU times
// ("gaussian/gemm-cpu"), which other load on the machine does not distort.
func BenchmarkGaussianBlock(b *testing.B) {
	const n, m, d = 20000, 2000, 64
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randSlice(rng, n*d), randSlice(rng, m*d)
	xn, yn := make([]float64, n), make([]float64, m)
	for i := range xn {
		xn[i] = SumSq(x[i*d : i*d+d])
	}
	for j := range yn {
		yn[j] = SumSq(y[j*d : j*d+d])
	}
	dst := make([]float64, n*m)
	for _, th := range []int{1, 2} {
		for _, p := range Paths() {
			b.Run(fmt.Sprintf("threads=%d/%s", th, p), func(b *testing.B) {
				prev, _ := SetPath(p)
				defer SetPath(prev)
				prevTh := setThreads(th)
				defer setThreads(prevTh)
				if th == 1 {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				var bestG, bestK, cpuG, cpuK time.Duration
				keep := func(best *time.Duration, v time.Duration) {
					if *best == 0 || v < *best {
						*best = v
					}
				}
				for i := 0; i < b.N; i++ {
					for r := 0; r < 5; r++ {
						c0, t0 := threadCPU(), time.Now()
						Dgemm(blas.NoTrans, blas.Trans, n, m, d, -2, x, d, y, d, 0, dst, m)
						c1, t1 := threadCPU(), time.Now()
						GaussianBlock(dst, m, x, d, y, d, n, m, d, xn, yn, 0.01)
						c2, t2 := threadCPU(), time.Now()
						keep(&bestG, t1.Sub(t0))
						keep(&bestK, t2.Sub(t1))
						keep(&cpuG, c1-c0)
						keep(&cpuK, c2-c1)
					}
				}
				entries := float64(n) * m
				b.ReportMetric(entries/bestG.Seconds()/1e9, "gemm-Gentries/s")
				b.ReportMetric(entries/bestK.Seconds()/1e9, "gaussian-Gentries/s")
				b.ReportMetric(bestG.Seconds()/bestK.Seconds(), "gaussian/gemm")
				if th == 1 && cpuK > 0 {
					b.ReportMetric(cpuG.Seconds()/cpuK.Seconds(), "gaussian/gemm-cpu")
				}
			})
		}
	}
}

package asm

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/zonal-ml/zonal"
)

// impl is one complete set of kernels for a code path.
type impl struct {
	path string
	gemm *gemmKernel[float64]

	dot   func(x, y []float64) float64
	axpy  func(alpha float64, x, y []float64)
	scal  func(alpha float64, x []float64)
	sumsq func(x []float64) float64
	exp   func(dst, src []float64)
	gegen func(dst, t, p1, p2 []float64, a, b float64)
	gauss func(c []float64, rows, cols, ldc int, xn, yn []float64, gamma float64)
}

// impls holds every path this binary can run on this CPU, best first.
var impls []*impl

var active atomic.Pointer[impl]

// threads bounds the goroutines a single call may use (0: GOMAXPROCS).
var threads atomic.Int64

// EnvPath names the environment variable that selects a code path at init
// ("avx2" on an AVX-512 machine runs the kernels a CPU without AVX-512
// would): a path this CPU lacks, or an empty value, leaves the best one.
// ZONAL_NOASM=1 takes precedence.
const EnvPath = "ZONAL_ASM_PATH"

func init() {
	impls = append(cpuImpls(), genericImpl())
	active.Store(initialPath(os.Getenv("ZONAL_NOASM"), os.Getenv(EnvPath)))
}

// initialPath is the path chosen at init for the values of ZONAL_NOASM and
// ZONAL_ASM_PATH.
func initialPath(noasm, want string) *impl {
	if noasm == "1" {
		return impls[len(impls)-1]
	}
	for _, p := range impls {
		if p.path == want {
			return p
		}
	}
	return impls[0]
}

func cur() *impl { return active.Load() }

// Path reports the code path in use: "avx512", "avx2" or "generic".
func Path() string { return cur().path }

// Paths lists the code paths available on this CPU in this build, best first.
func Paths() []string {
	out := make([]string, len(impls))
	for i, p := range impls {
		out[i] = p.path
	}
	return out
}

// SetPath switches every kernel to the named code path (one of Paths()) and
// returns the previous one. It is meant for tests and benchmarks that compare
// paths; it must not be called while other goroutines use the package.
func SetPath(name string) (prev string, err error) {
	prev = Path()
	for _, p := range impls {
		if p.path == name {
			active.Store(p)
			return prev, nil
		}
	}
	return prev, fmt.Errorf("%w code path %q (have %v)", zonal.ErrUnknown, name, Paths())
}

// setThreads bounds the number of goroutines one call may use; n <= 0 means
// runtime.GOMAXPROCS(0). It returns the previous setting. Tests and the
// comparison benchmarks use it.
func setThreads(n int) int {
	if n < 0 {
		n = 0
	}
	return int(threads.Swap(int64(n)))
}

func maxThreads() int {
	if t := int(threads.Load()); t > 0 {
		return t
	}
	return runtime.GOMAXPROCS(0)
}

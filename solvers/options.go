package solvers

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Options are the settings every solver shares. The zero value is usable.
type Options struct {
	// Backend does the linear algebra; nil means backend.Default().
	Backend backend.Backend
	// MemoryBudget bounds the large working arrays (kernel matrices, cached
	// K_nM, Z^T Z), in bytes; zero means zonal.DefaultMemoryBudget.
	MemoryBudget int64
	// Progress, if set, receives progress reports. It is called from the
	// fitting goroutine (ParK: from the cell workers, serialised).
	Progress zonal.ProgressFunc
}

func (o Options) backend() backend.Backend {
	if o.Backend == nil {
		return backend.Default()
	}
	return o.Backend
}

func (o Options) report(p zonal.Progress) { o.Progress.Report(p) }

// centerTargets returns Y - mean (a copy) and the column means.
func centerTargets(y *mat.Dense) (*mat.Dense, []float64) {
	n, k := y.Dims()
	mean := make([]float64, k)
	for i := 0; i < n; i++ {
		for j, v := range rowOf(y, i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	yc := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		dst, src := rowOf(yc, i), rowOf(y, i)
		for j := range dst {
			dst[j] = src[j] - mean[j]
		}
	}
	return yc, mean
}

// factorWithJitter fills a (an n x n symmetric matrix) by calling fill and
// Cholesky-factors a + shift I. If that fails, it refills and retries with
// an added jitter of 1e-12, 1e-10, ..., 1e-4 times the mean diagonal; the
// jitter used is returned. A matrix that still cannot be factored gives an
// error wrapping zonal.ErrNotPositiveDefinite and the backend's zonal.ErrNotPositiveDefinite.
func factorWithJitter(ctx context.Context, be backend.Backend, a *mat.Dense, shift float64, what string, fill func(*mat.Dense) error) (float64, error) {
	n, _ := a.Dims()
	var lastErr error
	jitter := 0.0
	scale := 0.0
	for attempt := 0; attempt < 6; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := fill(a); err != nil {
			return 0, err
		}
		if attempt == 0 {
			for i := 0; i < n; i++ {
				scale += math.Abs(a.At(i, i))
			}
			scale /= float64(n)
			if scale == 0 {
				scale = 1
			}
		} else {
			jitter = scale * math.Pow(10, float64(-14+2*attempt))
		}
		raw := a.RawMatrix()
		for i := 0; i < n; i++ {
			raw.Data[i*raw.Stride+i] += shift + jitter
		}
		err := be.Cholesky(raw)
		if err == nil {
			return jitter, nil
		}
		lastErr = err
	}
	return 0, fmt.Errorf("%w %s (%dx%d) even with jitter %g: %w", zonal.ErrNotPositiveDefinite, what, n, n, jitter, lastErr)
}

func defaultBackend() backend.Backend { return backend.Default() }

// Model kinds, as stored in model files.
const (
	KindRidge  = "ridge"
	KindKRR    = "krr"
	KindFalkon = "falkon"
	KindParK   = "park"
)

// Model is a fitted predictor with k outputs. Fitted models are immutable
// and safe for concurrent use.
type Model interface {
	// Kind is one of KindRidge, KindKRR, KindFalkon, KindParK.
	Kind() string
	// InputDim is the number of input features d.
	InputDim() int
	// Outputs is the number of outputs k.
	Outputs() int
	// Predict writes the k outputs of every row of x (n x d) to the rows of
	// dst (n x k).
	Predict(dst, x *mat.Dense) error
}

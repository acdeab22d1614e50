package solvers

import (
	"context"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// smallBatch is the largest batch predicted row by row with direct kernel
// evaluations (allocation-free); larger batches go through kernel-matrix
// blocks and Gemm.
const smallBatch = 32

// predictBlock is the number of rows per kernel-matrix block in large-batch
// prediction.
const predictBlock = 1024

// expansion is f(x) = mean + sum_j k(x, c_j) alpha_j: the predictor of exact
// KRR (centres = training rows), FALKON and every ParK cell.
type expansion struct {
	kern    kernels.Kernel
	centers *mat.Dense // M x d
	alpha   *mat.Dense // M x k
	mean    []float64  // k
	pool    sync.Pool  // *[]float64 of length M: kernel row scratch
}

func newExpansion(k kernels.Kernel, centers, alpha *mat.Dense, mean []float64) *expansion {
	e := &expansion{kern: k, centers: centers, alpha: alpha, mean: mean}
	m, _ := centers.Dims()
	e.pool.New = func() any { s := make([]float64, m); return &s }
	return e
}

func (e *expansion) dims() (m, d, k int) {
	m, d = e.centers.Dims()
	_, k = e.alpha.Dims()
	return
}

// predictRow writes f(x) for one row x (length d) to out (length k).
// It does not allocate.
func (e *expansion) predictRow(out, x []float64) {
	m, d, k := e.dims()
	sp := e.pool.Get().(*[]float64)
	kr := *sp
	c := e.centers.RawMatrix()
	for j := 0; j < m; j++ {
		kr[j] = e.kern.Eval(x, c.Data[j*c.Stride:j*c.Stride+d])
	}
	copy(out, e.mean)
	a := e.alpha.RawMatrix()
	for j := 0; j < m; j++ {
		w := kr[j]
		row := a.Data[j*a.Stride : j*a.Stride+k]
		for t, v := range row {
			out[t] += w * v
		}
	}
	e.pool.Put(sp)
}

// predictBatch writes f(x_i) to the rows of dst for a large batch, with
// kernel blocks and Gemm.
func (e *expansion) predictBatch(be backend.Backend, dst, x *mat.Dense) error {
	n, _ := x.Dims()
	m, _, k := e.dims()
	bs := min(predictBlock, n)
	kb := mat.NewDense(bs, m, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		kv := kb.Slice(0, i1-i0, 0, m).(*mat.Dense)
		if err := kernels.MatrixInto(context.Background(), kv, e.kern, x.Slice(i0, i1, 0, x.RawMatrix().Cols), e.centers, kernels.Options{Backend: be}); err != nil {
			return err
		}
		dv := dst.Slice(i0, i1, 0, k).(*mat.Dense)
		fillRows(dv, e.mean)
		be.Gemm(blasNoTrans, blasNoTrans, 1, kv.RawMatrix(), e.alpha.RawMatrix(), 1, dv.RawMatrix())
	}
	return nil
}

func fillRows(dst *mat.Dense, v []float64) {
	r := dst.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		copy(r.Data[i*r.Stride:i*r.Stride+r.Cols], v)
	}
}

// checkPredict validates Predict's arguments.
func checkPredict(dst *mat.Dense, x *mat.Dense, d, k int) error {
	if dst == nil || x == nil {
		return fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	n, dx := x.Dims()
	if dx != d {
		return fmt.Errorf("%w: model expects %d features, input has %d", zonal.ErrShape, d, dx)
	}
	r, c := dst.Dims()
	if r != n || c != k {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, c, n, k)
	}
	return nil
}

// rowOf returns row i of a dense matrix as a slice (no copy).
func rowOf(m *mat.Dense, i int) []float64 {
	r := m.RawMatrix()
	return r.Data[i*r.Stride : i*r.Stride+r.Cols]
}

func rawView(m *mat.Dense) blas64.General { return m.RawMatrix() }

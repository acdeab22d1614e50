package solvers

import (
	"context"
	"sync"

	"gonum.org/v1/gonum/blas"
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
	centers *mat.Dense      // M x d
	alpha   *mat.Dense      // M x k
	mean    []float64       // k
	be      backend.Backend // large-batch prediction; never nil
	pool    sync.Pool       // *[]float64 of length M: kernel row scratch

	expansion32 // precision; float32 centres (falkon32.go)
}

// newExpansion makes the expansion of kernel k on the given centres,
// predicting large batches on be (not nil).
func newExpansion(be backend.Backend, k kernels.Kernel, centers, alpha *mat.Dense, mean []float64) *expansion {
	e := &expansion{kern: k, centers: centers, alpha: alpha, mean: mean, be: be}
	m, _ := centers.Dims()
	e.pool.New = func() any { s := make([]float64, m); return &s }
	return e
}

func (e *expansion) dims() (m, d, k int) {
	m, d = e.centers.Dims()
	_, k = e.alpha.Dims()
	return
}

// Outputs is k.
func (e *expansion) Outputs() int { _, _, k := e.dims(); return k }

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
// kernel blocks and Gemm on the expansion's backend.
func (e *expansion) predictBatch(dst, x *mat.Dense) error {
	if e.prec == zonal.Float32 {
		return e.predictBatch32(dst, x)
	}
	be := e.be
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
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, kv.RawMatrix(), e.alpha.RawMatrix(), 1, dv.RawMatrix())
	}
	return nil
}

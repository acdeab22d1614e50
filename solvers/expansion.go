package solvers

import (
	"context"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// smallBatch is the largest batch predicted row by row (predictRow,
// allocation-free after warm-up); larger batches go through kernel-matrix
// blocks and Gemm.
const smallBatch = 32

// predictBlock is the number of rows per kernel-matrix block in large-batch
// prediction.
const predictBlock = 1024

// expansion is f(x) = mean + sum_j k(x, c_j) alpha_j: the predictor of exact
// KRR (centres = training rows), FALKON and every ParK cell.
type expansion struct {
	kern    kernels.Kernel
	centers mat.Matrix      // M x d: *mat.Dense, or *dataset.CSR after a fit on CSR rows
	alpha   *mat.Dense      // M x k
	mean    []float64       // k
	be      backend.Backend // large-batch prediction; never nil
	pool    sync.Pool       // *[]float64 of length M: kernel row scratch

	// The squared norms |c_j|^2 of dense centres and, when it fits
	// maxTransposed, their transpose (d x M), made once on the first
	// Gaussian row prediction (gaussianRow).
	cnOnce sync.Once
	cn, ct []float64

	// The centres prepared for the kernel blocks of large batches (checked
	// and their norms computed once, not per batch), made on the first one.
	kcOnce sync.Once
	kc     *kernels.Centers
	kcErr  error

	expansion32 // precision; float32 centres (falkon32.go)
}

// newExpansion makes the expansion of kernel k on the given centres (a
// *mat.Dense or a *dataset.CSR), predicting large batches on be (not nil).
func newExpansion(be backend.Backend, k kernels.Kernel, centers mat.Matrix, alpha *mat.Dense, mean []float64) *expansion {
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
// It does not allocate. The centres must be dense (see denseCenters).
// The Gaussian kernel's M values come from gaussianRow, other kernels'
// from Eval centre by centre.
func (e *expansion) predictRow(out, x []float64) {
	m, d, k := e.dims()
	sp := e.pool.Get().(*[]float64)
	kr := *sp
	c := e.centers.(*mat.Dense).RawMatrix()
	if g, ok := e.kern.(kernels.Gaussian); ok {
		e.gaussianRow(kr, x, c, g.Gamma())
	} else {
		for j := 0; j < m; j++ {
			kr[j] = e.kern.Eval(x, c.Data[j*c.Stride:j*c.Stride+d])
		}
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

// maxTransposed is the most entries M d of the transposed copy of the
// centres that gaussianRow keeps (32 MiB); larger centre sets take the
// matrix-vector product on the centres as they are.
const maxTransposed = 1 << 22

// gaussianRow writes the Gaussian kernel values k(x, c_j) = exp(-gamma
// max(0, |x|^2 + |c_j|^2 - 2 x.c_j)) of the row x against the dense
// centres c to kr (length M), with the centres' squared norms computed
// once, as the kernel blocks of large batches are computed (squared
// distances that rounding made negative are 0). Computing the M
// distances one by one (Eval) is a chain of dependent additions that
// costs several times the product, and a served row is mostly this work.
//
// For a row with at most half its values non-zero (pixels, counts,
// one-hot features) the products -2 x.c_j are a sum over the non-zero x_i
// of x_i times row i of the transposed centres (an axpy of M values, the
// partial sums held in kr), which reads only those rows of the centres.
// Denser rows, and every row above maxTransposed, take the backend's Gemv
// on the centres, which reads them all in one call.
func (e *expansion) gaussianRow(kr, x []float64, c blas64.General, gamma float64) {
	m, d := c.Rows, c.Cols
	e.cnOnce.Do(func() {
		e.cn = make([]float64, m)
		for j := range e.cn {
			e.cn[j] = backend.SumSq(e.be, c.Data[j*c.Stride:j*c.Stride+d])
		}
		if m*d <= maxTransposed {
			e.ct = make([]float64, d*m)
			for j := 0; j < m; j++ {
				for i, v := range c.Data[j*c.Stride : j*c.Stride+d] {
					e.ct[i*m+j] = v
				}
			}
		}
	})
	kr = kr[:m]
	nz := 0
	for _, v := range x {
		if v != 0 {
			nz++
		}
	}
	if e.ct != nil && 2*nz <= d {
		clear(kr)
		for i, v := range x {
			if v != 0 {
				backend.AxpySlice(e.be, -2*v, e.ct[i*m:(i+1)*m], kr)
			}
		}
	} else {
		e.be.Gemv(blas.NoTrans, -2, c, blas64.Vector{N: d, Data: x, Inc: 1}, 0, blas64.Vector{N: m, Data: kr, Inc: 1})
	}
	xn := backend.SumSq(e.be, x)
	for j, v := range kr {
		kr[j] = -gamma * math.Max(0, xn+e.cn[j]+v)
	}
	backend.Exp(e.be, kr, kr)
}

// denseCenters reports whether the centres are a *mat.Dense (rows can then
// be predicted one by one, predictRow).
func (e *expansion) denseCenters() bool { _, ok := e.centers.(*mat.Dense); return ok }

// predictBatch writes f(x_i) to the rows of dst for a large batch (or any
// batch with CSR rows or centres), with kernel blocks and Gemm on the
// expansion's backend. x is a *mat.Dense or a *dataset.CSR.
func (e *expansion) predictBatch(dst *mat.Dense, x mat.Matrix) error {
	if e.prec == zonal.Float32 {
		return e.predictBatch32(dst, x)
	}
	be := e.be
	e.kcOnce.Do(func() { e.kc, e.kcErr = kernels.NewCenters(e.kern, e.centers) })
	if e.kcErr != nil {
		return e.kcErr
	}
	x = likeCenters(x, e.centers)
	n, _ := x.Dims()
	m, _, k := e.dims()
	bs := min(predictBlock, n)
	kb := mat.NewDense(bs, m, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		kv := kb.Slice(0, i1-i0, 0, m).(*mat.Dense)
		if err := e.kc.MatrixInto(context.Background(), kv, rowRange(x, i0, i1), kernels.Options{Backend: be}); err != nil {
			return err
		}
		dv := dst.Slice(i0, i1, 0, k).(*mat.Dense)
		fillRows(dv, e.mean)
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, kv.RawMatrix(), e.alpha.RawMatrix(), 1, dv.RawMatrix())
	}
	return nil
}

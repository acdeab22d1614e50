package kernels

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Measures are the approximation-quality measures of features Z (n x D) for
// a kernel matrix K (n x n), E = Z Z^T - K:
//
//	RelFro  = |E|_F / |K|_F
//	RelSpec = |E|_2 / |K|_2
//	Eps[i]  = |(K + lambda_i I)^{-1/2} E (K + lambda_i I)^{-1/2}|_2
//
// Eps[i] is the smallest epsilon for which Z Z^T is an (epsilon, lambda_i)
// spectral approximation of K: (1-eps)(K+lambda I) <= ZZ^T + lambda I <= (1+eps)(K+lambda I).
type Measures struct {
	RelFro, RelSpec float64
	Lambda, Eps     []float64
}

// Evaluator holds the eigendecomposition K = U diag(mu) U^T of one kernel
// matrix so that many feature matrices can be measured against it.
type Evaluator struct {
	b     backend.Backend
	opt   Options
	k     *mat.Dense
	u     *mat.Dense
	mu    []float64
	normF float64
}

// NewEvaluator decomposes the symmetric kernel matrix k (n x n; not modified,
// and kept: do not change it while the evaluator is in use) with the
// backend's SymEig. Negative eigenvalues from round-off are kept for the
// spectral norm and clamped at 0 in (K + lambda I)^{-1/2}. The n x n
// eigenvector matrix counts against opt.MemoryBudget, as do Measure's
// working arrays later. ctx is checked before the decomposition (which
// itself is not interruptible).
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (k not square), zonal.ErrNonFinite,
// zonal.ErrTooLarge, zonal.ErrNoConvergence from the eigensolver, ctx.Err().
func NewEvaluator(ctx context.Context, k *mat.Dense, opt Options) (*Evaluator, error) {
	if k == nil || k.IsEmpty() {
		return nil, fmt.Errorf("%w: empty kernel matrix", zonal.ErrEmpty)
	}
	n, c := k.Dims()
	if n != c {
		return nil, fmt.Errorf("%w: kernel matrix is %dx%d", zonal.ErrShape, n, c)
	}
	if _, err := general(k); err != nil {
		return nil, err
	}
	if err := opt.check("the evaluator's eigenvectors", budget.Floats(n, n)); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := opt.backend()
	u := mat.DenseCopyOf(k)
	mu := make([]float64, n)
	if err := b.SymEig(u.RawMatrix(), mu, true); err != nil {
		return nil, fmt.Errorf("kernels: eigendecomposition of K: %w", err)
	}
	return &Evaluator{b: b, opt: opt, k: k, u: u, mu: mu, normF: mat.Norm(k, 2)}, nil
}

// Measure returns the measures of z against the evaluator's K for every
// lambda > 0 in lambdas. Cost: two n x n x D products and 1+len(lambdas)
// symmetric eigenvalue problems of size n, through the backend:
// with G = U^T Z, U^T E U = G G^T - diag(mu) has the eigenvalues of E, and
// (K+lambda I)^{-1/2} E (K+lambda I)^{-1/2} = U S B S U^T with
// S = diag((mu+lambda)^{-1/2}), B = U^T E U. ctx is checked between the
// eigenvalue problems.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (z without n rows),
// zonal.ErrNonFinite, zonal.ErrParam (a lambda not positive and finite),
// zonal.ErrTooLarge (the n x n and n x D working arrays exceed the
// evaluator's memory budget), zonal.ErrNoConvergence, ctx.Err().
func (e *Evaluator) Measure(ctx context.Context, z *mat.Dense, lambdas []float64) (Measures, error) {
	n, _ := e.k.Dims()
	if z == nil || z.IsEmpty() {
		return Measures{}, fmt.Errorf("%w: empty feature matrix", zonal.ErrEmpty)
	}
	zr, dz := z.Dims()
	if zr != n {
		return Measures{}, fmt.Errorf("%w: Z has %d rows, K is %dx%d", zonal.ErrShape, zr, n, n)
	}
	if _, err := general(z); err != nil {
		return Measures{}, err
	}
	for _, l := range lambdas {
		if !(l > 0) || math.IsInf(l, 0) {
			return Measures{}, fmt.Errorf("%w: lambda must be positive and finite, got %g", zonal.ErrParam, l)
		}
	}
	if err := e.opt.check("the measures' working arrays", budget.Floats(2, n, n), budget.Floats(n, dz)); err != nil {
		return Measures{}, err
	}
	zz := mat.NewDense(n, n, nil)
	e.b.Syrk(blas.NoTrans, 1, z.RawMatrix(), 0, zz.RawMatrix())
	zz.Sub(zz, e.k)
	out := Measures{RelFro: mat.Norm(zz, 2) / e.normF, Lambda: append([]float64(nil), lambdas...)}
	if err := ctx.Err(); err != nil {
		return Measures{}, err
	}
	g := mat.NewDense(n, dz, nil)
	e.b.Gemm(blas.Trans, blas.NoTrans, 1, e.u.RawMatrix(), z.RawMatrix(), 0, g.RawMatrix())
	bm := zz // reuse: B = G G^T - diag(mu)
	e.b.Syrk(blas.NoTrans, 1, g.RawMatrix(), 0, bm.RawMatrix())
	for i := 0; i < n; i++ {
		bm.Set(i, i, bm.At(i, i)-e.mu[i])
	}
	spec, err := e.maxAbsEig(bm, nil)
	if err != nil {
		return Measures{}, err
	}
	top := math.Max(math.Abs(e.mu[0]), math.Abs(e.mu[n-1]))
	out.RelSpec = spec / top
	for _, l := range lambdas {
		if err := ctx.Err(); err != nil {
			return Measures{}, err
		}
		s := make([]float64, n)
		for i, m := range e.mu {
			s[i] = 1 / math.Sqrt(math.Max(m, 0)+l)
		}
		eps, err := e.maxAbsEig(bm, s)
		if err != nil {
			return Measures{}, err
		}
		out.Eps = append(out.Eps, eps)
	}
	return out, nil
}

// maxAbsEig returns the largest |eigenvalue| of diag(s) B diag(s) (s nil: B).
func (e *Evaluator) maxAbsEig(bm *mat.Dense, s []float64) (float64, error) {
	n, _ := bm.Dims()
	w := mat.DenseCopyOf(bm)
	if s != nil {
		wr := w.RawMatrix()
		for i := 0; i < n; i++ {
			row := wr.Data[i*wr.Stride : i*wr.Stride+n]
			for j := range row {
				row[j] *= s[i] * s[j]
			}
		}
	}
	ev := make([]float64, n)
	if err := e.b.SymEig(w.RawMatrix(), ev, false); err != nil {
		return 0, fmt.Errorf("kernels: eigenvalues of the error matrix: %w", err)
	}
	return math.Max(math.Abs(ev[0]), math.Abs(ev[n-1])), nil
}

// RelFrobenius returns |ZZ^T - K|_F / |K|_F for a kernel matrix k (n x n)
// and features z (n x D). It decomposes k (see NewEvaluator); to measure
// many feature matrices against one K, use an Evaluator. Errors: those of
// NewEvaluator and Evaluator.Measure.
func RelFrobenius(ctx context.Context, k, z *mat.Dense, opt Options) (float64, error) {
	m, err := measureOnce(ctx, k, z, nil, opt)
	return m.RelFro, err
}

// RelSpectral returns |ZZ^T - K|_2 / |K|_2 (see RelFrobenius). Errors: those
// of NewEvaluator and Evaluator.Measure.
func RelSpectral(ctx context.Context, k, z *mat.Dense, opt Options) (float64, error) {
	m, err := measureOnce(ctx, k, z, nil, opt)
	return m.RelSpec, err
}

// EpsLambda returns |(K+lambda I)^{-1/2}(ZZ^T - K)(K+lambda I)^{-1/2}|_2, the
// smallest eps for which Z Z^T is an (eps, lambda) spectral approximation of
// K (see Measures and RelFrobenius). Errors: those of NewEvaluator and
// Evaluator.Measure (zonal.ErrParam for lambda not positive and finite).
func EpsLambda(ctx context.Context, k, z *mat.Dense, lambda float64, opt Options) (float64, error) {
	m, err := measureOnce(ctx, k, z, []float64{lambda}, opt)
	if err != nil {
		return 0, err
	}
	return m.Eps[0], nil
}

func measureOnce(ctx context.Context, k, z *mat.Dense, lambdas []float64, opt Options) (Measures, error) {
	ev, err := NewEvaluator(ctx, k, opt)
	if err != nil {
		return Measures{}, err
	}
	return ev.Measure(ctx, z, lambdas)
}

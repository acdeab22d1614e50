package solvers

import (
	"context"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/interrupt"
	"github.com/zonal-ml/zonal/kernels"
)

// KindRidge is the model kind of Ridge in model files.
const KindRidge = "ridge"

func init() { RegisterModel(KindRidge, decodeRidge) }

// Ridge is ridge regression on an explicit feature map z:
// f(x) = mean + z(x) W with (Z^T Z + lambda n I) W = Z^T (Y - mean).
type Ridge struct {
	fm     kernels.FeatureMap
	w      *mat.Dense // D x k
	mean   []float64
	lambda float64
	be     backend.Backend // large-batch prediction; never nil
	pool   sync.Pool       // *ridgeScratch
}

type ridgeScratch struct {
	z [smallBatch + 1]*mat.Dense // z[r] is r x D, allocated on first use
}

// FitRidge fits ridge regression with k outputs (the columns of y) on the
// features fm(x). Z^T Z and Z^T Y are accumulated over row blocks (Syrk and
// Gemm on the backend), so Z is never held whole: memory is D^2 + block x D
// floats. The D x D system is solved by Cholesky (with jitter escalation
// when lambda is tiny and Z^T Z singular). Linear algebra runs on
// opts.Backend, at prediction time too (the map's Transform uses its own).
//
// Errors: zonal.ErrParam for a nil map, lambda not positive and finite;
// zonal.ErrShape for nil inputs, x neither a *mat.Dense nor a *dataset.CSR,
// a CSR whose parts disagree with its shape, a label count other than the
// row count or a map whose input dimension is not x's column count;
// zonal.ErrRange for a CSR column index outside [0, d) or not increasing; zonal.ErrEmpty for no
// rows or columns; zonal.ErrNonFinite for NaN or Inf in x or y or in the
// features; zonal.ErrTooLarge when the working arrays exceed
// opts.MemoryBudget; zonal.ErrNotPositiveDefinite when a factorisation fails
// even with jitter; the map's Transform errors; ctx.Err() (wrapped) when
// canceled.
//
// x is a *mat.Dense or a *dataset.CSR (any other matrix type is refused);
// a CSR x is handed to fm.Transform in row blocks of CSR views, never
// densified here (whether the map's Transform densifies a block is the
// map's business).
func FitRidge(ctx context.Context, fm kernels.FeatureMap, x mat.Matrix, y *mat.Dense, lambda float64, opts Options) (*Ridge, error) {
	if fm == nil {
		return nil, fmt.Errorf("%w: nil feature map", zonal.ErrParam)
	}
	n, d, k, err := checkXY(x, y)
	if err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if fm.InputDim() != d {
		return nil, fmt.Errorf("%w: feature map takes %d inputs, data has %d columns", zonal.ErrShape, fm.InputDim(), d)
	}
	D := fm.Dim()
	be := opts.backend()
	limit := budget.Or(opts.MemoryBudget)
	need := int64(D)*int64(D)*8 + int64(D)*int64(k)*8
	if need+int64(D)*8 > limit {
		return nil, fmt.Errorf("%w: ridge on %d features needs %s for Z^T Z, budget is %s", zonal.ErrTooLarge, D, budget.Format(need+int64(D)*8), budget.Format(limit))
	}
	bs := int((limit - need) / (int64(D) * 8))
	bs = max(1, min(bs, 2048, n))

	yc, mean := centerTargets(y)
	ztz := mat.NewDense(D, D, nil)
	zty := mat.NewDense(D, k, nil)
	zb := mat.NewDense(bs, D, nil)
	nblocks := (n + bs - 1) / bs
	for b, i0 := 0, 0; i0 < n; b, i0 = b+1, i0+bs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("solvers: ridge canceled: %w", err)
		}
		i1 := min(i0+bs, n)
		zv := zb
		if i1-i0 != bs {
			zv = zb.Slice(0, i1-i0, 0, D).(*mat.Dense)
		}
		// A block (Transform, then a bs x D x D Syrk) can take seconds and
		// checks no context: it runs under interrupt.Do, so a cancellation
		// returns at once and the abandoned block finishes on its own.
		var berr error
		if err := interrupt.Do(ctx, func() {
			if err := fm.Transform(zv, rowRange(x, i0, i1)); err != nil {
				berr = fmt.Errorf("solvers: feature map on rows %d..%d: %w", i0, i1-1, err)
				return
			}
			if berr = checkFinite("features", zv); berr != nil {
				return
			}
			be.Syrk(blas.Trans, 1, zv.RawMatrix(), 1, ztz.RawMatrix())
			yv := yc.Slice(i0, i1, 0, k).(*mat.Dense)
			be.Gemm(blas.Trans, blas.NoTrans, 1, zv.RawMatrix(), yv.RawMatrix(), 1, zty.RawMatrix())
		}); err != nil {
			return nil, fmt.Errorf("solvers: ridge canceled: %w", err)
		}
		if berr != nil {
			return nil, berr
		}
		opts.report(zonal.Progress{Stage: "features", Done: b + 1, Total: nblocks})
	}
	// ztz is destroyed by a failed factorisation: keep the Gram matrix only
	// when a retry is needed (recomputed from a saved copy).
	var gram *mat.Dense
	fill := func(a *mat.Dense) error {
		if gram == nil {
			gram = mat.DenseCopyOf(a)
			return nil
		}
		a.Copy(gram)
		return nil
	}
	if _, err := factorWithJitter(ctx, be, ztz, lambda*float64(n), "Z^T Z + lambda n I", fill); err != nil {
		return nil, err
	}
	opts.report(zonal.Progress{Stage: "factor", Done: 1, Total: 1})
	be.CholSolve(ztz.RawMatrix(), zty.RawMatrix())
	return newRidge(be, fm, zty, mean, lambda), nil
}

func newRidge(be backend.Backend, fm kernels.FeatureMap, w *mat.Dense, mean []float64, lambda float64) *Ridge {
	r := &Ridge{fm: fm, w: w, mean: mean, lambda: lambda, be: be}
	r.pool.New = func() any { return new(ridgeScratch) }
	return r
}

// Kind returns "ridge".
func (r *Ridge) Kind() string { return KindRidge }

// InputDim is the map's input dimension d.
func (r *Ridge) InputDim() int { return r.fm.InputDim() }

// Outputs is the number of outputs k.
func (r *Ridge) Outputs() int { _, k := r.w.Dims(); return k }

// Map returns the feature map.
func (r *Ridge) Map() kernels.FeatureMap { return r.fm }

// Weights returns the D x k weights W (not a copy: do not modify).
func (r *Ridge) Weights() *mat.Dense { return r.w }

// Predict writes f(x_i) to the rows of dst (n x k). Batches of at most 32
// rows do not allocate after warm-up when the map's Transform does not.
// x is a *mat.Dense or a *dataset.CSR (passed to the map's Transform).
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k, or when x is
// neither a *mat.Dense nor a *dataset.CSR or a CSR with inconsistent parts;
// zonal.ErrRange for a CSR column index out of range; zonal.ErrNonFinite
// for NaN or Inf in x; the map's Transform errors.
func (r *Ridge) Predict(dst *mat.Dense, x mat.Matrix) error {
	d, k := r.InputDim(), r.Outputs()
	if err := checkPredict(dst, x, d, k); err != nil {
		return err
	}
	if err := checkFinite("features", x); err != nil {
		return err
	}
	n, _ := x.Dims()
	D := r.fm.Dim()
	if n <= smallBatch {
		s := r.pool.Get().(*ridgeScratch)
		defer r.pool.Put(s)
		if n == 0 {
			return nil
		}
		if s.z[n] == nil {
			s.z[n] = mat.NewDense(n, D, nil)
		}
		z := s.z[n]
		if err := r.fm.Transform(z, x); err != nil {
			return err
		}
		w := r.w.RawMatrix()
		for i := 0; i < n; i++ {
			out := rowOf(dst, i)
			copy(out, r.mean)
			for j, zj := range rowOf(z, i) {
				for t, v := range w.Data[j*w.Stride : j*w.Stride+k] {
					out[t] += zj * v
				}
			}
		}
		return nil
	}
	be := r.be
	bs := min(predictBlock, n)
	zb := mat.NewDense(bs, D, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		zv := zb.Slice(0, i1-i0, 0, D).(*mat.Dense)
		if err := r.fm.Transform(zv, rowRange(x, i0, i1)); err != nil {
			return err
		}
		dv := dst.Slice(i0, i1, 0, k).(*mat.Dense)
		fillRows(dv, r.mean)
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, zv.RawMatrix(), r.w.RawMatrix(), 1, dv.RawMatrix())
	}
	return nil
}

// MarshalBinary encodes the model for a model file: lambda, the feature
// map's kind and bytes, W and the output means.
//
// Errors: zonal.ErrParam when the map is not a kernels.PersistentMap; the
// map's MarshalBinary error.
func (r *Ridge) MarshalBinary() ([]byte, error) {
	pm, ok := r.fm.(kernels.PersistentMap)
	if !ok {
		return nil, fmt.Errorf("%w: feature map %T cannot be saved (not a kernels.PersistentMap)", zonal.ErrParam, r.fm)
	}
	mb, err := pm.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("solvers: encoding feature map %s: %w", pm.Kind(), err)
	}
	e := &enc{}
	e.f64(r.lambda)
	e.str(pm.Kind())
	e.bytes(mb)
	e.dense(r.w)
	e.floats(r.mean)
	return e.b, nil
}

// decodeRidge is the ModelDecoder of KindRidge.
func decodeRidge(data []byte, be backend.Backend) (Model, error) {
	d := &dec{b: data}
	lambda := d.f64("lambda")
	mk, mb := d.str("map kind"), d.bytes("map")
	w, mean := d.dense("weights"), d.floats("mean")
	if err := d.end(); err != nil {
		return nil, err
	}
	fm, err := kernels.UnmarshalMap(mk, mb)
	if err != nil {
		return nil, fmt.Errorf("%w: feature map: %w", zonal.ErrFormat, err)
	}
	D, k := w.Dims()
	if fm.Dim() != D || len(mean) != k {
		return nil, fmt.Errorf("%w: map has %d features, weights are %dx%d, mean %d", zonal.ErrFormat, fm.Dim(), D, k, len(mean))
	}
	return newRidge(be, fm, w, mean, lambda), nil
}

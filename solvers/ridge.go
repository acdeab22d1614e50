package solvers

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
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
	prec   zonal.Precision // of the features, at fit and prediction time
	be     backend.Backend // large-batch prediction; never nil
	wsum   float64         // sum of the fit's Options.Weights (or the loaded record's); 0: unweighted
	fitted bool            // fitted here (Diagnostics known), not loaded
	pool   sync.Pool       // *ridgeScratch
}

type ridgeScratch struct {
	z   [smallBatch + 1]*mat.Dense     // z[r] is r x D, allocated on first use
	z32 [smallBatch + 1]blas32.General // float32 models: z32[r] is r x D
}

// RidgeOptions configures FitRidge.
type RidgeOptions struct {
	// Options: Backend does the Gram products and the solve (and the
	// model's predictions); MemoryBudget bounds Z^T Z, Z^T Y and the
	// feature block; Progress receives a "features" report per block and
	// a "factor" report.
	Options
	// Precision of the feature blocks: zonal.Float64 (the default) or
	// zonal.Float32. With Float32 each block Z_b comes from
	// kernels.Transform32 (float32 products where the map has them), is
	// stored in float32 (4 bytes an entry, so the same MemoryBudget holds a
	// block of twice the rows), and its Z_b^T Z_b (backend.Ssyrk) and Z_b^T
	// Y_b (backend.Sgemm, Y_b rounded) are formed in float32 and added into
	// float64 accumulators; the solve and the weights stay float64. The
	// model records the precision and predicts from float32 features too
	// (see Ridge.Predict).
	Precision zonal.Precision
}

// Row blocks of FitRidge: at most ridgeBlock rows in float64 and
// ridgeBlock32 in float32, fewer when the budget is tight. The float32 cap
// bounds the error of a block's single-precision Gram: an entry of
// fl32(Z_b^T Z_b) is within gamma_bs sum_{r in b} |z_ri z_rj| of the exact
// sum of the float32 features, gamma_bs ~ bs u <= 6.1e-5 for bs = 1024 and
// u = 2^-24 (worst case; about sqrt(bs) u = 1.9e-6 for round-off of random
// sign). Across blocks the sums are float64, adding (n/bs) 2^-53 relative,
// so the error does not grow with n as a float32 sum of all n terms would
// (n u = 3.6e-3 at n = 60000). Adding each block's D x D result into the
// float64 sums costs D^2 operations per bs D^2 of the product, 0.1%.
const (
	ridgeBlock   = 2048
	ridgeBlock32 = 1024
)

// FitRidge fits ridge regression with k outputs (the columns of y) on the
// features fm(x). Z^T Z and Z^T Y are accumulated over row blocks (Syrk and
// Gemm on the backend; Ssyrk and Sgemm into float64 sums with
// opts.Precision = zonal.Float32, see RidgeOptions), so Z is never held
// whole: memory is D^2 + bs x D floats (float64 sums; a block of bs rows,
// bs <= 2048 in float64 and <= 1024 in float32, where the block's entries
// take 4 bytes and its D x D Gram 4 D^2 more). The D x D system is solved
// by Cholesky in float64 (with jitter escalation when lambda is tiny and
// Z^T Z singular). Linear algebra runs on opts.Backend, at prediction time
// too (the map's Transform uses its own).
//
// opts.Weights, when set, makes the fit weighted (see the package doc):
// each block's rows of Z and of Y - mean (centred by the weighted mean) are
// scaled by sqrt(w_i), so the sums are Z^T W Z and Z^T W (Y - mean), and
// the system is (Z^T W Z + lambda sum(w) I) W = Z^T W (Y - mean); rows of
// weight zero are skipped.
//
// Errors: zonal.ErrParam for a nil map, lambda not positive and finite, an
// unknown Precision, bad Weights (CheckWeights);
// zonal.ErrShape for nil inputs, x neither a *mat.Dense nor a *dataset.CSR,
// a CSR whose parts disagree with its shape, a label count other than the
// row count or a map whose input dimension is not x's column count;
// zonal.ErrRange for a CSR column index outside [0, d) or not increasing; zonal.ErrEmpty for no
// rows or columns; zonal.ErrNonFinite for NaN or Inf in x or y or in the
// features (in float32: also a feature beyond float32's range);
// zonal.ErrTooLarge when the working arrays exceed
// opts.MemoryBudget; zonal.ErrNotPositiveDefinite when a factorisation fails
// even with jitter; the map's Transform errors; ctx.Err() (wrapped) when
// canceled.
//
// x is a *mat.Dense or a *dataset.CSR (any other matrix type is refused);
// a CSR x is handed to fm.Transform (or kernels.Transform32) in row blocks
// of CSR views, never densified here (whether the map's Transform densifies
// a block is the map's business).
func FitRidge(ctx context.Context, fm kernels.FeatureMap, x mat.Matrix, y *mat.Dense, lambda float64, opts RidgeOptions) (*Ridge, error) {
	if fm == nil {
		return nil, fmt.Errorf("%w: nil feature map", zonal.ErrParam)
	}
	if err := opts.Precision.Check(); err != nil {
		return nil, err
	}
	_, d, k, err := checkXY(x, y)
	if err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	if fm.InputDim() != d {
		return nil, fmt.Errorf("%w: feature map takes %d inputs, data has %d columns", zonal.ErrShape, fm.InputDim(), d)
	}
	x, y, rw, err := prepareWeights(x, y, opts.Weights)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	D := fm.Dim()
	be := opts.backend()
	limit := budget.Or(opts.MemoryBudget)
	f32 := opts.Precision == zonal.Float32
	// The float64 sums Z^T Z and Z^T Y; in float32 also a block's D x D
	// Gram and D x k Z_b^T Y_b, and the fallback's float64 block when the
	// map has no Transform32 of its own. Per row of the block: D entries
	// of Z (and k of Y in float32).
	need := budget.Floats(D, D+k)
	rowBytes := budget.Floats(D)
	capRows := ridgeBlock
	if f32 {
		need = satAdd(need, budget.Floats(D, D+k)/2)
		if _, native := fm.(kernels.FeatureMap32); !native {
			need = satAdd(need, budget.Floats(min(n, 256), D)) // kernels.Transform32's 256-row float64 block
		}
		rowBytes = budget.Floats(D+k) / 2
		capRows = ridgeBlock32
	}
	if err := budget.Check(fmt.Sprintf("ridge on %d features (%v): Z^T Z and one row of features", D, opts.Precision), satAdd(need, rowBytes), limit); err != nil {
		return nil, err
	}
	bs := int(min((limit-need)/rowBytes, int64(capRows)))
	bs = max(1, min(bs, n))

	// Weighted: the rows of Z and of Y - mean scaled by sqrt(w_i), so that
	// the sums are Z^T W Z and Z^T W (Y - mean).
	yc, mean := centerTargets(y, rw.w)
	s := sqrtWeights(rw.w)
	scaleRows(yc.RawMatrix(), s)
	ztz := mat.NewDense(D, D, nil)
	zty := mat.NewDense(D, k, nil)
	block := ridgeBlock64(be, fm, yc, s, ztz, zty, bs)
	if f32 {
		block = ridgeBlockFloat32(be, fm, yc, s, ztz, zty, bs)
	}
	nblocks := (n + bs - 1) / bs
	for b, i0 := 0, 0; i0 < n; b, i0 = b+1, i0+bs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("solvers: ridge canceled: %w", err)
		}
		i1 := min(i0+bs, n)
		// A block (Transform, then a bs x D x D Syrk) can take seconds and
		// checks no context: it runs under interrupt.Do, so a cancellation
		// returns at once and the abandoned block finishes on its own.
		var berr error
		if err := interrupt.Do(ctx, func() { berr = block(x, i0, i1) }); err != nil {
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
	if _, err := factorWithJitter(ctx, be, ztz, lambda*rw.sum, "Z^T Z + lambda n I", fill); err != nil {
		return nil, err
	}
	opts.report(zonal.Progress{Stage: "factor", Done: 1, Total: 1})
	be.CholSolve(ztz.RawMatrix(), zty.RawMatrix())
	r := newRidge(be, fm, zty, mean, lambda)
	r.fitted = true
	r.prec = opts.Precision
	r.wsum = rw.given
	return r, nil
}

// ridgeBlock64 returns the float64 block step of FitRidge: the features of
// rows [i0, i1) into a bs x D block, its rows scaled by s (when not nil:
// the square roots of the weights, yc already scaled), then Z_b^T Z_b and
// Z_b^T Y_b added into ztz and zty.
func ridgeBlock64(be backend.Backend, fm kernels.FeatureMap, yc *mat.Dense, s []float64, ztz, zty *mat.Dense, bs int) func(x mat.Matrix, i0, i1 int) error {
	D, k := zty.Dims()
	zb := mat.NewDense(bs, D, nil)
	return func(x mat.Matrix, i0, i1 int) error {
		zv := zb
		if i1-i0 != bs {
			zv = zb.Slice(0, i1-i0, 0, D).(*mat.Dense)
		}
		if err := fm.Transform(zv, rowRange(x, i0, i1)); err != nil {
			return fmt.Errorf("solvers: feature map on rows %d..%d: %w", i0, i1-1, err)
		}
		if err := checkFinite("features", zv); err != nil {
			return err
		}
		if s != nil {
			scaleRows(zv.RawMatrix(), s[i0:i1])
		}
		be.Syrk(blas.Trans, 1, zv.RawMatrix(), 1, ztz.RawMatrix())
		yv := yc.Slice(i0, i1, 0, k).(*mat.Dense)
		be.Gemm(blas.Trans, blas.NoTrans, 1, zv.RawMatrix(), yv.RawMatrix(), 1, zty.RawMatrix())
		return nil
	}
}

// ridgeBlockFloat32 is ridgeBlock64 in mixed precision (RidgeOptions; the
// weights' square roots rounded to float32 scale the float32 rows): the
// block's features by kernels.Transform32, its Gram by backend.Ssyrk and
// Z_b^T Y_b by backend.Sgemm on Y_b rounded to float32, both widened and
// added into the float64 ztz and zty.
func ridgeBlockFloat32(be backend.Backend, fm kernels.FeatureMap, yc *mat.Dense, s []float64, ztz, zty *mat.Dense, bs int) func(x mat.Matrix, i0, i1 int) error {
	D, k := zty.Dims()
	zb := newGeneral32(bs, D)
	yb := newGeneral32(bs, k)
	g32 := newGeneral32(D, D)
	t32 := newGeneral32(D, k)
	return func(x mat.Matrix, i0, i1 int) error {
		zv, yv := rows32(zb, 0, i1-i0), rows32(yb, 0, i1-i0)
		if err := kernels.Transform32(fm, zv, rowRange(x, i0, i1)); err != nil {
			return fmt.Errorf("solvers: feature map on rows %d..%d: %w", i0, i1-1, err)
		}
		if err := checkFinite32("float32 features", zv, i0); err != nil {
			return err
		}
		if s != nil {
			for i := 0; i < i1-i0; i++ {
				si := float32(s[i0+i])
				row := zv.Data[i*zv.Stride : i*zv.Stride+D]
				for j := range row {
					row[j] *= si
				}
			}
		}
		for i := 0; i < i1-i0; i++ {
			for j, v := range rowOf(yc, i0+i) {
				yv.Data[i*yv.Stride+j] = float32(v)
			}
		}
		backend.Ssyrk(be, blas.Trans, 1, zv, 0, g32)
		backend.Sgemm(be, blas.Trans, blas.NoTrans, 1, zv, yv, 0, t32)
		addWidened(ztz.RawMatrix(), g32)
		addWidened(zty.RawMatrix(), t32)
		return nil
	}
}

// checkFinite32 is checkFinite for a float32 block whose row 0 is row i0
// of the data: an Inf there may also be a feature that overflowed float32.
func checkFinite32(what string, g blas32.General, i0 int) error {
	for i := 0; i < g.Rows; i++ {
		for j, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%w: %s row %d column %d is %g", zonal.ErrNonFinite, what, i0+i, j, f)
			}
		}
	}
	return nil
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

// WeightSum is the sum of the Options.Weights the model was fitted with:
// 0 for an unweighted fit; for a loaded model the Sum of the pipeline's
// recorded TrainingWeights (0 when the file records none).
func (r *Ridge) WeightSum() float64 { return r.wsum }

func (r *Ridge) setWeightSum(s float64) { r.wsum = s }

// Map returns the feature map.
func (r *Ridge) Map() kernels.FeatureMap { return r.fm }

// Weights returns the D x k weights W (not a copy: do not modify).
func (r *Ridge) Weights() *mat.Dense { return r.w }

// Precision is the precision of the model's features: zonal.Float32 when
// fitted with RidgeOptions.Precision = zonal.Float32 (or loaded from such a
// model's file); its predictions then use float32 features too.
func (r *Ridge) Precision() zonal.Precision { return r.prec }

// Predict writes f(x_i) to the rows of dst (n x k). Batches of at most 32
// rows do not allocate after warm-up when the map's Transform does not.
// x is a *mat.Dense or a *dataset.CSR (passed to the map's Transform).
//
// A float32 model (Precision) computes the features by kernels.Transform32,
// as at fit time, and widens them to float64 for the product with W (in
// strips of 64 rows for large batches): the weights, which may be large and
// of both signs, are not rounded, and the product (D k per row) costs little
// next to the features (d D or more per row), so float32 would save little.
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
	f32 := r.prec == zonal.Float32
	if n <= smallBatch {
		s := r.pool.Get().(*ridgeScratch)
		defer r.pool.Put(s)
		if n == 0 {
			return nil
		}
		w := r.w.RawMatrix()
		if f32 {
			if s.z32[n].Data == nil {
				s.z32[n] = newGeneral32(n, D)
			}
			z := s.z32[n]
			if err := kernels.Transform32(r.fm, z, x); err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				out := rowOf(dst, i)
				copy(out, r.mean)
				for j, zj := range z.Data[i*D : (i+1)*D] {
					for t, v := range w.Data[j*w.Stride : j*w.Stride+k] {
						out[t] += float64(zj) * v
					}
				}
			}
			return nil
		}
		if s.z[n] == nil {
			s.z[n] = mat.NewDense(n, D, nil)
		}
		z := s.z[n]
		if err := r.fm.Transform(z, x); err != nil {
			return err
		}
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
	if f32 {
		return r.predict32(dst, x)
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

// predict32 is Predict's large-batch path for a float32 model: float32
// feature blocks of predictBlock rows, widened predictWiden rows at a time
// for a float64 product with W.
func (r *Ridge) predict32(dst *mat.Dense, x mat.Matrix) error {
	n, _ := x.Dims()
	D, k := r.w.Dims()
	bs := min(predictBlock, n)
	zb := newGeneral32(bs, D)
	wide := mat.NewDense(min(predictWiden, bs), D, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		zv := rows32(zb, 0, i1-i0)
		if err := kernels.Transform32(r.fm, zv, rowRange(x, i0, i1)); err != nil {
			return err
		}
		productWidened(r.be, dst.Slice(i0, i1, 0, k).(*mat.Dense), zv, r.w, r.mean, wide)
	}
	return nil
}

// MarshalBinary encodes the model for a model file: lambda, the feature
// map's kind and bytes, W and the output means, then only for a float32
// model the precision section (the byte 1, then the precision byte); a
// float64 model is encoded exactly as before precisions existed, so its
// files stay format version 1.
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
	e.precision(ridgePrecisionTag, r.prec)
	return e.b, nil
}

// decodeRidge is the ModelDecoder of KindRidge.
func decodeRidge(data []byte, be backend.Backend) (Model, error) {
	d := &dec{b: data}
	lambda := d.f64("lambda")
	mk, mb := d.str("map kind"), d.bytes("map")
	w, mean := d.dense("weights"), d.floats("mean")
	prec := zonal.Float64
	if d.err == nil && len(d.b) > 0 {
		if tag := d.u8("section tag"); tag != ridgePrecisionTag {
			d.fail("unknown ridge section %d", tag)
		}
		prec = d.precisionValue()
	}
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
	r := newRidge(be, fm, w, mean, lambda)
	r.prec = prec
	return r, nil
}

// ridgePrecisionTag opens the precision section of a float32 ridge model.
const ridgePrecisionTag = 1

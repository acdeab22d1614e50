package solvers

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// KindKRR is the model kind of KRR in model files.
const KindKRR = "krr"

func init() {
	RegisterModel(KindKRR, expansionDecoder(func(lambda float64, e *expansion) Model {
		return &KRR{exp: e, lambda: lambda}
	}))
}

// KRR is exact kernel ridge regression: f(x) = mean + K(x, X) alpha with
// (K + lambda n I) alpha = Y - mean.
type KRR struct {
	exp    *expansion
	lambda float64
	jitter float64
	wsum   float64 // sum of the fit's Options.Weights (or the loaded record's); 0: unweighted
	fitted bool    // fitted here (Diagnostics known), not loaded
}

// FitKRR fits exact KRR by a Cholesky factorisation of K + lambda n I (the
// convention of the package doc: lambda multiplies n). The n x n kernel
// matrix must fit opts.MemoryBudget, otherwise FitKRR refuses with an error
// wrapping zonal.ErrTooLarge that names the bytes needed. If the factorisation fails
// (lambda n below the rounding level of K) a jitter of 1e-12..1e-4 times the
// mean diagonal is added in steps; past that the error wraps zonal.ErrNotPositiveDefinite.
// The training rows are kept as the expansion's centres (a copy, of the
// same storage as x; rows of weight zero are left out).
//
// opts.Weights, when set, makes the fit weighted (see the package doc):
// with W = diag(w) and S = W^(1/2) it factors S K S + lambda sum(w) I and
// alpha = S beta, the symmetric form of (W K + lambda sum(w) I) alpha =
// W (Y - mean); the targets are centred by their weighted mean. Linear algebra runs on opts.Backend, at prediction
// time too.
//
// x is a *mat.Dense or a *dataset.CSR (any other matrix type is refused).
// A CSR x is never densified: its row blocks are CSR views handed to
// kernels.MatrixInto, the centres kept in the model are its rows as a CSR
// (dataset.CSR.Subset), and the model predicts dense and CSR rows alike.
//
// Errors: zonal.ErrParam for a nil kernel, lambda not positive and finite,
// bad Weights (CheckWeights);
// zonal.ErrShape for nil inputs, x neither a *mat.Dense nor a *dataset.CSR,
// a CSR whose parts disagree with its shape, or a label count other than the
// row count; zonal.ErrRange for a CSR column index outside [0, d) or not
// increasing within its row;
// zonal.ErrEmpty for no rows or columns; zonal.ErrNonFinite for NaN or Inf in
// x or y; zonal.ErrTooLarge when the working arrays exceed opts.MemoryBudget;
// zonal.ErrNotPositiveDefinite when a factorisation fails even with jitter;
// the kernel's errors; ctx.Err() (wrapped) when canceled.
//
// kernels.CheckScale runs before anything is formed: zonal.ErrNonFinite for
// features so large that the kernel values overflow, zonal.ErrParam for a
// kernel that underflows to 0 between all (sampled) rows, both naming the
// kernel and the data's scale.
func FitKRR(ctx context.Context, k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambda float64, opts Options) (*KRR, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if _, _, _, err := checkXY(x, y); err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	x, y, rw, err := prepareWeights(x, y, opts.Weights)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if err := kernels.CheckScale(k, x); err != nil {
		return nil, err
	}
	limit := budget.Or(opts.MemoryBudget)
	need := int64(n) * int64(n) * 8
	if need > limit {
		return nil, fmt.Errorf("%w: exact KRR on %d rows needs %s for the kernel matrix, the memory budget is %s (use -method falkon, or a larger -memory)",
			zonal.ErrTooLarge, n, budget.Format(need), budget.Format(limit))
	}
	be := opts.backend()
	yc, mean := centerTargets(y, rw.w)
	// Weighted (package doc): alpha = S beta with S = W^(1/2) and
	// (S K S + lambda sum(w) I) beta = S (Y - mean), the symmetric form of
	// (W K + lambda sum(w) I) alpha = W (Y - mean).
	s := sqrtWeights(rw.w)
	kmat := mat.NewDense(n, n, nil)
	fill := func(a *mat.Dense) error {
		opts.report(zonal.Progress{Stage: "kernel", Done: 0, Total: 1})
		if err := kernels.MatrixInto(ctx, a, k, x, x, kernels.Options{Backend: be}); err != nil {
			return err
		}
		scaleRowsCols(a, s)
		opts.report(zonal.Progress{Stage: "kernel", Done: 1, Total: 1})
		return ctx.Err()
	}
	jit, err := factorWithJitter(ctx, be, kmat, lambda*rw.sum, "K + lambda n I", fill)
	if err != nil {
		return nil, err
	}
	opts.report(zonal.Progress{Stage: "factor", Done: 1, Total: 1})
	scaleRows(yc.RawMatrix(), s)
	be.CholSolve(kmat.RawMatrix(), yc.RawMatrix())
	scaleRows(yc.RawMatrix(), s)
	xc := copyInput(x)
	return &KRR{exp: newExpansion(be, k, xc, yc, mean), lambda: lambda, jitter: jit, wsum: rw.given, fitted: true}, nil
}

// Kind returns "krr".
func (m *KRR) Kind() string { return KindKRR }

// InputDim is d.
func (m *KRR) InputDim() int { _, d, _ := m.exp.dims(); return d }

// Outputs is k.
func (m *KRR) Outputs() int { _, _, k := m.exp.dims(); return k }

// WeightSum is the sum of the Options.Weights the model was fitted with:
// 0 for an unweighted fit; for a loaded model the Sum of the pipeline's
// recorded TrainingWeights (0 when the file records none).
func (m *KRR) WeightSum() float64 { return m.wsum }

func (m *KRR) setWeightSum(s float64) { m.wsum = s }

// Jitter is the diagonal jitter the factorisation needed (0 normally).
func (m *KRR) Jitter() float64 { return m.jitter }

// Alpha returns the n x k coefficients (not a copy).
func (m *KRR) Alpha() *mat.Dense { return m.exp.alpha }

// Predict writes f(x_i) to the rows of dst; batches of at most 32 rows do not
// allocate after warm-up when x and the centres are dense (with the Gaussian
// kernel the first such batch keeps the centres' squared norms and, up to
// 32 MiB, their transpose, from which rows with zeros read only the rows
// they need). x is a *mat.Dense
// or a *dataset.CSR (CSR rows, or any rows against CSR centres, go through
// kernel blocks: dense rows are then converted to CSR, never the reverse).
//
// Errors: zonal.ErrShape unless x is n x d and dst n x k, or when x is
// neither a *mat.Dense nor a *dataset.CSR or a CSR with inconsistent parts;
// zonal.ErrRange for a CSR column index out of range; zonal.ErrNonFinite
// for NaN or Inf in x; the kernel's errors.
func (m *KRR) Predict(dst *mat.Dense, x mat.Matrix) error { return predictExpansion(m.exp, dst, x) }

func predictExpansion(e *expansion, dst *mat.Dense, x mat.Matrix) error {
	_, d, k := e.dims()
	if err := checkPredict(dst, x, d, k); err != nil {
		return err
	}
	if err := checkFinite("features", x); err != nil {
		return err
	}
	n, _ := x.Dims()
	if xd, ok := x.(*mat.Dense); ok && n <= smallBatch && e.denseCenters() {
		for i := 0; i < n; i++ {
			e.predictRow(rowOf(dst, i), rowOf(xd, i))
		}
		return nil
	}
	if n == 0 {
		return nil
	}
	return e.predictBatch(dst, x)
}

// MarshalBinary encodes the model for a model file: lambda, the kernel's
// kind and parameters, the training rows, alpha and the output means.
//
// Errors: the kernel's MarshalBinary error.
func (m *KRR) MarshalBinary() ([]byte, error) { return marshalExpansionModel(m.lambda, m.exp) }

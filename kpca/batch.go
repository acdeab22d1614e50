package kpca

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/interrupt"
	"github.com/zonal-ml/zonal/kernels"
)

// Model is a fitted kernel PCA: the top k eigenpairs of K' (or K) and what is
// needed to project new points. It is immutable and safe for concurrent use,
// and it is a kernels.FeatureMap whose features are the k scores.
type Model struct {
	kernel   kernels.Kernel
	b        backend.Backend
	x        *mat.Dense // n x d training points
	centred  bool
	rowMean  []float64 // s_i / n
	mean2    float64   // S / n^2
	trace    float64   // trace of the decomposed matrix (total variance * n)
	vals     []float64 // descending, k of them
	vecs     *mat.Dense
	proj     *mat.Dense // n x k: U_j / sqrt(lambda_j), zero column when lambda_j <= tol
	nullTol  float64
	nonzeros int
}

// Fit computes batch kernel PCA of the rows of x: the eigendecomposition of
// the (optionally centred) kernel matrix through the backend, keeping the top
// opts.Components eigenpairs (0: all). It honours ctx while the kernel
// matrix is formed, and returns ctx.Err() at once when ctx is canceled during
// the O(n^3) step (which then finishes in the background);
// and reports progress of Stage "kernel" and "eigen" to opts.Progress.
//
// Errors: zonal.ErrParam (nil kernel, a negative or NaN option),
// zonal.ErrEmpty (no rows or columns), zonal.ErrNonFinite (NaN or Inf in x
// or the kernel matrix), zonal.ErrTooLarge (the n x n matrices exceed
// opts.MemoryBudget), ctx.Err(), and backend errors from the
// eigendecomposition (zonal.ErrNoConvergence).
func Fit(ctx context.Context, k kernels.Kernel, x mat.Matrix, opts Options) (*Model, error) {
	if k == nil {
		return nil, fmt.Errorf("kpca: nil kernel: %w", zonal.ErrParam)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("kpca: %dx%d input: %w", n, d, zonal.ErrEmpty)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	// The kernel matrix, its eigenvectors and the model's two n x k copies.
	kk := n
	if opts.Components > 0 {
		kk = min(n, opts.Components)
	}
	if err := opts.checkBudget(fmt.Sprintf("kernel PCA of %d points", n), budget.Floats(2, n, n)+budget.Floats(2, n, kk)); err != nil {
		return nil, err
	}
	b := opts.backend()
	xd := mat.DenseCopyOf(x)
	if err := checkFinite(xd); err != nil {
		return nil, err
	}
	opts.report("kernel", 0, 1)
	km := mat.NewDense(n, n, nil)
	if err := kernels.MatrixInto(ctx, km, k, xd, xd, kernels.Options{Backend: b}); err != nil {
		return nil, fmt.Errorf("kpca: kernel matrix: %w", err)
	}
	if err := checkFinite(km); err != nil {
		return nil, err
	}
	symmetrize(km.RawMatrix())
	opts.report("kernel", 1, 1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rowSum := make([]float64, n)
	total := 0.0
	for i := 0; i < n; i++ {
		for _, v := range km.RawRowView(i) {
			rowSum[i] += v
		}
		total += rowSum[i]
	}
	if opts.MeanAdjust {
		centreInPlace(km.RawMatrix(), rowSum, total)
	}
	trace := mat.Trace(km)
	w := make([]float64, n)
	raw := km.RawMatrix()
	opts.report("eigen", 0, 1)
	// The O(n^3) step cannot check ctx itself: a cancellation returns at
	// once and leaves it to finish on its own.
	var eigErr error
	if err := interrupt.Do(ctx, func() { eigErr = b.SymEig(raw, w, true) }); err != nil {
		return nil, err
	}
	if eigErr != nil {
		return nil, fmt.Errorf("kpca: eigendecomposition: %w", eigErr)
	}
	opts.report("eigen", 1, 1)
	vals := make([]float64, n)
	vecs := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		vals[j] = w[n-1-j]
		for i := 0; i < n; i++ {
			vecs.Set(i, j, raw.Data[i*raw.Stride+n-1-j])
		}
	}
	return newModel(k, b, xd, opts.MeanAdjust, rowSum, total, trace, vals, vecs, opts.Components)
}

// centreInPlace turns K into H K H given its row sums and total.
func centreInPlace(g blas64.General, rowSum []float64, total float64) {
	n := g.Rows
	fn := float64(n)
	mean2 := total / (fn * fn)
	for i := 0; i < n; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+n]
		ri := rowSum[i] / fn
		for j := range row {
			row[j] += mean2 - ri - rowSum[j]/fn
		}
	}
}

func newModel(k kernels.Kernel, b backend.Backend, x *mat.Dense, centred bool, rowSum []float64, total, trace float64, vals []float64, vecs *mat.Dense, components int) (*Model, error) {
	n, _ := x.Dims()
	kk := len(vals)
	if components > 0 && components < kk {
		kk = components
	}
	fn := float64(n)
	m := &Model{kernel: k, b: b, x: x, centred: centred, trace: trace,
		rowMean: make([]float64, n), mean2: total / (fn * fn),
		vals: append([]float64(nil), vals[:kk]...)}
	for i := range m.rowMean {
		m.rowMean[i] = rowSum[i] / fn
	}
	m.vecs = mat.DenseCopyOf(vecs.Slice(0, n, 0, kk))
	lmax := 0.0
	if len(vals) > 0 {
		lmax = math.Abs(vals[0])
	}
	m.nullTol = float64(n) * 0x1p-52 * lmax
	m.setProjection()
	return m, nil
}

// Eigenvalues returns the kept eigenvalues of the decomposed matrix K' (or K),
// descending.
func (m *Model) Eigenvalues() []float64 { return append([]float64(nil), m.vals...) }

// Components returns the n x k eigenvectors U (columns, descending order).
func (m *Model) Components() *mat.Dense { return mat.DenseCopyOf(m.vecs) }

// ExplainedVariance returns lambda_j / n, the variance in feature space along
// each principal axis.
func (m *Model) ExplainedVariance() []float64 {
	n, _ := m.x.Dims()
	out := make([]float64, len(m.vals))
	for j, v := range m.vals {
		out[j] = v / float64(n)
	}
	return out
}

// ExplainedVarianceRatio returns lambda_j / trace(K'), the fraction of the
// total feature-space variance along each kept axis.
func (m *Model) ExplainedVarianceRatio() []float64 {
	out := make([]float64, len(m.vals))
	if m.trace <= 0 {
		return out
	}
	for j, v := range m.vals {
		out[j] = v / m.trace
	}
	return out
}

// InputDim returns the dimension of the points.
func (m *Model) InputDim() int { _, d := m.x.Dims(); return d }

// Dim returns the number of kept components k.
func (m *Model) Dim() int { return len(m.vals) }

// kernelRows returns the centred (if the model is) kernel matrix between the
// rows of x (p x d) and the training points, p x n.
func (m *Model) kernelRows(x mat.Matrix) (*mat.Dense, []float64, error) {
	p, d := x.Dims()
	n, dd := m.x.Dims()
	if d != dd {
		return nil, nil, fmt.Errorf("kpca: %d columns, want %d: %w", d, dd, zonal.ErrShape)
	}
	if p == 0 {
		return nil, nil, fmt.Errorf("kpca: no rows: %w", zonal.ErrEmpty)
	}
	xd := mat.DenseCopyOf(x)
	if err := checkFinite(xd); err != nil {
		return nil, nil, err
	}
	kx := mat.NewDense(p, n, nil)
	if err := kernels.MatrixInto(context.Background(), kx, m.kernel, xd, m.x, kernels.Options{Backend: m.b}); err != nil {
		return nil, nil, fmt.Errorf("kpca: kernel rows: %w", err)
	}
	means := make([]float64, p)
	for r := 0; r < p; r++ {
		row := kx.RawRowView(r)
		s := 0.0
		for _, v := range row {
			s += v
		}
		means[r] = s / float64(n)
		if m.centred {
			for i := range row {
				row[i] += m.mean2 - means[r] - m.rowMean[i]
			}
		}
	}
	return kx, means, nil
}

// Transform writes the scores of the rows of x (p x d) on the k components to
// dst (p x k): score_j(x) = sum_i U_ij k~(x_i, x) / sqrt(lambda_j), k~ being
// the kernel centred with the training means when mean adjustment is on.
// Components whose eigenvalue is at most n*eps*lambda_max (numerically zero)
// get score 0. For a training point x_i, score_j = sqrt(lambda_j) U_ij.
// Errors: zonal.ErrShape (x's width or dst's size), zonal.ErrEmpty (no
// rows), zonal.ErrNonFinite (NaN or Inf in x).
func (m *Model) Transform(dst *mat.Dense, x mat.Matrix) error {
	p, _ := x.Dims()
	if r, c := dst.Dims(); r != p || c != len(m.vals) {
		return fmt.Errorf("kpca: dst is %dx%d, want %dx%d: %w", r, c, p, len(m.vals), zonal.ErrShape)
	}
	kx, _, err := m.kernelRows(x)
	if err != nil {
		return err
	}
	m.b.Gemm(blas.NoTrans, blas.NoTrans, 1, kx.RawMatrix(), m.proj.RawMatrix(), 0, dst.RawMatrix())
	return nil
}

// ReconstructionError returns, for each row x of the input, the squared
// feature-space distance between phi~(x) and its projection on the k kept
// axes, computed without a pre-image:
//
//	e(x) = k~(x, x) - sum_j score_j(x)^2,
//	k~(x, x) = k(x, x) - (2/n) sum_i k(x_i, x) + S/n^2 (centred; k(x,x) otherwise).
//
// Tiny negative values from rounding are clamped to 0. Errors as for
// Transform.
func (m *Model) ReconstructionError(x mat.Matrix) ([]float64, error) {
	kx, means, err := m.kernelRows(x)
	if err != nil {
		return nil, err
	}
	p, _ := kx.Dims()
	sc := mat.NewDense(p, max(len(m.vals), 1), nil)
	if len(m.vals) > 0 {
		m.b.Gemm(blas.NoTrans, blas.NoTrans, 1, kx.RawMatrix(), m.proj.RawMatrix(), 0, sc.RawMatrix())
	}
	_, d := m.x.Dims()
	row := make([]float64, d)
	out := make([]float64, p)
	for r := 0; r < p; r++ {
		mat.Row(row, r, x)
		kxx := m.kernel.Eval(row, row)
		if m.centred {
			kxx += m.mean2 - 2*means[r]
		}
		s := 0.0
		for j := 0; j < len(m.vals); j++ {
			v := sc.At(r, j)
			s += v * v
		}
		out[r] = math.Max(kxx-s, 0)
	}
	return out, nil
}

package solvers

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// LogisticOptions configures FitLogistic.
type LogisticOptions struct {
	Options
	// Centers is M, the number of Nystrom centres (1 <= M <= n), drawn
	// uniformly without replacement (Seed).
	Centers int
	// Seed drives the centre sampling.
	Seed uint64
	// Iterations caps the CG iterations of every Newton step. Zero means
	// automatic, as for FALKON: CG stops at the step's tolerance (see
	// FitLogistic), at the cap it derives from its condition estimate,
	// when it stalls, or at the ceiling 3 M + 50.
	Iterations int
	// NewtonSteps is the number of Newton steps at each lambda of the path
	// before the final lambda; zero means 2 (the warm start from the
	// previous lambda is close, and the path's only job is to bring the
	// iterate to where Newton converges fast).
	NewtonSteps int
	// MaxNewtonSteps caps the Newton steps at the final lambda; zero means
	// 50. The steps stop earlier at GradTol.
	MaxNewtonSteps int
	// GradTol is the relative gradient tolerance at the final lambda: the
	// fit has converged when the gradient norm is at most GradTol times the
	// norm of the gradient at alpha = 0. Zero means 1e-6. Each lambda
	// solved to it takes at least one Newton step (unless the gradient is
	// exactly zero): along a path the warm start's gradient is the change
	// of the penalty, (lambda' - lambda) u, which at small lambdas falls
	// below any tolerance relative to the gradient at alpha = 0, so
	// without the step the models of all the smaller lambdas would be the
	// same model (seen at GradTol 1e-4 on a 1%-positive set: equal
	// held-out log-losses at 1e-7, 1e-8 and 1e-9, where one step each
	// gives 0.0223, 0.0248 and 0.0453).
	GradTol float64
	// LambdaPath lists the lambdas solved before the final one, largest
	// first, each a warm start for the next; every entry must exceed the
	// final lambda and the list must decrease. nil means automatic: lambda
	// times 10^j for j = J, ..., 1, J the least with lambda 10^J >= 0.1 (a
	// lambda at which the regulariser dominates the loss's curvature,
	// at most 1/4, so that Newton from alpha = 0 converges in a few
	// steps); none for lambda >= 0.1. A non-nil empty slice means no path,
	// and so does nil with Start.
	LambdaPath []float64
	// Start, when not nil, is the warm start: the fit begins at Start's
	// solution (its alpha and intercept) instead of alpha = 0. Start must
	// be a model this package fitted (not a loaded one) with the same
	// kernel on the same rows, Centers and Seed, so that it has the same
	// centres, and with the same Intercept: a model of a FitLogisticPath
	// over other lambdas, say, to refine the path between two of its
	// lambdas from the larger one's solution. The fit refuses
	// (zonal.ParamError on "Start") a start loaded from a file or one
	// whose input dimension, outputs, centre count, training row count,
	// centre indices, intercept, centre rows (compared with the rows at
	// the centre indices) or kernel (kind and encoded parameters) differ
	// from the fit's; rows other than the centres are not recorded and
	// cannot be checked.
	Start *Logistic
	// Stop, when not nil, is called with each model of FitLogisticPath's
	// lambdas as soon as it is solved; true ends the path there, and
	// FitLogisticPath returns the models so far (a held-out loss that has
	// risen long enough, say: the smaller lambdas, the costliest to solve,
	// are not fitted).
	Stop func(m *Logistic) bool
	// Intercept is the logits' constant term. InterceptMean (and "") is
	// none: the logits are K(x, C) alpha alone and the expansion carries
	// the class balance (a logistic model has no target mean to centre by;
	// its constant, the model's stored means, is zero). InterceptFitted
	// adds one unpenalised constant b per output, fitted with alpha, as
	// scikit-learn's LogisticRegression(fit_intercept=True): see
	// FitLogistic.
	Intercept Intercept
}

// KindLogistic is the model kind of Logistic in model files.
const KindLogistic = "logistic"

func init() {
	RegisterModel(KindLogistic, expansionDecoder(func(lambda float64, e *expansion) Model {
		return &Logistic{exp: e, lambda: lambda}
	}))
}

// Logistic is a kernel logistic classifier on Nystrom centres C: its
// outputs are the logits f(x) = K(x, C) alpha + b, one for a binary model
// (the log-odds of the larger class) and one per class for a multinomial
// one (softmax gives the probabilities); b is zero unless the fit had
// Intercept InterceptFitted. A Pipeline over it gives class
// probabilities without a calibration (Pipeline.HasProbabilities).
type Logistic struct {
	exp     *expansion
	lambda  float64
	idx     []int
	u       *mat.Dense // T alpha, the iterate (nil after loading): LogisticOptions.Start
	fitB    bool       // fitted with InterceptFitted
	rows    int        // the fit's row count (0 after loading): LogisticOptions.Start
	newton  NewtonResult
	kmmJit  float64
	caching bool
}

// NewtonResult reports the Newton iterations of a logistic fit.
type NewtonResult struct {
	// Steps is the number of Newton steps over the whole path, PathSteps
	// those at the lambdas before the final one.
	Steps, PathSteps int
	// CGIterations is the total of the CG iterations of all steps, and
	// CGCap the largest per-step iteration bound in force.
	CGIterations, CGCap int
	// Automatic is true when the CG caps were automatic.
	Automatic bool
	// Gradient is the final relative gradient norm at the final lambda
	// (see LogisticOptions.GradTol), Tol the tolerance.
	Gradient, Tol float64
	// Converged is true when Gradient <= Tol.
	Converged bool
	// Stalled is true when the line search found no decrease of the
	// objective before Tol was met (rounding limits the accuracy).
	Stalled bool
	// Objective is the final value of the objective at the final lambda.
	Objective float64
	// Path is the lambdas solved, the final one last.
	Path []float64
}

// logisticLoss is the loss of one row: binary (one logit, target +-1) or
// multinomial (K logits, target class c).
type logisticLoss struct {
	K   int
	y   []float64 // binary: +-1 per row
	cls []int     // multinomial: class per row
	w   []float64 // normalised row weights, sum 1
}

// value is sum_i w_i loss_i at the logits F + t Fd (Fd nil: t ignored).
func (l *logisticLoss) value(F, Fd *mat.Dense, t float64, row []float64) float64 {
	n, _ := F.Dims()
	s := 0.0
	for i := 0; i < n; i++ {
		if l.w[i] == 0 {
			continue
		}
		f := rowOf(F, i)
		if Fd != nil {
			d := rowOf(Fd, i)
			for j := range row {
				row[j] = f[j] + t*d[j]
			}
			f = row
		}
		s += l.w[i] * l.rowLoss(i, f)
	}
	return s
}

// slope is sum_i w_i grad loss_i(F_i + t Fd_i) . Fd_i, the derivative in
// t of value (row, p: scratch of length K).
func (l *logisticLoss) slope(F, Fd *mat.Dense, t float64, row, p []float64) float64 {
	n, _ := F.Dims()
	s := 0.0
	for i := 0; i < n; i++ {
		if l.w[i] == 0 {
			continue
		}
		f, d := rowOf(F, i), rowOf(Fd, i)
		for j := range row {
			row[j] = f[j] + t*d[j]
		}
		if l.K == 1 {
			y := l.y[i]
			s -= l.w[i] * y * calibrate.Sigmoid(-y*row[0]) * d[0]
			continue
		}
		softmaxInto(p, row)
		g := -d[l.cls[i]]
		for j, v := range p {
			g += v * d[j]
		}
		s += l.w[i] * g
	}
	return s
}

// rowLoss is the loss of row i at logits f: log(1 + exp(-y f)) or
// logsumexp(f) - f_c, both computed without overflow.
func (l *logisticLoss) rowLoss(i int, f []float64) float64 {
	if l.K == 1 {
		return calibrate.Softplus(-l.y[i] * f[0])
	}
	return logSumExp(f) - f[l.cls[i]]
}

// derivs writes to D the rows w_i d loss_i / d f at the logits F and to P
// what the Hessian products need: binary sigma(f)(1 - sigma(f)), the
// curvature; multinomial the probabilities softmax(f).
func (l *logisticLoss) derivs(D, P, F *mat.Dense) {
	n, _ := F.Dims()
	for i := 0; i < n; i++ {
		f, d, p := rowOf(F, i), rowOf(D, i), rowOf(P, i)
		if l.K == 1 {
			// d/df log(1 + exp(-y f)) = -y sigma(-y f).
			y := l.y[i]
			s := calibrate.Sigmoid(-y * f[0])
			d[0] = -l.w[i] * y * s
			p[0] = s * (1 - s)
			continue
		}
		softmaxInto(p, f)
		for j := range d {
			d[j] = l.w[i] * p[j]
		}
		d[l.cls[i]] -= l.w[i]
	}
}

// hessRows replaces the rows i0.. of G (G_i = K_i V, the logits' change in
// a direction V) by w_i H_i G_i, H_i the Hessian of loss_i in f: binary
// the curvature times G_i; multinomial (diag(p_i) - p_i p_i^T) G_i =
// p_i * G_i - p_i (p_i . G_i), which needs no K x K block.
func (l *logisticLoss) hessRows(i0 int, G blas64.General, P *mat.Dense) {
	for r := 0; r < G.Rows; r++ {
		g := G.Data[r*G.Stride : r*G.Stride+G.Cols]
		i := i0 + r
		p := rowOf(P, i)
		w := l.w[i]
		if l.K == 1 {
			g[0] *= w * p[0]
			continue
		}
		dot := 0.0
		for j, v := range g {
			dot += p[j] * v
		}
		for j := range g {
			g[j] = w * p[j] * (g[j] - dot)
		}
	}
}

// centreCurvature writes the curvature weights of the preconditioner at
// the centres idx: n w_i times the curvature (binary) or the mean over the
// classes of p_ic (1 - p_ic) (multinomial: the mean diagonal of the K x K
// Hessian block diag(p) - p p^T, i.e. its mean eigenvalue, one weight for
// the one M x M preconditioner every output shares; on digits, 10
// classes, the largest diagonal entry instead took 1.5 times the CG
// iterations).
func (l *logisticLoss) centreCurvature(dst []float64, idx []int, P *mat.Dense) {
	n := float64(len(l.w))
	for j, i := range idx {
		p := rowOf(P, i)
		c := p[0]
		if l.K > 1 {
			c = 0
			for _, v := range p {
				c += v * (1 - v)
			}
			c /= float64(l.K)
		}
		dst[j] = n * l.w[i] * c
	}
}

func logSumExp(f []float64) float64 {
	m := math.Inf(-1)
	for _, v := range f {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range f {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// softmaxInto writes softmax(f) to p (the largest logit subtracted first).
func softmaxInto(p, f []float64) {
	m := math.Inf(-1)
	for _, v := range f {
		m = math.Max(m, v)
	}
	s := 0.0
	for j, v := range f {
		p[j] = math.Exp(v - m)
		s += p[j]
	}
	for j := range p {
		p[j] /= s
	}
}

// newLogisticLoss reads the encoded targets y (n x K): K = 1 entries +-1;
// K >= 2 one entry +1 per row (the class) and -1 elsewhere, as
// Encoding.Targets writes them. w are the row weights (nil: all 1).
func newLogisticLoss(y *mat.Dense, w []float64) (*logisticLoss, error) {
	n, K := y.Dims()
	l := &logisticLoss{K: K, w: make([]float64, n)}
	if K == 1 {
		l.y = make([]float64, n)
	} else {
		l.cls = make([]int, n)
	}
	for i := 0; i < n; i++ {
		row := rowOf(y, i)
		c := -1
		for j, v := range row {
			switch {
			case v == 1 && K > 1 && c >= 0:
				return nil, fmt.Errorf("%w: logistic target row %d has more than one +1 (a class per row)", zonal.ErrParam, i)
			case v == 1:
				c = j
			case v != -1:
				return nil, fmt.Errorf("%w: logistic target row %d column %d is %g, want -1 or +1 (solvers.Encoding.Targets of a classification)", zonal.ErrParam, i, j, v)
			}
		}
		if K == 1 {
			l.y[i] = row[0]
			continue
		}
		if c < 0 {
			return nil, fmt.Errorf("%w: logistic target row %d has no +1 (a class per row)", zonal.ErrParam, i)
		}
		l.cls[i] = c
	}
	sum, err := CheckWeights(w, n)
	if err != nil {
		return nil, err
	}
	for i := range l.w {
		if w == nil {
			l.w[i] = 1 / sum
		} else {
			l.w[i] = w[i] / sum
		}
	}
	return l, nil
}

// LogisticLoss is the loss FitLogistic minimises, without its penalty:
// the weighted mean over the rows of the logistic (one column) or softmax
// loss of the logits out (n x K, as a Logistic model predicts them) at the
// encoded targets y (n x K, as FitLogistic takes them), w the row weights
// (nil: all 1). On held-out rows it is the mean log-loss of the model's
// probabilities, computed from the logits without rounding them to
// probabilities first.
//
// Errors: zonal.ErrShape for nil matrices or shapes that differ;
// zonal.ErrNonFinite for NaN or Inf in out; the targets' and weights'
// errors of FitLogistic.
func LogisticLoss(out, y *mat.Dense, w []float64) (float64, error) {
	if out == nil || y == nil {
		return 0, fmt.Errorf("%w: nil matrix", zonal.ErrShape)
	}
	n, K := out.Dims()
	if r, c := y.Dims(); r != n || c != K {
		return 0, fmt.Errorf("%w: %d x %d logits for %d x %d targets", zonal.ErrShape, n, K, r, c)
	}
	if err := checkFinite("logits", out); err != nil {
		return 0, err
	}
	l, err := newLogisticLoss(y, w)
	if err != nil {
		return 0, err
	}
	return l.value(out, nil, 0, nil), nil
}

// knmBlocks walks K_nM in row blocks: cached whole, or recomputed a block
// at a time.
type knmBlocks struct {
	be      backend.Backend
	k       kernels.Kernel
	x       mat.Matrix
	centers mat.Matrix
	n, M, K int
	knm     *mat.Dense // cached K_nM, or nil
	kb      *mat.Dense // block scratch when streaming
	tmp     *mat.Dense // bs x K
	bs      int
}

// pass visits the row blocks: blk = K_b in (in nil: blk zeroed), then
// row(i0, blk) may rewrite blk, then out += K_b^T blk (out nil: no
// product). ctx is checked between blocks.
func (b *knmBlocks) pass(ctx context.Context, out, in *blas64.General, row func(i0 int, blk blas64.General)) error {
	if out != nil {
		zeroGeneral(*out)
	}
	for i0 := 0; i0 < b.n; i0 += b.bs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("solvers: logistic fit canceled: %w", err)
		}
		i1 := min(i0+b.bs, b.n)
		var kv *mat.Dense
		if b.knm != nil {
			kv = b.knm.Slice(i0, i1, 0, b.M).(*mat.Dense)
		} else {
			kv = b.kb.Slice(0, i1-i0, 0, b.M).(*mat.Dense)
			if err := kernels.MatrixInto(ctx, kv, b.k, rowRange(b.x, i0, i1), b.centers, kernels.Options{Backend: b.be}); err != nil {
				return err
			}
		}
		blk := b.tmp.Slice(0, i1-i0, 0, b.K).(*mat.Dense).RawMatrix()
		if in != nil {
			b.be.Gemm(blas.NoTrans, blas.NoTrans, 1, kv.RawMatrix(), *in, 0, blk)
		} else {
			zeroGeneral(blk)
		}
		row(i0, blk)
		if out != nil {
			b.be.Gemm(blas.Trans, blas.NoTrans, 1, kv.RawMatrix(), blk, 1, *out)
		}
	}
	return nil
}

// FitLogistic fits a kernel logistic classifier on M uniform Nystrom
// centres C by Newton's method with FALKON's preconditioner (Meanti,
// Carratino, Rosasco, Rudi 2020, "Kernel methods through the roof"). y
// holds the encoded targets of a classification (Encoding.Targets): one
// column of +-1 for two classes, the binary logistic loss
// log(1 + exp(-y f)) on one logit; K >= 2 columns with one +1 a row for K
// classes, the multinomial (softmax) loss logsumexp(f) - f_c on K logits.
// The model f = K(., C) alpha minimises
//
//	sum_i w_i loss(y_i, f(x_i)) / sum_i w_i + (lambda/2) ||T alpha||^2
//
// with w = opts.Weights (nil: all 1, the mean loss) and T^T T = K_MM + eps
// M I (FALKON's factor; eps = 1e-14 plus any jitter it needed, so the
// penalty is alpha^T K_MM alpha to rounding). Note the 1/2: this is the
// paper's objective; lambda does not mean what it means for the squared
// loss. By default there is no unpenalised intercept (unlike the
// squared-loss solvers' centred targets, the model's means are zero): the
// expansion carries the class balance, at the penalty's price, as in the
// paper.
//
// With opts.Intercept = InterceptFitted the logits are K_nM alpha + 1 b^T,
// b one unpenalised constant per output (scikit-learn's
// LogisticRegression(fit_intercept=True) on Nystrom features), and every
// Newton step solves for the step (delta, c) in (u, b) jointly: CG runs on
// the augmented unknown, the Hessian-vector product being
//
//	[T^-T K_Mn H (K_nM T^-1 delta + 1 c^T) + lambda delta ; 1^T H (K_nM T^-1 delta + 1 c^T)]
//
// (the b rows' change of logits added to every row before the curvature
// product, the b output the column sums after it: no extra pass over
// K_nM), preconditioned by A on the u block and by the inverse square root
// of its own diagonal, sum_i w_i h_i per output, on the b block. Joint
// steps rather than eliminating b (a W-weighted centring of K_nM's columns,
// as the squared loss does): the curvature W changes at every Newton step,
// so the centring would too, and the b block costs K numbers per CG
// product. Multinomial, the softmax ignores a constant added to all K
// logits, so the b block is singular along the all-ones direction: b is
// kept summing to zero (it starts so, the b part of CG's right-hand side
// and of every product are projected off the preconditioned all-ones
// direction, and every step's c is centred), which fixes the one free
// constant and leaves the probabilities unchanged. b starts at the logits
// of the weighted class priors (binary the log-odds, multinomial the
// centred log-priors, a class without rows at log 1e-12), where its own
// gradient is zero; the lambda path carries it from one lambda to the
// next. The gradient norm GradTol is measured on includes the b part (and
// so does its reference, the gradient at alpha = 0, b = 0). The model
// stores b where the squared loss stores its intercept, the expansion's
// means, so the model file is the same (a model without intercept writes
// zeros there, as before).
//
// The iterate is u = T alpha, in which the penalty is (lambda/2) ||u||^2
// and the Hessian T^-T K_Mn H K_nM T^-1 / sum w + lambda I, H the rows'
// loss curvatures. Each Newton step solves H_u delta = -g by CG,
// preconditioned by A with A^T A = T D T^T / M + lambda I, D the
// curvature at the centres (rebuilt at every step: the Nystrom
// approximation of the data term), to the relative tolerance
// min(0.1, sqrt(gradient ratio)) (an inexact Newton method: loose far from
// the solution, tight near it, converging superlinearly), then takes the
// largest step 2^-j along delta that decreases the objective enough
// (Armijo, 1e-4), so every step decreases it; near the solution, where
// the decrease falls below the objective's rounding, a step is taken when
// the directional derivative along delta has halved instead (computed
// from the logits, without that cancellation). The lambdas of the path are
// solved first, NewtonSteps each, each a warm start for the next; at the
// final lambda Newton runs until the relative gradient norm meets GradTol,
// MaxNewtonSteps, or the line search finds no decrease (Stalled).
//
// Each Newton step costs one pass over K_nM for the gradient, one per CG
// iteration and one for the step's logits, and an M^3/3 refactorization
// of A. K_nM is cached when it fits opts.MemoryBudget and recomputed in
// row blocks otherwise. x is a *mat.Dense or a *dataset.CSR (never
// densified).
//
// Errors: zonal.ErrParam for a nil kernel, lambda not positive and finite,
// Centers outside 1..n, negative option values, a LambdaPath that does not
// decrease or does not stay above lambda, a Start not fitted on these rows
// (see LogisticOptions.Start), targets other than an encoded
// classification, negative weights or weights that do not sum to a
// positive number; zonal.ErrShape for nil inputs, an unsupported x, a
// target or weight count other than the row count; zonal.ErrEmpty for no
// rows or columns; zonal.ErrNonFinite for NaN or Inf in x, y or the
// weights; zonal.ErrTooLarge when the working arrays exceed
// opts.MemoryBudget; zonal.ErrNotPositiveDefinite when a factorization
// fails even with jitter; the kernel's errors; ctx.Err() (wrapped) when
// canceled.
func FitLogistic(ctx context.Context, k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambda float64, opts LogisticOptions) (*Logistic, error) {
	path, idx, loss, err := checkLogistic(k, x, y, lambda, opts)
	if err != nil {
		return nil, err
	}
	ms, err := fitLogistic(ctx, k, x, loss, path, 1, idx, opts)
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// FitLogisticPath is FitLogistic at every lambda of lambdas (strictly
// decreasing), each solved to GradTol from the solution at the one before
// (opts.LambdaPath, automatic for nil, runs before the first and must lie
// above it): the models of a regularisation path at about the cost of
// its smallest lambda's fit, for choosing lambda on held-out rows. The
// models share their centres. opts.Stop may end the path early: then
// fewer models than lambdas are returned, those of the largest lambdas.
//
// Errors: those of FitLogistic; zonal.ErrParam for an empty or not
// strictly decreasing lambdas.
func FitLogisticPath(ctx context.Context, k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambdas []float64, opts LogisticOptions) ([]*Logistic, error) {
	if len(lambdas) == 0 {
		return nil, fmt.Errorf("%w: no lambdas", zonal.ErrParam)
	}
	for i, l := range lambdas {
		if err := checkLambda(l); err != nil {
			return nil, fmt.Errorf("lambdas[%d]: %w", i, err)
		}
		if i > 0 && !(l < lambdas[i-1]) {
			return nil, fmt.Errorf("%w: lambdas must decrease strictly, entry %d is %g after %g", zonal.ErrParam, i, l, lambdas[i-1])
		}
	}
	path, idx, loss, err := checkLogistic(k, x, y, lambdas[0], opts)
	if err != nil {
		return nil, err
	}
	path = append(path[:len(path)-1], lambdas...)
	return fitLogistic(ctx, k, x, loss, path, len(lambdas), idx, opts)
}

// checkLogistic checks FitLogistic's arguments and returns the lambda path ending at lambda, the centres and the loss.
func checkLogistic(k kernels.Kernel, x mat.Matrix, y *mat.Dense, lambda float64, opts LogisticOptions) ([]float64, []int, *logisticLoss, error) {
	if k == nil {
		return nil, nil, nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	n, _, _, err := checkXY(x, y)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, nil, nil, err
	}
	loss, err := newLogisticLoss(y, opts.Weights)
	if err != nil {
		return nil, nil, nil, err
	}
	// The logistic fit is float64 only: the check refuses unknown modes.
	if err := opts.Intercept.check(zonal.Float64); err != nil {
		return nil, nil, nil, err
	}
	M := opts.Centers
	if M < 1 || M > n {
		return nil, nil, nil, fmt.Errorf("%w: logistic FALKON needs 1 <= centres <= n = %d, got %d", zonal.ErrParam, n, M)
	}
	if opts.Iterations < 0 || opts.NewtonSteps < 0 || opts.MaxNewtonSteps < 0 || !(opts.GradTol >= 0) {
		return nil, nil, nil, fmt.Errorf("%w: logistic options: Iterations %d, NewtonSteps %d, MaxNewtonSteps %d, GradTol %g must not be negative",
			zonal.ErrParam, opts.Iterations, opts.NewtonSteps, opts.MaxNewtonSteps, opts.GradTol)
	}
	given := opts.LambdaPath
	if given == nil && opts.Start != nil {
		given = []float64{}
	}
	path, err := logisticPath(lambda, given)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := kernels.CheckScale(k, x); err != nil {
		return nil, nil, nil, err
	}
	idx := uniformCenters(n, M, opts.Seed)
	if st := opts.Start; st != nil {
		if err := checkStart(st, k, x, idx, loss.K, opts.Intercept == InterceptFitted); err != nil {
			return nil, nil, nil, err
		}
	}
	return path, idx, loss, nil
}

// checkStart checks the warm start st (LogisticOptions.Start) against a
// fit of kernel k on the rows x with the centres idx, K outputs and a
// fitted intercept or not: every property the model records of its own
// fit must be the new fit's. The centre rows are compared entry by entry
// with x's rows at idx (O(M d) for dense rows, O(nnz) for CSR), the only
// record of the rows themselves a model keeps; the kernels by kind and
// encoded parameters when both encode (a kernel that cannot be stored
// cannot be compared and is trusted). All refusals are zonal.ParamError.
func checkStart(st *Logistic, k kernels.Kernel, x mat.Matrix, idx []int, K int, fitB bool) error {
	n, d := x.Dims()
	refuse := func(format string, a ...any) error {
		return &zonal.ParamError{Param: "Start", Reason: "the logistic warm start " + fmt.Sprintf(format, a...) +
			" (Start must be fitted by this package with the same kernel on the same rows, Centers, Seed and Intercept)"}
	}
	switch {
	case st.u == nil:
		return refuse("has no iterate: it was loaded from a model file, not fitted")
	case st.InputDim() != d:
		return refuse("takes %d input columns, the rows have %d", st.InputDim(), d)
	case st.Outputs() != K:
		return refuse("has %d outputs, the targets need %d", st.Outputs(), K)
	case len(st.idx) != len(idx):
		return refuse("has %d centres, the fit %d", len(st.idx), len(idx))
	case st.rows != n:
		return refuse("was fitted on %d rows, these are %d", st.rows, n)
	case !slices.Equal(st.idx, idx):
		return refuse("has other centre indices (another Seed)")
	case st.fitB != fitB:
		return refuse("has a fitted intercept %t, the fit %t", st.fitB, fitB)
	}
	for j, i := range idx {
		if !sameRow(st.exp.centers, j, x, i) {
			return refuse("has centre %d unequal to row %d of these rows (other rows)", j, i)
		}
	}
	if sk := st.exp.kern; sk.Kind() != k.Kind() {
		return refuse("has kernel %s, the fit %s", sk, k)
	} else if a, err := sk.MarshalBinary(); err == nil {
		if b, err := k.MarshalBinary(); err == nil && !bytes.Equal(a, b) {
			return refuse("has kernel %s, the fit %s", sk, k)
		}
	}
	return nil
}

// sameRow reports whether row i of a and row j of b (each a *mat.Dense or
// a *dataset.CSR, of equal widths) hold the same values; a CSR row's
// explicit zeros equal a dense row's zeros.
func sameRow(a mat.Matrix, i int, b mat.Matrix, j int) bool {
	ad, aDense := a.(*mat.Dense)
	bd, bDense := b.(*mat.Dense)
	switch {
	case aDense && bDense:
		return slices.Equal(ad.RawRowView(i), bd.RawRowView(j))
	case aDense:
		return sameDenseCSRRow(ad.RawRowView(i), b.(*dataset.CSR), j)
	case bDense:
		return sameDenseCSRRow(bd.RawRowView(j), a.(*dataset.CSR), i)
	}
	ac, av := a.(*dataset.CSR).Row(i)
	bc, bv := b.(*dataset.CSR).Row(j)
	for p, q := 0, 0; p < len(ac) || q < len(bc); {
		switch {
		case q == len(bc) || (p < len(ac) && ac[p] < bc[q]):
			if av[p] != 0 {
				return false
			}
			p++
		case p == len(ac) || bc[q] < ac[p]:
			if bv[q] != 0 {
				return false
			}
			q++
		default:
			if av[p] != bv[q] {
				return false
			}
			p++
			q++
		}
	}
	return true
}

// sameDenseCSRRow reports whether the dense row r equals row i of c.
func sameDenseCSRRow(r []float64, c *dataset.CSR, i int) bool {
	cols, vals := c.Row(i)
	p := 0
	for col, v := range r {
		w := 0.0
		if p < len(cols) && cols[p] == col {
			w = vals[p]
			p++
		}
		if v != w {
			return false
		}
	}
	return true
}

// logisticPath checks or makes the lambda path (LambdaPath) and appends
// the final lambda.
func logisticPath(lambda float64, given []float64) ([]float64, error) {
	if given != nil {
		prev := math.Inf(1)
		for i, l := range given {
			if err := checkLambda(l); err != nil {
				return nil, fmt.Errorf("LambdaPath[%d]: %w", i, err)
			}
			if !(l < prev) || !(l > lambda) {
				return nil, fmt.Errorf("%w: LambdaPath must decrease and stay above lambda %g, entry %d is %g", zonal.ErrParam, lambda, i, l)
			}
			prev = l
		}
		return append(append([]float64(nil), given...), lambda), nil
	}
	var path []float64
	if lambda < 0.1 {
		J := int(math.Ceil(math.Log10(0.1/lambda) - 1e-9))
		for j := J; j >= 1; j-- {
			path = append(path, lambda*math.Pow(10, float64(j)))
		}
	}
	return append(path, lambda), nil
}

// fitLogistic runs Newton along path, the last targets lambdas solved to
// GradTol (the others NewtonSteps steps each), and returns the models at
// those.
func fitLogistic(ctx context.Context, k kernels.Kernel, x mat.Matrix, loss *logisticLoss, path []float64, targets int, idx []int, opts LogisticOptions) ([]*Logistic, error) {
	s, jit, err := newNewtonState(ctx, k, x, loss, idx, opts)
	if err != nil {
		return nil, err
	}
	be, K, centers := s.be, s.K, s.blocks.centers
	gradTol := opts.GradTol
	if gradTol == 0 {
		gradTol = 1e-6
	}
	pathSteps := opts.NewtonSteps
	if pathSteps == 0 {
		pathSteps = 2
	}
	maxSteps := opts.MaxNewtonSteps
	if maxSteps == 0 {
		maxSteps = 50
	}
	// The gradient at alpha = 0, b = 0 (independent of lambda) scales
	// GradTol.
	loss.derivs(s.D, s.P, s.F)
	if err := s.gradient(0); err != nil {
		return nil, err
	}
	g0 := s.gradNorm()
	if g0 == 0 {
		g0 = 1
	}
	if s.fitB {
		// Start b at the prior's logits.
		s.b = loss.priorLogits()
		fillRows(s.F, s.b)
		loss.derivs(s.D, s.P, s.F)
	}
	if st := opts.Start; st != nil {
		if err := s.warmStart(st); err != nil {
			return nil, err
		}
	}
	res := NewtonResult{Tol: gradTol, Automatic: s.auto}
	first := len(path) - targets
	var models []*Logistic
	for pi, lambda := range path {
		target := pi >= first
		steps := pathSteps
		if target {
			steps = maxSteps
		}
		stalled := false
		for st := 0; st < steps; st++ {
			if err := s.gradient(lambda); err != nil {
				return nil, err
			}
			rel := s.gradNorm() / g0
			// At least one step at a target (see GradTol).
			if target && rel <= gradTol && (st > 0 || rel == 0) {
				break
			}
			moved, cg, err := s.step(lambda, rel)
			if err != nil {
				return nil, err
			}
			res.Steps++
			if !target {
				res.PathSteps++
			}
			res.CGIterations += cg.Iterations
			res.CGCap = max(res.CGCap, cg.Cap)
			opts.report(zonal.Progress{Stage: "newton", Done: res.Steps, Total: res.Steps + steps - st - 1, Residual: rel})
			if !moved {
				stalled = true
				break
			}
		}
		if !target {
			continue
		}
		if err := s.gradient(lambda); err != nil {
			return nil, err
		}
		r := res
		r.Gradient = s.gradNorm() / g0
		r.Converged = r.Gradient <= gradTol
		r.Stalled = stalled && !r.Converged
		r.Objective = s.objective(lambda)
		r.Path = slices.Clone(path[:pi+1])
		b := make([]float64, K)
		if s.fitB {
			copy(b, s.b)
		}
		m := &Logistic{exp: newExpansion(be, k, centers, mat.DenseCopyOf(s.alpha), b), lambda: lambda, idx: idx, u: mat.DenseCopyOf(s.u), fitB: s.fitB, rows: s.n,
			newton: r, kmmJit: jit, caching: s.blocks.knm != nil}
		models = append(models, m)
		if opts.Stop != nil && opts.Stop(m) {
			break
		}
	}
	return models, nil
}

// newNewtonState makes the iterate of a logistic fit at alpha = 0, b = 0:
// the factors of K_MM at the centres idx, K_nM (cached when it fits the
// budget) and the work arrays. It also returns the jitter K_MM needed.
func newNewtonState(ctx context.Context, k kernels.Kernel, x mat.Matrix, loss *logisticLoss, idx []int, opts LogisticOptions) (*newtonState, float64, error) {
	n, _ := x.Dims()
	K := loss.K
	M := len(idx)
	be := opts.backend()
	limit := budget.Or(opts.MemoryBudget)
	// The M x M factors, their scratch (twice: the weighted copies), the
	// CG work arrays and Newton's M x K vectors, the n x K logits, step
	// logits, curvatures and block scratch.
	fixed := int64(M)*int64(M)*8 + 2*factorScratch(M)*8 + 16*int64(M)*int64(K)*8 + 4*int64(n)*int64(K)*8
	if fixed+int64(M)*8 > limit {
		return nil, 0, fmt.Errorf("%w: logistic FALKON with %d centres and %d rows needs %s for its factors and logits, the memory budget is %s",
			zonal.ErrTooLarge, M, n, budget.Format(fixed+int64(M)*8), budget.Format(limit))
	}
	iters, auto := falkonIterCap(opts.Iterations, M)
	centers := subsetRows(x, idx)
	fac, jit, err := newFalkonT(ctx, be, k, centers, M)
	if err != nil {
		return nil, 0, err
	}
	opts.report(zonal.Progress{Stage: "factor", Done: 1, Total: 1})

	blocks := &knmBlocks{be: be, k: k, x: x, centers: centers, n: n, M: M, K: K}
	if fixed+int64(n)*int64(M)*8 <= limit {
		blocks.knm = mat.NewDense(n, M, nil)
		cb := min(n, 4096)
		for i0 := 0; i0 < n; i0 += cb {
			if err := ctx.Err(); err != nil {
				return nil, 0, fmt.Errorf("solvers: logistic fit canceled: %w", err)
			}
			i1 := min(i0+cb, n)
			if err := kernels.MatrixInto(ctx, blocks.knm.Slice(i0, i1, 0, M).(*mat.Dense), k, rowRange(x, i0, i1), centers, kernels.Options{Backend: be}); err != nil {
				return nil, 0, err
			}
			opts.report(zonal.Progress{Stage: "kernel", Done: i1, Total: n})
		}
		blocks.bs = min(n, max(16, int(passBlockBytes/(int64(M)*8))))
	} else {
		blocks.bs = max(1, min(n, int((limit-fixed)/(int64(M)*8))))
		blocks.kb = mat.NewDense(blocks.bs, M, nil)
	}
	blocks.tmp = mat.NewDense(blocks.bs, K, nil)

	s := &newtonState{ctx: ctx, be: be, fac: fac, blocks: blocks, loss: loss, idx: idx, n: n, M: M, K: K,
		u: mat.NewDense(M, K, nil), alpha: mat.NewDense(M, K, nil),
		F: mat.NewDense(n, K, nil), Fd: mat.NewDense(n, K, nil), D: mat.NewDense(n, K, nil), P: mat.NewDense(n, K, nil),
		g: mat.NewDense(M, K, nil), curv: make([]float64, M), row: make([]float64, K), prow: make([]float64, K),
		iters: iters, auto: auto, opts: opts}
	if opts.Intercept == InterceptFitted {
		s.fitB = true
		s.b, s.gb, s.c, s.hb, s.db = make([]float64, K), make([]float64, K), make([]float64, K), make([]float64, K), make([]float64, K)
	}
	return s, jit, nil
}

// warmStart sets the iterate to st's (LogisticOptions.Start, checked by
// checkLogistic): u, alpha and b copied, the logits K_nM alpha + 1 b^T
// from one pass over K_nM.
func (s *newtonState) warmStart(st *Logistic) error {
	s.u.Copy(st.u)
	s.alpha.Copy(st.exp.alpha)
	ar := s.alpha.RawMatrix()
	if err := s.blocks.pass(s.ctx, nil, &ar, func(i0 int, blk blas64.General) {
		copyGeneral(s.F.Slice(i0, i0+blk.Rows, 0, s.K).(*mat.Dense).RawMatrix(), blk)
	}); err != nil {
		return err
	}
	if s.fitB {
		copy(s.b, st.exp.mean)
		addRows(s.F.RawMatrix(), s.b)
	}
	s.loss.derivs(s.D, s.P, s.F)
	return nil
}

// newtonState is the iterate of a logistic fit and its work arrays.
type newtonState struct {
	ctx     context.Context
	be      backend.Backend
	fac     *falkonFactors
	blocks  *knmBlocks
	loss    *logisticLoss
	idx     []int
	n, M, K int
	u       *mat.Dense // T alpha
	alpha   *mat.Dense
	F       *mat.Dense // logits K_nM alpha
	Fd      *mat.Dense // logits of the step direction
	D       *mat.Dense // w_i dloss/df at F
	P       *mat.Dense // curvatures (binary) or probabilities at F
	g       *mat.Dense // gradient in u
	curv    []float64
	row     []float64
	prow    []float64
	iters   int
	auto    bool
	opts    LogisticOptions
	// The fitted intercept (fitB): b, its gradient gb, a step's c, the b
	// block of a Hessian product hb and the b block's diagonal db.
	fitB             bool
	b, gb, c, hb, db []float64
}

// gradient computes g = T^-T K_Mn D + lambda u from the current D, and
// with a fitted intercept gb = 1^T D (centred for a multinomial model:
// b stays summing to zero).
func (s *newtonState) gradient(lambda float64) error {
	gr := s.g.RawMatrix()
	if err := s.blocks.pass(s.ctx, &gr, nil, func(i0 int, blk blas64.General) {
		copyGeneral(blk, s.D.Slice(i0, i0+blk.Rows, 0, s.K).(*mat.Dense).RawMatrix())
	}); err != nil {
		return err
	}
	s.fac.solveT(blas.Trans, gr)
	scaleAddGeneral(gr, 1, s.u.RawMatrix(), lambda)
	if s.fitB {
		clear(s.gb)
		addRowSums(s.gb, s.D.RawMatrix())
		if s.K > 1 {
			zeroSum(s.gb)
		}
	}
	return nil
}

// gradNorm is the norm of the gradient in (u, b).
func (s *newtonState) gradNorm() float64 {
	g := s.g.Norm(2)
	if !s.fitB {
		return g
	}
	return math.Hypot(g, math.Sqrt(dot(s.gb, s.gb)))
}

// objective is the objective at the iterate.
func (s *newtonState) objective(lambda float64) float64 {
	return s.loss.value(s.F, nil, 0, s.row) + lambda/2*frobDot(s.u, s.u)
}

// step takes one Newton step at lambda (rel: the current relative
// gradient norm, which sets CG's tolerance). It reports whether the
// iterate moved.
func (s *newtonState) step(lambda, rel float64) (bool, CGResult, error) {
	M, K := s.M, s.K
	op, sq, q, err := s.newtonSystem(lambda)
	if err != nil {
		return false, CGResult{}, err
	}
	mk, nb := M*K, len(sq)
	asMK := func(g blas64.General) blas64.General {
		return blas64.General{Rows: M, Cols: K, Stride: K, Data: g.Data[:mk]}
	}
	bPart := func(g blas64.General) []float64 { return g.Data[mk : mk+nb] }
	// Right-hand side -A^-T g (and -gb / sqrt(db)).
	r := mat.NewDense(mk+nb, 1, nil)
	rr := asMK(r.RawMatrix())
	copyGeneral(rr, s.g.RawMatrix())
	s.fac.solveA(blas.Trans, rr)
	if s.fitB {
		rb := bPart(r.RawMatrix())
		for j, g := range s.gb {
			rb[j] = g / sq[j]
		}
		if q != nil {
			projectOut(rb, q)
		}
	}
	for i := range r.RawMatrix().Data {
		r.RawMatrix().Data[i] = -r.RawMatrix().Data[i]
	}
	beta := mat.NewDense(mk+nb, 1, nil)
	tol := math.Max(1e-10, math.Min(0.1, math.Sqrt(rel)))
	cg, err := CG(s.ctx, op, r, beta, CGOptions{
		Options:     Options{Backend: s.be, MemoryBudget: s.opts.MemoryBudget},
		Tol:         tol,
		MaxIter:     s.iters,
		AutoCap:     s.auto,
		StopStalled: true,
	})
	if err != nil {
		return false, cg, err
	}
	// delta = A^-1 beta (in u), dalpha = T^-1 delta, Fd = K_nM dalpha.
	delta := mat.NewDense(M, K, nil)
	copyGeneral(delta.RawMatrix(), asMK(beta.RawMatrix()))
	s.fac.solveA(blas.NoTrans, delta.RawMatrix())
	da := mat.DenseCopyOf(delta)
	s.fac.solveT(blas.NoTrans, da.RawMatrix())
	dar := da.RawMatrix()
	if err := s.blocks.pass(s.ctx, nil, &dar, func(i0 int, blk blas64.General) {
		copyGeneral(s.Fd.Slice(i0, i0+blk.Rows, 0, K).(*mat.Dense).RawMatrix(), blk)
	}); err != nil {
		return false, cg, err
	}
	slope := frobDot(s.g, delta)
	if s.fitB {
		// c = gamma / sqrt(db) (centred for a multinomial model), added to
		// every row's step logits.
		for j, g := range bPart(beta.RawMatrix()) {
			s.c[j] = g / sq[j]
		}
		if K > 1 {
			zeroSum(s.c)
		}
		addRows(s.Fd.RawMatrix(), s.c)
		slope += dot(s.gb, s.c)
	}
	// Backtracking on phi(t) = loss(F + t Fd) + lambda/2 ||u + t delta||^2:
	// the first t = 2^-j with Armijo's decrease (1e-4 of the slope's
	// prediction) and phi(t) < phi(0). Near the solution the decrease
	// falls below the rounding of phi itself (about 1e-16 phi(0)); a t
	// whose phi is within that noise of phi(0) is accepted when the
	// directional derivative phi'(t), computed without that cancellation,
	// has fallen to half of |phi'(0)| (it vanishes at the line's minimum).
	if !(slope < 0) {
		return false, cg, nil // not a descent direction: CG made no progress
	}
	uu, ud, dd := frobDot(s.u, s.u), frobDot(s.u, delta), frobDot(delta, delta)
	phi := func(t float64) float64 {
		return s.loss.value(s.F, s.Fd, t, s.row) + lambda/2*(uu+2*t*ud+t*t*dd)
	}
	dphi := func(t float64) float64 {
		return s.loss.slope(s.F, s.Fd, t, s.row, s.prow) + lambda*(ud+t*dd)
	}
	phi0 := phi(0)
	noise := 64 * 0x1p-52 * math.Abs(phi0)
	t := 1.0
	found := false
	for j := 0; j < 40; j++ {
		v := phi(t)
		if v <= phi0+1e-4*t*slope && v < phi0 || math.Abs(v-phi0) <= noise && math.Abs(dphi(t)) <= -slope/2 {
			found = true
			break
		}
		t /= 2
	}
	if !found {
		return false, cg, nil
	}
	s.u.Add(s.u, scaled(t, delta))
	s.alpha.Add(s.alpha, scaled(t, da))
	s.F.Add(s.F, scaled(t, s.Fd))
	for j, c := range s.c[:nb] {
		s.b[j] += t * c
	}
	s.loss.derivs(s.D, s.P, s.F)
	return true, cg, nil
}

// newtonSystem rebuilds the preconditioner at the iterate and returns the
// preconditioned Newton operator of CG at lambda, P^-T H P^-1 with
// P = A (and with a fitted intercept P = diag(A, sqrt(db)): sq is
// sqrt(db), q the unit vector along it of a multinomial model, off which
// the operator's b part is projected).
func (s *newtonState) newtonSystem(lambda float64) (OperatorFunc, []float64, []float64, error) {
	M, K := s.M, s.K
	s.loss.centreCurvature(s.curv, s.idx, s.P)
	if err := s.fac.factorA(s.ctx, lambda, s.curv); err != nil {
		return OperatorFunc{}, nil, nil, err
	}
	// The M x K unknowns as one vector of M K entries (the multinomial
	// Hessian couples the outputs, so CG runs one recurrence on them),
	// followed with a fitted intercept by the K entries of b's step,
	// preconditioned: gamma = sqrt(db) c.
	mk := M * K
	nb := 0
	var sq, q []float64 // sqrt(db); multinomial the unit vector along sq
	if s.fitB {
		nb = K
		s.loss.interceptCurvature(s.db, s.P)
		sq = make([]float64, K)
		for j, v := range s.db {
			sq[j] = math.Sqrt(v)
		}
		if K > 1 {
			// The preconditioned image of the all-ones direction, along
			// which the b block is singular.
			q = slices.Clone(sq)
			nq := math.Sqrt(dot(q, q))
			for j := range q {
				q[j] /= nq
			}
		}
	}
	asMK := func(g blas64.General) blas64.General {
		return blas64.General{Rows: M, Cols: K, Stride: K, Data: g.Data[:mk]}
	}
	bPart := func(g blas64.General) []float64 { return g.Data[mk : mk+nb] }
	v := mat.NewDense(M, K, nil)
	w := mat.NewDense(M, K, nil)
	op := OperatorFunc{N: mk + nb, F: func(ctx context.Context, dst, b blas64.General) error {
		vr, wr, dr := v.RawMatrix(), w.RawMatrix(), asMK(dst)
		copyGeneral(vr, asMK(b))
		s.fac.solveA(blas.NoTrans, vr) // v = A^-1 b
		copyGeneral(wr, vr)
		s.fac.solveT(blas.NoTrans, wr) // w = T^-1 v
		row := func(i0 int, blk blas64.General) { s.loss.hessRows(i0, blk, s.P) }
		if s.fitB {
			for j, g := range bPart(b) {
				s.c[j] = g / sq[j]
			}
			clear(s.hb)
			row = func(i0 int, blk blas64.General) {
				addRows(blk, s.c)
				s.loss.hessRows(i0, blk, s.P)
				addRowSums(s.hb, blk)
			}
		}
		if err := s.blocks.pass(ctx, &dr, &wr, row); err != nil {
			return err
		}
		s.fac.solveT(blas.Trans, dr)
		scaleAddGeneral(dr, 1, vr, lambda)
		s.fac.solveA(blas.Trans, dr)
		if s.fitB {
			db := bPart(dst)
			for j, h := range s.hb {
				db[j] = h / sq[j]
			}
			if q != nil {
				projectOut(db, q)
			}
		}
		return nil
	}}
	return op, sq, q, nil
}

// frobDot is the sum of a_ij b_ij (both contiguous, same shape).
func frobDot(a, b *mat.Dense) float64 {
	s := 0.0
	for i, v := range a.RawMatrix().Data {
		s += v * b.RawMatrix().Data[i]
	}
	return s
}

func scaled(t float64, a *mat.Dense) *mat.Dense {
	var b mat.Dense
	b.Scale(t, a)
	return &b
}

// Kind returns "logistic".
func (m *Logistic) Kind() string { return KindLogistic }

// InputDim is d.
func (m *Logistic) InputDim() int { _, d, _ := m.exp.dims(); return d }

// Outputs is the number of logits: 1 (binary) or the number of classes.
func (m *Logistic) Outputs() int { _, _, k := m.exp.dims(); return k }

// Centers returns the M x d centres (not a copy).
func (m *Logistic) Centers() mat.Matrix { return m.exp.centers }

// CenterIndices returns the training-row indices of the centres (nil after
// loading from a file).
func (m *Logistic) CenterIndices() []int { return m.idx }

// Alpha returns the M x k coefficients (not a copy).
func (m *Logistic) Alpha() *mat.Dense { return m.exp.alpha }

// Intercept returns the logits' constant b, one per output (not a copy):
// zeros unless the fit had Intercept InterceptFitted; a multinomial b sums
// to zero.
func (m *Logistic) Intercept() []float64 { return m.exp.mean }

// Lambda is the final lambda of the fit.
func (m *Logistic) Lambda() float64 { return m.lambda }

// Newton reports the fit's Newton iterations (zero after loading).
func (m *Logistic) Newton() NewtonResult { return m.newton }

// CachedKnM reports whether the fit held K_nM whole.
func (m *Logistic) CachedKnM() bool { return m.caching }

// Logits marks the outputs as logits (see LogitModel).
func (m *Logistic) Logits() {}

// Predict writes the logits of the rows of x to dst (n x Outputs()); see
// Falkon.Predict for the input types and errors.
func (m *Logistic) Predict(dst *mat.Dense, x mat.Matrix) error {
	return predictExpansion(m.exp, dst, x)
}

// MarshalBinary encodes the model as a Falkon's (lambda, kernel, centres,
// alpha, and as the means the intercept b: zeros without one), under its
// own kind.
//
// Errors: the kernel's MarshalBinary error.
func (m *Logistic) MarshalBinary() ([]byte, error) { return marshalExpansionModel(m.lambda, m.exp) }

// Diagnostics reports the Newton solve (unknown after loading): Solver
// SolverNewton, Iterations the CG iterations of all steps, Cap the largest
// per-step CG bound, NewtonSteps the steps, Residual the final relative
// gradient norm against Tol (with a fitted intercept, of the gradient in
// alpha and b).
func (m *Logistic) Diagnostics() Diagnostics {
	r := m.newton
	if r.Path == nil {
		return Diagnostics{}
	}
	return Diagnostics{Solver: SolverNewton, Iterations: r.CGIterations, Cap: r.CGCap, Automatic: r.Automatic,
		Residual: r.Gradient, Tol: r.Tol, Converged: r.Converged, Stalled: r.Stalled, NewtonSteps: r.Steps}
}

package solvers

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
)

// Operator is a symmetric linear operator on R^n applied matrix-free to a
// block of k vectors at once (the columns of a row-major n x k matrix).
type Operator interface {
	// Size is n.
	Size() int
	// Apply writes A*X to dst (both n x k; dst never aliases x).
	Apply(ctx context.Context, dst, x blas64.General) error
}

// OperatorFunc adapts a function to an Operator of the given size.
type OperatorFunc struct {
	N int
	F func(ctx context.Context, dst, x blas64.General) error
}

// Size returns N.
func (o OperatorFunc) Size() int { return o.N }

// Apply calls F.
func (o OperatorFunc) Apply(ctx context.Context, dst, x blas64.General) error {
	return o.F(ctx, dst, x)
}

// DenseOperator is the operator of an explicit symmetric n x n matrix A.
type DenseOperator struct {
	A *mat.Dense
	// Backend does the products; nil means backend.Default() at each Apply.
	Backend backend.Backend
}

// Size returns the order of A (0 for a nil A).
func (o DenseOperator) Size() int {
	if o.A == nil {
		return 0
	}
	r, _ := o.A.Dims()
	return r
}

// Apply computes dst = A x.
//
// Errors: zonal.ErrShape when A is nil or not square, or x and dst are not
// both n x k.
func (o DenseOperator) Apply(_ context.Context, dst, x blas64.General) error {
	if o.A == nil {
		return fmt.Errorf("%w: DenseOperator with a nil matrix", zonal.ErrShape)
	}
	n, c := o.A.Dims()
	if c != n || x.Rows != n || dst.Rows != n || dst.Cols != x.Cols {
		return fmt.Errorf("%w: DenseOperator of a %dx%d matrix applied to %dx%d into %dx%d", zonal.ErrShape, n, c, x.Rows, x.Cols, dst.Rows, dst.Cols)
	}
	b := o.Backend
	if b == nil {
		b = backend.Default()
	}
	b.Gemm(blas.NoTrans, blas.NoTrans, 1, o.A.RawMatrix(), x, 0, dst)
	return nil
}

// CGOptions configures CG. The zero value is usable.
//
// Of the shared Options, Backend does the vector operations (dot products
// and axpys; the operator uses its own), MemoryBudget bounds CG's work
// arrays (3 n x k matrices, one more with a preconditioner, two more with
// StopStalled or AutoCap), and Progress receives
// one report per iteration: Stage "cg", Done the iteration, Total the
// iteration bound in force (with AutoCap it moves as the estimate of the
// condition number grows), Residual the largest relative residual over the
// columns. Options.Weights does not apply (CG solves the system it is
// given; the weighted fits form weighted systems).
type CGOptions struct {
	Options
	// Tol is the relative-residual tolerance: column j has converged when
	// ||b_j - A x_j|| <= Tol ||b_j||. Zero means 1e-10.
	Tol float64
	// MaxIter bounds the iterations; zero means n (exact arithmetic converges
	// in at most n steps).
	MaxIter int
	// AutoCap (ignored with FixedIter) stops an unconverged run before
	// MaxIter, the hard ceiling, at twice the iteration count that CG's
	// error bound predicts for the condition number CG estimates from its
	// own coefficients, plus 10 (see "Iteration caps" in the package doc).
	// It implies StopStalled.
	AutoCap bool
	// StopStalled (ignored with FixedIter) stops the run as soon as every
	// unconverged column has stalled: neither its objective
	// x^T A x - 2 b^T x nor its true residual has decreased since the
	// previous computation of the true residual (in exact arithmetic the
	// objective falls at every step, so rounding has won); each
	// unconverged column then returns its best iterate (lowest objective).
	// It costs two more n x k work arrays.
	StopStalled bool
	// Precond, if set, applies the inverse of an SPD preconditioner P ~ A.
	Precond Operator
	// RecomputeEvery replaces the recursively updated residual by the true
	// residual b - A x every so many iterations (it drifts in floating
	// point); zero means 50, negative never (the final check below still
	// runs).
	RecomputeEvery int
	// FixedIter runs exactly MaxIter iterations (stopping early only when
	// every residual is exactly zero) instead of stopping at Tol.
	FixedIter bool
}

// CGResult reports a CG run.
type CGResult struct {
	Iterations int
	// Converged is true when every column's true residual b_j - A x_j met
	// Tol at the end.
	Converged bool
	// Cap is the iteration bound in force when CG stopped: MaxIter's value,
	// or the smaller automatic cap of CGOptions.AutoCap.
	Cap int
	// Residual is the final largest relative residual over the columns,
	// of the true residual b - A x (not the recursively updated one).
	Residual float64
	// Stalled is true when StopStalled (or AutoCap) stopped the run early
	// because every unconverged column had reached the accuracy rounding
	// allows (see "Iteration caps" in the package doc); Cap is then
	// Iterations.
	Stalled bool
	// Tol is the tolerance used.
	Tol float64
	// Condition is the largest over the columns of the condition number of
	// the Lanczos tridiagonal built from CG's coefficients: an estimate
	// from below of the condition number of the (preconditioned) operator
	// on the Krylov space explored; 0 before two iterations.
	Condition float64
	// History holds, after every iteration, the largest relative residual
	// over the columns (index 0 is the starting point).
	History []float64
}

// CG solves A X = B for the symmetric positive definite operator A by the
// (preconditioned) conjugate-gradient method, one independent recurrence per
// column of B but one operator application per iteration for all columns
// together. x holds the starting point on entry (zero is a good default) and
// the solution on return; it is n x k like b.
//
// The relative residual of column j is ||b_j - A x_j|| / ||b_j|| (columns with
// b_j = 0 are solved by x_j = 0). When the recursively updated residuals all
// meet Tol, CG recomputes the true residuals (one more application of A,
// unless a periodic recomputation just did) and goes on with the columns
// whose true residual does not, restarting their recurrences; Converged and
// Residual describe the true residual. A direction p with p^T A p <= 0
// proves A is not positive definite and CG stops with an error wrapping
// zonal.ErrNotPositiveDefinite; likewise r^T P^{-1} r <= 0 for a nonzero r
// and the preconditioner. Not reaching Tol within the bound (MaxIter, or the
// automatic cap) is not an error: the result says Converged = false. ctx is
// checked every iteration.
//
// Errors: zonal.ErrParam for a nil operator; zonal.ErrShape when b and x are
// nil or not both n x k; zonal.ErrNonFinite for NaN or Inf in b;
// zonal.ErrTooLarge when the work arrays exceed opts.MemoryBudget;
// zonal.ErrNotPositiveDefinite as above; ctx.Err() (wrapped) when canceled;
// and any error of the operator's or preconditioner's Apply.
func CG(ctx context.Context, a Operator, b, x *mat.Dense, opts CGOptions) (CGResult, error) {
	var res CGResult
	if a == nil {
		return res, fmt.Errorf("%w: nil CG operator", zonal.ErrParam)
	}
	if b == nil || x == nil {
		return res, fmt.Errorf("%w: nil CG right-hand side or solution", zonal.ErrShape)
	}
	n := a.Size()
	nb, k := b.Dims()
	nx, kx := x.Dims()
	if nb != n || nx != n || kx != k {
		return res, fmt.Errorf("%w: CG operator of size %d, b is %dx%d, x is %dx%d", zonal.ErrShape, n, nb, k, nx, kx)
	}
	if err := checkFinite("CG right-hand side", b); err != nil {
		return res, err
	}
	work := 3
	if opts.Precond != nil {
		work++
	}
	stopStalled := (opts.StopStalled || opts.AutoCap) && !opts.FixedIter
	if stopStalled {
		work += 2 // the best iterate and its residual
	}
	if err := budget.Check(fmt.Sprintf("CG on %d x %d right-hand sides", n, k), budget.Floats(work, n, k), opts.MemoryBudget); err != nil {
		return res, err
	}
	be := opts.backend()
	tol := opts.Tol
	if tol <= 0 {
		tol = 1e-10
	}
	maxIter := opts.MaxIter
	if maxIter <= 0 {
		maxIter = n
	}
	res.Tol, res.Cap = tol, maxIter
	every := opts.RecomputeEvery
	if every == 0 {
		every = 50
	}

	bnorm := make([]float64, k)
	for j := range bnorm {
		bnorm[j] = colNorm(be, b, j)
	}
	r := mat.NewDense(n, k, nil)
	z := r
	if opts.Precond != nil {
		z = mat.NewDense(n, k, nil)
	}
	p := mat.NewDense(n, k, nil)
	q := mat.NewDense(n, k, nil)

	trueResidual := func() error {
		if err := a.Apply(ctx, r.RawMatrix(), x.RawMatrix()); err != nil {
			return err
		}
		r.Sub(b, r)
		return nil
	}
	// From x = 0 (every solver's start) the residual is b itself: A 0 = 0
	// exactly, so the operator's application (a whole pass over K_nM for
	// FALKON, recomputed when K_nM is streamed) is skipped.
	if isZero(x) {
		r.Copy(b)
	} else if err := trueResidual(); err != nil {
		return res, err
	}
	done := make([]bool, k)
	relErr := func(j int) (e float64, zero bool) {
		rn := colNorm(be, r, j)
		if bnorm[j] > 0 {
			return rn / bnorm[j], rn == 0
		}
		return rn, rn == 0
	}
	// rel marks the columns meeting Tol done and returns the worst residual.
	rel := func() float64 {
		worst := 0.0
		for j := 0; j < k; j++ {
			e, zero := relErr(j)
			if (!opts.FixedIter && e <= tol) || zero {
				done[j] = true
			}
			worst = math.Max(worst, e)
		}
		return worst
	}
	applyPrec := func() error {
		if opts.Precond == nil {
			return nil
		}
		return opts.Precond.Apply(ctx, z.RawMatrix(), r.RawMatrix())
	}
	rz := make([]float64, k)
	lz := make([]lanczos, k)
	recNorm := make([]float64, k)
	restartCol := make([]bool, k)
	// The stall rule (StopStalled): CG minimises J(x_j) = x_j^T A x_j -
	// 2 b_j^T x_j = -x_j^T (b_j + r_j) over a growing Krylov space, so in
	// exact arithmetic J falls at every step. At every computation of the
	// true residual J and the residual are compared with their best
	// values; a column where neither improved has reached the accuracy
	// rounding allows (stalled). The residual is part of the rule because
	// J resolves changes only down to its own rounding, about 1e-16 |J|,
	// which the last factors of the residual near Tol may not reach. The
	// iterate with the lowest J is kept (xBest, rBest) and returned.
	bestJ := make([]float64, k)
	bestE := make([]float64, k)
	stalled := make([]bool, k)
	var xBest, rBest *mat.Dense
	if stopStalled {
		xBest, rBest = mat.DenseCopyOf(x), mat.DenseCopyOf(r)
		for j := range bestJ {
			bestJ[j] = objective(be, x, b, r, j)
			bestE[j], _ = relErr(j)
		}
	}
	// checkObjective runs after every true residual.
	checkObjective := func() {
		if xBest == nil {
			return
		}
		for j := range bestJ {
			if done[j] {
				continue
			}
			jv := objective(be, x, b, r, j)
			e, _ := relErr(j)
			if !(jv < bestJ[j]) && !(e < bestE[j]) {
				stalled[j] = true
			}
			bestE[j] = math.Min(bestE[j], e)
			if !(jv < bestJ[j]) {
				continue
			}
			bestJ[j] = jv
			copyCol(xBest, x, j)
			copyCol(rBest, r, j)
		}
	}
	// start (re)starts the recurrence of every column not done from the
	// current r: z = P^-1 r, rz = r^T z, p = z (zero for done columns).
	start := func() error {
		if err := applyPrec(); err != nil {
			return err
		}
		for j := 0; j < k; j++ {
			if done[j] {
				zeroCol(p, j)
				continue
			}
			rz[j] = colDot(be, r, z, j)
			if opts.Precond != nil && !(rz[j] > 0) {
				return fmt.Errorf("%w: preconditioner gives r^T P^-1 r = %g", zonal.ErrNotPositiveDefinite, rz[j])
			}
			copyCol(p, z, j)
			lz[j].restart()
		}
		return nil
	}
	res.History = append(res.History, rel())
	allDone := func() bool {
		for _, d := range done {
			if !d {
				return false
			}
		}
		return true
	}
	// finish records the true residual (recomputing it unless fresh) and
	// whether every column meets Tol.
	finish := func(fresh bool) error {
		if !fresh {
			if err := trueResidual(); err != nil {
				return err
			}
		}
		if xBest != nil {
			// Return the best iterate of every unconverged column.
			for j := 0; j < k; j++ {
				if e, _ := relErr(j); e > tol && !(objective(be, x, b, r, j) < bestJ[j]) {
					copyCol(x, xBest, j)
					copyCol(r, rBest, j)
				}
			}
		}
		res.Residual, res.Converged = 0, true
		for j := 0; j < k; j++ {
			e, zero := relErr(j)
			res.Residual = math.Max(res.Residual, e)
			if e > tol && !zero {
				res.Converged = false
			}
		}
		for j := range lz {
			res.Condition = math.Max(res.Condition, lz[j].kappa)
		}
		return nil
	}
	if allDone() {
		return res, finish(true)
	}
	if err := start(); err != nil {
		return res, err
	}

	pr, qr := p.RawMatrix(), q.RawMatrix()
	fresh := true // r is the true residual of x
	for it := 1; it <= res.Cap; it++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("solvers: CG canceled at iteration %d: %w", it, err)
		}
		if err := a.Apply(ctx, qr, pr); err != nil {
			return res, err
		}
		for j := 0; j < k; j++ {
			if done[j] {
				continue
			}
			pq := colDot(be, p, q, j)
			if !(pq > 0) {
				return res, fmt.Errorf("%w: CG iteration %d, column %d: p^T A p = %g", zonal.ErrNotPositiveDefinite, it, j, pq)
			}
			alpha := rz[j] / pq
			lz[j].alpha = append(lz[j].alpha, alpha)
			colAxpy(be, alpha, p, x, j)
			colAxpy(be, -alpha, q, r, j)
		}
		fresh = false
		if every > 0 && it%every == 0 {
			for j := range recNorm {
				recNorm[j] = colNorm(be, r, j)
			}
			if err := trueResidual(); err != nil {
				return res, err
			}
			fresh = true
			checkObjective()
			for j := range recNorm {
				// A true residual twice the recursive one: the recurrence
				// has reached the accuracy rounding allows and the next
				// coefficients would not describe the operator, so the
				// column restarts from the true residual (its condition
				// estimate keeping what it had).
				if !done[j] && colNorm(be, r, j) > 2*recNorm[j] {
					restartCol[j] = true
				}
			}
		}
		res.Iterations = it
		worst := rel()
		if allDone() && !opts.FixedIter {
			// Accept only what the true residual confirms; reopen the rest.
			if !fresh {
				if err := trueResidual(); err != nil {
					return res, err
				}
				fresh = true
			}
			clear(done)
			worst = rel()
			checkObjective()
			for j, d := range done {
				if !d {
					restartCol[j] = true
				}
			}
		}
		res.History = append(res.History, worst)
		if allDone() {
			opts.report(zonal.Progress{Stage: "cg", Done: it, Total: res.Cap, Residual: worst})
			break
		}
		if stopStalled && allStalled(done, stalled) {
			res.Stalled, res.Cap = true, it
			opts.report(zonal.Progress{Stage: "cg", Done: it, Total: res.Cap, Residual: worst})
			break
		}
		if err := applyPrec(); err != nil {
			return res, err
		}
		for j := 0; j < k; j++ {
			if done[j] {
				zeroCol(p, j)
				continue
			}
			rzNew := colDot(be, r, z, j)
			if opts.Precond != nil && !(rzNew > 0) {
				return res, fmt.Errorf("%w: preconditioner gives r^T P^-1 r = %g", zonal.ErrNotPositiveDefinite, rzNew)
			}
			if restartCol[j] {
				// Reopened by the true-residual check, or at the limit of
				// its recurrence: restart from r.
				restartCol[j] = false
				rz[j] = rzNew
				copyCol(p, z, j)
				lz[j].restart()
				continue
			}
			beta := rzNew / rz[j]
			rz[j] = rzNew
			lz[j].beta = append(lz[j].beta, beta)
			// p = z + beta p
			colScaleAdd(p, z, beta, j)
		}
		auto := 0
		for j := 0; j < k; j++ {
			if !done[j] {
				auto = max(auto, autoCap(lz[j].estimate(), tol))
			}
		}
		if opts.AutoCap && !opts.FixedIter {
			res.Cap = max(it, min(maxIter, auto))
		}
		opts.report(zonal.Progress{Stage: "cg", Done: it, Total: res.Cap, Residual: worst})
	}
	return res, finish(fresh)
}

func colVec(m *mat.Dense, j int) blas64.Vector {
	r := m.RawMatrix()
	return blas64.Vector{N: r.Rows, Inc: r.Stride, Data: r.Data[j:]}
}

func colNorm(be backend.Backend, m *mat.Dense, j int) float64 {
	v := colVec(m, j)
	return math.Sqrt(be.Dot(v, v))
}

func colDot(be backend.Backend, a, b *mat.Dense, j int) float64 {
	return be.Dot(colVec(a, j), colVec(b, j))
}

// colAxpy: y[:,j] += alpha x[:,j].
func colAxpy(be backend.Backend, alpha float64, x, y *mat.Dense, j int) {
	be.Axpy(alpha, colVec(x, j), colVec(y, j))
}

// colScaleAdd: p[:,j] = z[:,j] + beta p[:,j].
func colScaleAdd(p, z *mat.Dense, beta float64, j int) {
	pr, zr := p.RawMatrix(), z.RawMatrix()
	for i := 0; i < pr.Rows; i++ {
		pr.Data[i*pr.Stride+j] = zr.Data[i*zr.Stride+j] + beta*pr.Data[i*pr.Stride+j]
	}
}

func zeroCol(m *mat.Dense, j int) {
	r := m.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		r.Data[i*r.Stride+j] = 0
	}
}

// copyCol: p[:,j] = z[:,j].
func copyCol(p, z *mat.Dense, j int) {
	pr, zr := p.RawMatrix(), z.RawMatrix()
	for i := 0; i < pr.Rows; i++ {
		pr.Data[i*pr.Stride+j] = zr.Data[i*zr.Stride+j]
	}
}

// allStalled reports whether every column not done has stalled.
func allStalled(done, stalled []bool) bool {
	for j, d := range done {
		if !d && !stalled[j] {
			return false
		}
	}
	return true
}

// objective is J(x_j) = x_j^T A x_j - 2 b_j^T x_j = -x_j^T (b_j + r_j)
// for the true residual r = b - A x.
func objective(be backend.Backend, x, b, r *mat.Dense, j int) float64 {
	return -(colDot(be, x, b, j) + colDot(be, x, r, j))
}

// isZero reports whether every entry of x is zero (+0 or -0).
func isZero(x *mat.Dense) bool {
	r := x.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		for _, v := range r.Data[i*r.Stride : i*r.Stride+r.Cols] {
			if v != 0 {
				return false
			}
		}
	}
	return true
}

package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/solvers"
)

// unitWeights returns u = sqrt(w) / |sqrt(w)| (sw nil: 1/sqrt(n)), the unit
// vector of the scaled problem's constant column.
func unitWeights(sw []float64, n int) []float64 {
	u := make([]float64, n)
	if sw == nil {
		for i := range u {
			u[i] = 1 / math.Sqrt(float64(n))
		}
		return u
	}
	s := 0.0
	for _, v := range sw {
		s += v * v
	}
	s = math.Sqrt(s)
	for i, v := range sw {
		u[i] = v / s
	}
	return u
}

// centerSym sets the symmetric n x n matrix a to C a C with C = I - u u^T
// (u from unitWeights): the scaled kernel of a fit with a fitted intercept
// (see loo.withFittedIntercept).
func centerSym(a *mat.Dense, u []float64) {
	n, _ := a.Dims()
	au := make([]float64, n) // a u
	for i := 0; i < n; i++ {
		row := a.RawRowView(i)
		d := 0.0
		for j, v := range row {
			d += v * u[j]
		}
		au[i] = d
	}
	g := 0.0 // u^T a u
	for i, v := range au {
		g += u[i] * v
	}
	for i := 0; i < n; i++ {
		row := a.RawRowView(i)
		ui, ai := u[i], au[i]
		for j := range row {
			row[j] += -ui*au[j] - ai*u[j] + g*ui*u[j]
		}
	}
}

// centerCols sets the n x D features z to C z with C = I - u u^T: each
// column loses its component along u.
func centerCols(z *mat.Dense, u []float64) {
	n, D := z.Dims()
	r := make([]float64, D) // u^T z
	for i := 0; i < n; i++ {
		for j, v := range z.RawRowView(i) {
			r[j] += u[i] * v
		}
	}
	for i := 0; i < n; i++ {
		row := z.RawRowView(i)
		for j := range row {
			row[j] -= u[i] * r[j]
		}
	}
}

// checkIntercept validates SearchOptions.Intercept against the method,
// criterion and refit the closed forms support; the logistic loss's
// fits (checkLoss has checked the rest) take either.
func checkIntercept(o *SearchOptions) error {
	switch o.Intercept {
	case "", solvers.InterceptMean:
		return nil
	case solvers.InterceptFitted:
	default:
		_, err := solvers.ParseIntercept(string(o.Intercept))
		return err
	}
	if o.Loss == LossLogistic {
		return nil
	}
	bad := func(reason string) error {
		return &zonal.ParamError{Param: "Intercept", Value: o.Intercept, Reason: reason}
	}
	switch {
	case o.Method != MethodExact && o.Method != MethodFalkon:
		return bad(fmt.Sprintf("a fitted intercept is scored for the krr and falkon methods only, not %s", o.Method))
	case o.Criterion != CriterionLOO && o.Criterion != CriterionGCV:
		return bad("a fitted intercept is scored by leave-one-out or GCV only (Criterion loo or gcv)")
	case o.Refit:
		return bad("Refit fits the mean intercept only: refit with solvers.FitFalkon and FalkonOptions.Intercept")
	}
	return nil
}

// fitted reports whether the search scores fits with a fitted intercept.
func (s *searcher) fitted() bool { return s.opts.Intercept == solvers.InterceptFitted }

// checkBoth validates SearchOptions.BothIntercepts: the search scores the
// mean intercept, and the fitted one is scored as Intercept fitted would
// be (checkIntercept, Refit aside: it refits the mean intercept's best).
func checkBoth(o *SearchOptions) error {
	if !o.BothIntercepts {
		return nil
	}
	bad := func(reason string) error {
		return &zonal.ParamError{Param: "BothIntercepts", Value: o.BothIntercepts, Reason: reason}
	}
	if o.Intercept == solvers.InterceptFitted {
		return bad("the search scores the mean intercept and adds the fitted one: leave Intercept mean")
	}
	if o.Loss == LossLogistic {
		return bad("the fitted intercept is scored for the squared loss only")
	}
	f := *o
	f.Intercept, f.Refit = solvers.InterceptFitted, false
	err := checkIntercept(&f)
	var pe *zonal.ParamError
	if errors.As(err, &pe) {
		return bad(pe.Reason)
	}
	return err
}

// keptGroup is the scaled kernel matrix (orth) or scaled features of a
// group at sigma and size, kept before its eigendecomposition overwrote
// them, and the group's best mean score.
type keptGroup struct {
	sigma float64
	size  int
	m     *mat.Dense
	orth  bool
	mean  float64
}

// planKeep reports whether the group about to be built (its working
// arrays used bytes, the kept matrix r x c) may keep a copy of it for
// BothIntercepts: the copy and the best group's kept one, if any, must fit
// the memory budget next to the working arrays. When they do not, the kept
// one is dropped too (the fitted intercept is then scored by building its
// group again).
func (s *searcher) planKeep(used int64, r, c int) bool {
	if !s.opts.BothIntercepts {
		return false
	}
	need := used + budget.Floats(r, c)
	if s.kept != nil {
		kr, kc := s.kept.m.Dims()
		need += budget.Floats(kr, kc)
	}
	if need <= budget.Or(s.opts.MemoryBudget) {
		return true
	}
	s.kept, s.spare = nil, nil
	return false
}

// retain copies the group's scaled matrix m (planKeep said it fits) into
// the spare array (a new one when its shape differs) as the candidate
// keepBest keeps when the group is the best so far.
func (s *searcher) retain(m *mat.Dense, orth bool) {
	r, c := m.Dims()
	buf := s.spare
	s.spare = nil
	if buf != nil {
		if br, bc := buf.Dims(); br != r || bc != c {
			buf = nil
		}
	}
	if buf == nil {
		buf = mat.NewDense(r, c, nil)
	}
	buf.Copy(m)
	s.cand = &keptGroup{m: buf, orth: orth}
}

// keepBest keeps the group's candidate (retain) when the group's best row
// beats every group evaluated before (s.bestSoFar, not yet updated), and
// makes the array it no longer needs the spare.
func (s *searcher) keepBest(sigma float64, size int, rows []Row) {
	cand := s.cand
	s.cand = nil
	if !s.opts.BothIntercepts {
		return
	}
	best := math.NaN()
	for _, r := range rows {
		if s.better(r.Mean, best) {
			best = r.Mean
		}
	}
	if !s.better(best, s.bestSoFar) {
		if cand != nil {
			s.spare = cand.m
		}
		return
	}
	if s.kept != nil {
		s.spare = s.kept.m
	}
	s.kept = cand
	if cand != nil {
		cand.sigma, cand.size, cand.mean = sigma, size, best
	}
}

// scoreFitted sets res.Fitted (BothIntercepts): the fitted intercept
// scored over every lambda at res.Best's sigma and size, from the kept
// matrix when it is that group's (one more eigendecomposition), else from
// the group built again; when it cannot be scored res.FittedErr says why.
// Only the context's error is returned.
func (s *searcher) scoreFitted(ctx context.Context, res *Result) error {
	kept := s.kept
	s.kept, s.spare, s.cand = nil, nil, nil
	start := time.Now()
	sigma, size := res.Best.Sigma, res.Best.Size
	var rows []Row
	var err error
	if kept != nil && kept.sigma == sigma && kept.size == size {
		s.newAlt()
		var scores [][]float64
		if scores, err = s.looScores(ctx, kept.m, sqrtOf(s.w), kept.orth, true); err == nil {
			rows = s.rowsOf(scores, sigma, size, start)
		}
	} else {
		rows, err = s.evalGroup(ctx, sigma, size, true)
	}
	if err == nil {
		f := s.newResult()
		f.Rows, f.Groups, f.Elapsed = rows, 1, time.Since(start)
		if err = s.pickBest(f); err == nil {
			res.Fitted = f
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	res.FittedErr = err
	return nil
}

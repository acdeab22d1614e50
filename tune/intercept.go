package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
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

// withIntercept marks l for the search's intercept.
func (s *searcher) withIntercept(l *loo) *loo {
	if s.fitted() {
		return l.withFittedIntercept()
	}
	return l
}

package calibrate

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// Platt is Platt scaling: the calibrated probability of score s is
// sigmoid(A s + B) = 1 / (1 + exp(-(A s + B))). (Platt wrote
// 1 / (1 + exp(A s + B)); the signs here make A > 0 for scores that grow
// with the positive class.)
type Platt struct {
	A, B float64
}

// Platt's fit (on standardised scores) stops when the gradient of the
// mean negative log-likelihood is below plattGradTol or the Newton step
// below plattStepTol relative to the parameters: Newton converges
// quadratically near the optimum, so after a step of 1e-10 the error is at
// rounding level. It fails after plattMaxIter steps (a well-posed fit
// needs fewer than 20).
const (
	plattGradTol = 1e-12
	plattStepTol = 1e-10
	plattMaxIter = 100
)

// FitPlatt fits A and B by maximum likelihood to binary labels (the larger
// label value is positive) with Platt's smoothed targets: a positive row
// has target (N+ + 1)/(N+ + 2) and a negative one 1/(N- + 2), where N+ and
// N- are the total weights of the classes. The smoothing is a prior of one
// extra row of each class; it keeps the targets inside (0, 1), so the
// optimum is finite even when the scores separate the classes, and keeps
// one small calibration set from producing probabilities of exactly 0 or
// 1.
//
// The scores are standardised (weighted mean 0, standard deviation 1)
// before the fit and the result mapped back, so the scale of the scores
// does not matter; the negative log-likelihood, strictly convex in (A, B)
// when the scores are not all equal, is minimised by Newton's method with
// a backtracking line search from A = 0, B = log((N+ + 1)/(N- + 1)). When
// the scores are all equal A is 0 and B the log-odds of the mean target.
//
// Errors: zonal.ErrParam (with ErrShape) for lengths that differ;
// ErrEmpty for no rows; ErrNonFinite for a NaN or Inf score or label;
// ErrParam for bad weights or labels that are not two classes (see
// metrics.BinaryLabels); ErrNoConvergence if Newton's method does not
// converge (not seen in practice: the problem is a smooth two-parameter
// convex one).
func FitPlatt(score, y, w []float64) (*Platt, error) {
	pos, err := binaryInput(score, y, w)
	if err != nil {
		return nil, err
	}
	nPos, nNeg, mean := 0.0, 0.0, 0.0
	for i, s := range score {
		if y[i] == pos {
			nPos += weight(w, i)
		} else {
			nNeg += weight(w, i)
		}
		mean += weight(w, i) * s
	}
	total := nPos + nNeg
	mean /= total
	variance := 0.0
	for i, s := range score {
		variance += weight(w, i) * (s - mean) * (s - mean)
	}
	sd := math.Sqrt(variance / total)
	tPos, tNeg := (nPos+1)/(nPos+2), 1/(nNeg+2)
	t := func(i int) float64 {
		if y[i] == pos {
			return tPos
		}
		return tNeg
	}
	if !(sd > 0) || sd/math.Max(1, math.Abs(mean)) < 1e-14 {
		// Constant scores: only B is identified.
		m := (nPos*tPos + nNeg*tNeg) / total
		return &Platt{A: 0, B: math.Log(m / (1 - m))}, nil
	}
	u := make([]float64, len(score))
	for i, s := range score {
		u[i] = (s - mean) / sd
	}
	a, b, err := newtonLogistic(u, t, w, total, math.Log((nPos+1)/(nNeg+1)))
	if err != nil {
		return nil, err
	}
	return &Platt{A: a / sd, B: b - a*mean/sd}, nil
}

// newtonLogistic minimises the mean negative log-likelihood
// f(a, b) = sum_i w_i (log(1 + exp(z_i)) - t_i z_i) / total, z_i = a u_i + b,
// over (a, b) from (0, b0) by Newton steps with Armijo backtracking.
func newtonLogistic(u []float64, t func(int) float64, w []float64, total, b0 float64) (a, b float64, err error) {
	f := func(a, b float64) float64 {
		s := 0.0
		for i, x := range u {
			z := a*x + b
			s += weight(w, i) * (Softplus(z) - t(i)*z)
		}
		return s / total
	}
	a, b = 0, b0
	fx := f(a, b)
	for range plattMaxIter {
		var ga, gb, haa, hab, hbb float64
		for i, x := range u {
			wi := weight(w, i)
			p := Sigmoid(a*x + b)
			r, c := wi*(p-t(i)), wi*p*(1-p)
			ga += r * x
			gb += r
			haa += c * x * x
			hab += c * x
			hbb += c
		}
		ga, gb, haa, hab, hbb = ga/total, gb/total, haa/total, hab/total, hbb/total
		if math.Max(math.Abs(ga), math.Abs(gb)) <= plattGradTol {
			return a, b, nil
		}
		// A tiny ridge keeps the 2 x 2 solve defined when the fitted
		// probabilities saturate; it does not move the optimum, where the
		// gradient is 0.
		haa, hbb = haa+1e-12, hbb+1e-12
		det := haa*hbb - hab*hab
		da := -(hbb*ga - hab*gb) / det
		db := -(haa*gb - hab*ga) / det
		if math.Abs(da) <= plattStepTol*(1+math.Abs(a)) && math.Abs(db) <= plattStepTol*(1+math.Abs(b)) {
			// Newton's error after this step is of the order of its
			// square: rounding level.
			return a + da, b + db, nil
		}
		// -slope = g^T H^-1 g is twice the decrease Newton's model
		// predicts. Below what f can resolve (its rounding, about
		// 1e-16 f) the line search cannot judge the step; the iterate is
		// then so close to the optimum (in the Hessian's norm) that the
		// full step is safe.
		slope := ga*da + gb*db
		if -slope <= 1e-13*(1+math.Abs(fx)) {
			a, b = a+da, b+db
			fx = f(a, b)
			continue
		}
		accepted := false
		for step := 1.0; step > 1e-15; step /= 2 {
			na, nb := a+step*da, b+step*db
			if fn := f(na, nb); fn <= fx+1e-4*step*slope && fn < fx {
				a, b, fx, accepted = na, nb, fn, true
				break
			}
		}
		if !accepted {
			// No decrease along a descent direction: at the optimum to
			// rounding.
			return a, b, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: Platt scaling after %d Newton steps", zonal.ErrNoConvergence, plattMaxIter)
}

// Sigmoid is 1 / (1 + exp(-z)), without overflow (also the link of
// solvers' logistic models).
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Softplus is log(1 + exp(z)), without overflow: the logistic loss of a
// logit -z.
func Softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// Apply returns sigmoid(A score + B) (NaN for a NaN score).
func (p *Platt) Apply(score float64) float64 { return Sigmoid(p.A*score + p.B) }

// Method returns MethodPlatt.
func (p *Platt) Method() Method { return MethodPlatt }

// Validate checks that A and B are finite.
//
// Errors: zonal.ErrFormat (with ErrNonFinite) otherwise.
func (p *Platt) Validate() error {
	if math.IsNaN(p.A) || math.IsInf(p.A, 0) || math.IsNaN(p.B) || math.IsInf(p.B, 0) {
		return fmt.Errorf("%w: %w: Platt parameters A = %g, B = %g", zonal.ErrFormat, zonal.ErrNonFinite, p.A, p.B)
	}
	return nil
}

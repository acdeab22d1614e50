package solvers

import (
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The fitted intercept of logistic FALKON (LogisticOptions.Intercept =
// InterceptFitted): the logits are K_nM alpha + 1 b^T, b one unpenalised
// constant per output, and every Newton step solves for the step in u = T
// alpha and in b jointly (see FitLogistic). These are the b block's pieces.

// minPrior bounds the class priors the initial intercept is the log of: a
// class without (weighted) rows starts at log(1e-12), not -Inf.
const minPrior = 1e-12

// priorLogits returns the intercept the Newton iterations start from, the
// logits of the weighted class priors pi: binary log(pi / (1 - pi)), pi the
// weight of the +1 rows; multinomial log(pi_c) centred to sum zero. With
// alpha = 0 it is the minimiser over b alone: the b gradient is zero there.
func (l *logisticLoss) priorLogits() []float64 {
	if l.K == 1 {
		pi := 0.0
		for i, y := range l.y {
			if y > 0 {
				pi += l.w[i]
			}
		}
		pi = math.Min(math.Max(pi, minPrior), 1-minPrior)
		return []float64{math.Log(pi / (1 - pi))}
	}
	b := make([]float64, l.K)
	for i, c := range l.cls {
		b[c] += l.w[i]
	}
	for c, v := range b {
		b[c] = math.Log(math.Max(v, minPrior))
	}
	zeroSum(b)
	return b
}

// interceptCurvature writes to dst the diagonal of the b block of the
// Hessian: per output sum_i w_i h_i, h_i the row's curvature (binary) or
// p_ic (1 - p_ic) (multinomial), at the curvatures or probabilities P
// (see derivs). It floors the entries at 1e-200 so that their inverse
// square roots, the b block's preconditioner, stay finite.
func (l *logisticLoss) interceptCurvature(dst []float64, P *mat.Dense) {
	clear(dst)
	for i, w := range l.w {
		if w == 0 {
			continue
		}
		p := rowOf(P, i)
		if l.K == 1 {
			dst[0] += w * p[0]
			continue
		}
		for c, v := range p {
			dst[c] += w * v * (1 - v)
		}
	}
	for c, v := range dst {
		dst[c] = math.Max(v, 1e-200)
	}
}

// zeroSum subtracts the mean of v from its entries.
func zeroSum(v []float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for i := range v {
		v[i] -= m
	}
}

// projectOut removes from v its component along the unit vector q.
func projectOut(v, q []float64) {
	d := 0.0
	for i, x := range v {
		d += x * q[i]
	}
	for i := range v {
		v[i] -= d * q[i]
	}
}

// addRows adds c to every row of g.
func addRows(g blas64.General, c []float64) {
	for r := 0; r < g.Rows; r++ {
		row := g.Data[r*g.Stride : r*g.Stride+g.Cols]
		for j, v := range c {
			row[j] += v
		}
	}
}

// addRowSums adds the column sums of g to dst.
func addRowSums(dst []float64, g blas64.General) {
	for r := 0; r < g.Rows; r++ {
		for j, v := range g.Data[r*g.Stride : r*g.Stride+g.Cols] {
			dst[j] += v
		}
	}
}

// dot is the inner product of two slices of the same length.
func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

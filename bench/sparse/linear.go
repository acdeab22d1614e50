package main

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
)

// linearRidge is the one-vs-rest linear baseline on the raw columns, as
// scikit-learn's RidgeClassifier fits it: for every output column y_c,
//
//	min_w,b |X w + b 1 - y_c|^2 + alpha |w|^2,
//
// the intercept unpenalised. With mu the column means of X and ybar the
// target means, w solves (Xc^T Xc + alpha I) w = Xc^T (y - ybar) for the
// centred Xc = X - 1 mu^T, and b = ybar - mu^T w. Xc is never formed (it
// is dense): Xc v = X v - (mu^T v) 1 and Xc^T u = X^T u - (1^T u) mu, so
// each conjugate-gradient iteration costs O(nnz(X) k + d k).
type linearRidge struct {
	w    *mat.Dense // d x k
	bias []float64  // k
}

// fitLinear solves the k systems by conjugate gradients run side by side
// (one pass over X per iteration for all columns), each stopping when its
// residual falls below tol times its right-hand side's norm, or after
// maxIter iterations (an error then).
func fitLinear(ctx context.Context, x *dataset.CSR, y *mat.Dense, alpha, tol float64, maxIter int) (*linearRidge, error) {
	n, d := x.Dims()
	_, k := y.Dims()
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		cols, vals := x.Row(i)
		for t, j := range cols {
			mu[j] += vals[t]
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	ybar := make([]float64, k)
	yc := mat.DenseCopyOf(y)
	for c := 0; c < k; c++ {
		for i := 0; i < n; i++ {
			ybar[c] += y.At(i, c) / float64(n)
		}
		for i := 0; i < n; i++ {
			yc.Set(i, c, y.At(i, c)-ybar[c])
		}
	}
	xv := mat.NewDense(n, k, nil)
	// apply writes (Xc^T Xc + alpha I) v to dst (d x k).
	apply := func(dst, v *mat.Dense) {
		x.MulDense(xv, v)
		centerRows(xv, mu, v)
		xtMul(dst, x, xv, mu)
		dst.Add(dst, scaled(alpha, v))
	}
	b := mat.NewDense(d, k, nil)
	xtMul(b, x, yc, mu)
	w := mat.NewDense(d, k, nil)
	r := mat.DenseCopyOf(b)
	p := mat.DenseCopyOf(b)
	ap := mat.NewDense(d, k, nil)
	rs, bn := colDots(r, r), colDots(b, b)
	done := make([]bool, k)
	for it := 0; ; it++ {
		left := 0
		for c := range done {
			if !done[c] && math.Sqrt(rs[c]) <= tol*math.Sqrt(bn[c]) {
				done[c] = true
			}
			if !done[c] {
				left++
			}
		}
		if left == 0 {
			break
		}
		if it == maxIter {
			return nil, fmt.Errorf("linear ridge: CG did not reach relative residual %g in %d iterations (%d of %d columns left)", tol, maxIter, left, k)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		apply(ap, p)
		pap := colDots(p, ap)
		for c := 0; c < k; c++ {
			if done[c] || pap[c] <= 0 {
				continue
			}
			a := rs[c] / pap[c]
			for j := 0; j < d; j++ {
				w.Set(j, c, w.At(j, c)+a*p.At(j, c))
				r.Set(j, c, r.At(j, c)-a*ap.At(j, c))
			}
		}
		rsNew := colDots(r, r)
		for c := 0; c < k; c++ {
			if done[c] || rs[c] == 0 {
				continue
			}
			beta := rsNew[c] / rs[c]
			for j := 0; j < d; j++ {
				p.Set(j, c, r.At(j, c)+beta*p.At(j, c))
			}
			rs[c] = rsNew[c]
		}
	}
	bias := make([]float64, k)
	for c := 0; c < k; c++ {
		bias[c] = ybar[c]
		for j := 0; j < d; j++ {
			bias[c] -= mu[j] * w.At(j, c)
		}
	}
	return &linearRidge{w: w, bias: bias}, nil
}

// predict returns X w + 1 b^T (n x k) in O(nnz(X) k).
func (l *linearRidge) predict(x *dataset.CSR) *mat.Dense {
	_, k := l.w.Dims()
	out := mat.NewDense(x.Rows, k, nil)
	x.MulDense(out, l.w)
	for i := 0; i < x.Rows; i++ {
		row := out.RawRowView(i)
		for c := range row {
			row[c] += l.bias[c]
		}
	}
	return out
}

// centerRows turns X v into Xc v: subtracts mu^T v from every row of xv.
func centerRows(xv *mat.Dense, mu []float64, v *mat.Dense) {
	_, k := v.Dims()
	shift := make([]float64, k)
	for j, m := range mu {
		if m != 0 {
			for c, vv := range v.RawRowView(j) {
				shift[c] += m * vv
			}
		}
	}
	n, _ := xv.Dims()
	for i := 0; i < n; i++ {
		row := xv.RawRowView(i)
		for c := range row {
			row[c] -= shift[c]
		}
	}
}

// xtMul writes Xc^T u = X^T u - mu (1^T u) to dst (d x k).
func xtMul(dst *mat.Dense, x *dataset.CSR, u *mat.Dense, mu []float64) {
	dst.Zero()
	_, k := u.Dims()
	sum := make([]float64, k)
	for i := 0; i < x.Rows; i++ {
		ui := u.RawRowView(i)
		for c, v := range ui {
			sum[c] += v
		}
		cols, vals := x.Row(i)
		for t, j := range cols {
			row := dst.RawRowView(j)
			for c, v := range ui {
				row[c] += vals[t] * v
			}
		}
	}
	for j, m := range mu {
		if m != 0 {
			row := dst.RawRowView(j)
			for c := range row {
				row[c] -= m * sum[c]
			}
		}
	}
}

func scaled(a float64, v *mat.Dense) *mat.Dense {
	var s mat.Dense
	s.Scale(a, v)
	return &s
}

// colDots returns the inner products of the matching columns of a and b.
func colDots(a, b *mat.Dense) []float64 {
	r, k := a.Dims()
	out := make([]float64, k)
	for i := 0; i < r; i++ {
		ar, br := a.RawRowView(i), b.RawRowView(i)
		for c := range ar {
			out[c] += ar[c] * br[c]
		}
	}
	return out
}

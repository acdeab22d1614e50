package tune

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
)

// loo is the hat matrix of a fit on all n rows in eigen coordinates, for
// closed-form leave-one-out and GCV along the lambda path, c = lambda n:
//
//   - exact KRR (orth): K = V diag(s) V^T, H = V diag(s/(s+c)) V^T and
//     I - H = V diag(c/(s+c)) V^T (evaluated in this form, which stays
//     accurate when c is tiny against s);
//   - ridge on features: Z^T Z = U diag(s) U^T, Q = Z U,
//     H = Q diag(1/(s+c)) Q^T.
//
// The solvers centre the targets (an unpenalised mean): on all rows the fit
// is F = 1 ybar^T + H (Y - 1 ybar^T), the smoother S = J + H (I - J) with
// J = 1 1^T / n. Left-one-out fits keep the absolute regulariser c (a
// solvers fit on the n-1 other rows with lambda' = c/(n-1)) and centre with
// the mean m_i of the other rows. For a no-intercept ridge or KRR fit with
// fixed c, the prediction at row i of the fit on the other rows is linear in
// the targets v and does not depend on v_i:
//
//	g_i(v) = v_i - ((I - H) v)_i / (1 - H_ii),
//
// so the left-out prediction of the centred fit is
//
//	p_i = m_i + g_i(y) - m_i g_i(1),   m_i = (sum_j y_j - y_i) / (n - 1),
//
// exactly (no approximation; TestLOOMatchesRefits compares it with n
// refits). GCV is n |(I - S) Y|_F^2 / tr(I - S)^2 with
// (I - S) Y = (I - H) Y_c and tr(I - S) = n - 1 - tr H + 1^T H 1 / n.
//
// Weighted (SearchOptions.Weights, all positive here), the fit with
// weights w and c = lambda sum(w) is the unweighted no-intercept fit of the
// scaled problem: rows sqrt(w_i) z_i (KRR: the kernel D K D, D =
// diag(sqrt(w))) and targets sqrt(w_i) v_i, whose hat matrix H is built
// here from the scaled basis. Its left-out residual at row i is sqrt(w_i)
// times the real one, so
//
//	g_i(v) = v_i - ((I - H) D v)_i / (sqrt(w_i) (1 - H_ii)),
//
// and the left-out fit (weights w without w_i, the same c, so lambda' =
// c / (sum(w) - w_i)) centres with the weighted mean of the others,
// m_i = (sum_j w_j y_j - w_i y_i) / (sum(w) - w_i): p_i is the formula
// above with these g_i and m_i (TestLOOWeightedMatchesRefits). GCV is
// evaluated on the scaled problem with the weighted-mean smoother
// J = sqrt(w) sqrt(w)^T / sum(w): n^2 |(I - H)(I - J) D Y|^2 /
// (sum(w) tr(I - S)^2), tr(I - S) = n - 1 - tr H + sqrt(w)^T H sqrt(w) /
// sum(w), which is the unweighted GCV when every w_i is 1.
type loo struct {
	q    *mat.Dense // n x r: V (orth) or Z U
	s    []float64
	t    *mat.Dense // n x k targets
	ts   *mat.Dense // n x k targets times sqrt(w) (t when unweighted)
	sw   []float64  // sqrt(w_i); nil: unweighted
	wy   []float64  // sum_i w_i y_i per output
	wsum float64    // sum(w) (n when unweighted)
	qt   *mat.Dense // r x (k+1): Q^T [D Y, sqrt(w)] (Q^T [Y 1] unweighted)
	qn   []float64  // squared column norms of Q
	orth bool
	w    []float64  // per-lambda weights
	tmp  *mat.Dense // r x (k+1)
	res  *mat.Dense // n x (k+1): (I - H) [Y 1]
	h    []float64  // 1 - H_ii
	// resAll and hAll are res and h for each lambda of the last evalAll.
	resAll, hAll *mat.Dense
	// fitted: the intercept is fitted with the expansion (see fitted below).
	fitted bool
}

// newLOO prepares the closed forms for the basis q and eigenvalues s of the
// (scaled, when sw is not nil) problem, the targets t and sw = sqrt(w).
func newLOO(be backend.Backend, q *mat.Dense, s []float64, t *mat.Dense, sw []float64, orth bool) *loo {
	n, r := q.Dims()
	_, k := t.Dims()
	l := &loo{q: q, s: s, t: t, ts: t, sw: sw, wy: make([]float64, k), wsum: float64(n), orth: orth, qt: mat.NewDense(r, k+1, nil), qn: make([]float64, r),
		w: make([]float64, r), tmp: mat.NewDense(r, k+1, nil), res: mat.NewDense(n, k+1, nil), h: make([]float64, n)}
	if sw != nil {
		l.ts, l.wsum = mat.DenseCopyOf(t), 0
		for i := 0; i < n; i++ {
			for j := range l.ts.RawRowView(i) {
				l.ts.RawRowView(i)[j] *= sw[i]
			}
			l.wsum += sw[i] * sw[i]
		}
	}
	y1 := mat.NewDense(n, k+1, nil)
	for i := 0; i < n; i++ {
		row := y1.RawRowView(i)
		copy(row, l.ts.RawRowView(i))
		row[k] = l.sqrtW(i)
		for j, v := range t.RawRowView(i) {
			l.wy[j] += l.sqrtW(i) * l.sqrtW(i) * v
		}
	}
	be.Gemm(blas.Trans, blas.NoTrans, 1, q.RawMatrix(), y1.RawMatrix(), 0, l.qt.RawMatrix())
	for i := 0; i < n; i++ {
		for j, v := range q.RawRowView(i) {
			l.qn[j] += v * v
		}
	}
	return l
}

// sqrtW is sqrt(w_i) (1 when unweighted).
func (l *loo) sqrtW(i int) float64 {
	if l.sw == nil {
		return 1
	}
	return l.sw[i]
}

// eval computes, for lambda, res = (I - H)[D Y, sqrt(w)] and h_i = 1 - H_ii.
func (l *loo) eval(be backend.Backend, lambda float64) {
	n, r := l.q.Dims()
	c := lambda * l.wsum
	for j := 0; j < r; j++ {
		if l.orth {
			l.w[j] = c / (l.s[j] + c)
		} else {
			l.w[j] = 1 / (l.s[j] + c)
		}
		src, dst := l.qt.RawRowView(j), l.tmp.RawRowView(j)
		for t := range dst {
			dst[t] = l.w[j] * src[t]
		}
	}
	be.Gemm(blas.NoTrans, blas.NoTrans, 1, l.q.RawMatrix(), l.tmp.RawMatrix(), 0, l.res.RawMatrix())
	_, k := l.t.Dims()
	for i := 0; i < n; i++ {
		qi := l.q.RawRowView(i)
		d := 0.0
		for j, v := range qi {
			d += v * v * l.w[j]
		}
		if l.orth {
			l.h[i] = d
			continue
		}
		l.h[i] = 1 - d
		row, y := l.res.RawRowView(i), l.ts.RawRowView(i)
		for t := 0; t < k; t++ {
			row[t] = y[t] - row[t]
		}
		row[k] = l.sqrtW(i) - row[k]
	}
}

// looChunkBytes bounds the arrays of one evalAll call: the lambdas of a
// search are evaluated in chunks whose residuals and leverages, n (k + 2)
// floats per lambda, take at most this much.
const looChunkBytes = 32 << 20

// looChunk is the number of lambdas evalAll takes at once for n rows and k
// outputs (at least 1).
func looChunk(n, k int) int {
	return max(1, int(looChunkBytes/(8*int64(n)*int64(k+2))))
}

// evalAll is eval for each of lambdas at once: resAll[:, li (k+1) : (li+1)
// (k+1)] is eval's res and hAll[:, li] its h for lambdas[li]. One GEMM of
// the basis by the stacked scaled projections gives every residual, and one
// of the squared basis (256 rows at a time) by the stacked weights every
// leverage, where eval takes a pass over the basis per lambda (a GEMM and
// a scalar loop of n r products): on 5631 rows and 1024 tuning centres the
// ten lambdas' scalar loops were 0.75 of the 12 s of choosing in a CPU
// profile of CPS1988's default fit. The sums are the same, in another
// order.
func (l *loo) evalAll(be backend.Backend, lambdas []float64) {
	n, r := l.q.Dims()
	_, k := l.t.Dims()
	k1, nl := k+1, len(lambdas)
	tw := mat.NewDense(r, nl*k1, nil)
	ww := mat.NewDense(r, nl, nil)
	for li, lam := range lambdas {
		c := lam * l.wsum
		for j := 0; j < r; j++ {
			wj := 1 / (l.s[j] + c)
			if l.orth {
				wj = c / (l.s[j] + c)
			}
			ww.Set(j, li, wj)
			src, dst := l.qt.RawRowView(j), tw.RawRowView(j)[li*k1:(li+1)*k1]
			for t := range dst {
				dst[t] = wj * src[t]
			}
		}
	}
	if l.resAll == nil || l.resAll.RawMatrix().Cols != nl*k1 {
		l.resAll, l.hAll = mat.NewDense(n, nl*k1, nil), mat.NewDense(n, nl, nil)
	}
	be.Gemm(blas.NoTrans, blas.NoTrans, 1, l.q.RawMatrix(), tw.RawMatrix(), 0, l.resAll.RawMatrix())
	bs := min(n, 256)
	sq := mat.NewDense(bs, r, nil)
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		sb := sq.Slice(0, i1-i0, 0, r).(*mat.Dense)
		for i := i0; i < i1; i++ {
			dst := sb.RawRowView(i - i0)
			for j, v := range l.q.RawRowView(i) {
				dst[j] = v * v
			}
		}
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, sb.RawMatrix(), ww.RawMatrix(), 0, l.hAll.Slice(i0, i1, 0, nl).(*mat.Dense).RawMatrix())
	}
	for i := 0; i < n; i++ {
		hrow, rrow, y := l.hAll.RawRowView(i), l.resAll.RawRowView(i), l.ts.RawRowView(i)
		if l.orth {
			continue
		}
		for li := range hrow {
			hrow[li] = 1 - hrow[li]
			row := rrow[li*k1 : (li+1)*k1]
			for t := 0; t < k; t++ {
				row[t] = y[t] - row[t]
			}
			row[k] = l.sqrtW(i) - row[k]
		}
	}
}

// predictAt is predict for lambdas[li] of the last evalAll.
func (l *loo) predictAt(dst *mat.Dense, li int) {
	n, k := l.t.Dims()
	k1 := k + 1
	for i := 0; i < n; i++ {
		l.predictRow(dst.RawRowView(i), i, l.resAll.RawRowView(i)[li*k1:(li+1)*k1], l.hAll.At(i, li))
	}
}

// minLeverageGap is the smallest 1 - H_ii the ridge form trusts. There
// 1 - H_ii = 1 - sum_j Q_ij^2 / (s_j + c) is a difference whose terms are
// each at most 1, so its rounding error is about r 2^-52 (1e-13 for
// r = 500): below 1e-8 the left-out prediction would have fewer than five
// correct digits, and the row's prediction is reported as NaN (the
// setting then scores NaN and is never chosen). The KRR form adds positive
// terms only and needs no such floor.
const minLeverageGap = 1e-8

// predict writes the leave-one-out predictions for lambda to dst (n x k).
func (l *loo) predict(be backend.Backend, dst *mat.Dense, lambda float64) {
	l.eval(be, lambda)
	n, _ := l.t.Dims()
	for i := 0; i < n; i++ {
		l.predictRow(dst.RawRowView(i), i, l.res.RawRowView(i), l.h[i])
	}
}

// predictRow writes the left-out prediction of row i to out from the row's
// residuals res ((I - H)[D Y, sqrt(w)], k + 1 values) and h = 1 - H_ii.
func (l *loo) predictRow(out []float64, i int, res []float64, h float64) {
	k := len(out)
	y := l.t.RawRowView(i)
	if !l.orth && h < minLeverageGap {
		for t := range out {
			out[t] = math.NaN()
		}
		return
	}
	si := l.sqrtW(i)
	wi := si * si
	if l.fitted {
		// See withFittedIntercept: 1 - H_ii = 1 - J_ii - G_ii.
		hh := h - wi/l.wsum
		if hh < minLeverageGap {
			for t := range out {
				out[t] = math.NaN()
			}
			return
		}
		for t := 0; t < k; t++ {
			out[t] = y[t] - (res[t]-res[k]*l.wy[t]/l.wsum)/(si*hh)
		}
		return
	}
	g1 := 1 - res[k]/(si*h)
	for t := 0; t < k; t++ {
		m := (l.wy[t] - wi*y[t]) / (l.wsum - wi)
		gy := y[t] - res[t]/(si*h)
		out[t] = m + gy - m*g1
	}
}

// withFittedIntercept marks l as the closed form of a fit whose intercept
// is fitted with the expansion, unpenalised (solvers.InterceptFitted). Its
// basis must be the centred one: the eigenvectors of C D K D C, or Q = C D
// Z U, with C = I - J and J = sqrt(w) sqrt(w)^T / sum(w) (centerSym,
// centerCols). The fit on all rows is then D F = J D Y + G (I - J) D Y
// with G the hat matrix of the centred basis (G sqrt(w) = 0), so
// H = J + G (I - J) and, because the whole fit is one penalised least
// squares problem with a fixed regulariser, the left-out residual at row i
// is the fitted one over 1 - H_ii (no other approximation):
//
//	y_i - p_i = ((I - G)(I - J) D Y)_i / (sqrt(w_i) (1 - w_i/sum(w) - G_ii)),
//
// where (I - G)(I - J) D Y = (I - G) D Y - (I - G) sqrt(w) (sum_j w_j y_j) / sum(w)
// is read off the columns eval computes. GCV needs nothing new: with a
// centred basis the formula below is that of the fitted intercept too
// (1^T H 1 / n and the mean's term are those of J).
func (l *loo) withFittedIntercept() *loo {
	l.fitted = true
	return l
}

// gcv returns n |(I - S) Y|_F^2 / tr(I - S)^2 for lambda.
func (l *loo) gcv(be backend.Backend, lambda float64) float64 {
	l.eval(be, lambda)
	n, k := l.t.Dims()
	mean := make([]float64, k)
	for t := range mean {
		mean[t] = l.wy[t] / l.wsum
	}
	num := 0.0
	for i := 0; i < n; i++ {
		res := l.res.RawRowView(i)
		for t := 0; t < k; t++ {
			e := res[t] - mean[t]*res[k] // (I-H) D (y - ybar 1)
			num += e * e
		}
	}
	// 1^T H 1 and tr H from the weights.
	var tr float64
	if l.orth {
		// n - tr H = sum c/(s+c); 1^T H 1 = n - sum w (V^T 1)^2.
		nmTr, oneIH1 := 0.0, 0.0
		for j, w := range l.w {
			nmTr += w
			q1 := l.qt.At(j, k)
			oneIH1 += w * q1 * q1
		}
		tr = nmTr - oneIH1/l.wsum
	} else {
		trH, oneH1 := 0.0, 0.0
		for j, w := range l.w {
			trH += w * l.qn[j]
			q1 := l.qt.At(j, k)
			oneH1 += w * q1 * q1
		}
		tr = float64(n) - 1 - trH + oneH1/l.wsum
	}
	return float64(n) * float64(n) / l.wsum * num / (tr * tr)
}

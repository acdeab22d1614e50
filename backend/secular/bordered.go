package secular

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/floatpool"
)

// Bordered computes the eigendecomposition of the bordered matrix
//
//	B [ diag(d)  z     ] B^T,   B = [ U  w_top ],   z = U^T v,
//	  [ z^T      alpha ]            [ 0  w_last ]
//
// U being n x m with orthonormal columns, v of length n, and w a unit vector
// of length n+1 orthogonal to the columns of [U; 0] (nil means e_{n+1}, so B
// = diag(U, 1)). Expanded, the matrix is
//
//	[U; 0] diag(d) [U; 0]^T + [U; 0] z w^T + w z^T [U; 0]^T + alpha w w^T,
//
// so with w = e_{n+1} and U square (or v in span U), M = U diag(d) U^T is
// bordered by one row and column: [M v; v^T alpha] exactly.
//
// The new m+1 eigenvalues go to dOut (ascending) and the eigenvectors to
// the columns of uOut ((n+1) x (m+1)); dOut and uOut must not alias d, u or
// v. d need not be sorted.
//
// The inner (m+1) x (m+1) arrowhead problem is solved like the rank-one
// update (see the package documentation): the problem is scaled by a power
// of two; with tol = 8 eps max(max|d|, |alpha|, |z|), a component with
// |z_i| <= tol is deflated (the pair (d_i, [u_i; 0]) is kept) and two poles
// whose Givens rotation zeroing one z leaves an off-diagonal <= tol are
// merged; the K+1 roots of the remaining arrowhead secular equation are
// found by ArrowRoot's iteration; z is recomputed from the roots by the
// arrowhead Lowner formula (Gu and Eisenstat)
//
//	zhat_i^2 = prod_{j=0..K} |lambda_j - d_i| / prod_{j != i} |d_j - d_i|,
//
// for which the computed roots are the exact eigenvalues of an arrowhead
// matrix, and the inner eigenvector of root lambda is
// (zhat_1/(lambda - d_1), .., zhat_K/(lambda - d_K), 1) normalised, so the
// eigenvectors are orthogonal to working precision. The eigenvectors in the
// original basis are B_active Q: ONE n x K by K x (K+1) product (gemm; nil
// means gonum's blas64.Gemm) for the U block, plus the rank-one term
// w_top q_last^T in O(nK) when w is given, and the last row w_last q_last^T.
//
// Errors wrap zonal.ErrShape (inconsistent shapes), zonal.ErrNonFinite (NaN
// or Inf in d, u, v, alpha or w, or an eigenvalue beyond the float64 range)
// and zonal.ErrNoConvergence (not observed).
// On error dOut and uOut are unspecified.
func Bordered(gemm GemmFunc, d []float64, u blas64.General, v []float64, alpha float64, w []float64, dOut []float64, uOut blas64.General) error {
	n, m := u.Rows, u.Cols
	if err := checkGeneral("u", u); err != nil {
		return err
	}
	if err := checkGeneral("uOut", uOut); err != nil {
		return err
	}
	if len(d) != m || len(v) != n || len(dOut) != m+1 || uOut.Rows != n+1 || uOut.Cols != m+1 || (w != nil && len(w) != n+1) {
		return fmt.Errorf("secular: Bordered: u %dx%d, len(d) %d, len(v) %d, len(w) %d, len(dOut) %d, uOut %dx%d: %w",
			n, m, len(d), len(v), len(w), len(dOut), uOut.Rows, uOut.Cols, zonal.ErrShape)
	}
	if !finite(alpha) || !allFinite(d) || !allFinite(v) || !allFinite(w) {
		return fmt.Errorf("secular: Bordered: d, v, alpha or w: %w", zonal.ErrNonFinite)
	}
	for r := 0; r < n; r++ {
		if !allFinite(u.Data[r*u.Stride : r*u.Stride+m]) {
			return fmt.Errorf("secular: Bordered: u row %d: %w", r, zonal.ErrNonFinite)
		}
	}
	if gemm == nil {
		gemm = blas64.Gemm
	}
	z := make([]float64, m)
	if n > 0 && m > 0 {
		blas64.Gemv(blas.Trans, 1, u, blas64.Vector{N: n, Inc: 1, Data: v}, 0, blas64.Vector{N: m, Inc: 1, Data: z})
	}
	if !allFinite(z) {
		return fmt.Errorf("secular: Bordered: z = U^T v overflows: %w", zonal.ErrNonFinite)
	}

	// Working order: d ascending; q = U's columns in that order.
	perm := make([]int, m)
	for k := range perm {
		perm[k] = k
	}
	if !sort.SliceIsSorted(perm, func(a, b int) bool { return d[perm[a]] < d[perm[b]] }) {
		sort.SliceStable(perm, func(a, b int) bool { return d[perm[a]] < d[perm[b]] })
	}
	dw := make([]float64, m)
	zw := make([]float64, m)
	for k, p := range perm {
		dw[k], zw[k] = d[p], z[p]
	}
	qBuf := floatpool.Get(n * m)
	defer floatpool.Put(qBuf)
	q := blas64.General{Rows: n, Cols: m, Stride: max(m, 1), Data: *qBuf}
	for row := 0; row < n; row++ {
		src := u.Data[row*u.Stride:]
		dst := q.Data[row*q.Stride : row*q.Stride+m]
		for k, p := range perm {
			dst[k] = src[p]
		}
	}

	// Scale by a power of two so the largest of |d|, |alpha|, |z| is ~1.
	smax := math.Max(math.Abs(alpha), nrm2(zw))
	for _, x := range dw {
		smax = math.Max(smax, math.Abs(x))
	}
	if math.IsInf(smax, 0) {
		return fmt.Errorf("secular: Bordered: |z| overflows: %w", zonal.ErrNonFinite)
	}
	e := 0
	if smax > 0 {
		e = math.Ilogb(smax)
	}
	for k := range dw {
		dw[k] = math.Ldexp(dw[k], -e)
		zw[k] = math.Ldexp(zw[k], -e)
	}
	al := math.Ldexp(alpha, -e)
	scale := math.Ldexp(smax, -e)

	// Deflation (as in Update).
	tol := 8 * eps * scale
	active := make([]int, 0, m)
	prev := -1
	for k := 0; k < m; k++ {
		if math.Abs(zw[k]) <= tol {
			continue
		}
		if prev < 0 {
			prev = k
			continue
		}
		t := math.Hypot(zw[prev], zw[k])
		c, s := zw[k]/t, -zw[prev]/t
		if math.Abs(c*s*(dw[k]-dw[prev])) <= tol {
			zw[prev], zw[k] = 0, t
			dp, dk := dw[prev], dw[k]
			dw[prev] = c*c*dp + s*s*dk
			dw[k] = s*s*dp + c*c*dk
			for row := 0; row < n; row++ {
				x := q.Data[row*q.Stride:]
				a, b := x[prev], x[k]
				x[prev] = c*a + s*b
				x[k] = c*b - s*a
			}
			prev = k
			continue
		}
		active = append(active, prev)
		prev = k
	}
	if prev >= 0 {
		active = append(active, prev)
	}
	kk := len(active)
	// The merged poles must stay strictly increasing for the root finder;
	// a rotation can leave two equal values only when the pair's
	// off-diagonal was already below tol, so a tie is deflated here.
	for j := 1; j < len(active); j++ {
		if !(dw[active[j]] > dw[active[j-1]]) {
			return fmt.Errorf("secular: Bordered: poles not separated after deflation: %w", zonal.ErrNoConvergence)
		}
	}

	qtBuf := floatpool.Get((kk + 1) * (kk + 1))
	defer floatpool.Put(qtBuf)
	lam, qt, err := solveArrow(active, dw, zw, al, (*qtBuf)[:(kk+1)*(kk+1)])
	if err != nil {
		return err
	}

	// T = B_active Q ((n+1) x (K+1)).
	tBuf := floatpool.Get((n + 1) * (kk + 1))
	defer floatpool.Put(tBuf)
	t := blas64.General{Rows: n + 1, Cols: kk + 1, Stride: kk + 1, Data: (*tBuf)[:(n+1)*(kk+1)]}
	if n > 0 {
		top := blas64.General{Rows: n, Cols: kk + 1, Stride: kk + 1, Data: t.Data[:n*(kk+1)]}
		if kk > 0 {
			qa := q
			if kk < m {
				qaBuf := floatpool.Get(n * kk)
				defer floatpool.Put(qaBuf)
				qa = blas64.General{Rows: n, Cols: kk, Stride: kk, Data: *qaBuf}
				for row := 0; row < n; row++ {
					src := q.Data[row*q.Stride:]
					dst := qa.Data[row*kk : row*kk+kk]
					for j, a := range active {
						dst[j] = src[a]
					}
				}
			}
			// Rows of qt are the inner eigenvectors; its first K columns
			// multiply the U block.
			qtK := blas64.General{Rows: kk + 1, Cols: kk, Stride: kk + 1, Data: qt.Data}
			gemm(blas.NoTrans, blas.Trans, 1, qa, qtK, 0, top)
		} else {
			clear(top.Data)
		}
		if w != nil {
			for row := 0; row < n; row++ {
				wr := w[row]
				if wr == 0 {
					continue
				}
				dst := t.Data[row*t.Stride : row*t.Stride+kk+1]
				for j := range dst {
					dst[j] += wr * qt.Data[j*qt.Stride+kk]
				}
			}
		}
	}
	wl := 1.0
	if w != nil {
		wl = w[n]
	}
	last := t.Data[n*t.Stride : n*t.Stride+kk+1]
	for j := range last {
		last[j] = wl * qt.Data[j*qt.Stride+kk]
	}

	// Merge the deflated pairs (value dw[k], column [q_k; 0]) with the roots.
	type pair struct {
		val float64
		src int // >= 0: column of T; < 0: deflated column -src-1 of q
	}
	pairs := make([]pair, 0, m+1)
	isActive := make([]bool, m)
	for _, a := range active {
		isActive[a] = true
	}
	for k := 0; k < m; k++ {
		if !isActive[k] {
			pairs = append(pairs, pair{math.Ldexp(dw[k], e), -k - 1})
		}
	}
	for j, l := range lam {
		pairs = append(pairs, pair{math.Ldexp(l, e), j})
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].val < pairs[b].val })
	for p, pr := range pairs {
		if math.IsInf(pr.val, 0) {
			return fmt.Errorf("secular: Bordered: an eigenvalue overflows: %w", zonal.ErrNonFinite)
		}
		dOut[p] = pr.val
	}
	for row := 0; row <= n; row++ {
		dst := uOut.Data[row*uOut.Stride : row*uOut.Stride+m+1]
		tr := t.Data[row*t.Stride:]
		for p, pr := range pairs {
			switch {
			case pr.src >= 0:
				dst[p] = tr[pr.src]
			case row < n:
				dst[p] = q.Data[row*q.Stride-pr.src-1]
			default:
				dst[p] = 0
			}
		}
	}
	return nil
}

// solveArrow solves the non-deflated arrowhead problem with poles
// dw[active] (strictly increasing), border zw[active] and corner alpha: it
// returns the K+1 roots ascending and, in buf ((K+1) x (K+1), row j = the
// unit eigenvector of root j, last entry for the corner), the eigenvectors
// from the Gu-Eisenstat recomputed zhat. The roots and the eigenvectors are
// split over goroutines by ranges of roots.
func solveArrow(active []int, dw, zw []float64, alpha float64, buf []float64) ([]float64, blas64.General, error) {
	kk := len(active)
	st := kk + 1
	qt := blas64.General{Rows: kk + 1, Cols: kk + 1, Stride: st, Data: buf}
	lam := make([]float64, kk+1)
	if kk == 0 {
		lam[0] = alpha
		buf[0] = 1
		return lam, qt, nil
	}
	dA := make([]float64, kk)
	zA := make([]float64, kk)
	for j, a := range active {
		dA[j], zA[j] = dw[a], zw[a]
	}
	p := newArrowProblem(dA, zA, alpha)
	// Row j of qt first holds d_i - lambda_j (i < K).
	chunks := splitRange(kk + 1)
	errsBy := make([]error, len(chunks))
	parallel(chunks, func(c, lo, hi int) {
		for j := lo; j < hi; j++ {
			row := qt.Data[j*st : j*st+kk]
			l, err := p.root(j, row)
			if err == nil && !finite(l) {
				err = fmt.Errorf("root %g", l)
			}
			if err != nil {
				errsBy[c] = fmt.Errorf("secular: Bordered: root %d of %d: %w (%w)", j, kk+1, zonal.ErrNoConvergence, err)
				return
			}
			lam[j] = l
		}
	})
	for _, err := range errsBy {
		if err != nil {
			return nil, qt, err
		}
	}
	// zhat_i^2 = (d_i - lambda_i)(lambda_{i+1} - d_i) times, for the other
	// roots, |d_i - lambda_j| / |d_i - d_p(j)| with the pole p(j) = j for
	// j < i and j-1 for j > i+1 (each ratio pairs a root with an
	// interlacing neighbour pole, so no partial product over- or
	// underflows). Each worker multiplies the factors of its roots.
	part := make([][]float64, len(chunks))
	parallel(chunks, func(c, lo, hi int) {
		zh := make([]float64, kk)
		for i := range zh {
			zh[i] = 1
		}
		for j := lo; j < hi; j++ {
			row := qt.Data[j*st : j*st+kk]
			for i, x := range row {
				switch {
				case j == i || j == i+1:
					zh[i] *= math.Abs(x)
				case j < i:
					zh[i] *= math.Abs(x / (dA[i] - dA[j]))
				default:
					zh[i] *= math.Abs(x / (dA[i] - dA[j-1]))
				}
			}
		}
		part[c] = zh
	})
	zh := part[0]
	for _, pp := range part[1:] {
		for i, v := range pp {
			zh[i] *= v
		}
	}
	for i, v := range zh {
		zh[i] = math.Copysign(math.Sqrt(v), zA[i])
	}
	parallel(chunks, func(c, lo, hi int) {
		for j := lo; j < hi; j++ {
			row := qt.Data[j*st : j*st+kk+1]
			for i := 0; i < kk; i++ {
				row[i] = -zh[i] / row[i] // zhat_i / (lambda_j - d_i)
			}
			row[kk] = 1
			nrm := nrm2(row)
			if !(nrm > 0) || math.IsInf(nrm, 0) {
				errsBy[c] = fmt.Errorf("secular: Bordered: eigenvector %d of %d has norm %g: %w", j, kk+1, nrm, zonal.ErrNoConvergence)
				return
			}
			for i := range row {
				row[i] /= nrm
			}
		}
	})
	for _, err := range errsBy {
		if err != nil {
			return nil, qt, err
		}
	}
	return lam, qt, nil
}

package kpca

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// rankOne is the symmetric rank-one term rho v v^T.
type rankOne struct {
	rho float64
	v   []float64
}

// borderTerms returns the expansion value c and the two rank-one terms that
// turn diag(M, c) into [M b; b^T kappa] (see the package documentation). When
// b == 0 and kappa == 0 no term is needed and c = 0. The returned vectors have
// length len(b)+1.
func borderTerms(b []float64, kappa float64) (c float64, terms []rankOne) {
	nb := norm2(b)
	gamma := math.Max(math.Abs(kappa)/4, nb)
	if gamma == 0 {
		return kappa, nil
	}
	c = kappa / 4
	s := (3*kappa/4 + gamma) / 2
	t := (3*kappa/4 - gamma) / 2
	v1 := make([]float64, len(b)+1)
	v2 := make([]float64, len(b)+1)
	copy(v1, b)
	copy(v2, b)
	v1[len(b)] = s
	v2[len(b)] = t
	return c, []rankOne{{1 / gamma, v1}, {-1 / gamma, v2}}
}

// helmertTerms returns, for the mean-adjusted matrix, the expansion value c,
// the unit vector h (length m+1) that takes the place of e_{m+1} in the
// expansion, and the two rank-one terms (vectors of length m+1) that turn
// [K'_m 0; 0 0] + c h h^T into K'_{m+1} (see the package documentation).
// rowSum and total are the sums of the uncentred m x m matrix before the
// addition, a and k the new kernel column and diagonal; m = len(a) >= 1.
func helmertTerms(rowSum []float64, total float64, a []float64, k float64) (c float64, h []float64, terms []rankOne) {
	m := len(a)
	g, kappa, h := helmertBorder(rowSum, total, a, k)
	c, border := borderTerms(g, kappa)
	// borderTerms' vectors are [g; s] in the basis ([I_m; 0], e): map the last
	// coordinate onto h.
	for _, t := range border {
		s := t.v[m]
		for i := 0; i <= m; i++ {
			if i < m {
				t.v[i] += s * h[i]
			} else {
				t.v[i] = s * h[m]
			}
		}
	}
	return c, h, border
}

// helmertBorder returns the bordering of the mean-adjusted matrix in the
// Helmert basis (see the package documentation): g = Q_m b_C =
// H_m (K_m 1 - m a)/sqrt(m(m+1)) (length m), the corner kappa of C_{m+1},
// and the unit vector h = ([1_m; 0] - m e_{m+1})/sqrt(m(m+1)) that extends
// the basis. rowSum and total are the sums of the uncentred m x m matrix
// before the addition, a and k the new kernel column and diagonal;
// m = len(a) >= 1.
func helmertBorder(rowSum []float64, total float64, a []float64, k float64) (g []float64, kappa float64, h []float64) {
	m := len(a)
	fm := float64(m)
	nrm := math.Sqrt(fm * (fm + 1))
	h = make([]float64, m+1)
	for i := range a {
		h[i] = 1 / nrm
	}
	h[m] = -fm / nrm
	g = make([]float64, m)
	sa, sg := 0.0, 0.0
	for i, ai := range a {
		g[i] = (rowSum[i] - fm*ai) / nrm
		sa += ai
		sg += g[i]
	}
	for i := range g {
		g[i] -= sg / fm
	}
	kappa = (total - 2*fm*sa + fm*fm*k) / (fm * (fm + 1))
	return g, kappa, h
}

// norm2 returns the Euclidean norm of x without overflow.
func norm2(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return blas64.Nrm2(blas64.Vector{N: len(x), Inc: 1, Data: x})
}

// eigState is an eigendecomposition M ~ U diag(d) U^T with d ascending and U
// an n x r row-major matrix (stride st) held in one of two ping-pong buffers
// so that every rank-one update writes to the other buffer.
type eigState struct {
	n, r   int
	st     int // stride of both buffers (column capacity)
	rowCap int // row capacity of both buffers
	d      []float64
	dTmp   []float64
	buf    [2][]float64
	cur    int // which buffer holds U
	off    int // column offset of U inside buf[cur] (after dropping the smallest pair)
}

func (e *eigState) u() blas64.General {
	return blas64.General{Rows: e.n, Cols: e.r, Stride: e.st, Data: e.buf[e.cur][e.off:]}
}

// reserve makes room for nCap rows and cCap columns, keeping the contents.
func (e *eigState) reserve(nCap, cCap int) {
	if nCap <= e.rowCap && cCap <= e.st {
		return
	}
	nCap = max(nCap, e.rowCap)
	st := max(cCap, e.st)
	old := e.u()
	nb := [2][]float64{make([]float64, nCap*st), make([]float64, nCap*st)}
	for i := 0; i < e.n; i++ {
		copy(nb[0][i*st:i*st+e.r], old.Data[i*old.Stride:i*old.Stride+e.r])
	}
	e.buf, e.st, e.rowCap, e.cur, e.off = nb, st, nCap, 0, 0
	if cap(e.d) < st {
		d := make([]float64, len(e.d), st)
		copy(d, e.d)
		e.d = d
	}
	if cap(e.dTmp) < st {
		e.dTmp = make([]float64, 0, st)
	}
}

// expand appends one row and one column: the new eigenvalue c with the
// eigenvector dir (a unit vector of length n+1 orthogonal to [U; 0]; nil
// means e_{n+1}), and then one column of eigenvalue 0 for each vector in
// extra (length n+1) that has a component outside the expanded basis (its
// normalised residual after two Gram-Schmidt passes). Columns are kept in
// ascending order of their values. It returns the number of extra columns.
func (e *eigState) expand(c float64, dir []float64, extra [][]float64) int {
	old := e.u()
	n1, r1 := e.n+1, e.r+1
	// Residual columns, orthogonal to [U 0; 0 1] and to each other.
	var res [][]float64
	for _, v := range extra {
		nv := norm2(v)
		if nv == 0 {
			continue
		}
		w := append([]float64(nil), v...)
		for pass := 0; pass < 2; pass++ {
			// w -= [U; 0] ([U; 0]^T w), then against dir and earlier residuals.
			if e.r > 0 && e.n > 0 {
				z := make([]float64, e.r)
				for i := 0; i < e.n; i++ {
					row := old.Data[i*old.Stride : i*old.Stride+e.r]
					for j, uij := range row {
						z[j] += uij * w[i]
					}
				}
				for i := 0; i < e.n; i++ {
					row := old.Data[i*old.Stride : i*old.Stride+e.r]
					s := 0.0
					for j, uij := range row {
						s += uij * z[j]
					}
					w[i] -= s
				}
			}
			if dir == nil {
				w[e.n] = 0
			} else {
				subtractProjection(w, dir)
			}
			for _, q := range res {
				subtractProjection(w, q)
			}
		}
		nw := norm2(w)
		if nw <= 1e-10*nv || r1+len(res) >= n1 {
			continue
		}
		for i := range w {
			w[i] /= nw
		}
		res = append(res, w)
	}
	e.place(c, dir, res)
	return len(res)
}

// subtractProjection sets w -= (q^T w) q for a unit vector q.
func subtractProjection(w, q []float64) {
	s := 0.0
	for i := range q {
		s += q[i] * w[i]
	}
	for i := range q {
		w[i] -= s * q[i]
	}
}

// place writes the expanded basis [U; 0], dir (value c) and the residual
// columns res (value 0) to the other buffer, ordered by value.
func (e *eigState) place(c float64, dir []float64, res [][]float64) {
	old := e.u()
	n1 := e.n + 1
	rNew := e.r + 1 + len(res)
	// Values of the new columns in order: old (ascending), c, zeros; merge.
	type col struct {
		val float64
		src int // >= 0: old column; -1: dir; <= -2: residual -src-2
	}
	cols := make([]col, 0, rNew)
	for j := 0; j < e.r; j++ {
		cols = append(cols, col{e.d[j], j})
	}
	cols = append(cols, col{c, -1})
	for k := range res {
		cols = append(cols, col{0, -2 - k})
	}
	sort.SliceStable(cols, func(a, b int) bool { return cols[a].val < cols[b].val })
	dst := e.buf[1-e.cur]
	st := e.st
	for i := 0; i < n1; i++ {
		row := dst[i*st : i*st+rNew]
		for j, cl := range cols {
			switch {
			case cl.src >= 0:
				if i < e.n {
					row[j] = old.Data[i*old.Stride+cl.src]
				} else {
					row[j] = 0
				}
			case cl.src == -1:
				switch {
				case dir != nil:
					row[j] = dir[i]
				case i == e.n:
					row[j] = 1
				default:
					row[j] = 0
				}
			default:
				row[j] = res[-cl.src-2][i]
			}
		}
	}
	e.d = e.d[:rNew]
	for j, cl := range cols {
		e.d[j] = cl.val
	}
	e.n, e.r, e.cur, e.off = n1, rNew, 1-e.cur, 0
}

// addZeroRow appends a row of zeros to U (a new point that adds no column:
// the first point of a mean-adjusted decomposition, whose centred matrix is
// the 1 x 1 zero held by no eigenvector orthogonal to 1).
func (e *eigState) addZeroRow() {
	old := e.u()
	dst := e.buf[1-e.cur]
	for i := 0; i < e.n; i++ {
		copy(dst[i*e.st:i*e.st+e.r], old.Data[i*old.Stride:i*old.Stride+e.r])
	}
	clear(dst[e.n*e.st : e.n*e.st+e.r])
	e.n, e.cur, e.off = e.n+1, 1-e.cur, 0
}

// apply performs U diag(d) U^T + rho v v^T through the backend.
func (e *eigState) apply(b backend.Backend, t rankOne) error {
	in := e.u()
	out := blas64.General{Rows: e.n, Cols: e.r, Stride: e.st, Data: e.buf[1-e.cur]}
	e.dTmp = e.dTmp[:e.r]
	if err := b.RankOneUpdate(e.d, in, t.rho, t.v, e.dTmp, out); err != nil {
		return err
	}
	for _, x := range e.dTmp {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("kpca: rank-one update produced %v: %w", x, zonal.ErrNonFinite)
		}
	}
	e.d, e.dTmp = e.dTmp, e.d
	e.cur, e.off = 1-e.cur, 0
	return nil
}

// border replaces U diag(d) U^T by its bordering with v (length n, in
// span U), corner alpha and border direction w (length n+1, unit,
// orthogonal to [U; 0]; nil: e_{n+1}), one bordered update through the
// backend:
//
//	[[U; 0] w] [diag(d) U^T v; v^T U alpha] [[U; 0] w]^T.
//
// With truncate, v may leave span U: its normalised residual q (two
// Gram-Schmidt passes) first joins U as a column of eigenvalue 0, so the
// bordering is exact for the held approximation. A residual below
// 1e-10 |v| is not added: the update then borders with U U^T v instead of
// v, an error of Frobenius norm sqrt(2) |v - U U^T v|, which border
// returns (0 otherwise) for the truncation bound.
func (e *eigState) border(b backend.Backend, v []float64, alpha float64, w []float64, truncate bool) (float64, error) {
	dropped := 0.0
	if truncate && e.r < e.n {
		q, rn := e.residual(v)
		if q != nil {
			e.appendColumn(q)
		} else {
			dropped = math.Sqrt2 * rn
		}
	}
	in := e.u()
	out := blas64.General{Rows: e.n + 1, Cols: e.r + 1, Stride: e.st, Data: e.buf[1-e.cur]}
	e.dTmp = e.dTmp[:e.r+1]
	if err := backend.BorderedUpdate(b, e.d, in, v, alpha, w, e.dTmp, out); err != nil {
		return dropped, err
	}
	for _, x := range e.dTmp {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dropped, fmt.Errorf("kpca: bordered update produced %v: %w", x, zonal.ErrNonFinite)
		}
	}
	e.d, e.dTmp = e.dTmp, e.d
	e.n, e.r, e.cur, e.off = e.n+1, e.r+1, 1-e.cur, 0
	return dropped, nil
}

// residual returns r = v - U U^T v (two passes) normalised and |r|, or nil
// and |r| when |r| <= 1e-10 |v| (or v = 0).
func (e *eigState) residual(v []float64) ([]float64, float64) {
	nv := norm2(v)
	if nv == 0 {
		return nil, 0
	}
	u := e.u()
	w := append([]float64(nil), v...)
	z := make([]float64, e.r)
	for pass := 0; pass < 2; pass++ {
		if e.r == 0 || e.n == 0 {
			break
		}
		blas64.Gemv(blas.Trans, 1, u, blas64.Vector{N: e.n, Inc: 1, Data: w}, 0, blas64.Vector{N: e.r, Inc: 1, Data: z})
		blas64.Gemv(blas.NoTrans, -1, u, blas64.Vector{N: e.r, Inc: 1, Data: z}, 1, blas64.Vector{N: e.n, Inc: 1, Data: w})
	}
	nw := norm2(w)
	if nw <= 1e-10*nv {
		return nil, nw
	}
	for i := range w {
		w[i] /= nw
	}
	return w, nw
}

// appendColumn writes [U q] (value 0 for q) to the other buffer.
func (e *eigState) appendColumn(q []float64) {
	old := e.u()
	dst := e.buf[1-e.cur]
	for i := 0; i < e.n; i++ {
		row := dst[i*e.st : i*e.st+e.r+1]
		copy(row, old.Data[i*old.Stride:i*old.Stride+e.r])
		row[e.r] = q[i]
	}
	e.d = append(e.d, 0)
	e.r++
	e.cur, e.off = 1-e.cur, 0
}

// dropSmallest removes the k eigenpairs with the smallest eigenvalues and
// returns the sum of their squares.
func (e *eigState) dropSmallest(k int) float64 {
	ss := 0.0
	for _, v := range e.d[:k] {
		ss += v * v
	}
	copy(e.d, e.d[k:])
	e.d = e.d[:e.r-k]
	e.r -= k
	e.off += k
	return ss
}

// set replaces the state by the n x r matrix u (any stride) and values d.
func (e *eigState) set(d []float64, u blas64.General) {
	e.n, e.r = 0, 0
	e.reserve(max(u.Rows, 1), max(u.Cols, 1))
	e.n, e.r = u.Rows, u.Cols
	e.cur, e.off = 0, 0
	for i := 0; i < u.Rows; i++ {
		copy(e.buf[0][i*e.st:i*e.st+u.Cols], u.Data[i*u.Stride:i*u.Stride+u.Cols])
	}
	e.d = append(e.d[:0], d...)
}

// moveRowToEnd moves row i of U to the last position (rows after it shift up).
func (e *eigState) moveRowToEnd(i int) {
	u := e.u()
	tmp := append([]float64(nil), u.Data[i*u.Stride:i*u.Stride+e.r]...)
	for k := i; k < e.n-1; k++ {
		copy(u.Data[k*u.Stride:k*u.Stride+e.r], u.Data[(k+1)*u.Stride:(k+1)*u.Stride+e.r])
	}
	copy(u.Data[(e.n-1)*u.Stride:], tmp)
}

// splitOff undoes an expansion: with U diag(d) U^T = [M 0; 0 0] + c g g^T
// for a unit vector g orthogonal to the columns of [M's eigenvectors; 0]
// (g = e_n when nil), the coordinates z = U^T g are (up to rounding)
// supported on the eigenvector g. A Householder reflection H with
// z^T H = -sign * |z| e_j^T, applied to the columns, makes column j equal to
// +-g and leaves every other column orthogonal to g; with g in the span of
// e_n and [1; 0] (g = e_n, or the vector h of a mean-adjusted expansion,
// the other columns being orthogonal to 1) their last entries are then 0.
// Column j and the last row are removed; it returns the eigenvalue removed.
func (e *eigState) splitOff(g []float64) float64 {
	u := e.u()
	n, r := e.n, e.r
	z := make([]float64, r)
	if g == nil {
		copy(z, u.Data[(n-1)*u.Stride:(n-1)*u.Stride+r])
	} else {
		for i := 0; i < n; i++ {
			row := u.Data[i*u.Stride : i*u.Stride+r]
			for k, v := range row {
				z[k] += v * g[i]
			}
		}
	}
	j := 0
	for k := range z {
		if math.Abs(z[k]) > math.Abs(z[j]) {
			j = k
		}
	}
	// Householder vector h = z + sign(z_j)|z| e_j, H = I - 2 h h^T / h^T h.
	nz := norm2(z)
	if nz > 0 {
		h := z
		if h[j] >= 0 {
			h[j] += nz
		} else {
			h[j] -= nz
		}
		hh := 0.0
		for _, v := range h {
			hh += v * v
		}
		for i := 0; i < n; i++ {
			row := u.Data[i*u.Stride : i*u.Stride+r]
			s := 0.0
			for k, v := range h {
				s += row[k] * v
			}
			s *= 2 / hh
			for k, v := range h {
				row[k] -= s * v
			}
		}
	}
	removed := e.d[j]
	// Remove column j: shift columns j+1.. left in every row but the last.
	for i := 0; i < n-1; i++ {
		row := u.Data[i*u.Stride : i*u.Stride+r]
		copy(row[j:], row[j+1:])
	}
	copy(e.d[j:], e.d[j+1:])
	e.d = e.d[:r-1]
	e.n, e.r = n-1, r-1
	return removed
}

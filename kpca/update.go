package kpca

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"

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

// centredTerms returns, for the mean-adjusted matrix, the border b, kappa of
// K'_{m+1} and the two rank-one terms (length m+1) that add w 1^T + 1 w^T to
// the leading block. rowSum and total are the sums of the uncentred m x m
// matrix before the addition, a and k the new kernel column and diagonal.
func centredTerms(rowSum []float64, total float64, a []float64, k float64) (b []float64, kappa float64, terms []rankOne) {
	m := len(a)
	n := float64(m + 1)
	fm := float64(m)
	sa := 0.0
	for _, ai := range a {
		sa += ai
	}
	sNew := sa + k
	totNew := total + 2*sa + k
	mean2 := totNew / (n * n)
	b = make([]float64, m)
	w := make([]float64, m)
	c0 := mean2 - total/(fm*fm)
	for i := 0; i < m; i++ {
		si := rowSum[i] + a[i]
		b[i] = a[i] - si/n - sNew/n + mean2
		w[i] = rowSum[i]/fm - si/n + c0/2
	}
	kappa = k - 2*sNew/n + mean2
	nw := norm2(w)
	if nw == 0 {
		return b, kappa, nil
	}
	alpha := math.Sqrt(nw / math.Sqrt(fm))
	p := make([]float64, m+1)
	q := make([]float64, m+1)
	for i := 0; i < m; i++ {
		p[i] = alpha + w[i]/alpha
		q[i] = alpha - w[i]/alpha
	}
	return b, kappa, []rankOne{{0.5, p}, {-0.5, q}}
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
// eigenvector e_{n+1}, and then one column of eigenvalue 0 for each vector in
// extra (length n+1) that has a component outside the expanded basis (its
// normalised residual after two Gram-Schmidt passes). Columns are kept in
// ascending order of their values. It returns the number of extra columns.
func (e *eigState) expand(c float64, extra [][]float64) int {
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
			// w -= [U 0; 0 1] ([U 0; 0 1]^T w), then against earlier residuals.
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
			w[e.n] = 0
			for _, q := range res {
				s := 0.0
				for i := range q {
					s += q[i] * w[i]
				}
				for i := range q {
					w[i] -= s * q[i]
				}
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
	rNew := r1 + len(res)
	// Values of the new columns in order: old (ascending), c, zeros; merge.
	type col struct {
		val float64
		src int // >= 0: old column; -1: e_{n+1}; <= -2: residual -src-2
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
				if i == e.n {
					row[j] = 1
				} else {
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
	return len(res)
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
			return fmt.Errorf("kpca: rank-one update produced %v: %w", x, backend.ErrNaN)
		}
	}
	e.d, e.dTmp = e.dTmp, e.d
	e.cur, e.off = 1-e.cur, 0
	return nil
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

// removeLastRow undoes an expansion: with diag(M, c) = U diag(d) U^T, the
// last row of U is (up to rounding) supported on the eigenvector e_n. A
// Householder reflection H with (last row) H = -sign * |last row| e_j^T,
// applied to the columns, makes column j equal to +-e_n and zeroes the last
// entry of every other column; column j and the last row are then removed.
// It returns the eigenvalue removed.
func (e *eigState) removeLastRow() float64 {
	u := e.u()
	n, r := e.n, e.r
	last := u.Data[(n-1)*u.Stride : (n-1)*u.Stride+r]
	j := 0
	for k := range last {
		if math.Abs(last[k]) > math.Abs(last[j]) {
			j = k
		}
	}
	// Householder vector h = x + sign(x_j)|x| e_j, H = I - 2 h h^T / h^T h.
	x := append([]float64(nil), last...)
	nx := norm2(x)
	if nx > 0 {
		h := x
		if h[j] >= 0 {
			h[j] += nx
		} else {
			h[j] -= nx
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

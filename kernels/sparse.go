package kernels

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// Sparse input. Every function of this package that reads data
// rows accepts a *dataset.CSR wherever it takes a mat.Matrix, and never
// forms the n x d dense matrix: kernel blocks come from row norms and
// sparse products (backend.SparseGemm for sparse-dense, a column index of
// the right-hand side for sparse-sparse), and kernels without such a form
// are evaluated on rows densified one at a time.

// input is a validated data argument: a dense row-major view, or a CSR
// (sparse set) as the backend's raw arrays, possibly a view of consecutive
// rows.
type input struct {
	g      blas64.General
	sp     backend.CSR
	sparse bool
	// t is the column index (the transpose, as CSR) of a sparse input used
	// as the right-hand side of sparse-sparse products, when precomputed.
	t *colIndex
}

// asInput validates m: a *dataset.CSR must satisfy Validate (its error,
// wrapping zonal.ErrShape or zonal.ErrRange, is returned) and hold finite
// values; any other matrix must be finite (see general).
func asInput(m mat.Matrix) (input, error) {
	c, ok := m.(*dataset.CSR)
	if !ok {
		g, err := general(m)
		return input{g: g}, err
	}
	if err := c.Validate(); err != nil {
		return input{}, err
	}
	for i := 0; i < c.Rows; i++ {
		cols, vals := c.Row(i)
		for q, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return input{}, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, cols[q], v)
			}
		}
	}
	return input{sp: csrView(c), sparse: true}, nil
}

// csrView is c as the backend's CSR (no copy).
func csrView(c *dataset.CSR) backend.CSR {
	return backend.CSR{Rows: c.Rows, Cols: c.Cols, RowPtr: c.RowPtr, Col: c.Col, Val: c.Val}
}

// isCSR reports whether m is sparse input.
func isCSR(m mat.Matrix) bool { _, ok := m.(*dataset.CSR); return ok }

func (in input) rows() int {
	if in.sparse {
		return in.sp.Rows
	}
	return in.g.Rows
}

func (in input) cols() int {
	if in.sparse {
		return in.sp.Cols
	}
	return in.g.Cols
}

// sub is rows [i0, i1) (a view; the column index is dropped).
func (in input) sub(i0, i1 int) input {
	if in.sparse {
		return input{sp: in.sp.RowsView(i0, i1), sparse: true}
	}
	return input{g: subRows(in.g, i0, i1)}
}

// sparseRow returns the columns and values of row i of a sparse input.
func (in input) sparseRow(i int) ([]int, []float64) {
	lo, hi := in.sp.RowPtr[i], in.sp.RowPtr[i+1]
	return in.sp.Col[lo:hi:hi], in.sp.Val[lo:hi:hi]
}

// denseRow returns row i: a view for dense input, else the row scattered
// into buf (length cols, cleared first).
func (in input) denseRow(i int, buf []float64) []float64 {
	if !in.sparse {
		return in.g.Data[i*in.g.Stride : i*in.g.Stride+in.g.Cols]
	}
	clear(buf)
	cols, vals := in.sparseRow(i)
	for q, c := range cols {
		buf[c] += vals[q]
	}
	return buf
}

// sqNorms returns the squared Euclidean row norms.
func (in input) sqNorms() []float64 { return in.sqNormsInto(make([]float64, in.rows())) }

// sqNormsInto writes the squared Euclidean row norms to out (length rows)
// and returns it.
func (in input) sqNormsInto(out []float64) []float64 {
	for i := range out {
		var r []float64
		if in.sparse {
			_, r = in.sparseRow(i)
		} else {
			r = in.denseRow(i, nil)
		}
		out[i] = dot(r, r)
	}
	return out
}

// l1Norms returns the l1 row norms.
func (in input) l1Norms() []float64 {
	out := make([]float64, in.rows())
	for i := range out {
		var vals []float64
		if in.sparse {
			_, vals = in.sparseRow(i)
		} else {
			vals = in.denseRow(i, nil)
		}
		s := 0.0
		for _, v := range vals {
			s += math.Abs(v)
		}
		out[i] = s
	}
	return out
}

// withIndex returns a sparse input with its column index computed (a no-op
// for dense input or when it is already there).
func (in input) withIndex() input {
	if in.sparse && in.t == nil {
		in.t = newColIndex(in.sp)
	}
	return in
}

// colIndex is the transpose of a CSR restricted to its non-empty columns:
// column cols[u] holds the entries vals[ptr[u]:ptr[u+1]] in the rows
// rows[ptr[u]:ptr[u+1]] (increasing). Its size is O(nnz), not O(d): a
// column is found by binary search in cols.
type colIndex struct {
	cols, ptr, rows []int
	vals            []float64
}

// newColIndex builds the column index of a in O(nnz log nnz).
func newColIndex(a backend.CSR) *colIndex {
	lo, hi := a.RowPtr[0], a.RowPtr[a.Rows]
	cols := append([]int(nil), a.Col[lo:hi]...)
	sort.Ints(cols)
	u := 0
	for i, c := range cols {
		if i == 0 || c != cols[u-1] {
			cols[u] = c
			u++
		}
	}
	t := &colIndex{cols: cols[:u:u], ptr: make([]int, u+1), rows: make([]int, hi-lo), vals: make([]float64, hi-lo)}
	for _, c := range a.Col[lo:hi] {
		t.ptr[t.find(c)+1]++
	}
	for j := 0; j < u; j++ {
		t.ptr[j+1] += t.ptr[j]
	}
	next := append([]int(nil), t.ptr[:u]...)
	for i := 0; i < a.Rows; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := t.find(a.Col[p])
			t.rows[next[j]], t.vals[next[j]] = i, a.Val[p]
			next[j]++
		}
	}
	return t
}

// find returns the position of column c in t.cols, or -1.
func (t *colIndex) find(c int) int {
	j := sort.SearchInts(t.cols, c)
	if j < len(t.cols) && t.cols[j] == c {
		return j
	}
	return -1
}

// innerBlock writes dst = alpha X Y^T (dst is x.rows() x y.rows()) for any
// mix of dense and sparse x and y; y must carry its index (withIndex) when
// both are sparse.
func innerBlock(b backend.Backend, alpha float64, x, y input, dst blas64.General) {
	switch {
	case !x.sparse && !y.sparse:
		b.Gemm(blas.NoTrans, blas.Trans, alpha, x.g, y.g, 0, dst)
	case x.sparse && !y.sparse:
		backend.SparseGemm(b, blas.NoTrans, blas.Trans, alpha, x.sp, y.g, 0, dst)
	case !x.sparse && y.sparse:
		// dst^T = alpha Y X^T, formed by rows of Y and transposed into dst.
		nx, ny := x.g.Rows, y.sp.Rows
		tmp := blas64.General{Rows: ny, Cols: nx, Stride: nx, Data: make([]float64, ny*nx)}
		backend.SparseGemm(b, blas.NoTrans, blas.Trans, alpha, y.sp, x.g, 0, tmp)
		for i := 0; i < nx; i++ {
			row := dst.Data[i*dst.Stride : i*dst.Stride+ny]
			for j := range row {
				row[j] = tmp.Data[j*nx+i]
			}
		}
	default:
		sparseSparse(x, y, dst, func(v, w float64) float64 { return alpha * v * w })
	}
}

// sparseSparse sets dst[i,j] = sum over the columns c where both x_i and
// y_j have an entry of f(x_ic, y_jc), through y's column index (each row of
// dst is accumulated from the index entries of x_i's columns: the work is
// the number of such common entries plus nnz(x) lookups, not nx*ny*d).
func sparseSparse(x, y input, dst blas64.General, f func(v, w float64) float64) {
	yt := y.t
	for i := 0; i < x.sp.Rows; i++ {
		row := dst.Data[i*dst.Stride : i*dst.Stride+y.sp.Rows]
		clear(row)
		cols, vals := x.sparseRow(i)
		for q, c := range cols {
			u := yt.find(c)
			if u < 0 {
				continue
			}
			v := vals[q]
			for p := yt.ptr[u]; p < yt.ptr[u+1]; p++ {
				row[yt.rows[p]] += f(v, yt.vals[p])
			}
		}
	}
}

// l1Block writes dst[i,j] = |x_i - y_j|_1 for inputs of which at least one
// is sparse, from the l1 norms xl, yl: |x - y|_1 = |x|_1 + |y|_1 + sum over
// the common support of (|x_c - y_c| - |x_c| - |y_c|), the sum running over
// the entries of the sparse side (both sparse: the common entries).
func l1Block(x, y input, xl, yl []float64, dst blas64.General) {
	nx, ny := x.rows(), y.rows()
	corr := func(v, w float64) float64 { return math.Abs(v-w) - math.Abs(v) - math.Abs(w) }
	if x.sparse && y.sparse {
		sparseSparse(x, y, dst, corr)
	}
	for i := 0; i < nx; i++ {
		row := dst.Data[i*dst.Stride : i*dst.Stride+ny]
		for j := range row {
			s := 0.0
			switch {
			case x.sparse && y.sparse:
				s = row[j]
			case x.sparse:
				cols, vals := x.sparseRow(i)
				yr := y.denseRow(j, nil)
				for q, c := range cols {
					s += corr(vals[q], yr[c])
				}
			default:
				cols, vals := y.sparseRow(j)
				xr := x.denseRow(i, nil)
				for q, c := range cols {
					s += corr(xr[c], vals[q])
				}
			}
			row[j] = math.Max(0, xl[i]+yl[j]+s)
		}
	}
}

// sparseRowDot returns sum_k vals[k] x[cols[k]].
func sparseRowDot(cols []int, vals, x []float64) float64 {
	s := 0.0
	for q, c := range cols {
		s += vals[q] * x[c]
	}
	return s
}

// RowSqNorms returns the squared Euclidean norms |x_i|^2 of the rows of x,
// in O(nnz) for a *dataset.CSR (the same sums as MatrixInto's norms).
func RowSqNorms(x mat.Matrix) []float64 {
	if c, ok := x.(*dataset.CSR); ok {
		return input{sp: csrView(c), sparse: true}.sqNorms()
	}
	n, d := x.Dims()
	row := rowReader(x)
	buf := make([]float64, d)
	out := make([]float64, n)
	for i := range out {
		r := row(i, buf)
		out[i] = dot(r, r)
	}
	return out
}

// RowBlock returns rows [i0, i1) of x for block-wise passes over data: a
// view for a *mat.Dense, a *dataset.CSR sharing x's entries (SliceRows) for
// a CSR, and a dense copy of the rows for any other matrix. Errors:
// zonal.ErrEmpty for a nil x, zonal.ErrRange for an empty or out-of-range
// block.
func RowBlock(x mat.Matrix, i0, i1 int) (mat.Matrix, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if i0 < 0 || i1 > n || i0 >= i1 {
		return nil, fmt.Errorf("%w: row block [%d, %d) not a non-empty range of [0, %d)", zonal.ErrRange, i0, i1, n)
	}
	switch m := x.(type) {
	case *dataset.CSR:
		return m.SliceRows(i0, i1)
	case *mat.Dense:
		return m.Slice(i0, i1, 0, d), nil
	}
	return dataset.SelectRows(x, seqFrom(i0, i1))
}

// seqFrom returns i0, i0+1, ..., i1-1.
func seqFrom(i0, i1 int) []int {
	out := seq(i1 - i0)
	for k := range out {
		out[k] += i0
	}
	return out
}

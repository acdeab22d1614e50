package tensorsketch

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// rows is the internal sparse row view every map and the sampler work on.
// Dense input is converted by keeping its nonzero entries, so dense and CSR
// inputs holding the same numbers give bit-identical results.
type rows struct {
	n, d int
	ptr  []int
	col  []int
	val  []float64
}

func (r *rows) row(i int) ([]int, []float64) {
	a, b := r.ptr[i], r.ptr[i+1]
	return r.col[a:b], r.val[a:b]
}

func (r *rows) nnz() int { return r.ptr[r.n] }

// denseRows converts x (n x d) to rows, checking the width and finiteness.
func denseRows(x mat.Matrix, d int) (*rows, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil input", zonal.ErrEmpty)
	}
	n, c := x.Dims()
	if n == 0 || c == 0 {
		return nil, fmt.Errorf("%w: input is %dx%d", zonal.ErrEmpty, n, c)
	}
	if d >= 0 && c != d {
		return nil, fmt.Errorf("%w: input has %d columns, map expects %d", zonal.ErrShape, c, d)
	}
	r := &rows{n: n, d: c, ptr: make([]int, n+1)}
	var raw []float64
	stride := 0
	if rm, ok := x.(mat.RawMatrixer); ok {
		g := rm.RawMatrix()
		raw, stride = g.Data, g.Stride
	}
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			var v float64
			if raw != nil {
				v = raw[i*stride+j]
			} else {
				v = x.At(i, j)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
			if v != 0 {
				r.col = append(r.col, j)
				r.val = append(r.val, v)
			}
		}
		r.ptr[i+1] = len(r.val)
	}
	return r, nil
}

// csrRows validates x and copies its nonzero entries. Rows without entries
// are allowed (they are the zero vector).
func csrRows(x *dataset.CSR, d int) (*rows, error) {
	if x == nil || x.Rows == 0 || x.Cols == 0 {
		return nil, fmt.Errorf("%w: empty CSR matrix", zonal.ErrEmpty)
	}
	if d >= 0 && x.Cols != d {
		return nil, fmt.Errorf("%w: input has %d columns, map expects %d", zonal.ErrShape, x.Cols, d)
	}
	if len(x.RowPtr) != x.Rows+1 || x.RowPtr[0] != 0 {
		return nil, fmt.Errorf("%w: RowPtr has length %d (want %d) or does not start at 0", zonal.ErrFormat, len(x.RowPtr), x.Rows+1)
	}
	if x.RowPtr[x.Rows] > len(x.Col) || x.RowPtr[x.Rows] > len(x.Val) {
		return nil, fmt.Errorf("%w: RowPtr ends at %d but Col/Val have %d/%d entries", zonal.ErrFormat, x.RowPtr[x.Rows], len(x.Col), len(x.Val))
	}
	r := &rows{n: x.Rows, d: x.Cols, ptr: make([]int, x.Rows+1)}
	for i := 0; i < x.Rows; i++ {
		a, b := x.RowPtr[i], x.RowPtr[i+1]
		if b < a {
			return nil, fmt.Errorf("%w: RowPtr decreases at row %d", zonal.ErrFormat, i)
		}
		prev := -1
		for p := a; p < b; p++ {
			j, v := x.Col[p], x.Val[p]
			if j < 0 || j >= x.Cols {
				return nil, fmt.Errorf("%w: %w: row %d has column index %d outside [0,%d)", zonal.ErrFormat, zonal.ErrShape, i, j, x.Cols)
			}
			if j <= prev {
				return nil, fmt.Errorf("%w: row %d has column indices not strictly increasing (%d after %d)", zonal.ErrFormat, i, j, prev)
			}
			prev = j
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
			if v != 0 {
				r.col = append(r.col, j)
				r.val = append(r.val, v)
			}
		}
		r.ptr[i+1] = len(r.val)
	}
	return r, nil
}

// augment returns the rows x' = (scale*x, extra): the map from the
// polynomial kernel (gamma <x,y> + c)^p to the homogeneous <x',y'>^p with
// scale = sqrt(gamma) and extra = sqrt(c). With extra == 0 no column is added
// but the width is still d+1.
func (r *rows) augment(scale, extra float64) *rows {
	out := &rows{n: r.n, d: r.d + 1, ptr: make([]int, r.n+1)}
	k := r.nnz()
	if extra != 0 {
		k += r.n
	}
	out.col = make([]int, 0, k)
	out.val = make([]float64, 0, k)
	for i := 0; i < r.n; i++ {
		c, v := r.row(i)
		for p := range c {
			out.col = append(out.col, c[p])
			out.val = append(out.val, scale*v[p])
		}
		if extra != 0 {
			out.col = append(out.col, r.d)
			out.val = append(out.val, extra)
		}
		out.ptr[i+1] = len(out.val)
	}
	return out
}

// sqNorms returns |x_i|^2 for every row.
func (r *rows) sqNorms() []float64 {
	out := make([]float64, r.n)
	for i := range out {
		_, v := r.row(i)
		s := 0.0
		for _, a := range v {
			s += a * a
		}
		out[i] = s
	}
	return out
}

// checkDst checks that dst is n x D.
func checkDst(dst *mat.Dense, n, D int) error {
	if dst == nil {
		return fmt.Errorf("%w: nil destination", zonal.ErrShape)
	}
	r, c := dst.Dims()
	if r != n || c != D {
		return fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, c, n, D)
	}
	return nil
}

package kernels

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// scaleSample is the number of rows, spread evenly over the data, whose
// pairwise kernel values CheckScale evaluates: 128 rows give 8128 pairs.
const scaleSample = 128

// CheckScale tells, before any kernel matrix is formed or factored, whether
// k's values on the rows of x carry information at all. It refuses
//
//   - rows whose squared norm |x_i|^2 exceeds MaxFloat64/4 (features near
//     1e154 and above): then |x_i - x_j|^2 <= 2|x_i|^2 + 2|x_j|^2, and the
//     inner products that kernel blocks are computed from, overflow, and
//     the kernel values come out as NaN or Inf (zonal.ErrNonFinite, naming
//     the row and its largest feature);
//   - a kernel value k(x_i, x_j) that is NaN or Inf on the sample
//     (zonal.ErrNonFinite, naming the kernel and the pair);
//   - a sample on which every k(x_i, x_j) between distinct rows is exactly 0
//     while the rows differ: the kernel matrix is then the identity (for a
//     Gaussian kernel, every distance is above about 38.6 sigma, so
//     exp(-r^2/(2 sigma^2)) underflows): it relates no row to another, and
//     a model fitted on it predicts 0 away from the training rows
//     (zonal.ErrParam, naming the kernel, the median distance between the
//     sampled rows and its ratio to sigma for the Gaussian and Laplacian
//     kernels);
//   - a sample on which k is 0 everywhere, diagonal included (zonal.ErrParam).
//
// NaN or Inf entries are zonal.ErrNonFinite too. A *dataset.CSR x is checked
// without densifying it (kernel values and distances from sparse products). The sample is min(n, 128) rows at evenly spaced positions i n / s, so the
// check costs O(n d + s^2 d) and is deterministic. A nil or empty x, or nil
// k, is left to the caller's own checks (nil is returned).
func CheckScale(k Kernel, x mat.Matrix) error {
	if k == nil || x == nil {
		return nil
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil
	}
	if c, ok := x.(*dataset.CSR); ok {
		return checkScaleSparse(k, c)
	}
	row := rowReader(x)
	buf := make([]float64, d)
	for i := 0; i < n; i++ {
		r := row(i, buf)
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, j, v)
			}
		}
		if s := dot(r, r); !(s <= math.MaxFloat64/4) {
			big := 0.0
			for _, v := range r {
				big = math.Max(big, math.Abs(v))
			}
			return fmt.Errorf("%w: row %d has features as large as %.3g: its squared norm overflows float64, so the kernel values of %v would be Inf or NaN; rescale the data (divide by its scale, or standardize)",
				zonal.ErrNonFinite, i, big, k)
		}
	}
	s := min(n, scaleSample)
	rows := make([][]float64, s)
	pos := make([]int, s)
	for a := range rows {
		pos[a] = int(int64(a) * int64(n) / int64(s))
		rows[a] = append([]float64(nil), row(pos[a], buf)...)
	}
	anyDiag, anyOff, distinct := false, false, false
	dists := make([]float64, 0, s*(s-1)/2)
	for a := 0; a < s; a++ {
		v := k.Eval(rows[a], rows[a])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %v(x, x) is %g for row %d", zonal.ErrNonFinite, k, v, pos[a])
		}
		anyDiag = anyDiag || v != 0
		for b := a + 1; b < s; b++ {
			v := k.Eval(rows[a], rows[b])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %v is %g between rows %d and %d; rescale the data or change the kernel's parameters",
					zonal.ErrNonFinite, k, v, pos[a], pos[b])
			}
			anyOff = anyOff || v != 0
			r := 0.0
			for j, xa := range rows[a] {
				t := xa - rows[b][j]
				r += t * t
			}
			if r > 0 {
				distinct = true
			}
			dists = append(dists, math.Sqrt(r))
		}
	}
	return scaleVerdict(k, s, anyDiag, anyOff, distinct, dists)
}

// scaleVerdict is CheckScale's decision from the sampled kernel values:
// whether any diagonal or off-diagonal value is non-zero, whether the
// sampled rows differ, and their pairwise distances.
func scaleVerdict(k Kernel, s int, anyDiag, anyOff, distinct bool, dists []float64) error {
	if !anyDiag && !anyOff {
		return fmt.Errorf("%w: %v is 0 on every pair of the %d sampled rows, the diagonal included: the kernel matrix is zero", zonal.ErrParam, k, s)
	}
	if anyOff || !distinct {
		return nil
	}
	sort.Float64s(dists)
	med := dists[len(dists)/2]
	ratio := ""
	switch kk := k.(type) {
	case Gaussian:
		ratio = fmt.Sprintf(" = %.3g sigma", med/kk.Sigma)
	case Laplacian:
		ratio = fmt.Sprintf(" = %.3g sigma", med/kk.Sigma)
	}
	return fmt.Errorf("%w: %v underflows to exactly 0 between every two of the %d sampled rows (their median distance is %.3g%s), so the kernel matrix is the identity and relates no row to another; choose a bandwidth near the data's scale",
		zonal.ErrParam, k, s, med, ratio)
}

// checkScaleSparse is CheckScale for a CSR x: the same checks, with the
// sampled kernel values computed from sparse products (MatrixInto's sparse
// path) and the distances from the norms and inner products, so no row is
// densified (beyond what kernels without a sparse form need, one row at a
// time).
func checkScaleSparse(k Kernel, x *dataset.CSR) error {
	if err := x.Validate(); err != nil {
		return err
	}
	for i := 0; i < x.Rows; i++ {
		cols, vals := x.Row(i)
		big := 0.0
		for q, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: entry (%d,%d) is %g", zonal.ErrNonFinite, i, cols[q], v)
			}
			big = math.Max(big, math.Abs(v))
		}
		if s := dot(vals, vals); !(s <= math.MaxFloat64/4) {
			return fmt.Errorf("%w: row %d has features as large as %.3g: its squared norm overflows float64, so the kernel values of %v would be Inf or NaN; rescale the data (divide by its scale, or standardize)",
				zonal.ErrNonFinite, i, big, k)
		}
	}
	n := x.Rows
	s := min(n, scaleSample)
	pos := make([]int, s)
	for a := range pos {
		pos[a] = int(int64(a) * int64(n) / int64(s))
	}
	sub, err := x.Subset(pos)
	if err != nil {
		return err
	}
	in := input{sp: csrView(sub), sparse: true}.withIndex()
	kv := blas64.General{Rows: s, Cols: s, Stride: s, Data: make([]float64, s*s)}
	if err := matrixGeneral(context.Background(), kv, backend.Default(), k, in, in, true, nil, nil); err != nil {
		return err
	}
	ip := blas64.General{Rows: s, Cols: s, Stride: s, Data: make([]float64, s*s)}
	innerBlock(nil, 1, in, in, ip)
	sn := in.sqNorms()
	anyDiag, anyOff, distinct := false, false, false
	dists := make([]float64, 0, s*(s-1)/2)
	for a := 0; a < s; a++ {
		v := kv.Data[a*s+a]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %v(x, x) is %g for row %d", zonal.ErrNonFinite, k, v, pos[a])
		}
		anyDiag = anyDiag || v != 0
		ca, va := sub.Row(a)
		for b := a + 1; b < s; b++ {
			v := kv.Data[a*s+b]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %v is %g between rows %d and %d; rescale the data or change the kernel's parameters",
					zonal.ErrNonFinite, k, v, pos[a], pos[b])
			}
			anyOff = anyOff || v != 0
			cb, vb := sub.Row(b)
			distinct = distinct || !sameRow(ca, va, cb, vb)
			dists = append(dists, math.Sqrt(math.Max(0, sn[a]+sn[b]-2*ip.Data[a*s+b])))
		}
	}
	return scaleVerdict(k, s, anyDiag, anyOff, distinct, dists)
}

// sameRow reports whether two sparse rows are equal as vectors (explicit
// zeros ignored).
func sameRow(ca []int, va []float64, cb []int, vb []float64) bool {
	p, q := 0, 0
	for p < len(ca) || q < len(cb) {
		switch {
		case p < len(ca) && va[p] == 0:
			p++
		case q < len(cb) && vb[q] == 0:
			q++
		case p < len(ca) && q < len(cb) && ca[p] == cb[q]:
			if va[p] != vb[q] {
				return false
			}
			p, q = p+1, q+1
		default:
			return false
		}
	}
	return true
}

// rowReader returns a function giving row i of x: a view of the storage of
// a raw matrix, else a copy into buf (length d).
func rowReader(x mat.Matrix) func(i int, buf []float64) []float64 {
	if rm, ok := x.(mat.RawMatrixer); ok {
		g := rm.RawMatrix()
		return func(i int, _ []float64) []float64 { return g.Data[i*g.Stride : i*g.Stride+g.Cols] }
	}
	if x32, ok := x.(*dataset.Dense32); ok {
		return func(i int, buf []float64) []float64 {
			for j, v := range x32.Row(i) {
				buf[j] = float64(v)
			}
			return buf
		}
	}
	return func(i int, buf []float64) []float64 {
		for j := range buf {
			buf[j] = x.At(i, j)
		}
		return buf
	}
}

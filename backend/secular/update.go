package secular

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/floatpool"
)

// GemmFunc computes C = alpha*op(A)*op(B) + beta*C (a Backend's Gemm).
type GemmFunc func(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General)

// RootFinder returns the i-th (0-based, ascending) root of
// 1 + rho*sum_j z_j^2/(d_j - x) = 0 for strictly increasing d, nonzero z and
// rho > 0, and writes delta_j = d_j - lambda (computed accurately, i.e. as an
// offset from the nearest pole) to delta. Laed4 is the Go implementation.
//
// Update calls a RootFinder only with len(d) >= 3, ||z||_2 <= 1 (z is
// normalised before deflation removes components) and rho > 0, so a wrapper
// around LAPACK's dlaed4 (whose n <= 2 paths return eigenvector data rather
// than d_j - lambda, and which assumes ||z|| = 1) can be passed directly,
// translating i to 1-based.
type RootFinder func(i int, d, z []float64, rho float64, delta []float64) (lambda float64, err error)

// Update computes the eigendecomposition of U (diag(d) + rho z z^T) U^T with
// z = U^T v: the new eigenvalues in ascending order go to dOut and the
// corresponding orthonormal eigenvectors to the columns of uOut. U is n x m
// with orthonormal columns, len(d) = len(dOut) = m, len(v) = n, uOut is
// n x m; d should be ascending (it is sorted if not). dOut and uOut must not
// alias d or u. See the package documentation for the method.
//
// find computes the roots of the secular equation (nil means Laed4, without
// its per-call argument checks); gemm
// performs the products (nil means gonum's blas64.Gemm). The cost is O(m^2)
// for the roots and the inner eigenvectors plus one n x K by K x K Gemm,
// where K <= m is the number of non-deflated components.
//
// If a supplied root finder returns an error or a non-finite root, that
// root is recomputed by the Go iteration. Errors wrap zonal.ErrShape for
// inconsistent shapes, zonal.ErrNonFinite for NaN or Inf in d, u, rho or v (or an
// update that overflows), and zonal.ErrNoConvergence if the Go root finder
// fails too (not observed). On error dOut and uOut are unspecified.
func Update(find RootFinder, gemm GemmFunc, d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error {
	n, m := u.Rows, u.Cols
	if err := checkGeneral("u", u); err != nil {
		return err
	}
	if err := checkGeneral("uOut", uOut); err != nil {
		return err
	}
	if len(d) != m || len(v) != n || len(dOut) != m || uOut.Rows != n || uOut.Cols != m {
		return fmt.Errorf("secular: Update: u %dx%d, len(d) %d, len(v) %d, len(dOut) %d, uOut %dx%d: %w",
			n, m, len(d), len(v), len(dOut), uOut.Rows, uOut.Cols, zonal.ErrShape)
	}
	if m == 0 {
		return nil
	}
	if !finite(rho) || !allFinite(d) || !allFinite(v) {
		return fmt.Errorf("secular: Update: d, rho or v: %w", zonal.ErrNonFinite)
	}
	if gemm == nil {
		gemm = blas64.Gemm
	}

	// z = U^T v, by gonum's Gemv (a Gemm with one column is several times
	// slower; this O(nm) step is negligible next to the final product).
	z := make([]float64, m)
	if n > 0 {
		blas64.Gemv(blas.Trans, 1, u, blas64.Vector{N: n, Inc: 1, Data: v}, 0, blas64.Vector{N: m, Inc: 1, Data: z})
	}
	// A NaN or Inf in U reaches z through every nonzero v_i (Inf * x and
	// NaN * x are not finite for finite x != 0), so U needs a pass of its own
	// only when v has zeros or z is not finite.
	if !allFinite(z) || hasZero(v) {
		for r := 0; r < n; r++ {
			if !allFinite(u.Data[r*u.Stride : r*u.Stride+m]) {
				return fmt.Errorf("secular: Update: u row %d: %w", r, zonal.ErrNonFinite)
			}
		}
	}
	if !allFinite(z) {
		return fmt.Errorf("secular: Update: z = U^T v overflows: %w", zonal.ErrNonFinite)
	}

	// Work with sign*d ascending and |rho|: eig(D + rho zz^T) =
	// sign*eig(sign*D + |rho| zz^T).
	sign := 1.0
	if rho < 0 {
		sign = -1
	}
	perm := make([]int, m) // working position -> original column
	for k := range perm {
		perm[k] = k
	}
	if sign < 0 {
		for k := range perm {
			perm[k] = m - 1 - k
		}
	}
	if !sort.SliceIsSorted(perm, func(a, b int) bool { return sign*d[perm[a]] < sign*d[perm[b]] }) {
		sort.SliceStable(perm, func(a, b int) bool { return sign*d[perm[a]] < sign*d[perm[b]] })
	}
	dw := make([]float64, m)
	zw := make([]float64, m)
	for k, p := range perm {
		dw[k] = sign * d[p]
		zw[k] = z[p]
	}
	r := math.Abs(rho)
	zn := nrm2(zw)

	// Gather U's columns in working order into q (n x m).
	qBuf := floatpool.Get(n * m)
	defer floatpool.Put(qBuf)
	q := blas64.General{Rows: n, Cols: m, Stride: m, Data: *qBuf}
	for row := 0; row < n; row++ {
		src := u.Data[row*u.Stride:]
		dst := q.Data[row*m : row*m+m]
		for k, p := range perm {
			dst[k] = src[p]
		}
	}

	if r == 0 || zn == 0 {
		// Nothing to add: the eigensystem is the input, sorted.
		vals := make([]float64, m)
		for k := range vals {
			vals[k] = sign * dw[k]
		}
		placeAll(vals, nil, nil, q, dOut, uOut)
		return nil
	}
	rn := r * zn * zn // the rank-one weight for unit z
	if math.IsInf(rn, 0) {
		return fmt.Errorf("secular: Update: rho |z|^2 overflows: %w", zonal.ErrNonFinite)
	}
	for k := range zw {
		zw[k] /= zn
	}

	// Scale by a power of two (exactly) so that max(|d|, rho|z|^2) is about 1:
	// the root finder then never works with subnormal or overflowing values.
	dmax := 0.0
	for _, x := range dw {
		dmax = math.Max(dmax, math.Abs(x))
	}
	e := math.Ilogb(math.Max(dmax, rn))
	for k := range dw {
		dw[k] = math.Ldexp(dw[k], -e)
	}
	rn = math.Ldexp(rn, -e)
	dmax = math.Ldexp(dmax, -e)

	// Deflation.
	tol := 8 * eps * math.Max(dmax, rn)
	active := make([]int, 0, m)
	prev := -1
	for k := 0; k < m; k++ {
		if rn*math.Abs(zw[k]) <= tol {
			continue // (dw[k], q_k) stays an eigenpair
		}
		if prev < 0 {
			prev = k
			continue
		}
		// Givens rotation G with G (z_prev, z_k) = (0, t). The rotated
		// matrix has off-diagonal c s (d_k - d_prev); drop it if negligible.
		t := math.Hypot(zw[prev], zw[k])
		c, s := zw[k]/t, -zw[prev]/t
		if math.Abs(c*s*(dw[k]-dw[prev])) <= tol {
			zw[prev], zw[k] = 0, t
			dp, dk := dw[prev], dw[k]
			dw[prev] = c*c*dp + s*s*dk
			dw[k] = s*s*dp + c*c*dk
			// New columns U G^T: q_prev' = c q_prev + s q_k, q_k' = c q_k - s q_prev.
			for row := 0; row < n; row++ {
				x := q.Data[row*m:]
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
	isActive := make([]bool, m)
	for _, a := range active {
		isActive[a] = true
	}

	delBuf := floatpool.Get(len(active) * len(active))
	defer floatpool.Put(delBuf)
	lam, utT, err := solveInner(find, active, dw, zw, rn, *delBuf)
	if err != nil {
		return err
	}

	// T = Q_active * Utilde.
	var t blas64.General
	if kk > 0 {
		qa := q
		if kk < m {
			qaBuf := floatpool.Get(n * kk)
			defer floatpool.Put(qaBuf)
			qa = blas64.General{Rows: n, Cols: kk, Stride: kk, Data: *qaBuf}
			for row := 0; row < n; row++ {
				src := q.Data[row*m:]
				dst := qa.Data[row*kk : row*kk+kk]
				for j, a := range active {
					dst[j] = src[a]
				}
			}
		}
		tBuf := floatpool.Get(n * kk)
		defer floatpool.Put(tBuf)
		t = blas64.General{Rows: n, Cols: kk, Stride: kk, Data: *tBuf}
		if n > 0 {
			gemm(blas.NoTrans, blas.Trans, 1, qa, utT, 0, t)
		}
	}

	// Merge: every working position contributes one eigenpair, either a
	// deflated (dw[k], q_k) or a root with its column of T.
	vals := make([]float64, m)
	fromT := make([]int, m) // column of T, or -1 for a deflated column of q
	j := 0
	for k := 0; k < m; k++ {
		if isActive[k] {
			vals[k] = sign * math.Ldexp(lam[j], e)
			fromT[k] = j
			j++
		} else {
			vals[k] = sign * math.Ldexp(dw[k], e)
			fromT[k] = -1
		}
	}
	placeAll(vals, fromT, &t, q, dOut, uOut)
	return nil
}

// solveInner solves the non-deflated K x K problem diag(dA) + rn zA zA^T
// (dA = dw[active] strictly increasing, ||zA|| <= 1): it returns the roots
// ascending and the TRANSPOSE of the K x K orthogonal eigenvector matrix
// (row j is the eigenvector of root j), built from the Gu-Eisenstat
// recomputed zhat, in buf (length >= K*K). The O(K^2) work (K roots of
// O(K) each, the products and the normalisation) is split over up to
// GOMAXPROCS goroutines by ranges of roots.
func solveInner(find RootFinder, active []int, dw, zw []float64, rn float64, buf []float64) ([]float64, blas64.General, error) {
	kk := len(active)
	if kk == 0 {
		return nil, blas64.General{Stride: 1}, nil
	}
	dA := make([]float64, kk)
	zA := make([]float64, kk)
	for j, a := range active {
		dA[j], zA[j] = dw[a], zw[a]
	}
	lam := make([]float64, kk)
	if kk == 1 {
		lam[0] = dA[0] + rn*zA[0]*zA[0]
		return lam, blas64.General{Rows: 1, Cols: 1, Stride: 1, Data: []float64{1}}, nil
	}
	// Row j of del holds d_i - lambda_j, i = 0..K-1; it is overwritten by
	// the eigenvector of root j at the end.
	del := blas64.General{Rows: kk, Cols: kk, Stride: kk, Data: buf[:kk*kk]}
	chunks := splitRange(kk)
	// Roots: each worker owns rows [lo, hi) of del and lam.
	errsBy := make([]error, len(chunks))
	parallel(chunks, func(c, lo, hi int) {
		for j := lo; j < hi; j++ {
			f := find
			if f == nil || kk <= 2 {
				f = laed4 // the inputs are valid by construction: skip Laed4's O(K) checks
			}
			row := del.Data[j*kk : (j+1)*kk]
			l, err := f(j, dA, zA, rn, row)
			if (err != nil || !finite(l)) && find != nil {
				// A supplied root finder failed (e.g. dlaed4's info != 0):
				// retry with the Go iteration rather than lose the update.
				l, err = laed4(j, dA, zA, rn, row)
			}
			if err != nil {
				errsBy[c] = fmt.Errorf("secular: Update: root %d of %d: %w (%w)", j, kk, zonal.ErrNoConvergence, err)
				return
			}
			if !finite(l) {
				errsBy[c] = fmt.Errorf("secular: Update: root %d of %d is %g: %w", j, kk, l, zonal.ErrNoConvergence)
				return
			}
			lam[j] = l
		}
	})
	for _, err := range errsBy {
		if err != nil {
			return nil, del, err
		}
	}
	// Gu-Eisenstat: zhat_i^2 = (lambda_i - d_i) prod_{j!=i} (d_i - lambda_j)/(d_i - d_j),
	// every factor positive by interlacing. Each worker multiplies the
	// factors of its roots (read by rows of del) into its own partial
	// products; the partials are then multiplied together.
	part := make([][]float64, len(chunks))
	parallel(chunks, func(c, lo, hi int) {
		zh := make([]float64, kk)
		for i := range zh {
			zh[i] = 1
		}
		for j := lo; j < hi; j++ {
			row := del.Data[j*kk : (j+1)*kk]
			dj := dA[j]
			for i, x := range row {
				if i == j {
					zh[i] *= -x
				} else {
					zh[i] *= x / (dA[i] - dj)
				}
			}
		}
		part[c] = zh
	})
	zh := part[0]
	for _, p := range part[1:] {
		for i, v := range p {
			zh[i] *= v
		}
	}
	for i, w := range zh {
		zh[i] = math.Copysign(math.Sqrt(math.Abs(w)), zA[i])
	}
	parallel(chunks, func(c, lo, hi int) {
		for j := lo; j < hi; j++ {
			row := del.Data[j*kk : (j+1)*kk]
			for i := range row {
				row[i] = zh[i] / row[i]
			}
			nrm := nrm2(row)
			if !(nrm > 0) || math.IsInf(nrm, 0) {
				errsBy[c] = fmt.Errorf("secular: Update: eigenvector %d of %d has norm %g: %w", j, kk, nrm, zonal.ErrNoConvergence)
				return
			}
			for i := range row {
				row[i] /= nrm
			}
		}
	})
	for _, err := range errsBy {
		if err != nil {
			return nil, del, err
		}
	}
	return lam, del, nil
}

// minChunk is the fewest roots per goroutine: below it the O(K) work of a
// root is too small to pay for a goroutine.
const minChunk = 64

// splitRange splits [0, k) into up to GOMAXPROCS contiguous ranges of at
// least minChunk elements (one range when k is small).
func splitRange(k int) [][2]int {
	p := min(runtime.GOMAXPROCS(0), k/minChunk)
	if p < 1 {
		p = 1
	}
	out := make([][2]int, p)
	for c := range out {
		out[c] = [2]int{c * k / p, (c + 1) * k / p}
	}
	return out
}

// parallel runs f(c, lo, hi) for every chunk, the last one on the calling
// goroutine, and waits for all.
func parallel(chunks [][2]int, f func(c, lo, hi int)) {
	var wg sync.WaitGroup
	for c := 0; c < len(chunks)-1; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			f(c, chunks[c][0], chunks[c][1])
		}(c)
	}
	last := len(chunks) - 1
	f(last, chunks[last][0], chunks[last][1])
	wg.Wait()
}

// placeAll sorts the eigenvalues ascending and writes them with their
// columns: column fromT[k] of t when fromT[k] >= 0, else column k of q
// (fromT nil means all from q).
func placeAll(vals []float64, fromT []int, t *blas64.General, q blas64.General, dOut []float64, uOut blas64.General) {
	m := len(vals)
	order := make([]int, m)
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] < vals[order[b]] })
	for p, k := range order {
		dOut[p] = vals[k]
	}
	for row := 0; row < uOut.Rows; row++ {
		dst := uOut.Data[row*uOut.Stride : row*uOut.Stride+m]
		qr := q.Data[row*q.Stride:]
		var tr []float64
		if t != nil && t.Cols > 0 {
			tr = t.Data[row*t.Stride:]
		}
		for p, k := range order {
			if fromT != nil && fromT[k] >= 0 {
				dst[p] = tr[fromT[k]]
			} else {
				dst[p] = qr[k]
			}
		}
	}
}

func checkGeneral(name string, a blas64.General) error {
	if a.Rows < 0 || a.Cols < 0 {
		return fmt.Errorf("secular: Update: %s has negative shape %dx%d: %w", name, a.Rows, a.Cols, zonal.ErrShape)
	}
	if a.Rows == 0 || a.Cols == 0 {
		return nil
	}
	if a.Stride < a.Cols || len(a.Data) < (a.Rows-1)*a.Stride+a.Cols {
		return fmt.Errorf("secular: Update: %s %dx%d with stride %d and %d elements: %w", name, a.Rows, a.Cols, a.Stride, len(a.Data), zonal.ErrShape)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func hasZero(x []float64) bool {
	for _, v := range x {
		if v == 0 {
			return true
		}
	}
	return false
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if !finite(v) {
			return false
		}
	}
	return true
}

// nrm2 is the Euclidean norm, scaled against overflow and underflow when
// the plain sum of squares leaves the safe range.
func nrm2(x []float64) float64 {
	sum := 0.0
	for _, v := range x {
		sum += v * v
	}
	if sum > 0x1p-900 && sum < 0x1p900 {
		return math.Sqrt(sum)
	}
	s := 0.0
	for _, v := range x {
		s = math.Max(s, math.Abs(v))
	}
	if s == 0 || math.IsInf(s, 0) {
		return s
	}
	sum = 0
	for _, v := range x {
		y := v / s
		sum += y * y
	}
	return s * math.Sqrt(sum)
}

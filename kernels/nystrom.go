package kernels

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/interrupt"
)

// Nystrom is the Nystrom feature map for landmarks C (m x d):
//
//	z(x) = K(x, C) K_CC^{-1/2},  so  z(x).z(y) = K(x,C) K_CC^+ K(C,y),
//
// the kernel projected on the span of the landmarks' features. K_CC^{-1/2}
// is formed from the eigendecomposition K_CC = V diag(mu) V^T as
// V diag(f) V^T with f_i = mu_i^{-1/2} when mu_i > mu_max * m * 2^-52 (the
// stated floor: eigenvalues at the level of round-off are treated as 0) and
// f_i = 0 otherwise, i.e. a pseudo-inverse square root.
//
// Landmarks taken from a *dataset.CSR stay sparse: the map keeps them as a
// CSR (and MarshalBinary stores them so), and Transform forms K(x, C) from
// sparse products, for dense or sparse x.
type Nystrom struct {
	b     backend.Backend
	k     Kernel
	m, d  int
	c     *mat.Dense   // m x d landmarks (nil when sparse)
	cs    *dataset.CSR // the landmarks when sparse (nil when dense)
	msqr  *mat.Dense   // m x dim: K_CC^{-1/2} (m x m), or V_r diag(mu_r^{-1/2}) (m x rank) when basis
	rank  int
	dim   int  // the features: m, or rank when basis
	basis bool // built by NewNystromBasis

	cnOnce sync.Once
	cin    input     // the landmarks as a kernel argument (with their column index when sparse)
	cn     []float64 // squared norms of the landmarks, computed once
	bufs   sync.Pool // *nystromBuf: scratch for Transform

	c32once sync.Once
	c32     *Centers32     // the landmarks for float32 kernel blocks (Transform32)
	msqr32  blas32.General // K_CC^{-1/2} in float32
	c32err  error
	bufs32  sync.Pool // *[]float32: Transform32's kernel block
}

// nystromBuf is Transform's scratch: a block of K(x, C) and the rows' norms.
type nystromBuf struct{ k, xn []float64 }

// Landmark sampling schemes of NystromOptions.Sampling (the same names as
// solvers' centre sampling).
const (
	SamplingUniform = "uniform" // distinct rows uniformly at random
	SamplingRLS     = "rls"     // recursive ridge leverage scores (RecursiveRLS)
)

// NystromOptions configures NewNystrom.
type NystromOptions struct {
	// Options: Backend does the kernel blocks, the eigendecomposition and
	// Transform's Gemm; Progress receives RecursiveRLS's "level" reports
	// and a "landmarks" report when the map is built; the landmark factors
	// (and the leverage-score blocks) count against MemoryBudget.
	Options
	// Landmarks is m, the number of landmarks (1 <= m <= n).
	Landmarks int
	// Sampling is SamplingUniform (the default, also for "") or SamplingRLS.
	Sampling string
	// Lambda is the ridge of the leverage scores (SamplingRLS only); <= 0
	// chooses it at every level as RecursiveRLS describes.
	Lambda float64
	// Seed makes the sample reproducible.
	Seed uint64
}

// NewNystrom builds the Nystrom map of k on opt.Landmarks rows of x chosen
// by opt.Sampling: uniformly at random without replacement, or by
// RecursiveRLS with opt.Lambda. The chosen rows (ascending) are copied; when
// x is a *dataset.CSR they stay sparse (see Nystrom), and nothing n x d is
// formed.
//
// Errors: zonal.ErrParam (m outside 1..n, an unknown sampling, a non-finite
// lambda), zonal.ErrEmpty, zonal.ErrNonFinite, and those of RecursiveRLS and
// NewNystromFromLandmarks, ctx.Err().
func NewNystrom(ctx context.Context, k Kernel, x mat.Matrix, opt NystromOptions) (*Nystrom, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	if c, ok := x.(*dataset.CSR); ok {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	n, _ := x.Dims()
	m := opt.Landmarks
	var idx []int
	switch opt.Sampling {
	case "", SamplingUniform:
		if m < 1 || m > n {
			return nil, fmt.Errorf("%w: need 1 <= m <= n landmarks, got m=%d n=%d", zonal.ErrParam, m, n)
		}
		idx = newRand(opt.Seed, 3).Perm(n)[:m]
		sort.Ints(idx)
	case SamplingRLS:
		if err := CheckScale(k, x); err != nil { // before the leverage scores
			return nil, err
		}
		var err error
		if idx, err = RecursiveRLS(ctx, k, x, m, RLSOptions{Options: opt.Options, Lambda: opt.Lambda, Seed: opt.Seed}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown landmark sampling %q (uniform, rls)", zonal.ErrParam, opt.Sampling)
	}
	return NewNystromFromLandmarks(ctx, k, dataset.MustSelectRows(x, idx), opt.Options)
}

// NewNystromFromLandmarks builds the Nystrom map of k for the given
// landmarks C (m x d, copied; a *dataset.CSR is kept sparse, any other
// matrix is copied dense): it forms K_CC (m x m) and its pseudo-inverse
// square root. The m x m factors and the copy of C count against
// opt.MemoryBudget; ctx is checked while K_CC is formed, and a
// cancellation during its decomposition returns at once (the abandoned
// decomposition finishes in the background); with opt.Progress set, one report of stage "landmarks"
// (Done = Total = m) follows the build.
//
// CheckScale runs first: landmarks so large that the kernel overflows are
// zonal.ErrNonFinite, a kernel that is 0 between all of them zonal.ErrParam.
//
// Errors: zonal.ErrEmpty, zonal.ErrNonFinite, zonal.ErrParam (nil kernel,
// K_CC without a positive eigenvalue), zonal.ErrTooLarge,
// zonal.ErrNoConvergence from the eigensolver, ctx.Err().
func NewNystromFromLandmarks(ctx context.Context, k Kernel, landmarks mat.Matrix, opt Options) (*Nystrom, error) {
	return newNystrom(ctx, k, landmarks, opt, false)
}

// NewNystromBasis builds the map of NewNystromFromLandmarks in the
// eigenbasis of K_CC: with K_CC = V diag(mu) V^T and V_r the r = Rank()
// eigenvectors above the floor,
//
//	z(x) = K(x, C) V_r diag(mu_r^{-1/2}),  Dim() = r,
//
// so z(x).z(y) = K(x,C) K_CC^+ K(C,y) as for the m-column map, whose
// features are these times V_r^T (an isometry on them). Any fit that sees
// the features only through their inner products and a rotation-invariant
// penalty (ridge, kernel ridge, their hat matrices and leave-one-out
// scores, the Gram matrix's non-zero eigenvalues) is the same on both up
// to rounding, but the map holds and applies an m x r matrix instead of
// m x m: Transform costs 2 n m r flops instead of 2 n m^2, the features'
// Gram matrix and its eigendecomposition are r x r, and the build skips
// the m^3 product that forms K_CC^{-1/2}. For a smooth kernel the rank is
// often far below m (the eigenvalues of a wide Gaussian decay
// exponentially). It marshals as versions 3 (dense landmarks) and 4
// (sparse) of the encoding, with the m x r matrix in place of m x m.
//
// Errors: those of NewNystromFromLandmarks.
func NewNystromBasis(ctx context.Context, k Kernel, landmarks mat.Matrix, opt Options) (*Nystrom, error) {
	return newNystrom(ctx, k, landmarks, opt, true)
}

// newNystrom builds the map of NewNystromFromLandmarks (basis false) or of
// NewNystromBasis (basis true).
func newNystrom(ctx context.Context, k Kernel, landmarks mat.Matrix, opt Options, basis bool) (*Nystrom, error) {
	if landmarks == nil {
		return nil, fmt.Errorf("%w: no landmarks", zonal.ErrEmpty)
	}
	if ld, ok := landmarks.(*mat.Dense); ok && (ld == nil || ld.IsEmpty()) {
		return nil, fmt.Errorf("%w: no landmarks", zonal.ErrEmpty)
	}
	m, d := landmarks.Dims()
	if m == 0 || d == 0 {
		return nil, fmt.Errorf("%w: no landmarks", zonal.ErrEmpty)
	}
	cs, sparse := landmarks.(*dataset.CSR)
	if sparse {
		if err := cs.Validate(); err != nil {
			return nil, err
		}
	}
	if err := CheckScale(k, landmarks); err != nil {
		return nil, err
	}
	if err := opt.check(fmt.Sprintf("the Nystrom factors of %d landmarks", m), budget.Floats(3, m, m), copyBytes(landmarks)); err != nil {
		return nil, err
	}
	b := opt.backend()
	ny := &Nystrom{b: b, k: k, m: m, d: d}
	var c mat.Matrix
	if sparse {
		ny.cs, _ = cs.Subset(seq(m)) // a copy
		c = ny.cs
	} else {
		ny.c = mat.DenseCopyOf(landmarks)
		c = ny.c
	}
	kcc, err := Matrix(ctx, k, c, c, opt.quiet())
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mu := make([]float64, m)
	g := kcc.RawMatrix()
	// The O(m^3) eigendecomposition cannot check ctx itself; interrupt.Do
	// returns on cancellation and leaves it to finish on its own.
	var eigErr error
	if err := interrupt.Do(ctx, func() { eigErr = b.SymEig(g, mu, true) }); err != nil {
		return nil, err
	}
	if eigErr != nil {
		return nil, fmt.Errorf("kernels: Nystrom eigendecomposition: %w", eigErr)
	}
	top := mu[m-1]
	if !(top > 0) {
		return nil, fmt.Errorf("%w: the landmarks' kernel matrix has no positive eigenvalue", zonal.ErrParam)
	}
	floor := top * float64(m) * 0x1p-52
	rank := 0
	for j := 0; j < m; j++ {
		if mu[j] > floor {
			rank++
		}
	}
	// V diag(f): the columns of the eigenvalues above the floor, scaled;
	// compacted to m x rank (SymEig's ascending order) for the basis map,
	// in place with zero columns otherwise.
	cols := m
	if basis {
		cols = rank
	}
	vs := mat.NewDense(m, cols, nil)
	col := 0
	for j := 0; j < m; j++ {
		if mu[j] <= floor {
			continue
		}
		if !basis {
			col = j
		}
		f := 1 / math.Sqrt(mu[j])
		for i := 0; i < m; i++ {
			vs.Set(i, col, g.Data[i*g.Stride+j]*f)
		}
		col++
	}
	if basis {
		opt.report("landmarks", m, m)
		ny.msqr, ny.rank, ny.dim, ny.basis = vs, rank, rank, true
		return ny, nil
	}
	ms := mat.NewDense(m, m, nil)
	if err := interrupt.Do(ctx, func() {
		b.Gemm(blas.NoTrans, blas.Trans, 1, vs.RawMatrix(), kcc.RawMatrix(), 0, ms.RawMatrix())
	}); err != nil {
		return nil, err
	}
	// vs * V^T: kcc holds V after SymEig; the zeroed columns of vs drop the
	// sub-floor eigenvectors.
	opt.report("landmarks", m, m)
	ny.msqr, ny.rank, ny.dim = ms, rank, m
	return ny, nil
}

// rowsBytes is the size of a copy of the rows idx of x (rowsOf): dense
// len(idx) x d, or the CSR arrays of those rows.
func rowsBytes(x mat.Matrix, idx []int) int64 {
	if c, ok := x.(*dataset.CSR); ok {
		nnz := 0
		for _, r := range idx {
			nnz += c.RowPtr[r+1] - c.RowPtr[r]
		}
		return budget.Floats(2, nnz) + budget.Floats(len(idx)+1)
	}
	_, d := x.Dims()
	return budget.Floats(len(idx), d)
}

// kernelDiag returns k(x_i, x_i) for the rows of x: 1 for the Gaussian and
// the Laplacian, the kernel of <x_i, x_i> = |x_i|^2 for the inner-product
// kernels (the value Eval gives, the same sum), and Eval on each row
// (densified one at a time when sparse) otherwise.
func kernelDiag(k Kernel, x input) []float64 {
	n := x.rows()
	out := make([]float64, n)
	switch kk := k.(type) {
	case Gaussian, Laplacian:
		for i := range out {
			out[i] = 1
		}
		return out
	case innerKernel:
		xn := x.sqNorms()
		for i := range out {
			v := []float64{xn[i]}
			kk.fromInner(v, xn[i], xn[i:i+1])
			out[i] = v[0]
		}
		return out
	}
	var buf []float64
	if x.sparse {
		buf = make([]float64, x.cols())
	}
	for i := range out {
		r := x.denseRow(i, buf)
		out[i] = k.Eval(r, r)
	}
	return out
}

// copyBytes is the size of a copy of x: dense m x d, or a CSR's arrays.
func copyBytes(x mat.Matrix) int64 {
	if c, ok := x.(*dataset.CSR); ok {
		return budget.Floats(2, c.NNZ()) + budget.Floats(c.Rows+1)
	}
	r, cc := x.Dims()
	return budget.Floats(r, cc)
}

// InputDim is d.
func (ny *Nystrom) InputDim() int { return ny.d }

// Dim is the number of features: m, the number of landmarks, or Rank()
// for a map of NewNystromBasis.
func (ny *Nystrom) Dim() int { return ny.dim }

// Basis reports whether the map is in K_CC's eigenbasis (NewNystromBasis).
func (ny *Nystrom) Basis() bool { return ny.basis }

// Rank is the number of eigenvalues of K_CC above the floor.
func (ny *Nystrom) Rank() int { return ny.rank }

// Landmarks returns a dense copy of C (m x d). For sparse landmarks it is
// the densified CSR, m*d values however few of them are non-zero: use
// LandmarksCSR for those.
func (ny *Nystrom) Landmarks() *mat.Dense {
	if ny.cs != nil {
		return ny.cs.ToDense()
	}
	return mat.DenseCopyOf(ny.c)
}

// LandmarksCSR returns a copy of C when the landmarks are sparse (taken
// from a *dataset.CSR), and nil when they are dense.
func (ny *Nystrom) LandmarksCSR() *dataset.CSR {
	if ny.cs == nil {
		return nil
	}
	out, _ := ny.cs.Subset(seq(ny.m))
	return out
}

// Sparse reports whether the landmarks are kept as a CSR.
func (ny *Nystrom) Sparse() bool { return ny.cs != nil }

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// landmarkInput returns the landmarks as a kernel argument (with the
// column index when sparse) and their squared norms, computed once.
func (ny *Nystrom) landmarkInput() (input, []float64) {
	ny.cnOnce.Do(func() {
		if ny.cs != nil {
			ny.cin = input{sp: csrView(ny.cs), sparse: true}.withIndex()
		} else {
			ny.cin = input{g: ny.c.RawMatrix()}
		}
		ny.cn = ny.cin.sqNorms()
	})
	return ny.cin, ny.cn
}

// Kind returns "nystrom".
func (ny *Nystrom) Kind() string { return "nystrom" }

// String describes the map.
func (ny *Nystrom) String() string {
	if ny.basis {
		return fmt.Sprintf("nystrom(%s, m=%d, rank=%d, eigenbasis)", ny.k, ny.m, ny.rank)
	}
	return fmt.Sprintf("nystrom(%s, m=%d, rank=%d)", ny.k, ny.m, ny.rank)
}

// Transform writes K(x, C) K_CC^{-1/2} for the rows of x into dst (n x m;
// K(x, C) V_r diag(mu_r^{-1/2}) into n x Rank() for a map of NewNystromBasis),
// 1024 rows at a time, with the map's backend. Errors: zonal.ErrEmpty,
// zonal.ErrShape, zonal.ErrNonFinite (see FeatureMap).
func (ny *Nystrom) Transform(dst *mat.Dense, x mat.Matrix) error {
	n, err := checkTransform(dst, x, ny.InputDim(), ny.Dim())
	if err != nil {
		return err
	}
	xg, err := asInput(x)
	if err != nil {
		return err
	}
	m := ny.m
	const chunk = 1024
	rows := min(chunk, n)
	cg, cn := ny.landmarkInput()
	buf, _ := ny.bufs.Get().(*nystromBuf)
	if buf == nil {
		buf = new(nystromBuf)
	}
	defer ny.bufs.Put(buf)
	if cap(buf.k) < rows*m {
		buf.k = make([]float64, rows*m)
	}
	if cap(buf.xn) < rows {
		buf.xn = make([]float64, rows)
	}
	dg := dst.RawMatrix()
	for i0 := 0; i0 < n; i0 += chunk {
		i1 := min(n, i0+chunk)
		xb := xg.sub(i0, i1)
		xn := xb.sqNormsInto(buf.xn[:i1-i0])
		blk := blas64.General{Rows: i1 - i0, Cols: m, Stride: m, Data: buf.k[:(i1-i0)*m]}
		if err := matrixGeneral(context.Background(), blk, ny.b, ny.k, xb, cg, false, xn, cn); err != nil {
			return err
		}
		ny.b.Gemm(blas.NoTrans, blas.NoTrans, 1, blk, ny.msqr.RawMatrix(), 0, subRows(dg, i0, i1))
	}
	return nil
}

// Transform32 is Transform into a float32 dst (n x m, Stride >= m), both
// products in single precision, 1024 rows at a time: the kernel block
// K(x, C) by Centers32.MatrixInto32 against the landmarks (prepared once
// per map; float32 products and exponential for the Gaussian kernel on
// dense x and landmarks, otherwise float64 kernel values rounded: see the
// accuracy note of NewCenters32; a *dataset.CSR x is read as CSR rows),
// then its product with K_CC^{-1/2} rounded to float32 (once per map) by
// backend.Sgemm. K_CC^{-1/2} itself was formed in float64.
//
// Error: with e_i the error of the float32 entry K(x, c_i),
//
//	|z~_j - z_j| <= sum_i (|e_i| + (m + 2) u |K(x, c_i)|) |M_ij| + u |z_j|,
//
// M = K_CC^{-1/2}, u = 2^-24 (the rounding of M and the m-term float32 sum,
// worst case). The sum over i scales with |M_ij| up to mu^{-1/2} for the
// smallest retained eigenvalue mu of K_CC: features of nearly singular
// landmark sets are amplified round-off in float32 (as in float64, 2^29
// times smaller). The features' float32 storage is still exact to u |z|.
//
// Errors: those of Transform (see FeatureMap32).
func (ny *Nystrom) Transform32(dst blas32.General, x mat.Matrix) error {
	n, err := checkTransform32(dst, x, ny.InputDim(), ny.Dim())
	if err != nil {
		return err
	}
	if _, err := asInput(x); err != nil {
		return err
	}
	m, dim := ny.m, ny.dim
	ny.c32once.Do(func() {
		var c mat.Matrix = ny.c
		if ny.cs != nil {
			c = ny.cs
		}
		// The map already holds the landmarks and M in float64; their float32
		// copies are half that, so no budget beyond the map's applies.
		ny.c32, ny.c32err = NewCenters32(ny.k, c, Options{Backend: ny.b, MemoryBudget: math.MaxInt64})
		ny.msqr32 = blas32.General{Rows: m, Cols: dim, Stride: dim, Data: make([]float32, m*dim)}
		mg := ny.msqr.RawMatrix()
		for i := 0; i < m; i++ {
			round32(ny.msqr32.Data[i*dim:(i+1)*dim], mg.Data[i*mg.Stride:i*mg.Stride+dim])
		}
	})
	if ny.c32err != nil {
		return ny.c32err
	}
	const chunk = 1024
	rows := min(chunk, n)
	bp, _ := ny.bufs32.Get().(*[]float32)
	if bp == nil {
		bp = new([]float32)
	}
	defer ny.bufs32.Put(bp)
	if cap(*bp) < rows*m {
		*bp = make([]float32, rows*m)
	}
	opt := Options{Backend: ny.b, MemoryBudget: math.MaxInt64}
	for i0 := 0; i0 < n; i0 += chunk {
		i1 := min(n, i0+chunk)
		blk := blas32.General{Rows: i1 - i0, Cols: m, Stride: m, Data: (*bp)[:(i1-i0)*m]}
		if err := ny.c32.RowsInto32(context.Background(), blk, x, i0, i1, opt); err != nil {
			return err
		}
		backend.Sgemm(ny.b, blas.NoTrans, blas.NoTrans, 1, blk, ny.msqr32, 0, subRows32(dst, i0, i1))
	}
	return nil
}

// MarshalBinary encodes the kernel, the landmarks and K_CC^{-1/2}; it fails
// (zonal.ErrParam) when the kernel cannot be encoded. Dense landmarks are
// version 1 of the encoding (m, d, rank, the m x d landmarks, K_CC^{-1/2});
// sparse landmarks version 2 (m, d, rank, nnz, then the CSR's RowPtr, Col
// and Val, then K_CC^{-1/2}; indices stored as float64, exact below 2^53),
// so files of dense maps are unchanged and still decode. A map of
// NewNystromBasis is version 3 (dense) or 4 (sparse): the same layout with
// the m x rank matrix V_r diag(mu_r^{-1/2}) last.
func (ny *Nystrom) MarshalBinary() ([]byte, error) {
	version := byte(1)
	if ny.cs != nil {
		version = 2
	}
	if ny.basis {
		version += 2
	}
	out, err := appendKernel([]byte{version}, ny.k)
	if err != nil {
		return nil, err
	}
	out = putFloats(out, float64(ny.m), float64(ny.d), float64(ny.rank))
	if ny.cs == nil {
		out = putFloats(out, ny.c.RawMatrix().Data...)
	} else {
		out = putFloats(out, float64(ny.cs.NNZ()))
		out = putInts(out, ny.cs.RowPtr)
		out = putInts(out, ny.cs.Col)
		out = putFloats(out, ny.cs.Val...)
	}
	return putFloats(out, ny.msqr.RawMatrix().Data...), nil
}

// putInts appends the integers v as float64 values.
func putInts(b []byte, v []int) []byte {
	for _, x := range v {
		b = putFloats(b, float64(x))
	}
	return b
}

// decodeNystrom decodes Nystrom.MarshalBinary (registered in registry.go),
// both versions; the map computes with backend.Default().
func decodeNystrom(data []byte) (FeatureMap, error) {
	bad := fmt.Errorf("%w: malformed nystrom map encoding", zonal.ErrFormat)
	if len(data) < 1 || data[0] < 1 || data[0] > 4 {
		return nil, bad
	}
	sparse := data[0] == 2 || data[0] == 4
	basis := data[0] >= 3
	k, rest, err := readKernel(data[1:])
	if err != nil {
		return nil, err
	}
	hn := 3
	if sparse {
		hn = 4
	}
	if len(rest) < 8*hn {
		return nil, bad
	}
	h, _ := getFloats(rest[:8*hn], hn)
	rest = rest[8*hn:]
	const maxDim = 1 << 40
	for _, v := range h {
		if !(v >= 0 && v < maxDim) || v != math.Trunc(v) {
			return nil, bad
		}
	}
	m, d, rank := int(h[0]), int(h[1]), int(h[2])
	dim := m // the columns of the stored matrix
	if basis {
		dim = rank
	}
	if m < 1 || d < 1 || dim < 1 || rank > m || len(rest)%8 != 0 || m > len(rest)/8 || int64(m)*int64(dim) > int64(len(rest)/8) {
		return nil, bad
	}
	ny := &Nystrom{b: backend.Default(), k: k, m: m, d: d, rank: rank, dim: dim, basis: basis}
	if !sparse {
		if int64(d) > int64(len(rest)/8) || int64(len(rest)/8) != int64(m)*int64(d)+int64(m)*int64(dim) {
			return nil, bad
		}
		v, _ := getFloats(rest, -1)
		ny.c, ny.msqr = mat.NewDense(m, d, v[:m*d]), mat.NewDense(m, dim, v[m*d:])
		return ny, nil
	}
	nnz := int(h[3])
	if d > 1<<31 || int64(len(rest)/8) != int64(m+1)+2*int64(nnz)+int64(m)*int64(dim) {
		return nil, bad
	}
	v, _ := getFloats(rest, -1)
	ints := func(f []float64) ([]int, bool) {
		out := make([]int, len(f))
		for i, x := range f {
			if !(x >= 0 && x < maxDim) || x != math.Trunc(x) {
				return nil, false
			}
			out[i] = int(x)
		}
		return out, true
	}
	rowPtr, ok1 := ints(v[:m+1])
	col, ok2 := ints(v[m+1 : m+1+nnz])
	if !ok1 || !ok2 {
		return nil, bad
	}
	cs, err := dataset.NewCSR(m, d, rowPtr, col, v[m+1+nnz:m+1+2*nnz])
	if err != nil {
		return nil, fmt.Errorf("%w: nystrom landmarks: %v", zonal.ErrFormat, err)
	}
	ny.cs, ny.msqr = cs, mat.NewDense(m, dim, v[m+1+2*nnz:])
	return ny, nil
}

// RLSOptions configures RecursiveRLS.
type RLSOptions struct {
	// Options: Backend does the kernel blocks, Cholesky and eigenvalue
	// steps; Progress receives one "level" report per level; the copy of x
	// and each level's blocks count against MemoryBudget.
	Options
	// Lambda is the ridge of the leverage scores; <= 0 chooses it at every
	// level (see RecursiveRLS).
	Lambda float64
	// Seed makes the sample reproducible.
	Seed uint64
}

// RecursiveRLS returns m distinct row indices of x (ascending) sampled by
// approximate lambda-ridge leverage scores of the kernel matrix, by the
// recursive scheme of Musco and Musco (2017): halve the data uniformly until
// about m points are left; then, level by level back up, estimate each
// point's ridge leverage score from the weighted landmarks S of the level
// below,
//
//	l_i = (k(x_i,x_i) - K_iS (K_SS + lambda W^{-2})^{-1} K_Si) / lambda,
//
// (W the sampling weights 1/sqrt(p)), keep each point with probability
// min(1, log(m) l_i) on intermediate levels, and draw exactly m points
// without replacement with probabilities proportional to min(1, l_i) on the
// top level. lambda > 0 is used as given; lambda <= 0 picks, at each level,
// lambda = (tr(W K_SS W) - sum of its top k eigenvalues)/k with
// k = ceil(m/(4 log m)), as Musco and Musco suggest. Only |level| x |S| kernel
// blocks are formed (at most n x ~m). A *dataset.CSR x is used in place
// (not copied) and its blocks come from MatrixInto's sparse path.
//
// Each level's blocks (and the copy of a dense x) are checked against
// opt.MemoryBudget before they are formed; ctx is checked between levels
// and while the kernel blocks are formed; with opt.Progress set, a report
// of stage "level" follows each level (Done of Total levels).
//
// Errors: zonal.ErrEmpty, zonal.ErrNonFinite, zonal.ErrParam (nil kernel,
// m outside 1..n, a non-finite lambda), zonal.ErrTooLarge,
// zonal.ErrNotPositiveDefinite when K_SS + lambda W^-2 cannot be factored
// even with jitter, ctx.Err().
func RecursiveRLS(ctx context.Context, k Kernel, x mat.Matrix, m int, opt RLSOptions) ([]int, error) {
	lambda := opt.Lambda
	if k == nil {
		return nil, fmt.Errorf("%w: nil kernel", zonal.ErrParam)
	}
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("%w: data is %dx%d", zonal.ErrEmpty, n, d)
	}
	if m < 1 || m > n {
		return nil, fmt.Errorf("%w: need 1 <= m <= n landmarks, got m=%d n=%d", zonal.ErrParam, m, n)
	}
	if math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("%w: lambda is %g", zonal.ErrParam, lambda)
	}
	var xd mat.Matrix = x // a *dataset.CSR is used in place: it is not copied
	if !isCSR(x) {
		if err := opt.check("the leverage-score copy of the data", budget.Floats(n, d)); err != nil {
			return nil, err
		}
		xd = mat.DenseCopyOf(x)
	}
	xin, err := asInput(xd)
	if err != nil {
		return nil, err
	}
	if m == n {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	rng := newRand(opt.Seed, 4)
	perm := rng.Perm(n)
	sizes := []int{n}
	for sizes[len(sizes)-1] > m {
		sizes = append(sizes, (sizes[len(sizes)-1]+1)/2)
	}
	kdiag := kernelDiag(k, xin)
	over := math.Max(1, math.Log(float64(m)))
	kRank := max(1, int(math.Ceil(float64(m)/(4*over))))
	// samp: positions (into perm) of the current landmarks; weights their w.
	samp := make([]int, sizes[len(sizes)-1])
	weights := make([]float64, len(samp))
	for i := range samp {
		samp[i], weights[i] = i, 1
	}
	for lev := len(sizes) - 2; lev >= 0; lev-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := sizes[lev]
		levs, err := levelScores(ctx, k, xd, perm, cur, samp, weights, kdiag, lambda, kRank, opt.Options)
		if err != nil {
			return nil, err
		}
		opt.report("level", len(sizes)-1-lev, len(sizes)-1)
		if lev > 0 {
			var ns []int
			var nw []float64
			for i := 0; i < cur; i++ {
				p := math.Min(1, over*levs[i])
				if rng.Float64() < p {
					ns = append(ns, i)
					nw = append(nw, 1/math.Sqrt(p))
				}
			}
			if len(ns) == 0 { // very unlikely: fall back to a uniform sample
				p := float64(min(m, cur)) / float64(cur)
				for _, i := range rng.Perm(cur)[:min(m, cur)] {
					ns = append(ns, i)
					nw = append(nw, 1/math.Sqrt(p))
				}
			}
			samp, weights = ns, nw
			continue
		}
		// Top level: m distinct points, weighted sampling without replacement
		// (Efraimidis-Spirakis keys log(u)/p; zero scores come last, in the
		// random order of perm).
		type kv struct {
			key float64
			pos int
		}
		keys := make([]kv, cur)
		for i := 0; i < cur; i++ {
			p := math.Min(1, levs[i])
			key := math.Inf(-1)
			if p > 0 {
				key = math.Log(1-rng.Float64()) / p
			}
			keys[i] = kv{key, i}
		}
		sort.SliceStable(keys, func(a, c int) bool { return keys[a].key > keys[c].key })
		out := make([]int, m)
		for i := range out {
			out[i] = perm[keys[i].pos]
		}
		sort.Ints(out)
		return out, nil
	}
	// Not reached: sizes has at least two entries because m < n.
	return nil, fmt.Errorf("kernels: RecursiveRLS internal error")
}

// levelScores returns the approximate ridge leverage scores of the points
// perm[0:cur] given the weighted landmarks perm[samp].
func levelScores(ctx context.Context, k Kernel, x mat.Matrix, perm []int, cur int, samp []int, w []float64,
	kdiag []float64, lambda float64, kRank int, opt Options) ([]float64, error) {
	ns := len(samp)
	idxCur := perm[:cur]
	idxS := make([]int, len(samp))
	for i, p := range samp {
		idxS[i] = perm[p]
	}
	// K_cur,S and its transpose, K_SS and W K_SS W, the rows of the level
	// and of S.
	if err := opt.check("a leverage-score level", budget.Floats(2, cur, ns), budget.Floats(2, ns, ns), rowsBytes(x, idxCur), rowsBytes(x, idxS)); err != nil {
		return nil, err
	}
	b := opt.backend()
	xs := dataset.MustSelectRows(x, idxS)
	ks, err := Matrix(ctx, k, dataset.MustSelectRows(x, idxCur), xs, opt.quiet()) // cur x s
	if err != nil {
		return nil, err
	}
	s := len(samp)
	a := mat.NewDense(s, s, nil) // K_SS
	for i, p := range samp {
		for j := 0; j < s; j++ {
			a.Set(i, j, ks.At(p, j))
		}
	}
	// The O(s^3) steps below (the eigenvalues of adaptiveLambda, the
	// Cholesky factor, the triangular solve) cannot check ctx themselves:
	// through interrupt.Do a cancellation returns at once.
	if lambda <= 0 {
		if err := interrupt.Do(ctx, func() { lambda = adaptiveLambda(b, a, w, kRank) }); err != nil {
			return nil, err
		}
	}
	for i := 0; i < s; i++ {
		a.Set(i, i, a.At(i, i)+lambda/(w[i]*w[i]))
	}
	ag := a.RawMatrix()
	var cholErr error
	if err := interrupt.Do(ctx, func() { cholErr = b.Cholesky(ag) }); err != nil {
		return nil, err
	}
	if cholErr != nil {
		// K_SS + lambda W^-2 is positive definite in exact arithmetic; add a
		// relative jitter once if round-off broke it.
		tr := 0.0
		for i := 0; i < s; i++ {
			tr += ks.At(samp[i], i)
		}
		for i := 0; i < s; i++ {
			for j := 0; j < s; j++ {
				a.Set(i, j, ks.At(samp[i], j))
			}
			a.Set(i, i, a.At(i, i)+lambda/(w[i]*w[i])+1e-10*tr/float64(s))
		}
		if err := interrupt.Do(ctx, func() { cholErr = b.Cholesky(ag) }); err != nil {
			return nil, err
		}
		if cholErr != nil {
			return nil, fmt.Errorf("kernels: RecursiveRLS: %w", cholErr)
		}
	}
	y := mat.DenseCopyOf(ks.T()) // s x cur
	if err := interrupt.Do(ctx, func() { b.TriSolve(blas.NoTrans, ag, y.RawMatrix()) }); err != nil {
		return nil, err
	}
	levs := make([]float64, cur)
	yg := y.RawMatrix()
	for j := 0; j < s; j++ {
		row := yg.Data[j*yg.Stride : j*yg.Stride+cur]
		for i, v := range row {
			levs[i] += v * v
		}
	}
	for i := range levs {
		levs[i] = math.Max(0, kdiag[idxCur[i]]-levs[i]) / lambda
	}
	return levs, nil
}

// adaptiveLambda is (tr(W K W) - sum of the top kRank eigenvalues of W K W)/kRank.
func adaptiveLambda(b backend.Backend, kss *mat.Dense, w []float64, kRank int) float64 {
	s, _ := kss.Dims()
	wkw := mat.NewDense(s, s, nil)
	tr := 0.0
	for i := 0; i < s; i++ {
		for j := 0; j < s; j++ {
			wkw.Set(i, j, w[i]*kss.At(i, j)*w[j])
		}
		tr += wkw.At(i, i)
	}
	if kRank >= s {
		return 1e-6 * math.Max(tr/float64(s), 1e-300)
	}
	ev := make([]float64, s)
	if err := b.SymEig(wkw.RawMatrix(), ev, false); err != nil {
		return 1e-6 * tr / float64(s)
	}
	top := 0.0
	for i := s - kRank; i < s; i++ {
		top += math.Abs(ev[i])
	}
	lam := (tr - top) / float64(kRank)
	if !(lam > 1e-6*tr/float64(s)) {
		lam = 1e-6 * tr / float64(s)
	}
	return lam
}

package kpca

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/interrupt"
	"github.com/zonal-ml/zonal/kernels"
)

// MapKind is the kind under which NystromMap is registered with
// kernels.RegisterMap: kernels.UnmarshalMap(kpca.MapKind, data) decodes what
// NystromMap.MarshalBinary wrote.
const MapKind = "inc-nystrom"

func init() {
	kernels.RegisterMap(MapKind, func(data []byte) (kernels.FeatureMap, error) {
		return decodeNystromMap(data)
	})
}

// Nystrom grows a Nystrom approximation one landmark at a time, keeping the
// eigendecomposition K_mm = U Lambda U^T of the landmark kernel matrix exact
// with one bordered update per landmark (see the package documentation). It
// is not safe for concurrent use; Map returns an immutable feature map.
type Nystrom struct {
	k    kernels.Kernel
	b    backend.Backend
	opts Options
	dim  int

	m      int
	rowCap int
	c      []float64 // landmarks, m x dim
	eig    eigState
}

// NewNystrom returns an incremental Nystrom approximation without landmarks
// for points of dimension dim. Of opts it uses Backend, MemoryBudget and
// RCond. The error wraps zonal.ErrParam (nil kernel, dim <= 0, a negative
// or NaN option, MeanAdjust or Components set).
func NewNystrom(k kernels.Kernel, dim int, opts Options) (*Nystrom, error) {
	if k == nil {
		return nil, fmt.Errorf("kpca: nil kernel: %w", zonal.ErrParam)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("kpca: dimension %d: %w", dim, zonal.ErrParam)
	}
	if err := opts.checkNystrom(); err != nil {
		return nil, err
	}
	return &Nystrom{k: k, b: opts.backend(), opts: opts, dim: dim}, nil
}

// Len returns the number of landmarks.
func (ny *Nystrom) Len() int { return ny.m }

// Add appends the landmark c (length InputDim) and updates the
// eigendecomposition of K_mm with one bordered update
// (backend.BorderedUpdate): O(m^2) for the roots and one m x m by
// m x (m+1) product.
//
// Errors: zonal.ErrShape (wrong length), zonal.ErrNonFinite (NaN or Inf in
// c or a kernel value), zonal.ErrTooLarge (the grown buffers exceed
// Options.MemoryBudget), zonal.ErrState (a previous update failed); the
// landmark is then not added. A backend error from the rank-one update
// (zonal.ErrNoConvergence) leaves the Nystrom unusable (later calls return
// zonal.ErrState).
func (ny *Nystrom) Add(c []float64) error {
	if ny.eig.n != ny.m {
		return fmt.Errorf("kpca: a previous update failed: %w", zonal.ErrState)
	}
	m := ny.m
	a, kcc, err := borderRow(ny.k, ny.b, c, ny.dim, ny.c, m, "landmark")
	if err != nil {
		return err
	}
	if m+1 > ny.rowCap {
		nc := max(2*ny.rowCap, 16)
		need := budget.Floats(nc, ny.dim) + budget.Floats(2, nc, nc)
		if err := ny.opts.checkBudget(fmt.Sprintf("incremental Nystrom with %d landmarks", nc), need); err != nil {
			return err
		}
		buf := make([]float64, nc*ny.dim)
		copy(buf, ny.c[:m*ny.dim])
		ny.c, ny.rowCap = buf, nc
		ny.eig.reserve(nc, nc)
	}
	copy(ny.c[m*ny.dim:], c)
	ny.m = m + 1
	if _, err := ny.eig.border(ny.b, a, kcc, nil, false); err != nil {
		ny.eig.n = -1
		return fmt.Errorf("kpca: landmark %d: bordered update: %w", m, err)
	}
	return nil
}

// Landmarks returns a copy of the landmarks (m x InputDim).
func (ny *Nystrom) Landmarks() *mat.Dense {
	if ny.m == 0 {
		return &mat.Dense{}
	}
	return mat.NewDense(ny.m, ny.dim, append([]float64(nil), ny.c[:ny.m*ny.dim]...))
}

// Eigen returns the eigenvalues of K_mm (ascending) and its eigenvectors
// (columns, same order), as copies.
func (ny *Nystrom) Eigen() ([]float64, *mat.Dense) {
	if ny.m == 0 {
		return nil, &mat.Dense{}
	}
	u := ny.eig.u()
	out := mat.NewDense(ny.m, ny.m, nil)
	for i := 0; i < ny.m; i++ {
		copy(out.RawRowView(i), u.Data[i*u.Stride:i*u.Stride+ny.m])
	}
	return append([]float64(nil), ny.eig.d...), out
}

// Map returns the feature map F(x) = K(x, C) U_+ Lambda_+^{-1/2} of the
// current landmarks, U_+, Lambda_+ being the eigenpairs with
// lambda > RCond * lambda_max (Options.RCond), so that
// F(X) F(Y)^T = K_XC K_CC^+ K_CY. The error wraps zonal.ErrState (no
// landmarks, a previous update failed, or K_CC numerically zero).
func (ny *Nystrom) Map() (*NystromMap, error) {
	if ny.m == 0 || ny.eig.n != ny.m {
		return nil, fmt.Errorf("kpca: no landmarks: %w", zonal.ErrState)
	}
	u := ny.eig.u()
	return newNystromMap(ny.k, ny.b, ny.Landmarks(), ny.eig.d, u, ny.opts.RCond)
}

// NewNystromMap builds the map Nystrom.Map gives for the same landmarks
// (the rows of landmarks, copied) from one batch eigendecomposition of
// K_CC, in O(m^2 d + m^3): the reference the incremental one is tested
// against. Of opts it uses Backend, MemoryBudget and RCond; ctx is checked
// while K_CC is formed, and a cancellation during the eigendecomposition
// returns ctx.Err() at once (the decomposition finishes in the background).
//
// Errors: zonal.ErrParam (nil kernel, a bad option), zonal.ErrEmpty (no
// landmarks), zonal.ErrNonFinite (NaN or Inf in the landmarks),
// zonal.ErrTooLarge (the m x m matrices exceed opts.MemoryBudget),
// zonal.ErrState (K_CC numerically zero), ctx.Err(), and backend errors
// from the eigendecomposition (zonal.ErrNoConvergence).
func NewNystromMap(ctx context.Context, k kernels.Kernel, landmarks mat.Matrix, opts Options) (*NystromMap, error) {
	if k == nil {
		return nil, fmt.Errorf("kpca: nil kernel: %w", zonal.ErrParam)
	}
	if err := opts.checkNystrom(); err != nil {
		return nil, err
	}
	b, rcond := opts.backend(), opts.RCond
	m, d := landmarks.Dims()
	if m == 0 || d == 0 {
		return nil, fmt.Errorf("kpca: no landmarks: %w", zonal.ErrEmpty)
	}
	if err := opts.checkBudget(fmt.Sprintf("Nystrom map of %d landmarks", m), budget.Floats(m, d)+budget.Floats(2, m, m)); err != nil {
		return nil, err
	}
	c := mat.DenseCopyOf(landmarks)
	if err := checkFinite(c); err != nil {
		return nil, err
	}
	kcc := mat.NewDense(m, m, nil)
	if err := kernels.MatrixInto(ctx, kcc, k, c, c, kernels.Options{Backend: b}); err != nil {
		return nil, err
	}
	symmetrize(kcc.RawMatrix())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := make([]float64, m)
	var eigErr error
	if err := interrupt.Do(ctx, func() { eigErr = b.SymEig(kcc.RawMatrix(), w, true) }); err != nil {
		return nil, err
	}
	if eigErr != nil {
		return nil, fmt.Errorf("kpca: eigendecomposition: %w", eigErr)
	}
	return newNystromMap(k, b, c, w, kcc.RawMatrix(), rcond)
}

func newNystromMap(k kernels.Kernel, b backend.Backend, c *mat.Dense, d []float64, u blas64.General, rcond float64) (*NystromMap, error) {
	m := len(d)
	if rcond <= 0 {
		rcond = float64(m) * 0x1p-52
	}
	lmax := 0.0
	for _, v := range d {
		lmax = math.Max(lmax, math.Abs(v))
	}
	var keep []int
	for j := m - 1; j >= 0; j-- { // descending
		if d[j] > rcond*lmax {
			keep = append(keep, j)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("kpca: landmark kernel matrix is numerically zero: %w", zonal.ErrState)
	}
	proj := mat.NewDense(m, len(keep), nil)
	for jj, j := range keep {
		s := 1 / math.Sqrt(d[j])
		for i := 0; i < m; i++ {
			proj.Set(i, jj, u.Data[i*u.Stride+j]*s)
		}
	}
	return &NystromMap{kernel: k, b: b, c: c, proj: proj}, nil
}

// NystromMap is the Nystrom feature map x -> K(x, C) U_+ Lambda_+^{-1/2}. It is
// immutable, safe for concurrent use, and a kernels.PersistentMap of kind
// "inc-nystrom".
type NystromMap struct {
	kernel kernels.Kernel
	b      backend.Backend
	c      *mat.Dense // m x d landmarks
	proj   *mat.Dense // m x D
}

// InputDim returns the dimension of the points.
func (nm *NystromMap) InputDim() int { _, d := nm.c.Dims(); return d }

// Dim returns the number of features D (the numerical rank of K_CC).
func (nm *NystromMap) Dim() int { _, dd := nm.proj.Dims(); return dd }

// Kind returns "inc-nystrom".
func (nm *NystromMap) Kind() string { return MapKind }

// Transform writes F(x) for the rows of x to dst (p x Dim). Errors:
// zonal.ErrShape (x's width or dst's size), zonal.ErrEmpty (no rows), and
// those of the kernel matrix.
func (nm *NystromMap) Transform(dst *mat.Dense, x mat.Matrix) error {
	p, d := x.Dims()
	if d != nm.InputDim() {
		return fmt.Errorf("kpca: %d columns, want %d: %w", d, nm.InputDim(), zonal.ErrShape)
	}
	if r, c := dst.Dims(); r != p || c != nm.Dim() {
		return fmt.Errorf("kpca: dst is %dx%d, want %dx%d: %w", r, c, p, nm.Dim(), zonal.ErrShape)
	}
	if p == 0 {
		return fmt.Errorf("kpca: no rows: %w", zonal.ErrEmpty)
	}
	m, _ := nm.c.Dims()
	kx := mat.NewDense(p, m, nil)
	if err := kernels.MatrixInto(context.Background(), kx, nm.kernel, x, nm.c, kernels.Options{Backend: nm.b}); err != nil {
		return err
	}
	nm.b.Gemm(blas.NoTrans, blas.NoTrans, 1, kx.RawMatrix(), nm.proj.RawMatrix(), 0, dst.RawMatrix())
	return nil
}

// Approximation returns K_XC K_CC^+ K_CX = F(X) F(X)^T for the rows of x
// (p x p). Errors as for Transform.
func (nm *NystromMap) Approximation(x mat.Matrix) (*mat.Dense, error) {
	p, _ := x.Dims()
	f := mat.NewDense(max(p, 1), nm.Dim(), nil)
	if err := nm.Transform(f, x); err != nil {
		return nil, err
	}
	out := mat.NewDense(p, p, nil)
	nm.b.Syrk(blas.NoTrans, 1, f.RawMatrix(), 0, out.RawMatrix())
	return out, nil
}

const nystromMapVersion = 1

// MarshalBinary encodes the kernel (kind and parameters), the landmarks and
// the projection.
func (nm *NystromMap) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeKernelHeader(&buf, nystromMapVersion, nm.kernel); err != nil {
		return nil, err
	}
	w := func(v any) { binary.Write(&buf, binary.LittleEndian, v) }
	m, d := nm.c.Dims()
	_, dd := nm.proj.Dims()
	w([3]uint32{uint32(m), uint32(d), uint32(dd)})
	for i := 0; i < m; i++ {
		w(nm.c.RawRowView(i))
	}
	for i := 0; i < m; i++ {
		w(nm.proj.RawRowView(i))
	}
	return buf.Bytes(), nil
}

// decodeNystromMap decodes a map written by MarshalBinary (the decoder
// registered as MapKind); the kernel's kind must be registered
// (kernels.RegisterKernel). The backend is backend.Default(). Errors:
// zonal.ErrVersion (another format version), zonal.ErrFormat (truncated,
// inconsistent or non-finite data), and those of kernels.UnmarshalKernel.
func decodeNystromMap(data []byte) (*NystromMap, error) {
	r := bytes.NewReader(data)
	bad := func(part string) error { return malformed("inc-nystrom map", part) }
	k, err := readKernelHeader(r, nystromMapVersion, "inc-nystrom map")
	if err != nil {
		return nil, err
	}
	var dims [3]uint32
	if binary.Read(r, binary.LittleEndian, &dims) != nil {
		return nil, bad("dimensions")
	}
	// The m x d landmarks and the m x dd projection fill the rest exactly;
	// checked by division so that no product of header values can overflow.
	m, d, dd := int(dims[0]), int(dims[1]), int(dims[2])
	rest := r.Len()
	if m == 0 || d == 0 || dd == 0 || dd > m || rest%8 != 0 || (rest/8)%(d+dd) != 0 || (rest/8)/(d+dd) != m {
		return nil, bad("dimensions")
	}
	c := mat.NewDense(m, d, nil)
	proj := mat.NewDense(m, dd, nil)
	if binary.Read(r, binary.LittleEndian, c.RawMatrix().Data) != nil ||
		binary.Read(r, binary.LittleEndian, proj.RawMatrix().Data) != nil {
		return nil, bad("data")
	}
	if checkFinite(c) != nil || checkFinite(proj) != nil {
		return nil, bad("values")
	}
	return &NystromMap{kernel: k, b: backend.Default(), c: c, proj: proj}, nil
}

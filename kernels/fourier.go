package kernels

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
)

// FourierOptions configures NewFourierMap.
type FourierOptions struct {
	// Options: Backend is kept for Transform's Gemm; the m x d frequency
	// table counts against MemoryBudget. Progress is not used (building the
	// map does not look at data).
	Options
	// Features is D, even: D/2 frequencies, each giving a cos and a sin.
	Features int
	// Orthogonal draws the Gaussian kernel's frequencies as orthogonal random
	// features (Yu et al. 2016): blocks of d orthonormal directions, each row
	// scaled by an independent chi_d length, so each frequency is still
	// N(0, I/sigma^2). Not available for the Laplacian kernel.
	Orthogonal bool
	// Seed makes the frequencies reproducible.
	Seed uint64
}

// FourierMap is the random Fourier feature map of a shift-invariant kernel
// (Rahimi and Recht 2007): with frequencies omega_i drawn from the kernel's
// spectral density,
//
//	z(x) = m^{-1/2} (cos <omega_1,x>, sin <omega_1,x>, ..., cos <omega_m,x>, sin <omega_m,x>),
//
// so z(x).z(y) = m^{-1} sum_i cos <omega_i, x-y> and E[z(x).z(y)] = k(x,y)
// (Bochner). Gaussian: omega ~ N(0, I/sigma^2). Laplacian exp(-|x-y|_1/sigma):
// the coordinates of omega are independent Cauchy(0, 1/sigma).
//
// The frequencies are held by input coordinate: W^T, d x m, row i holding
// the i-th coordinate of every omega (the model file keeps the m x d order
// of earlier versions; MarshalBinary and the decoder transpose). The phases
// t = W x of one row are then sum_{i: x_i != 0} x_i W^T[i,:], an axpy of
// length m per nonzero input, so a row reads nnz(x) m of the d m
// frequencies; see Transform.
type FourierMap struct {
	b       backend.Backend
	d, m    int
	wt      []float64 // d x m: wt[i*m+k] is coordinate i of omega_k
	kstring string
	orth    bool

	w32once sync.Once
	w32     blas32.General // W^T in float32 (d x m), for Transform32
}

// fourierScatterRows is the largest number of rows that Transform projects
// by axpys of the rows of W^T (skipping zero inputs); more rows take one
// GEMM per block of rows.
const fourierScatterRows = 32

// transposed returns the c x r transpose of the row-major r x c array a.
func transposed(a []float64, r, c int) []float64 {
	t := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j, v := range a[i*c : (i+1)*c] {
			t[j*r+i] = v
		}
	}
	return t
}

// NewFourierMap returns random Fourier features for a Gaussian or Laplacian k
// on R^d. Errors: zonal.ErrParam for another kernel, odd or non-positive D,
// Orthogonal with the Laplacian, or d < 1; zonal.ErrTooLarge when the
// D/2 x d frequencies exceed opt.MemoryBudget.
func NewFourierMap(k Kernel, d int, opt FourierOptions) (*FourierMap, error) {
	if d < 1 {
		return nil, fmt.Errorf("%w: input dimension must be >= 1, got %d", zonal.ErrParam, d)
	}
	if opt.Features < 2 || opt.Features%2 != 0 {
		return nil, fmt.Errorf("%w: Fourier features need an even D >= 2 (cos/sin pairs), got %d", zonal.ErrParam, opt.Features)
	}
	m := opt.Features / 2
	// The frequencies are drawn straight into W^T (d x m): omega_k's
	// coordinate j, the (k, j) draw of the m x d stream, is wt[j*m+k], so
	// the map is the m x d draw transposed, bit for bit, with one d x m
	// array and no transpose.
	if err := opt.check("the Fourier frequencies", budget.Floats(m, d)); err != nil {
		return nil, err
	}
	rng := newRand(opt.Seed, 2)
	wt := make([]float64, d*m)
	switch kk := k.(type) {
	case Gaussian:
		if opt.Orthogonal {
			// The directions in blocks of d orthogonal rows (sphereRows),
			// then each scaled by a chi_d draw.
			for k0 := 0; k0 < m; k0 += d {
				q := haar(rng, d).RawMatrix()
				for r := 0; r < min(d, m-k0); r++ {
					for j, v := range q.Data[r*q.Stride : r*q.Stride+d] {
						wt[j*m+k0+r] = v
					}
				}
			}
			for c := 0; c < m; c++ {
				chi := 0.0
				for j := 0; j < d; j++ {
					v := rng.NormFloat64()
					chi += v * v
				}
				chi = math.Sqrt(chi)
				for j := 0; j < d; j++ {
					wt[j*m+c] *= chi
				}
			}
		} else {
			for c := 0; c < m; c++ {
				for j := 0; j < d; j++ {
					wt[j*m+c] = rng.NormFloat64()
				}
			}
		}
		for i := range wt {
			wt[i] /= kk.Sigma
		}
	case Laplacian:
		if opt.Orthogonal {
			return nil, fmt.Errorf("%w: orthogonal random features need a rotation-invariant kernel, not %v", zonal.ErrParam, k)
		}
		for c := 0; c < m; c++ {
			for j := 0; j < d; j++ {
				wt[j*m+c] = math.Tan(math.Pi*(rng.Float64()-0.5)) / kk.Sigma
			}
		}
	default:
		return nil, fmt.Errorf("%w: random Fourier features need a Gaussian or Laplacian kernel, got %v", zonal.ErrParam, k)
	}
	return &FourierMap{b: opt.backend(), d: d, m: m, wt: wt, kstring: k.String(), orth: opt.Orthogonal}, nil
}

// InputDim is d.
func (f *FourierMap) InputDim() int { return f.d }

// Dim is D = 2m.
func (f *FourierMap) Dim() int { return 2 * f.m }

// Kind returns "fourier".
func (f *FourierMap) Kind() string { return "fourier" }

// String describes the map.
func (f *FourierMap) String() string {
	return fmt.Sprintf("fourier(%s, d=%d, D=%d, orthogonal=%v)", f.kstring, f.d, 2*f.m, f.orth)
}

// Transform writes z(x) for the rows of x into dst (n x D), with the map's
// backend. The phases t = W x_r of a row come from the rows of W^T (see
// FourierMap):
//
//   - dense x of at most 32 rows: t_r = sum_{i: x_ri != 0} x_ri W^T[i,:],
//     one backend.AxpySlice of length m per nonzero input, in increasing
//     i. Each row of W^T is read once for the block (for every row that is
//     nonzero there) and columns that are zero in every row are not read,
//     so a single row reads nnz(x_r) m frequencies instead of d m. A row's
//     features do not depend on the other rows of the call: a row of such
//     a block equals the row transformed alone, bit for bit.
//   - dense x of more rows: one backend Gemm X_b W^T per block of 256
//     rows, which reads W^T once per block; the sums are added in the
//     GEMM's order, so the features agree with the row-by-row ones to
//     rounding: each phase within 2 gamma_d sum_i |x_ri w_ki| (gamma_d =
//     d u / (1 - d u), u = 2^-53, the bound of any order of a d-term sum),
//     each feature within m^{-1/2} times that (cos and sin are 1-Lipschitz)
//     plus the rounding of the cosine and sine.
//   - a *dataset.CSR x: per row one AxpySlice per stored entry, in the
//     order of the entries, in O(nnz D), for any number of rows; with
//     sorted columns (as package dataset builds them) a row's features are
//     those of the dense row transformed alone, bit for bit.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape, zonal.ErrNonFinite (see
// FeatureMap).
func (f *FourierMap) Transform(dst *mat.Dense, x mat.Matrix) error {
	n, err := checkTransform(dst, x, f.d, f.Dim())
	if err != nil {
		return err
	}
	xin, err := asInput(x)
	if err != nil {
		return err
	}
	dg := dst.RawMatrix()
	c := 1 / math.Sqrt(float64(f.m))
	scatter := n <= fourierScatterRows
	return parallelBlocksOf(context.Background(), n, transformRows, func(i0, i1 int) {
		rows := i1 - i0
		t := blas64.General{Rows: rows, Cols: f.m, Stride: f.m, Data: make([]float64, rows*f.m)}
		f.phases(t, xin, i0, i1, scatter)
		for i := 0; i < rows; i++ {
			out := dg.Data[(i0+i)*dg.Stride:]
			for k, v := range t.Data[i*f.m : (i+1)*f.m] {
				sn, cs := math.Sincos(v)
				out[2*k] = c * cs
				out[2*k+1] = c * sn
			}
		}
	})
}

// phases writes t (rows i0..i1 of x, rows x m, zero on entry) = X_b W^T as
// Transform describes: by axpys of the rows of W^T for CSR rows and, with
// scatter, for dense rows; otherwise by the backend's Gemm.
func (f *FourierMap) phases(t blas64.General, xin input, i0, i1 int, scatter bool) {
	m := f.m
	switch {
	case xin.sparse:
		a := xin.sp
		for r := i0; r < i1; r++ {
			tr := t.Data[(r-i0)*m : (r-i0+1)*m]
			for p := a.RowPtr[r]; p < a.RowPtr[r+1]; p++ {
				j := a.Col[p]
				backend.AxpySlice(f.b, a.Val[p], f.wt[j*m:(j+1)*m], tr)
			}
		}
	case scatter:
		g := xin.g
		for i := 0; i < f.d; i++ {
			wi := f.wt[i*m : (i+1)*m]
			for r := i0; r < i1; r++ {
				if v := g.Data[r*g.Stride+i]; v != 0 {
					backend.AxpySlice(f.b, v, wi, t.Data[(r-i0)*m:(r-i0+1)*m])
				}
			}
		}
	default:
		wt := blas64.General{Rows: f.d, Cols: m, Stride: m, Data: f.wt}
		f.b.Gemm(blas.NoTrans, blas.NoTrans, 1, subRows(xin.g, i0, i1), wt, 0, t)
	}
}

// Transform32 is Transform into a float32 dst (n x D, Stride >= D), with
// the O(n d D) projections in single precision: the rows of a dense x and
// the frequencies are rounded to float32 (the frequencies once per map, a
// block of 256 rows of x at a time per worker) and backend.Sgemm forms
// t_i = <omega_i, x>. The cosine and sine are then taken in float64 of the
// float32 phase and the features rounded. The phase is where float32
// costs accuracy: |t~ - t| <= (d + 2) u sum_j |omega_ij x_j| with
// u = 2^-24 (the rounding of the inputs and the d-term float32 sum, worst
// case; about sqrt(d) u sum_j |omega_ij x_j| typically), and as cos and
// sin are 1-Lipschitz each feature is within m^{-1/2} |t~ - t| + u |z|
// (the final rounding) of its float64 value. The O(n D) trigonometric
// functions are kept in float64: a float32 sine would add an error of its
// own, growing with |t| through the argument reduction, to the phase's,
// and save little, as the O(n d D) product dominates the cost.
//
// For a *dataset.CSR x the projections are Transform's float64 ones (an
// axpy of a row of W^T per stored entry), in O(nnz D) (there is no single-precision sparse product: its cost
// is reading the nonzeros, which float32 does not reduce), so sparse
// features are round(Transform) exactly.
//
// Errors: those of Transform (see FeatureMap32).
func (f *FourierMap) Transform32(dst blas32.General, x mat.Matrix) error {
	n, err := checkTransform32(dst, x, f.d, f.Dim())
	if err != nil {
		return err
	}
	xin, err := asInput(x)
	if err != nil {
		return err
	}
	f.w32once.Do(func() {
		f.w32 = blas32.General{Rows: f.d, Cols: f.m, Stride: f.m, Data: make([]float32, f.m*f.d)}
		round32(f.w32.Data, f.wt)
	})
	c := 1 / math.Sqrt(float64(f.m))
	m, d := f.m, f.d
	return parallelBlocksOf(context.Background(), n, transformRows, func(i0, i1 int) {
		rows := i1 - i0
		var phase func(i, k int) float64
		if xin.sparse {
			t := blas64.General{Rows: rows, Cols: m, Stride: m, Data: make([]float64, rows*m)}
			f.phases(t, xin, i0, i1, true)
			phase = func(i, k int) float64 { return t.Data[i*m+k] }
		} else {
			buf := make([]float32, rows*(d+m))
			xs := blas32.General{Rows: rows, Cols: d, Stride: d, Data: buf[:rows*d]}
			for i := 0; i < rows; i++ {
				r := i0 + i
				round32(xs.Data[i*d:(i+1)*d], xin.g.Data[r*xin.g.Stride:r*xin.g.Stride+d])
			}
			t := blas32.General{Rows: rows, Cols: m, Stride: m, Data: buf[rows*d:]}
			backend.Sgemm(f.b, blas.NoTrans, blas.NoTrans, 1, xs, f.w32, 0, t)
			phase = func(i, k int) float64 { return float64(t.Data[i*m+k]) }
		}
		for i := 0; i < rows; i++ {
			out := dst.Data[(i0+i)*dst.Stride : (i0+i)*dst.Stride+2*m]
			for k := 0; k < m; k++ {
				sn, cs := math.Sincos(phase(i, k))
				out[2*k] = float32(c * cs)
				out[2*k+1] = float32(c * sn)
			}
		}
	})
}

// MarshalBinary encodes the frequencies; it never fails. They are written
// m x d (omega_1, ..., omega_m), the layout of every version of the model
// file, whatever the layout in memory.
func (f *FourierMap) MarshalBinary() ([]byte, error) {
	o := 0.0
	if f.orth {
		o = 1
	}
	out := putFloats([]byte{1}, float64(f.d), float64(f.m), o, float64(len(f.kstring)))
	out = append(out, f.kstring...)
	return putFloats(out, transposed(f.wt, f.d, f.m)...), nil
}

// decodeFourier decodes FourierMap.MarshalBinary (registered in
// registry.go); the map computes with backend.Default().
func decodeFourier(data []byte) (FeatureMap, error) {
	bad := fmt.Errorf("%w: malformed fourier map encoding", zonal.ErrFormat)
	if len(data) < 33 || data[0] != 1 {
		return nil, bad
	}
	h, _ := getFloats(data[1:33], 4)
	d, m, ks := int(h[0]), int(h[1]), int(h[3])
	data = data[33:]
	if d < 1 || m < 1 || ks < 0 || ks > len(data) || len(data)-ks != 8*m*d {
		return nil, bad
	}
	// The file holds omega_1..omega_m (m x d); read them into W^T.
	wb := data[ks:]
	wt := make([]float64, m*d)
	for k := 0; k < m; k++ {
		for i := 0; i < d; i++ {
			wt[i*m+k] = math.Float64frombits(binary.LittleEndian.Uint64(wb[8*(k*d+i):]))
		}
	}
	return &FourierMap{b: backend.Default(), d: d, m: m, wt: wt, kstring: string(data[:ks]), orth: h[2] == 1}, nil
}

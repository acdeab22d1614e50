package tensorsketch

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// TensorSketch is the sketch of Pham and Pagh (2013): for independent
// CountSketches C_1..C_p: R^{d'} -> R^m,
//
//	TS_p(x) = C_1 x * C_2 x * ... * C_p x   (circular convolution)
//	        = IFFT( FFT(C_1 x) . FFT(C_2 x) ... FFT(C_p x) ),
//
// which equals the CountSketch of x^{(x)p} under the hash
// h(i_1..i_p) = sum h_j(i_j) mod m and sign prod s_j(i_j). Hence
// E[<TS_p(x), TS_p(y)>] = <x,y>^p. Cost per point: O(p nnz(x) + p m log m).
//
// For the polynomial kernel the sketch is applied to x' = (sqrt(gamma) x,
// sqrt(coef0)), so the features estimate (gamma <x,y> + coef0)^p without
// bias. For the Gaussian kernel the features are the blocks
// [omega(x), sqrt(1/l!) omega(x) TS_l(x/sigma) for l = 1..q] where TS_l uses
// the first l CountSketches (shared by all degrees) and
// omega(x) = exp(-|x/sigma|^2/2); their inner product is an unbiased
// estimate of the Taylor-truncated Gaussian kernel (see TaylorDegree).
type TensorSketch struct {
	sketch
	cs []*countHash
}

// NewTensorSketch returns the TensorSketch of the kernel k on R^d with
// opts.Features features: kernels.Polynomial (exactly D features) or
// kernels.Gaussian truncated at Taylor degree opts.TaylorDegree (required;
// 1 + q*floor((D-1)/q) features).
//
// Errors: zonal.ErrParam (d < 1, D too small, kernel parameters out of
// range, a kernel kind other than polynomial or Gaussian, a Gaussian kernel
// without TaylorDegree), zonal.ErrTooLarge (the hash tables exceed
// opts.MemoryBudget).
func NewTensorSketch(k kernels.Kernel, d int, opts SketchOptions) (*TensorSketch, error) {
	s, err := newSketch(k, d, opts)
	if err != nil {
		return nil, err
	}
	return newTensorSketch(s)
}

func newTensorSketch(s sketch) (*TensorSketch, error) {
	q, w := s.e.maxDegree(), s.e.width(s.d)
	if err := budget.Check("tensorsketch.NewTensorSketch: hash tables", budget.Bytes(countHashBytes(w), q), s.limit); err != nil {
		return nil, err
	}
	t := &TensorSketch{sketch: s}
	for j := 0; j < q; j++ {
		t.cs = append(t.cs, newCountHash(w, s.m, splitmix(s.seed, uint64(j))))
	}
	return t, nil
}

// InputDim is d.
func (t *TensorSketch) InputDim() int { return t.d }

// Dim is the number of features.
func (t *TensorSketch) Dim() int { return t.dim }

// Kind is "tensorsketch".
func (t *TensorSketch) Kind() string { return "tensorsketch" }

// String describes the map.
func (t *TensorSketch) String() string {
	return fmt.Sprintf("tensorsketch(%v, D=%d)", t.e, t.dim)
}

// Transform writes the features of the rows of x (n x d) to dst
// (n x Dim()). A *dataset.CSR is read through its nonzeros (no dense copy),
// in O(p nnz(x) + n p m log m); dense and CSR input holding the same numbers
// give bit-identical features.
//
// Float32 features (kernels.Transform32) come from this Transform by the
// generic fallback, 256 rows at a time rounded to float32: the sketch's cost
// is FFTs and hashing, not a product that single precision would speed up.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (x or dst), zonal.ErrFormat
// (malformed CSR), zonal.ErrNonFinite, zonal.ErrTooLarge (the copy of the
// nonzeros and the FFT scratch exceed the map's MemoryBudget).
func (t *TensorSketch) Transform(dst *mat.Dense, x mat.Matrix) error {
	perWorker := budget.Floats(8, t.m+1) // buf, seq, two spectra, the FFT plan
	r, err := t.input(x, "tensorsketch: TensorSketch.Transform input and scratch", perWorker)
	if err != nil {
		return err
	}
	return t.transformRows(dst, r)
}

func (t *TensorSketch) transformRows(dst *mat.Dense, r *rows) error {
	if err := checkDst(dst, r.n, t.dim); err != nil {
		return err
	}
	xr, om := t.e.prepare(r)
	q := t.e.maxDegree()
	m := t.m
	parallelRows(r.n, func(lo, hi int) {
		fft := fourier.NewFFT(m)
		buf := make([]float64, m)
		seq := make([]float64, m)
		coef := make([]complex128, m/2+1)
		prod := make([]complex128, m/2+1)
		inv := 1 / float64(m)
		for i := lo; i < hi; i++ {
			out := dst.RawRowView(i)
			col, val := xr.row(i)
			w := 1.0
			if om != nil {
				w = om[i]
				out[0] = w
				out = out[1:]
			}
			for l := 1; l <= q; l++ {
				clear(buf)
				t.cs[l-1].apply(buf, col, val, 1)
				if l == 1 {
					fft.Coefficients(prod, buf)
				} else {
					fft.Coefficients(coef, buf)
					for k := range prod {
						prod[k] *= coef[k]
					}
				}
				c := t.e.coef(l)
				if c == 0 {
					continue
				}
				block := out
				if om != nil {
					block = out[(l-1)*m : l*m]
				}
				if l == 1 {
					s := w * math.Sqrt(c)
					for k := range block {
						block[k] = s * buf[k]
					}
					continue
				}
				fft.Sequence(seq, prod)
				s := w * math.Sqrt(c) * inv
				for k := range block {
					block[k] = s * seq[k]
				}
			}
		}
	})
	return nil
}

// MarshalBinary encodes the kernel, d, D and the seed; the hash functions
// are regenerated from the seed.
func (t *TensorSketch) MarshalBinary() ([]byte, error) { return t.marshal(codecVersion), nil }

func init() {
	kernels.RegisterMap("tensorsketch", func(b []byte) (kernels.FeatureMap, error) {
		s, err := decodeSketch(b, nil)
		if err != nil {
			return nil, err
		}
		return newTensorSketch(s)
	})
}

package tensorsketch

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// layout returns the per-degree sketch size m and the feature dimension for
// a target D. Polynomial: m = D features. Gaussian: one feature for degree 0
// (the exact omega(x)) and m = floor((D-1)/q) for each degree 1..q, so the
// dimension is 1 + q*m <= D.
func layout(e expansion, D int) (m, dim int, err error) {
	if !e.gauss {
		if D < 1 {
			return 0, 0, fmt.Errorf("%w: need D >= 1, got %d", zonal.ErrParam, D)
		}
		return D, D, nil
	}
	m = (D - 1) / e.q
	if m < 1 {
		return 0, 0, fmt.Errorf("%w: D = %d is too small for Taylor degree %d (need D >= q+1)", zonal.ErrParam, D, e.q)
	}
	return m, 1 + e.q*m, nil
}

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
	e         expansion
	d, m, dim int
	seed      uint64
	cs        []*CountSketch
}

// NewTensorSketch returns the D-dimensional TensorSketch of the polynomial
// kernel k on R^d.
func NewTensorSketch(d, D int, k Polynomial, seed uint64) (*TensorSketch, error) {
	e, err := polyExpansion(k)
	if err != nil {
		return nil, err
	}
	return newTensorSketch(e, d, D, seed)
}

// NewGaussianTensorSketch returns TensorSketch features of the Gaussian
// kernel exp(-|x-y|^2/(2 sigma^2)) truncated at Taylor degree q (see
// TaylorDegree); the dimension is 1 + q*floor((D-1)/q).
func NewGaussianTensorSketch(d, D int, sigma float64, q int, seed uint64) (*TensorSketch, error) {
	e, err := gaussExpansion(sigma, q)
	if err != nil {
		return nil, err
	}
	return newTensorSketch(e, d, D, seed)
}

func newTensorSketch(e expansion, d, D int, seed uint64) (*TensorSketch, error) {
	if d < 1 {
		return nil, fmt.Errorf("%w: input dimension must be >= 1, got %d", zonal.ErrParam, d)
	}
	m, dim, err := layout(e, D)
	if err != nil {
		return nil, err
	}
	t := &TensorSketch{e: e, d: d, m: m, dim: dim, seed: seed}
	for j := 0; j < e.maxDegree(); j++ {
		c, err := NewCountSketch(e.width(d), m, splitmix(seed, uint64(j)))
		if err != nil {
			return nil, err
		}
		t.cs = append(t.cs, c)
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

// Transform writes the features of the rows of x (n x d) to dst (n x Dim()).
func (t *TensorSketch) Transform(dst *mat.Dense, x mat.Matrix) error {
	r, err := denseRows(x, t.d)
	if err != nil {
		return err
	}
	return t.transformRows(dst, r)
}

// TransformCSR is Transform for sparse input; its cost is
// O(p nnz(x) + n p m log m): no dense copy of x is made.
func (t *TensorSketch) TransformCSR(dst *mat.Dense, x *dataset.CSR) error {
	r, err := csrRows(x, t.d)
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
func (t *TensorSketch) MarshalBinary() ([]byte, error) {
	var e enc
	e.u(codecVersion)
	e.expansion(t.e)
	e.i(t.d)
	e.i(t.dim)
	e.u(t.seed)
	return e.b, nil
}

func decodeSketchParams(b []byte) (expansion, int, int, uint64, error) {
	d := dec{b: b}
	d.u()
	e, err := d.expansion()
	if err != nil {
		return e, 0, 0, 0, err
	}
	dd, D, seed := d.i(), d.i(), d.u()
	return e, dd, D, seed, d.err
}

func init() {
	kernels.RegisterMap("tensorsketch", func(b []byte) (kernels.FeatureMap, error) {
		e, d, D, seed, err := decodeSketchParams(b)
		if err != nil {
			return nil, err
		}
		return newTensorSketch(e, d, D, seed)
	})
}

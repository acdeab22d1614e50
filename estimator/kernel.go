package estimator

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// KernelSpec is a kernel by its parameters: Sigma for the bandwidth
// kernels, Gamma, Coef0 and Degree for the polynomial one.
type KernelSpec struct {
	Kind   KernelKind
	Sigma  float64
	Gamma  float64
	Coef0  float64
	Degree int
}

// MaxDegree bounds the polynomial degree: (gamma <x,y> + coef0)^degree
// overflows float64 for any useful data far below it.
const MaxDegree = 64

// Check validates the parameters the kernel uses: a bandwidth whose square
// is a normal float64 (1e-154 < sigma < 1e154), or a polynomial degree in
// [1, MaxDegree], gamma > 0 and coef0 >= 0, all finite. With auto, a zero
// Sigma (or Gamma) is allowed: it is chosen from the data. Errors are
// *zonal.ParamError naming the field.
func (p KernelSpec) Check(auto bool) error {
	if p.Kind < Gaussian || p.Kind > Polynomial {
		return &zonal.ParamError{Param: "Kernel", Value: p.Kind, Reason: "unknown kernel", Err: zonal.ErrUnknown}
	}
	if p.Kind.HasBandwidth() {
		if auto && p.Sigma == 0 {
			return nil
		}
		if err := positive("Sigma", p.Sigma); err != nil {
			return err
		}
		if s2 := p.Sigma * p.Sigma; s2 < 0x1p-1022 || math.IsInf(s2, 0) {
			return &zonal.ParamError{Param: "Sigma", Value: p.Sigma, Reason: "absurd: sigma^2 is not a normal float64 (want 1e-154 < sigma < 1e154, near the data's scale)"}
		}
		return nil
	}
	if p.Degree < 1 || p.Degree > MaxDegree {
		return &zonal.ParamError{Param: "Degree", Value: p.Degree, Reason: fmt.Sprintf("must be in [1, %d]", MaxDegree)}
	}
	if !(auto && p.Gamma == 0) {
		if err := positive("Gamma", p.Gamma); err != nil {
			return err
		}
	}
	if !(p.Coef0 >= 0) || math.IsInf(p.Coef0, 0) {
		return &zonal.ParamError{Param: "Coef0", Value: p.Coef0, Reason: "must be >= 0 and finite"}
	}
	return nil
}

// New builds the kernel (after Check(false)).
func (p KernelSpec) New() (kernels.Kernel, error) {
	if err := p.Check(false); err != nil {
		return nil, err
	}
	switch p.Kind {
	case Laplacian:
		return kernels.NewLaplacian(p.Sigma)
	case Polynomial:
		return kernels.NewPolynomial(p.Degree, p.Gamma, p.Coef0)
	}
	return kernels.NewGaussian(p.Sigma)
}

// withSigma is p with bandwidth s.
func (p KernelSpec) withSigma(s float64) KernelSpec {
	p.Sigma = s
	return p
}

func positive(param string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return &zonal.ParamError{Param: param, Value: v, Reason: "must be positive and finite"}
	}
	return nil
}

// InputScaler returns the input transformation of a scale factor and
// standardize as a dataset.Standardizer (x' = (x - Mean)/Scale), fitted on
// x when standardize is set, or nil when it is the identity. Standardizing
// factor*x gives the same as standardizing x, so factor does not matter then.
func InputScaler(x mat.Matrix, factor float64, standardize bool) (*dataset.Standardizer, error) {
	if standardize {
		return dataset.FitStandardizer(x)
	}
	if factor == 1 || factor == 0 {
		return nil, nil
	}
	_, d := x.Dims()
	st := &dataset.Standardizer{Mean: make([]float64, d), Scale: make([]float64, d)}
	for j := range st.Scale {
		st.Scale[j] = 1 / factor
	}
	return st, nil
}

// Scaled returns x transformed by st in a new matrix (x itself when st is nil).
func Scaled(st *dataset.Standardizer, x *mat.Dense) (*mat.Dense, error) {
	if st == nil {
		return x, nil
	}
	r, c := x.Dims()
	out := mat.NewDense(r, c, nil)
	if err := st.ApplyTo(out, x); err != nil {
		return nil, err
	}
	return out, nil
}

// CheckMagnitude refuses (zonal.ErrParam) rows whose squared norms come
// within a factor 4 of overflowing float64: |x - y|^2 <= 2|x|^2 + 2|y|^2
// would then overflow for some pair, and every kernel value built from it
// be Inf or NaN.
func CheckMagnitude(x mat.Matrix) error {
	r, c := x.Dims()
	row := make([]float64, c)
	for i := 0; i < r; i++ {
		var vals []float64
		switch m := x.(type) {
		case *mat.Dense:
			vals = m.RawRowView(i)
		case *dataset.CSR:
			_, vals = m.Row(i)
		default:
			vals = mat.Row(row, i, x)
		}
		s, big := 0.0, 0.0
		for _, v := range vals {
			s += v * v
			big = max(big, math.Abs(v))
		}
		if !(s <= math.MaxFloat64/4) {
			return fmt.Errorf("%w: a row has features as large as %.3g: squared distances overflow float64, so every kernel value would be Inf or NaN; rescale the features (Scale or Standardize)", zonal.ErrParam, big)
		}
	}
	return nil
}

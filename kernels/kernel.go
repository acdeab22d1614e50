package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// Gaussian is k(x, y) = exp(-|x-y|^2 / (2 sigma^2)). In scikit-learn's
// parametrisation exp(-gamma |x-y|^2), gamma = 1/(2 sigma^2) (see
// NewGaussianGamma and Gamma).
type Gaussian struct{ Sigma float64 }

// NewGaussian returns the Gaussian kernel of bandwidth sigma > 0.
// Errors: zonal.ErrParam when sigma is not positive and finite.
func NewGaussian(sigma float64) (Gaussian, error) {
	if err := checkPositive("gaussian sigma", sigma); err != nil {
		return Gaussian{}, err
	}
	return Gaussian{Sigma: sigma}, nil
}

// NewGaussianGamma returns the Gaussian kernel exp(-gamma |x-y|^2), gamma > 0,
// that is sigma = 1/sqrt(2 gamma). Errors: zonal.ErrParam when gamma is not
// positive and finite.
func NewGaussianGamma(gamma float64) (Gaussian, error) {
	if err := checkPositive("gaussian gamma", gamma); err != nil {
		return Gaussian{}, err
	}
	return NewGaussian(1 / math.Sqrt(2*gamma))
}

// Gamma returns 1/(2 sigma^2).
func (g Gaussian) Gamma() float64 { return 1 / (2 * g.Sigma * g.Sigma) }

// Eval returns exp(-|x-y|^2/(2 sigma^2)).
func (g Gaussian) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		t := x[i] - y[i]
		s += t * t
	}
	return math.Exp(-s / (2 * g.Sigma * g.Sigma))
}

// Kind returns "gaussian".
func (g Gaussian) Kind() string { return "gaussian" }

// String returns "gaussian(sigma=S)".
func (g Gaussian) String() string { return fmt.Sprintf("gaussian(sigma=%g)", g.Sigma) }

// MarshalBinary encodes sigma; it never fails.
func (g Gaussian) MarshalBinary() ([]byte, error) { return putFloats(nil, g.Sigma), nil }

// Laplacian is k(x, y) = exp(-|x-y|_1 / sigma) with the l1 distance
// (scikit-learn's laplacian_kernel with gamma = 1/sigma). It is a product of
// one-dimensional Laplace kernels, so its Fourier transform is a product of
// Cauchy densities (see NewFourierMap).
type Laplacian struct{ Sigma float64 }

// NewLaplacian returns the Laplacian kernel of scale sigma > 0.
// Errors: zonal.ErrParam when sigma is not positive and finite.
func NewLaplacian(sigma float64) (Laplacian, error) {
	if err := checkPositive("laplacian sigma", sigma); err != nil {
		return Laplacian{}, err
	}
	return Laplacian{Sigma: sigma}, nil
}

// Eval returns exp(-|x-y|_1/sigma).
func (l Laplacian) Eval(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += math.Abs(x[i] - y[i])
	}
	return math.Exp(-s / l.Sigma)
}

// Kind returns "laplacian".
func (l Laplacian) Kind() string { return "laplacian" }

// String returns "laplacian(sigma=S)".
func (l Laplacian) String() string { return fmt.Sprintf("laplacian(sigma=%g)", l.Sigma) }

// MarshalBinary encodes sigma; it never fails.
func (l Laplacian) MarshalBinary() ([]byte, error) { return putFloats(nil, l.Sigma), nil }

// Polynomial is k(x, y) = (gamma <x,y> + coef0)^degree with degree >= 1,
// gamma > 0 and coef0 >= 0 (so that every Taylor coefficient
// C(p,n) gamma^n coef0^(p-n) is non-negative and the kernel is positive
// definite on every R^d).
type Polynomial struct {
	Degree int
	Gamma  float64
	Coef0  float64
}

// NewPolynomial returns the polynomial kernel (gamma <x,y> + coef0)^degree.
// Errors: zonal.ErrParam unless 1 <= degree <= 64, gamma > 0 and
// 0 <= coef0 < Inf.
func NewPolynomial(degree int, gamma, coef0 float64) (Polynomial, error) {
	if degree < 1 || degree > 64 {
		return Polynomial{}, fmt.Errorf("%w: polynomial degree must be in 1..64, got %d", zonal.ErrParam, degree)
	}
	if err := checkPositive("polynomial gamma", gamma); err != nil {
		return Polynomial{}, err
	}
	if !(coef0 >= 0) || math.IsInf(coef0, 0) {
		return Polynomial{}, fmt.Errorf("%w: polynomial coef0 must be finite and >= 0, got %g", zonal.ErrParam, coef0)
	}
	return Polynomial{Degree: degree, Gamma: gamma, Coef0: coef0}, nil
}

// Eval returns (gamma <x,y> + coef0)^degree.
func (p Polynomial) Eval(x, y []float64) float64 { return p.kappa(dot(x, y)) }

func (p Polynomial) kappa(t float64) float64 { return ipow(p.Gamma*t+p.Coef0, p.Degree) }

// Taylor returns the coefficient c_n of <x,y>^n: C(p,n) gamma^n coef0^(p-n).
func (p Polynomial) Taylor(n int) float64 {
	if n < 0 || n > p.Degree {
		return 0
	}
	return math.Exp(lchoose(p.Degree, n)) * ipow(p.Gamma, n) * ipow(p.Coef0, p.Degree-n)
}

// Kind returns "polynomial".
func (p Polynomial) Kind() string { return "polynomial" }

// String returns "polynomial(degree=P, gamma=G, coef0=C)".
func (p Polynomial) String() string {
	return fmt.Sprintf("polynomial(degree=%d, gamma=%g, coef0=%g)", p.Degree, p.Gamma, p.Coef0)
}

// MarshalBinary encodes degree, gamma and coef0; it never fails.
func (p Polynomial) MarshalBinary() ([]byte, error) {
	return putFloats(nil, float64(p.Degree), p.Gamma, p.Coef0), nil
}

func (p Polynomial) fromInner(row []float64, _ float64, _ []float64) {
	for j, ip := range row {
		row[j] = p.kappa(ip)
	}
}

// ExpDot is the exponential dot-product kernel k(x, y) = exp(<x,y>/sigma^2),
// with Taylor coefficients c_n = 1/(n! sigma^(2n)).
type ExpDot struct{ Sigma float64 }

// NewExpDot returns exp(<x,y>/sigma^2), sigma > 0.
// Errors: zonal.ErrParam when sigma is not positive and finite.
func NewExpDot(sigma float64) (ExpDot, error) {
	if err := checkPositive("expdot sigma", sigma); err != nil {
		return ExpDot{}, err
	}
	return ExpDot{Sigma: sigma}, nil
}

// Eval returns exp(<x,y>/sigma^2).
func (e ExpDot) Eval(x, y []float64) float64 { return math.Exp(dot(x, y) / (e.Sigma * e.Sigma)) }

// Taylor returns 1/(n! sigma^(2n)).
func (e ExpDot) Taylor(n int) float64 {
	if n < 0 {
		return 0
	}
	return math.Exp(-lgamma(float64(n+1)) - 2*float64(n)*math.Log(e.Sigma))
}

// Kind returns "expdot".
func (e ExpDot) Kind() string { return "expdot" }

// String returns "expdot(sigma=S)".
func (e ExpDot) String() string { return fmt.Sprintf("expdot(sigma=%g)", e.Sigma) }

// MarshalBinary encodes sigma; it never fails.
func (e ExpDot) MarshalBinary() ([]byte, error) { return putFloats(nil, e.Sigma), nil }

func (e ExpDot) fromInner(row []float64, _ float64, _ []float64) {
	c := 1 / (e.Sigma * e.Sigma)
	for j := range row {
		row[j] *= c
	}
	expInPlace(row)
}

// ArcCosine is the arc-cosine kernel of Cho and Saul (2009) of order 0 or 1,
// with theta the angle between x and y:
//
//	order 0: k(x, y) = 1 - theta/pi
//	order 1: k(x, y) = |x| |y| (sin theta + (pi - theta) cos theta) / pi
//
// (the kernels of one infinitely wide layer of step, respectively ReLU,
// units with standard normal weights, up to the factor 2). When x or y is 0,
// theta is taken as pi/2.
type ArcCosine struct{ Order int }

// NewArcCosine returns the arc-cosine kernel of order 0 or 1.
// Errors: zonal.ErrParam for another order.
func NewArcCosine(order int) (ArcCosine, error) {
	if order != 0 && order != 1 {
		return ArcCosine{}, fmt.Errorf("%w: arc-cosine order must be 0 or 1, got %d", zonal.ErrParam, order)
	}
	return ArcCosine{Order: order}, nil
}

// Eval returns the arc-cosine kernel.
func (a ArcCosine) Eval(x, y []float64) float64 {
	return a.fromNorms(dot(x, y), dot(x, x), dot(y, y))
}

func (a ArcCosine) fromNorms(ip, xn, yn float64) float64 {
	r := math.Sqrt(xn * yn)
	t := 0.0
	if r > 0 {
		t = clamp1(ip / r)
	}
	if a.Order == 0 {
		return arcCos0(t)
	}
	return r * arcCos1(t)
}

// Kind returns "arccos".
func (a ArcCosine) Kind() string { return "arccos" }

// String returns "arccos(order=N)".
func (a ArcCosine) String() string { return fmt.Sprintf("arccos(order=%d)", a.Order) }

// MarshalBinary encodes the order; it never fails.
func (a ArcCosine) MarshalBinary() ([]byte, error) { return putFloats(nil, float64(a.Order)), nil }

func (a ArcCosine) fromInner(row []float64, xn float64, yn []float64) {
	for j, ip := range row {
		row[j] = a.fromNorms(ip, xn, yn[j])
	}
}

// arcCos0 is kappa_0(t) = 1 - arccos(t)/pi.
func arcCos0(t float64) float64 { return 1 - math.Acos(t)/math.Pi }

// arcCos1 is kappa_1(t) = (sqrt(1-t^2) + (pi - arccos t) t)/pi; kappa_1(1) = 1.
func arcCos1(t float64) float64 {
	return (math.Sqrt(math.Max(0, 1-t*t)) + (math.Pi-math.Acos(t))*t) / math.Pi
}

// NTK is the neural tangent kernel of a bias-free fully connected ReLU network
// with Depth hidden layers, written as a homogeneous dot-product kernel
// k(x, y) = |x| |y| kappa_L(<x,y>/(|x||y|)) with (Jacot et al. 2018;
// Bietti and Mairal 2019, in the normalisation kappa_L(1) = L+1)
//
//	Sigma_0(t) = t, Theta_0(t) = t,
//	Sigma_h = kappa_1(Sigma_{h-1}), Theta_h = Theta_{h-1} kappa_0(Sigma_{h-1}) + Sigma_h,
//	kappa_L = Theta_L,
//
// kappa_0, kappa_1 being the arc-cosine functions of ArcCosine. NTKKappa
// gives kappa_L as a function on [-1, 1] (e.g. for SeriesCoeffs).
type NTK struct{ Depth int }

// NewNTK returns the ReLU NTK of depth L >= 1.
// Errors: zonal.ErrParam unless 1 <= depth <= 1000.
func NewNTK(depth int) (NTK, error) {
	if depth < 1 || depth > 1000 {
		return NTK{}, fmt.Errorf("%w: NTK depth must be in 1..1000, got %d", zonal.ErrParam, depth)
	}
	return NTK{Depth: depth}, nil
}

// Kappa returns kappa_L(t) for t in [-1, 1].
func (k NTK) Kappa(t float64) float64 {
	t = clamp1(t)
	sig, theta := t, t
	for h := 0; h < k.Depth; h++ {
		next := clamp1(arcCos1(sig))
		theta = theta*arcCos0(sig) + next
		sig = next
	}
	return theta
}

// Eval returns |x||y| kappa_L(cos theta) (0 when x or y is 0).
func (k NTK) Eval(x, y []float64) float64 { return k.fromNorms(dot(x, y), dot(x, x), dot(y, y)) }

func (k NTK) fromNorms(ip, xn, yn float64) float64 {
	r := math.Sqrt(xn * yn)
	if r == 0 {
		return 0
	}
	return r * k.Kappa(ip/r)
}

// Kind returns "ntk".
func (k NTK) Kind() string { return "ntk" }

// String returns "ntk(depth=L)".
func (k NTK) String() string { return fmt.Sprintf("ntk(depth=%d)", k.Depth) }

// MarshalBinary encodes the depth; it never fails.
func (k NTK) MarshalBinary() ([]byte, error) { return putFloats(nil, float64(k.Depth)), nil }

func (k NTK) fromInner(row []float64, xn float64, yn []float64) {
	for j, ip := range row {
		row[j] = k.fromNorms(ip, xn, yn[j])
	}
}

// DotProduct is the dot-product kernel k(x, y) = sum_n Coef[n] <x,y>^n with
// user-supplied non-negative Taylor coefficients (Schoenberg: non-negative
// coefficients make it positive definite on every R^d).
type DotProduct struct{ Coef []float64 }

// NewDotProduct returns sum_n coef[n] <x,y>^n. The coefficients must be
// finite, non-negative, at most 256 of them, and not all zero; they are copied.
// Errors: zonal.ErrParam when they are not.
func NewDotProduct(coef []float64) (DotProduct, error) {
	if len(coef) == 0 || len(coef) > 256 {
		return DotProduct{}, fmt.Errorf("%w: dot-product kernel needs 1..256 Taylor coefficients, got %d", zonal.ErrParam, len(coef))
	}
	nz := false
	for n, c := range coef {
		if !(c >= 0) || math.IsInf(c, 0) {
			return DotProduct{}, fmt.Errorf("%w: Taylor coefficient %d is %g; must be finite and >= 0", zonal.ErrParam, n, c)
		}
		nz = nz || c > 0
	}
	if !nz {
		return DotProduct{}, fmt.Errorf("%w: all Taylor coefficients are zero", zonal.ErrParam)
	}
	return DotProduct{Coef: append([]float64(nil), coef...)}, nil
}

// Taylor returns Coef[n] (0 beyond the list).
func (p DotProduct) Taylor(n int) float64 {
	if n < 0 || n >= len(p.Coef) {
		return 0
	}
	return p.Coef[n]
}

func (p DotProduct) kappa(t float64) float64 {
	s := 0.0
	for n := len(p.Coef) - 1; n >= 0; n-- { // Horner
		s = s*t + p.Coef[n]
	}
	return s
}

// Eval returns sum_n Coef[n] <x,y>^n.
func (p DotProduct) Eval(x, y []float64) float64 { return p.kappa(dot(x, y)) }

// Kind returns "dotproduct".
func (p DotProduct) Kind() string { return "dotproduct" }

// String returns "dotproduct(coef=[...])".
func (p DotProduct) String() string { return fmt.Sprintf("dotproduct(coef=%v)", p.Coef) }

// MarshalBinary encodes the coefficients; it never fails.
func (p DotProduct) MarshalBinary() ([]byte, error) { return putFloats(nil, p.Coef...), nil }

func (p DotProduct) fromInner(row []float64, _ float64, _ []float64) {
	for j, ip := range row {
		row[j] = p.kappa(ip)
	}
}

// taylorKernel is a dot-product kernel sum_n c_n <x,y>^n; maxDegree < 0 means
// infinitely many non-zero coefficients.
type taylorKernel interface {
	Kernel
	Taylor(n int) float64
	maxDegree() int
}

func (p Polynomial) maxDegree() int { return p.Degree }
func (ExpDot) maxDegree() int       { return -1 }
func (p DotProduct) maxDegree() int { return len(p.Coef) - 1 }

// innerKernel is a kernel computable from <x,y>, |x|^2 and |y|^2: on entry
// row[j] = <x, y_j>; on return row[j] = k(x, y_j).
type innerKernel interface {
	fromInner(row []float64, xn float64, yn []float64)
}

// Decoders of the kernels' MarshalBinary, registered in registry.go.
var (
	decodeGaussian   = decodeFloats(1, func(v []float64) (Kernel, error) { return NewGaussian(v[0]) })
	decodeLaplacian  = decodeFloats(1, func(v []float64) (Kernel, error) { return NewLaplacian(v[0]) })
	decodePolynomial = decodeFloats(3, func(v []float64) (Kernel, error) { return NewPolynomial(int(v[0]), v[1], v[2]) })
	decodeExpDot     = decodeFloats(1, func(v []float64) (Kernel, error) { return NewExpDot(v[0]) })
	decodeArcCosine  = decodeFloats(1, func(v []float64) (Kernel, error) { return NewArcCosine(int(v[0])) })
	decodeNTK        = decodeFloats(1, func(v []float64) (Kernel, error) { return NewNTK(int(v[0])) })
	decodeDotProduct = decodeFloats(-1, func(v []float64) (Kernel, error) { return NewDotProduct(v) })
)

// decodeFloats returns the decoder of a kernel whose encoding is n float64
// parameters (n < 0: any positive number of them), rebuilt by build, which
// validates them as the constructor does.
func decodeFloats(n int, build func(v []float64) (Kernel, error)) func([]byte) (Kernel, error) {
	return func(b []byte) (Kernel, error) {
		v, err := getFloats(b, n)
		if err != nil {
			return nil, err
		}
		return build(v)
	}
}

// ---- small helpers ----

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: %s must be positive and finite, got %g", zonal.ErrParam, name, v)
	}
	return nil
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func clamp1(t float64) float64 {
	if t > 1 {
		return 1
	}
	if t < -1 {
		return -1
	}
	return t
}

func ipow(x float64, n int) float64 {
	r := 1.0
	for n > 0 {
		if n&1 == 1 {
			r *= x
		}
		x *= x
		n >>= 1
	}
	return r
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	return lgamma(float64(n+1)) - lgamma(float64(k+1)) - lgamma(float64(n-k+1))
}

func putFloats(b []byte, v ...float64) []byte {
	for _, f := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// getFloats decodes n float64 values (n < 0: all of them, at least one).
func getFloats(b []byte, n int) ([]float64, error) {
	if len(b)%8 != 0 || (n >= 0 && len(b) != 8*n) || (n < 0 && len(b) == 0) {
		return nil, fmt.Errorf("%w: malformed encoding (%d bytes)", zonal.ErrFormat, len(b))
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

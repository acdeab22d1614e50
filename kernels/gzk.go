package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// radial evaluates the radial functions h_l(r) in R^s, l = 0..q, of a GZK.
// Closed forms are stored as h_{l,j}(r) = exp(logC[l,j] + e[l,j] log(a r) - b r^2);
// a user function replaces them when user != nil.
type radial struct {
	d, q, s int
	logC    []float64 // (q+1)*s
	expo    []float64 // (q+1)*s
	a, b    float64
	user    func(l int, r float64, dst []float64)
}

// eval writes h_{l,j}(r) to dst[l*s+j].
func (rd *radial) eval(r float64, dst []float64) {
	if rd.user != nil {
		for l := 0; l <= rd.q; l++ {
			rd.user(l, r, dst[l*rd.s:(l+1)*rd.s])
		}
		return
	}
	if r == 0 {
		for i, lc := range rd.logC {
			dst[i] = 0
			if rd.expo[i] == 0 {
				dst[i] = math.Exp(lc)
			}
		}
		return
	}
	lar := math.Log(rd.a * r)
	g := rd.b * r * r
	for i, lc := range rd.logC {
		dst[i] = math.Exp(lc + rd.expo[i]*lar - g)
	}
}

// GZK is a generalized zonal kernel on R^d (Han, Zandieh, Avron 2022):
//
//	k(x, y) = sum_{l=0}^{q} <h_l(|x|), h_l(|y|)> P_d^l(<x,y>/(|x||y|)),
//
// with radial functions h_l: [0, inf) -> R^s. When x or y is 0 the angle is
// undefined and only the l = 0 term is kept (closed-form radial functions
// vanish at r = 0 for every l >= 1 anyway).
//
// NewGZK takes user radial functions; NewGZKFor builds the truncated GZK of
// a Gaussian, dot-product (polynomial, expdot, dotproduct), NTK or arc-cosine
// kernel; ChooseTruncation picks (q, s) from the data radius and a tolerance.
type GZK struct {
	rad  radial
	base Kernel // the kernel approximated (nil for user radial functions)
}

// NewGZK returns the GZK of dimension d >= 2, degree q >= 0 and order s >= 1
// with user radial functions: h(l, r, dst) writes h_l(r) (length s) to dst.
// h must be deterministic and safe for concurrent use. Such a GZK cannot be
// serialized. Errors: zonal.ErrParam for d, q, s out of range (d >= 2,
// 0 <= q <= 10000, 1 <= s <= 10000) or a nil h.
func NewGZK(d, q, s int, h func(l int, r float64, dst []float64)) (*GZK, error) {
	if err := checkDQS(d, q, s); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w: nil radial function", zonal.ErrParam)
	}
	return &GZK{rad: radial{d: d, q: q, s: s, user: h}}, nil
}

func checkDQS(d, q, s int) error {
	if d < 2 || d > 1<<20 {
		return fmt.Errorf("%w: GZK dimension d must be >= 2, got %d", zonal.ErrParam, d)
	}
	if q < 0 || q > 10000 {
		return fmt.Errorf("%w: GZK degree q must be in 0..10000, got %d", zonal.ErrParam, q)
	}
	if s < 1 || s > 10000 {
		return fmt.Errorf("%w: GZK order s must be in 1..10000, got %d", zonal.ErrParam, s)
	}
	return nil
}

// NewGZKFor returns the degree-q, order-s GZK truncation of k in dimension d:
//
//   - Gaussian exp(-|x-y|^2/(2 sigma^2)): from the Bessel series of
//     exp(<x,y>/sigma^2),
//     h_{l,j}(r) = sqrt(alpha_{l,d} Gamma(d/2) / (j! Gamma(j+l+d/2))) (r/(sigma sqrt 2))^(2j+l) exp(-r^2/(2 sigma^2)),
//     j = 0..s-1;
//   - dot-product kernels sum_n c_n <x,y>^n (Polynomial, ExpDot, DotProduct):
//     h_{l,j}(r) = sqrt(c_{l+2j} b_{l+2j,l}) r^(l+2j) with b from MonomialCoeffs;
//   - NTK and ArcCosine order 1 (|x||y| kappa(cos theta)) and ArcCosine order 0
//     (kappa(cos theta)): s must be 1 and h_l(r) = sqrt(c_l) r (resp. sqrt(c_l)),
//     c_l the Gegenbauer coefficients of kappa by SeriesCoeffs (negative
//     round-off values are set to 0).
//
// All constants are computed in log space. opt is used only for the
// quadrature of NTK and arc-cosine coefficients (SeriesCoeffs).
//
// Errors: zonal.ErrParam for d, q, s out of range (as NewGZK), s != 1 for
// NTK and arc-cosine, or a kernel without a closed form; those of
// SeriesCoeffs.
func NewGZKFor(k Kernel, d, q, s int, opt Options) (*GZK, error) {
	if err := checkDQS(d, q, s); err != nil {
		return nil, err
	}
	n := (q + 1) * s
	rd := radial{d: d, q: q, s: s, logC: make([]float64, n), expo: make([]float64, n)}
	fd := float64(d)
	switch kk := k.(type) {
	case Gaussian:
		rd.a = 1 / (kk.Sigma * math.Sqrt2)
		rd.b = 1 / (2 * kk.Sigma * kk.Sigma)
		for l := 0; l <= q; l++ {
			for j := 0; j < s; j++ {
				fl, fj := float64(l), float64(j)
				rd.logC[l*s+j] = 0.5 * (LogAlpha(l, d) + lgamma(fd/2) - lgamma(fj+1) - lgamma(fj+fl+fd/2))
				rd.expo[l*s+j] = float64(2*j + l)
			}
		}
	case taylorKernel:
		rd.a = 1
		for l := 0; l <= q; l++ {
			for j := 0; j < s; j++ {
				nn := l + 2*j
				rd.logC[l*s+j] = 0.5 * (math.Log(kk.Taylor(nn)) + logMonomialCoeff(nn, l, d))
				rd.expo[l*s+j] = float64(nn)
			}
		}
	case NTK, ArcCosine:
		if s != 1 {
			return nil, fmt.Errorf("%w: %s is homogeneous in |x|: its GZK has order s = 1, got %d", zonal.ErrParam, k, s)
		}
		c, err := zonalCoeffs(k, d, q, opt)
		if err != nil {
			return nil, err
		}
		rd.a = 1
		deg := 1.0
		if ac, ok := kk.(ArcCosine); ok && ac.Order == 0 {
			deg = 0
		}
		for l := 0; l <= q; l++ {
			rd.logC[l] = 0.5 * math.Log(math.Max(c[l], 0))
			rd.expo[l] = deg
		}
	default:
		return nil, fmt.Errorf("%w: no GZK closed form for %v", zonal.ErrParam, k)
	}
	return &GZK{rad: rd, base: k}, nil
}

// zonalCoeffs returns the Gegenbauer coefficients of the angular part of an
// NTK or arc-cosine kernel.
func zonalCoeffs(k Kernel, d, q int, opt Options) ([]float64, error) {
	var kappa func(float64) float64
	switch kk := k.(type) {
	case NTK:
		kappa = kk.Kappa
	case ArcCosine:
		kappa = arcCos1
		if kk.Order == 0 {
			kappa = arcCos0
		}
	}
	// kappa has a square-root singularity at t = +-1, so the rule needs many
	// more points than the degree: 8(q+1)+128 points leave a quadrature
	// error below 1e-9 for q <= 64 (checked in the tests against t^n).
	return SeriesCoeffs(kappa, d, q, min(4096, 8*(q+1)+128), opt)
}

// InputDim is d.
func (g *GZK) InputDim() int { return g.rad.d }

// Degree is q, the largest Gegenbauer degree kept.
func (g *GZK) Degree() int { return g.rad.q }

// Order is s, the length of each radial vector h_l.
func (g *GZK) Order() int { return g.rad.s }

// Base returns the kernel this GZK truncates (nil for user radial functions).
func (g *GZK) Base() Kernel { return g.base }

// Radial writes h_l(r) for l = 0..q into dst[l*s:(l+1)*s] (len(dst) >= (q+1)s).
func (g *GZK) Radial(r float64, dst []float64) { g.rad.eval(r, dst[:(g.rad.q+1)*g.rad.s]) }

// Eval returns sum_l <h_l(|x|), h_l(|y|)> P_d^l(<x,y>/(|x||y|)).
func (g *GZK) Eval(x, y []float64) float64 {
	return g.fromNorms(dot(x, y), dot(x, x), dot(y, y), nil)
}

func (g *GZK) fromNorms(ip, xn, yn float64, buf []float64) float64 {
	q, s := g.rad.q, g.rad.s
	n := (q + 1) * s
	if len(buf) < 2*n+q+1 {
		buf = make([]float64, 2*n+q+1)
	}
	hx, hy, p := buf[:n], buf[n:2*n], buf[2*n:2*n+q+1]
	r, rho := math.Sqrt(xn), math.Sqrt(yn)
	g.rad.eval(r, hx)
	g.rad.eval(rho, hy)
	lmax := q
	t := 0.0
	if r == 0 || rho == 0 {
		lmax = 0
	} else {
		t = clamp1(ip / (r * rho))
	}
	gegenbauerAll(p[:lmax+1], float64(g.rad.d), t)
	sum := 0.0
	for l := 0; l <= lmax; l++ {
		c := 0.0
		for j := 0; j < s; j++ {
			c += hx[l*s+j] * hy[l*s+j]
		}
		sum += c * p[l]
	}
	return sum
}

func (g *GZK) fromInner(row []float64, xn float64, yn []float64) {
	buf := make([]float64, 2*(g.rad.q+1)*g.rad.s+g.rad.q+1)
	for j, ip := range row {
		row[j] = g.fromNorms(ip, xn, yn[j], buf)
	}
}

// Kind returns "gzk".
func (g *GZK) Kind() string { return "gzk" }

// String describes the GZK.
func (g *GZK) String() string {
	base := "user"
	if g.base != nil {
		base = g.base.String()
	}
	return fmt.Sprintf("gzk(d=%d, q=%d, s=%d, %s)", g.rad.d, g.rad.q, g.rad.s, base)
}

// MarshalBinary encodes d, q, s and the base kernel; a GZK with user radial
// functions cannot be encoded (zonal.ErrParam); otherwise it fails only if
// the base kernel's MarshalBinary does.
func (g *GZK) MarshalBinary() ([]byte, error) {
	if g.base == nil {
		return nil, fmt.Errorf("%w: a GZK with user radial functions cannot be serialized", zonal.ErrParam)
	}
	return appendKernel(putFloats(nil, float64(g.rad.d), float64(g.rad.q), float64(g.rad.s)), g.base)
}

// decodeGZK decodes GZK.MarshalBinary (registered in registry.go).
func decodeGZK(b []byte) (Kernel, error) {
	if len(b) < 24 {
		return nil, fmt.Errorf("%w: malformed gzk encoding", zonal.ErrFormat)
	}
	v, _ := getFloats(b[:24], 3)
	k, _, err := readKernel(b[24:])
	if err != nil {
		return nil, err
	}
	return NewGZKFor(k, int(v[0]), int(v[1]), int(v[2]), Options{})
}

// appendKernel appends len(kind), kind, len(params), params.
func appendKernel(dst []byte, k Kernel) ([]byte, error) {
	p, err := k.MarshalBinary()
	if err != nil {
		return nil, err
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k.Kind())))
	dst = append(dst, k.Kind()...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(p)))
	return append(dst, p...), nil
}

// readKernel decodes a kernel written by appendKernel and returns the rest.
func readKernel(b []byte) (Kernel, []byte, error) {
	bad := fmt.Errorf("%w: malformed kernel encoding", zonal.ErrFormat)
	if len(b) < 4 {
		return nil, nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > len(b) {
		return nil, nil, bad
	}
	kind := string(b[:n])
	b = b[n:]
	if len(b) < 4 {
		return nil, nil, bad
	}
	n = int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > len(b) {
		return nil, nil, bad
	}
	k, err := UnmarshalKernel(kind, b[:n])
	return k, b[n:], err
}

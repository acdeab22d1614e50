package kernels

import (
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
)

// Defaults of GegenbauerOptions.
const (
	DefaultGegenbauerTol  = 1e-3
	DefaultGegenbauerMaxQ = 64
	DefaultGegenbauerMaxS = 16
)

// GegenbauerOptions configures NewGegenbauerMap.
type GegenbauerOptions struct {
	// Options: Backend is kept for Transform's Gemm and used for the
	// quadrature of NTK/arc-cosine coefficients; Progress receives the
	// reports of SelectTruncation when it chooses (q, s); the m x d
	// directions count against MemoryBudget.
	Options
	// Features is the target number of features D = m*s (m directions).
	// With an explicit S, D must be a multiple of S (of 2S with Antithetic);
	// with automatic S, m = floor(D/s) (even with Antithetic) and Dim() may
	// be a little below D.
	Features int
	// Q and S fix the GZK degree and order. When both are 0 and Tol is 0,
	// SelectTruncation chooses them for the number of features (bias and
	// variance on a pilot sample); when Tol > 0, or only one of them is
	// given, ChooseTruncation chooses the missing ones from Radius and Tol
	// (the truncation error bound alone).
	Q, S int
	// Radius bounds |x| for the truncation; 0 means the largest row norm of
	// the data passed to NewGegenbauerMap.
	Radius float64
	// Tol is the truncation tolerance of ChooseTruncation (when it is used
	// with Tol = 0: DefaultGegenbauerTol).
	Tol float64
	// MaxQ, MaxS cap the automatic choice (defaults DefaultGegenbauerMaxQ/S).
	MaxQ, MaxS int
	// Orthogonal draws directions in blocks of d orthonormal ones.
	Orthogonal bool
	// Antithetic uses each direction w together with -w. Since
	// P^l(-t) = (-1)^l P^l(t), the pair's estimate keeps only products of
	// degrees of equal parity: the odd-even cross terms cancel exactly.
	Antithetic bool
	// Seed makes the directions reproducible.
	Seed uint64
}

// GegenbauerMap is the random Gegenbauer feature map of a GZK
// (Han, Zandieh, Avron 2022, Definition 8): for m directions w_i uniform on
// S^{d-1},
//
//	z(x)_{(i,j)} = m^{-1/2} sum_{l=0}^{q} sqrt(alpha_{l,d}) h_{l,j}(|x|) P_d^l(<x/|x|, w_i>),
//
// i < m, j < s, so D = m*s. By the reproducing property
// E_w[P^l(<a,w>) P^k(<b,w>)] = delta_lk P^l(<a,b>)/alpha_{l,d}, E[z(x).z(y)]
// equals the GZK k_{q,s}(x,y) exactly. For x = 0 only the l = 0 term is kept
// (P^l for l >= 1 is taken as 0), which matches GZK.Eval.
//
// Transform computes <x/|x|, w_i> with one backend Gemm per block of rows,
// then the Gegenbauer recurrence per (row, direction).
type GegenbauerMap struct {
	b       backend.Backend
	d, m    int // m directions in total (2*len(w)/d with antithetic)
	rad     radial
	anti    bool
	orth    bool
	w       []float64 // base directions, row-major
	nw      int       // number of base directions
	trunc   Truncation
	kstring string
}

// NewGegenbauerMap builds random Gegenbauer features for k, which is a
// *GZK (user or closed form) or a kernel with a GZK closed form (Gaussian,
// Polynomial, ExpDot, DotProduct, NTK, ArcCosine; see NewGZKFor). x is a data
// sample: it fixes d and, unless opt.Radius > 0, the radius used to choose
// (q, s); a *dataset.CSR is read without densifying it (row norms from its
// entries, the pilot of SelectTruncation on sparse rows). ctx is passed to SelectTruncation, the one step that loops over a
// sample of x at length.
//
// Errors: zonal.ErrEmpty, zonal.ErrNonFinite, zonal.ErrShape (a GZK of
// another dimension), zonal.ErrParam (bad options, D not a multiple of s,
// unsupported kernel), zonal.ErrTooLarge (directions over the memory
// budget), the errors of SelectTruncation, ChooseTruncation and NewGZKFor,
// ctx.Err().
func NewGegenbauerMap(ctx context.Context, k Kernel, x mat.Matrix, opt GegenbauerOptions) (*GegenbauerMap, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("%w: data is %dx%d", zonal.ErrEmpty, n, d)
	}
	if d < 2 {
		return nil, fmt.Errorf("%w: Gegenbauer features need d >= 2, got %d", zonal.ErrParam, d)
	}
	xin, err := asInput(x)
	if err != nil {
		return nil, err
	}
	if opt.Features < 1 {
		return nil, fmt.Errorf("%w: number of features must be >= 1, got %d", zonal.ErrParam, opt.Features)
	}
	if opt.Q < 0 || opt.S < 0 || opt.MaxQ < 0 || opt.MaxS < 0 || !(opt.Radius >= 0) || !(opt.Tol >= 0) ||
		math.IsInf(opt.Radius, 0) || math.IsInf(opt.Tol, 0) {
		return nil, fmt.Errorf("%w: negative or non-finite Gegenbauer option", zonal.ErrParam)
	}
	tolGiven := opt.Tol > 0
	if opt.Tol == 0 {
		opt.Tol = DefaultGegenbauerTol
	}
	if opt.MaxQ == 0 {
		opt.MaxQ = DefaultGegenbauerMaxQ
	}
	if opt.MaxS == 0 {
		opt.MaxS = DefaultGegenbauerMaxS
	}
	radius := opt.Radius
	if radius == 0 {
		for _, r2 := range xin.sqNorms() {
			radius = math.Max(radius, math.Sqrt(r2))
		}
	}
	var g *GZK
	tr := Truncation{Bound: math.NaN()}
	if gz, ok := k.(*GZK); ok {
		if gz.rad.d != d {
			return nil, fmt.Errorf("%w: GZK has d=%d, data has %d columns", zonal.ErrShape, gz.rad.d, d)
		}
		if (opt.Q != 0 && opt.Q != gz.rad.q) || (opt.S != 0 && opt.S != gz.rad.s) {
			return nil, fmt.Errorf("%w: options ask q=%d s=%d but the GZK has q=%d s=%d", zonal.ErrParam, opt.Q, opt.S, gz.rad.q, gz.rad.s)
		}
		g, tr.Q, tr.S = gz, gz.rad.q, gz.rad.s
		if gz.base != nil {
			if tr.Bound, err = TruncationBound(gz.base, d, radius, tr.Q, tr.S, opt.Options); err != nil {
				return nil, err
			}
		}
	} else {
		switch k.(type) {
		case NTK, ArcCosine:
			if opt.S > 1 {
				return nil, fmt.Errorf("%w: %v has a GZK of order s = 1, got S=%d", zonal.ErrParam, k, opt.S)
			}
			opt.S = 1
		}
		if opt.Q == 0 && opt.S == 0 && !tolGiven {
			if tr, err = SelectTruncation(ctx, k, x, opt.Features, SelectOptions{Options: opt.Options, Seed: opt.Seed}); err != nil {
				return nil, err
			}
		} else if opt.Q == 0 || opt.S == 0 {
			maxQ, maxS := opt.MaxQ, opt.MaxS
			if opt.Q != 0 {
				maxQ = opt.Q
			}
			if opt.S != 0 {
				maxS = opt.S
			}
			if tr, err = ChooseTruncation(k, d, radius, opt.Tol, maxQ, maxS, opt.Options); err != nil {
				return nil, err
			}
			if opt.Q != 0 {
				tr.Q = opt.Q
			}
			if opt.S != 0 {
				tr.S = opt.S
			}
		} else {
			tr.Q, tr.S = opt.Q, opt.S
		}
		if tr.Bound, err = TruncationBound(k, d, radius, tr.Q, tr.S, opt.Options); err != nil {
			return nil, err
		}
		if g, err = NewGZKFor(k, d, tr.Q, tr.S, opt.Options); err != nil {
			return nil, err
		}
	}
	s := tr.S
	step := s
	if opt.Antithetic {
		step = 2 * s
	}
	if opt.S != 0 && opt.Features%step != 0 {
		return nil, fmt.Errorf("%w: D=%d is not a multiple of s=%d%s", zonal.ErrParam, opt.Features, s,
			map[bool]string{true: " times 2 (antithetic pairs)", false: ""}[opt.Antithetic])
	}
	m := opt.Features / step * step / s
	if m == 0 {
		return nil, fmt.Errorf("%w: D=%d is smaller than %d (s=%d)", zonal.ErrParam, opt.Features, step, s)
	}
	nw := m
	if opt.Antithetic {
		nw = m / 2
	}
	if err := opt.check("the Gegenbauer directions", budget.Floats(nw, d)); err != nil {
		return nil, err
	}
	rng := newRand(opt.Seed, 1)
	return &GegenbauerMap{
		b: opt.backend(), d: d, m: m, rad: g.rad, anti: opt.Antithetic, orth: opt.Orthogonal,
		w: sphereRows(rng, nw, d, opt.Orthogonal), nw: nw, trunc: tr, kstring: k.String(),
	}, nil
}

// InputDim is d.
func (g *GegenbauerMap) InputDim() int { return g.d }

// Dim is m*s.
func (g *GegenbauerMap) Dim() int { return g.m * g.rad.s }

// Directions is m, the number of directions (w and -w count twice).
func (g *GegenbauerMap) Directions() int { return g.m }

// Truncation returns the (q, s) used and its error bound for the radius the
// map was built with (NaN for user radial functions).
func (g *GegenbauerMap) Truncation() Truncation { return g.trunc }

// Kind returns "gegenbauer".
func (g *GegenbauerMap) Kind() string { return "gegenbauer" }

// String describes the map.
func (g *GegenbauerMap) String() string {
	return fmt.Sprintf("gegenbauer(%s, d=%d, m=%d, q=%d, s=%d, orthogonal=%v, antithetic=%v, bound=%.3g)",
		g.kstring, g.d, g.m, g.rad.q, g.rad.s, g.orth, g.anti, g.trunc.Bound)
}

// Transform writes z(x) for the rows of x into dst (n x Dim()), with the
// map's backend; for a *dataset.CSR x the cosines <x/|x|, w_i> are
// <x, w_i>/|x| from backend.SparseGemm, in O(nnz m). Float32 features
// (Transform32) come from this Transform by the generic fallback, rounded:
// the cosines t = <x/|x|, w_i> feed Gegenbauer polynomials of degree up to
// q, whose derivative reaches O(q^2) times their scale at t = +-1, so a
// float32 product's error in t would be amplified that much. Errors: zonal.ErrEmpty,
// zonal.ErrShape, zonal.ErrNonFinite (see FeatureMap).
func (g *GegenbauerMap) Transform(dst *mat.Dense, x mat.Matrix) error {
	n, err := checkTransform(dst, x, g.d, g.Dim())
	if err != nil {
		return err
	}
	xin, err := asInput(x)
	if err != nil {
		return err
	}
	dg := dst.RawMatrix()
	q, s, d := g.rad.q, g.rad.s, g.d
	scale := make([]float64, q+1)
	for l := range scale {
		scale[l] = math.Exp(0.5*LogAlpha(l, d)) / math.Sqrt(float64(g.m))
	}
	w := blas64.General{Rows: g.nw, Cols: d, Stride: d, Data: g.w}
	return parallelBlocksOf(context.Background(), n, transformRows, func(i0, i1 int) {
		rows := i1 - i0
		t := blas64.General{Rows: rows, Cols: g.nw, Stride: g.nw, Data: make([]float64, rows*g.nw)}
		rs := make([]float64, rows)
		if xin.sparse {
			// <x/|x|, w> = <x, w>/|x| from the sparse product: nothing
			// rows x d is formed.
			xb := xin.sub(i0, i1)
			backend.SparseGemm(g.b, blas.NoTrans, blas.Trans, 1, xb.sp, w, 0, t)
			for i, r2 := range xb.sqNorms() {
				r := math.Sqrt(r2)
				rs[i] = r
				row := t.Data[i*g.nw : (i+1)*g.nw]
				if r == 0 {
					clear(row)
					continue
				}
				for k := range row {
					row[k] /= r
				}
			}
		} else {
			xg := xin.g
			xh := blas64.General{Rows: rows, Cols: d, Stride: d, Data: make([]float64, rows*d)}
			for i := 0; i < rows; i++ {
				src := xg.Data[(i0+i)*xg.Stride : (i0+i)*xg.Stride+d]
				r := math.Sqrt(dot(src, src))
				rs[i] = r
				if r > 0 {
					for c, v := range src {
						xh.Data[i*d+c] = v / r
					}
				}
			}
			g.b.Gemm(blas.NoTrans, blas.Trans, 1, xh, w, 0, t)
		}
		a := make([]float64, (q+1)*s)
		p := make([]float64, (q+1)*g.nw) // p[l*nw+k] = P^l(t_k), by the backend's vector recurrence
		tr := make([]float64, g.nw)
		for i := 0; i < rows; i++ {
			g.rad.eval(rs[i], a)
			for l := 0; l <= q; l++ {
				for j := 0; j < s; j++ {
					a[l*s+j] *= scale[l]
				}
			}
			lmax := q
			if rs[i] == 0 {
				lmax = 0
			}
			out := dg.Data[(i0+i)*dg.Stride : (i0+i)*dg.Stride+g.Dim()]
			for k, v := range t.Data[i*g.nw : (i+1)*g.nw] {
				tr[k] = clamp1(v)
			}
			backend.GegenbauerRecurrence(g.b, p, tr, lmax, d)
			if !g.anti {
				clear(out)
				for l := 0; l <= lmax; l++ {
					al := a[l*s : (l+1)*s]
					for k, pl := range p[l*g.nw : (l+1)*g.nw] {
						o := out[k*s : (k+1)*s]
						for j, av := range al {
							o[j] += pl * av
						}
					}
				}
				continue
			}
			// Antithetic pairs: with E_j, O_j the even- and odd-degree sums,
			// direction w gives E_j + O_j and -w gives E_j - O_j. Accumulate
			// E in the first half of each pair's block and O in the second.
			clear(out)
			for l := 0; l <= lmax; l++ {
				al := a[l*s : (l+1)*s]
				off := 0
				if l&1 == 1 {
					off = s
				}
				for k, pl := range p[l*g.nw : (l+1)*g.nw] {
					o := out[2*k*s+off : 2*k*s+off+s]
					for j, av := range al {
						o[j] += pl * av
					}
				}
			}
			for k := 0; k < g.nw; k++ {
				o := out[2*k*s : (2*k+2)*s]
				for j := 0; j < s; j++ {
					e, od := o[j], o[s+j]
					o[j], o[s+j] = e+od, e-od // directions w and -w
				}
			}
		}
	})
}

// MarshalBinary encodes the map (directions included); maps of user radial
// functions cannot be encoded (zonal.ErrParam).
func (g *GegenbauerMap) MarshalBinary() ([]byte, error) {
	if g.rad.user != nil {
		return nil, fmt.Errorf("%w: a Gegenbauer map of user radial functions cannot be serialized", zonal.ErrParam)
	}
	var flags float64
	if g.anti {
		flags += 1
	}
	if g.orth {
		flags += 2
	}
	out := putFloats([]byte{1}, float64(g.d), float64(g.m), float64(g.nw), float64(g.rad.q), float64(g.rad.s),
		flags, float64(g.trunc.Q), float64(g.trunc.S), g.trunc.Bound, g.rad.a, g.rad.b)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(g.kstring)))
	out = append(out, g.kstring...)
	out = putFloats(out, g.rad.logC...)
	out = putFloats(out, g.rad.expo...)
	return putFloats(out, g.w...), nil
}

// decodeGegenbauer decodes GegenbauerMap.MarshalBinary (registered in
// registry.go); the map computes with backend.Default().
func decodeGegenbauer(data []byte) (FeatureMap, error) {
	bad := fmt.Errorf("%w: malformed gegenbauer map encoding", zonal.ErrFormat)
	if len(data) < 1+11*8+4 || data[0] != 1 {
		return nil, bad
	}
	h, _ := getFloats(data[1:1+11*8], 11)
	data = data[1+11*8:]
	ks := int(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if ks > len(data) {
		return nil, bad
	}
	kstring := string(data[:ks])
	data = data[ks:]
	d, m, nw, q, s := int(h[0]), int(h[1]), int(h[2]), int(h[3]), int(h[4])
	if checkDQS(d, q, s) != nil || nw < 1 || m < nw || m > 1<<30 {
		return nil, bad
	}
	nc := (q + 1) * s
	if len(data) != 8*(2*nc+nw*d) {
		return nil, bad
	}
	v, _ := getFloats(data, -1)
	flags := int(h[5])
	return &GegenbauerMap{
		b: backend.Default(), d: d, m: m, nw: nw, anti: flags&1 != 0, orth: flags&2 != 0,
		rad:   radial{d: d, q: q, s: s, a: h[9], b: h[10], logC: v[:nc], expo: v[nc : 2*nc]},
		w:     v[2*nc:],
		trunc: Truncation{Q: int(h[6]), S: int(h[7]), Bound: h[8]}, kstring: kstring,
	}, nil
}

// checkTransform validates the shapes of a Transform call and returns n.
func checkTransform(dst *mat.Dense, x mat.Matrix, d, dim int) (int, error) {
	if dst == nil {
		return 0, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	n, err := checkInput(x, d)
	if err != nil {
		return 0, err
	}
	if r, cc := dst.Dims(); r != n || cc != dim {
		return 0, fmt.Errorf("%w: dst is %dx%d, want %dx%d", zonal.ErrShape, r, cc, n, dim)
	}
	return n, nil
}

// checkInput checks that x is a non-empty matrix of d columns and returns
// its row count: zonal.ErrEmpty or zonal.ErrShape otherwise.
func checkInput(x mat.Matrix, d int) (int, error) {
	if x == nil {
		return 0, fmt.Errorf("%w: nil matrix", zonal.ErrEmpty)
	}
	n, c := x.Dims()
	if n == 0 || c == 0 {
		return 0, fmt.Errorf("%w: input is %dx%d", zonal.ErrEmpty, n, c)
	}
	if c != d {
		return 0, fmt.Errorf("%w: input has %d columns, the map expects %d", zonal.ErrShape, c, d)
	}
	return n, nil
}

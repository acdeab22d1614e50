package tensorsketch

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// countHash is the linear map C: R^in -> R^m with (Cx)_j = sum_{i: h(i)=j} s(i) x_i,
// where the bucket h(i) is uniform on [0,m) and the sign s(i) uniform on
// {-1,+1}, all independent and drawn from the seed. E[<Cx, Cy>] = <x,y>,
// and the variance is at most 2 |x|^2 |y|^2 / m. Applying it costs
// O(nnz(x)). It is the CountSketch map and the leaf of TensorSketch and
// PolySketch.
type countHash struct {
	h []int32
	s []float64
}

// countHashBytes is the size of the tables of a countHash on R^in.
func countHashBytes(in int) int64 { return budget.Bytes(12, in) }

func newCountHash(in, m int, seed uint64) *countHash {
	rng := rand.New(rand.NewPCG(seed, 0x636f756e74))
	c := &countHash{h: make([]int32, in), s: make([]float64, in)}
	for i := 0; i < in; i++ {
		c.h[i] = int32(rng.IntN(m))
		if rng.Uint64()&1 == 0 {
			c.s[i] = 1
		} else {
			c.s[i] = -1
		}
	}
	return c
}

// apply adds scale * C x to dst (length m) for the sparse vector (col, val).
func (c *countHash) apply(dst []float64, col []int, val []float64, scale float64) {
	for p, j := range col {
		dst[c.h[j]] += scale * c.s[j] * val[p]
	}
}

// CountSketch is the CountSketch C: R^{d+1} -> R^D (see countHash: one
// uniform bucket and sign per coordinate) applied to the augmented point
// x' = (sqrt(gamma) x, sqrt(coef0)) of a degree-1 polynomial kernel, so
// E[<Cx', Cy'>] = <x',y'> = gamma <x,y> + coef0 with variance at most
// 2 |x'|^2 |y'|^2 / D. With gamma = 1, coef0 = 0 it is the plain
// CountSketch of x and approximates the linear kernel <x,y>. Cost per
// point: O(nnz(x)).
type CountSketch struct {
	sketch
	hash *countHash
}

// NewCountSketch returns the D = opts.Features dimensional CountSketch of
// the kernel k on R^d, which must be a kernels.Polynomial of degree 1
// (kernels.Polynomial{Degree: 1, Gamma: 1} is the linear kernel).
//
// Errors: zonal.ErrParam (d < 1, D < 1, a kernel other than a valid
// degree-1 polynomial), zonal.ErrTooLarge (the hash tables exceed
// opts.MemoryBudget).
func NewCountSketch(k kernels.Kernel, d int, opts SketchOptions) (*CountSketch, error) {
	s, err := newSketch(k, d, opts)
	if err != nil {
		return nil, err
	}
	return newCountSketch(s)
}

func newCountSketch(s sketch) (*CountSketch, error) {
	if s.e.gauss || s.e.poly.Degree != 1 {
		return nil, fmt.Errorf("%w: CountSketch sketches a degree-1 polynomial kernel, got %v (use NewTensorSketch or NewPolySketch)", zonal.ErrParam, s.e)
	}
	w := s.e.width(s.d)
	if err := budget.Check("tensorsketch.NewCountSketch: hash tables", countHashBytes(w), s.limit); err != nil {
		return nil, err
	}
	return &CountSketch{sketch: s, hash: newCountHash(w, s.dim, s.seed)}, nil
}

// InputDim is d.
func (c *CountSketch) InputDim() int { return c.d }

// Dim is D.
func (c *CountSketch) Dim() int { return c.dim }

// Kind is "countsketch".
func (c *CountSketch) Kind() string { return "countsketch" }

// String describes the map.
func (c *CountSketch) String() string { return fmt.Sprintf("countsketch(%v, D=%d)", c.e, c.dim) }

// Transform writes C x'_i to row i of dst (n x D) for the rows x_i of x
// (n x d). A *dataset.CSR is read through its nonzeros (no dense copy), in
// O(nnz(x) + n D) time; dense and CSR input holding the same numbers give
// bit-identical features.
//
// Float32 features (kernels.Transform32) come from this Transform by the
// generic fallback, 256 rows at a time rounded to float32: the sketch's cost
// is FFTs and hashing, not a product that single precision would speed up.
//
// Errors: zonal.ErrEmpty, zonal.ErrShape (x or dst), zonal.ErrFormat
// (malformed CSR), zonal.ErrNonFinite, zonal.ErrTooLarge (the copy of the
// nonzeros exceeds the map's MemoryBudget).
func (c *CountSketch) Transform(dst *mat.Dense, x mat.Matrix) error {
	r, err := c.input(x, "tensorsketch: CountSketch.Transform input", 0)
	if err != nil {
		return err
	}
	if err := checkDst(dst, r.n, c.dim); err != nil {
		return err
	}
	xr, _ := c.e.prepare(r)
	for i := 0; i < xr.n; i++ {
		out := dst.RawRowView(i)
		clear(out)
		col, val := xr.row(i)
		c.hash.apply(out, col, val, 1)
	}
	return nil
}

// countSketchVersion 2 encodes the kernel; version 1 (d, D, seed only) is
// read as the linear kernel.
const countSketchVersion = 2

// MarshalBinary encodes the kernel, d, D and the seed; the hash functions
// are regenerated from the seed.
func (c *CountSketch) MarshalBinary() ([]byte, error) { return c.marshal(countSketchVersion), nil }

func init() {
	linear := expansion{poly: kernels.Polynomial{Degree: 1, Gamma: 1}}
	kernels.RegisterMap("countsketch", func(b []byte) (kernels.FeatureMap, error) {
		s, err := decodeSketch(b, map[uint64]expansion{1: linear})
		if err != nil {
			return nil, err
		}
		return newCountSketch(s)
	})
}

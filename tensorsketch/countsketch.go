package tensorsketch

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// CountSketch is the linear map C: R^d -> R^D with (Cx)_j = sum_{i: h(i)=j} s(i) x_i,
// where the bucket h(i) is uniform on [0,D) and the sign s(i) uniform on {-1,+1},
// all independent and drawn from the seed. E[<Cx, Cy>] = <x,y>, and the
// variance is at most 2 |x|^2 |y|^2 / D. Applying it costs O(nnz(x)).
//
// As a FeatureMap it approximates the linear kernel <x,y>.
type CountSketch struct {
	d, dim int
	seed   uint64
	h      []int32
	s      []float64
}

// NewCountSketch returns a CountSketch from R^d to R^D.
func NewCountSketch(d, D int, seed uint64) (*CountSketch, error) {
	if d < 1 || D < 1 {
		return nil, fmt.Errorf("%w: CountSketch needs d >= 1 and D >= 1, got d=%d D=%d", zonal.ErrParam, d, D)
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f756e74))
	c := &CountSketch{d: d, dim: D, seed: seed, h: make([]int32, d), s: make([]float64, d)}
	for i := 0; i < d; i++ {
		c.h[i] = int32(rng.IntN(D))
		if rng.Uint64()&1 == 0 {
			c.s[i] = 1
		} else {
			c.s[i] = -1
		}
	}
	return c, nil
}

// InputDim is d.
func (c *CountSketch) InputDim() int { return c.d }

// Dim is D.
func (c *CountSketch) Dim() int { return c.dim }

// Kind is "countsketch".
func (c *CountSketch) Kind() string { return "countsketch" }

// apply adds scale * C x to dst (length D) for the sparse vector (col, val).
func (c *CountSketch) apply(dst []float64, col []int, val []float64, scale float64) {
	for p, j := range col {
		dst[c.h[j]] += scale * c.s[j] * val[p]
	}
}

// Transform writes C x_i to row i of dst.
func (c *CountSketch) Transform(dst *mat.Dense, x mat.Matrix) error {
	r, err := denseRows(x, c.d)
	if err != nil {
		return err
	}
	return c.transformRows(dst, r)
}

// TransformCSR is Transform for sparse input, in O(nnz(x) + n D) time.
func (c *CountSketch) TransformCSR(dst *mat.Dense, x *dataset.CSR) error {
	r, err := csrRows(x, c.d)
	if err != nil {
		return err
	}
	return c.transformRows(dst, r)
}

func (c *CountSketch) transformRows(dst *mat.Dense, r *rows) error {
	if err := checkDst(dst, r.n, c.dim); err != nil {
		return err
	}
	for i := 0; i < r.n; i++ {
		out := dst.RawRowView(i)
		clear(out)
		col, val := r.row(i)
		c.apply(out, col, val, 1)
	}
	return nil
}

// MarshalBinary encodes d, D and the seed.
func (c *CountSketch) MarshalBinary() ([]byte, error) {
	var e enc
	e.u(codecVersion)
	e.i(c.d)
	e.i(c.dim)
	e.u(c.seed)
	return e.b, nil
}

func init() {
	kernels.RegisterMap("countsketch", func(b []byte) (kernels.FeatureMap, error) {
		d := dec{b: b}
		d.u()
		dd, D, seed := d.i(), d.i(), d.u()
		if d.err != nil {
			return nil, d.err
		}
		return NewCountSketch(dd, D, seed)
	})
}

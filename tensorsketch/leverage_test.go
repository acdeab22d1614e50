package tensorsketch

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

// degree2Oracle holds the exact ridge leverage scores of the nonzero rows of
// Phi = X'^{(x)2} for a degree-2 polynomial kernel, found without forming
// Phi: a row (i, j) is nonzero only on the points holding both i and j, so
// the rows are enumerated from each point's own nonzero pairs. Rows (i, j)
// and (j, i) are equal; each unordered pair is kept once with its
// multiplicity (1 when i == j, else 2). For a row v (sparse over points)
// tau = v^T (K + lambda I)^{-1} v.
type degree2Oracle struct {
	n     int
	pairs [][2]int32
	mult  []float64
	pts   [][]int32
	vals  [][]float64
	tau   []float64
	sd    float64 // sum over ordered rows of tau = tr(K (K + lambda I)^{-1})
	K     *mat.Dense
}

// newDegree2Oracle prepares the rows of x (dense or *dataset.CSR) for the
// degree-2 kernel k and computes K and the scores at lambda.
func newDegree2Oracle(t testing.TB, x mat.Matrix, k kernels.Polynomial, lambda float64) *degree2Oracle {
	t.Helper()
	if k.Degree != 2 {
		t.Fatalf("degree2Oracle: degree %d", k.Degree)
	}
	e, err := polyExpansion(k)
	if err != nil {
		t.Fatal(err)
	}
	r, err := toRows(x, -1, 0, "oracle", nil)
	if err != nil {
		t.Fatal(err)
	}
	xr, _ := e.prepare(r)
	n := xr.n
	// K_kl = <x'_k, x'_l>^2 through a dense scatter of row k
	K := mat.NewDense(n, n, nil)
	buf := make([]float64, xr.d)
	for a := 0; a < n; a++ {
		ca, va := xr.row(a)
		for p, c := range ca {
			buf[c] = va[p]
		}
		for b := a; b < n; b++ {
			cb, vb := xr.row(b)
			dot := 0.0
			for p, c := range cb {
				dot += buf[c] * vb[p]
			}
			K.Set(a, b, dot*dot)
			K.Set(b, a, dot*dot)
		}
		for _, c := range ca {
			buf[c] = 0
		}
	}
	o := &degree2Oracle{n: n, K: K}
	index := map[[2]int32]int{}
	for kk := 0; kk < n; kk++ {
		col, val := xr.row(kk)
		for p := range col {
			for q := p; q < len(col); q++ {
				key := [2]int32{int32(col[p]), int32(col[q])}
				id, ok := index[key]
				if !ok {
					id = len(o.pairs)
					index[key] = id
					o.pairs = append(o.pairs, key)
					m := 2.0
					if p == q {
						m = 1
					}
					o.mult = append(o.mult, m)
					o.pts = append(o.pts, nil)
					o.vals = append(o.vals, nil)
				}
				o.pts[id] = append(o.pts[id], int32(kk))
				o.vals[id] = append(o.vals[id], val[p]*val[q])
			}
		}
	}
	var reg mat.Dense
	reg.CloneFrom(K)
	for i := 0; i < n; i++ {
		reg.Set(i, i, reg.At(i, i)+lambda)
	}
	var inv mat.Dense
	if err := inv.Inverse(&reg); err != nil {
		t.Fatal(err)
	}
	o.tau = make([]float64, len(o.pairs))
	for id := range o.pairs {
		pts, v := o.pts[id], o.vals[id]
		s := 0.0
		for a, ka := range pts {
			row := inv.RawRowView(int(ka))
			for b, kb := range pts {
				s += v[a] * row[kb] * v[b]
			}
		}
		o.tau[id] = s
		o.sd += o.mult[id] * s
	}
	return o
}

// features draws s ordered rows of Phi iid with probability tau_r / s_lambda
// (exact ridge leverage sampling) and returns their features Z (n x D, D
// the distinct rows): a row drawn c times gets the column
// sqrt(c s_lambda / (s tau_r)) Phi_r, so E[Z Z^T] = K.
func (o *degree2Oracle) features(s int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 11))
	cum := make([]float64, len(o.tau))
	acc := 0.0
	for i, v := range o.tau {
		acc += o.mult[i] * v
		cum[i] = acc
	}
	counts := map[int]int{}
	for j := 0; j < s; j++ {
		u := rng.Float64() * acc
		i := sort.SearchFloat64s(cum, u)
		counts[min(i, len(cum)-1)]++
	}
	ids := make([]int, 0, len(counts))
	for i := range counts {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	z := mat.NewDense(o.n, len(ids), nil)
	for c, id := range ids {
		w := math.Sqrt(float64(counts[id]) * acc / (float64(s) * o.tau[id]))
		for a, k := range o.pts[id] {
			z.Set(int(k), c, w*o.vals[id][a])
		}
	}
	return z
}

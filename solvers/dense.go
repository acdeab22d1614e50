package solvers

import (
	"gonum.org/v1/gonum/mat"
)

// rowOf returns row i of a dense matrix as a slice (no copy).
func rowOf(m *mat.Dense, i int) []float64 {
	r := m.RawMatrix()
	return r.Data[i*r.Stride : i*r.Stride+r.Cols]
}

func fillRows(dst *mat.Dense, v []float64) {
	r := dst.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		copy(r.Data[i*r.Stride:i*r.Stride+r.Cols], v)
	}
}

func gatherRows(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	c := mat.NewDense(len(idx), d, nil)
	for i, j := range idx {
		copy(rowOf(c, i), rowOf(x, j))
	}
	return c
}

// centerTargets returns Y - mean (a copy) and the column means, weighted
// by w when w is not nil (the mean sum_i w_i y_i / sum_i w_i).
func centerTargets(y *mat.Dense, w []float64) (*mat.Dense, []float64) {
	n, k := y.Dims()
	mean := make([]float64, k)
	total := float64(n)
	if w != nil {
		total = 0
	}
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
			total += wi
		}
		for j, v := range rowOf(y, i) {
			mean[j] += wi * v
		}
	}
	for j := range mean {
		mean[j] /= total
	}
	yc := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		dst, src := rowOf(yc, i), rowOf(y, i)
		for j := range dst {
			dst[j] = src[j] - mean[j]
		}
	}
	return yc, mean
}

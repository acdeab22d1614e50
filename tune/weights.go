package tune

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
)

// positiveRows drops the rows of weight zero from x and labels (they take
// no part in any fit or score) and returns the rows kept, their labels,
// their weights (nil when w is nil or all kept weights are equal: the
// unweighted search, since the objective divides by the weight sum) and
// their count. w has been validated (solvers.CheckWeights).
func positiveRows(x mat.Matrix, labels, w []float64) (mat.Matrix, []float64, []float64, int) {
	n, _ := x.Dims()
	if w == nil {
		return x, labels, nil, n
	}
	var kept []int
	for i, v := range w {
		if v > 0 {
			kept = append(kept, i)
		}
	}
	kw := subsetWeights(w, kept)
	if len(kept) < n {
		x = dataset.MustSelectRows(x, kept)
		kl := make([]float64, len(kept))
		for r, i := range kept {
			kl[r] = labels[i]
		}
		labels = kl
	}
	for _, v := range kw {
		if v != kw[0] {
			return x, labels, kw, len(kept)
		}
	}
	return x, labels, nil, len(kept)
}

// weightsOf returns the weights of the rows idx of the tuned rows (nil
// when unweighted).
func (s *searcher) weightsOf(idx []int) []float64 { return subsetWeights(s.w, idx) }

// sqrtOf returns sqrt(w_i) (nil for nil w).
func sqrtOf(w []float64) []float64 {
	if w == nil {
		return nil
	}
	out := make([]float64, len(w))
	for i, v := range w {
		out[i] = math.Sqrt(v)
	}
	return out
}

// scaleRowsBy multiplies row i of m by s[i] (nothing for nil s).
func scaleRowsBy(m *mat.Dense, s []float64) {
	if s == nil {
		return
	}
	for i, si := range s {
		row := m.RawRowView(i)
		for j := range row {
			row[j] *= si
		}
	}
}

// scaleColsBy multiplies column j of m by s[j] (nothing for nil s).
func scaleColsBy(m *mat.Dense, s []float64) {
	if s == nil {
		return
	}
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		row := m.RawRowView(i)
		for j := range row {
			row[j] *= s[j]
		}
	}
}

// scaleSym sets m = diag(s) m diag(s) (nothing for nil s).
func scaleSym(m *mat.Dense, s []float64) {
	scaleRowsBy(m, s)
	scaleColsBy(m, s)
}

// weightedScore is the weighted accuracy (the weight of the rows predicted
// right over the total weight) or the weighted RMSE
// (sqrt(sum w_i (p_i - y_i)^2 / sum w)).
func weightedScore(pred, truth, w []float64, accuracy bool) float64 {
	var num, den float64
	for i, p := range pred {
		den += w[i]
		if accuracy {
			if p == truth[i] {
				num += w[i]
			}
			continue
		}
		d := p - truth[i]
		num += w[i] * d * d
	}
	if den == 0 {
		return math.NaN()
	}
	if accuracy {
		return num / den
	}
	return math.Sqrt(num / den)
}

package tensorsketch

// Sampled rows of Phi: merging the draws into weighted rows
// (Horvitz-Thompson) and evaluating their features on points.

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// sampledRow is one merged row of Phi: the feature
// weight * omega(x) * prod_{i in idx} x'_i of tensor degree len(idx).
type sampledRow struct {
	idx []int32 // sorted
	w   float64
	cnt int // draws merged into this row
}

// merge combines the emissions into rows: equal multisets of indices have
// equal features, so their squared weights coef_l / pi add.
func (s *rowSampler) merge() []sampledRow {
	type acc struct {
		idx []int32
		w2  float64
		cnt int
	}
	byKey := map[string]*acc{}
	var keys []string
	for _, e := range s.emits {
		slices.Sort(e.idx)
		key := make([]byte, 0, 4*len(e.idx)+4)
		key = fmt.Appendf(key, "%d:", e.l)
		for _, i := range e.idx {
			key = fmt.Appendf(key, "%d,", i)
		}
		// Horvitz-Thompson: the ordered row is drawn at least once with
		// probability pi = 1 - (1-p)^s, so weighting it by 1/pi (whatever its
		// count c) is unbiased; rows with s p >> 1 get weight ~1 and no
		// variance, instead of c/(s p).
		pi := -math.Expm1(float64(s.draws) * math.Log1p(-e.prob))
		w2 := s.e.coef(e.l) / pi
		if a, ok := byKey[string(key)]; ok {
			a.w2 += w2
			a.cnt += e.c
			continue
		}
		byKey[string(key)] = &acc{idx: e.idx, w2: w2, cnt: e.c}
		keys = append(keys, string(key))
	}
	sort.Strings(keys)
	res := make([]sampledRow, len(keys))
	for i, k := range keys {
		a := byKey[k]
		res[i] = sampledRow{idx: a.idx, w: math.Sqrt(a.w2), cnt: a.cnt}
	}
	return res
}

// features writes the features of the sampled rows for the prepared rows xr
// (with omega om) into dst (n x len(rs), row-major, stride ld).
func features(dst []float64, ld int, xr *rows, om []float64, rs []sampledRow) {
	parallelRows(xr.n, func(lo, hi int) {
		buf := make([]float64, xr.d)
		for k := lo; k < hi; k++ {
			col, val := xr.row(k)
			for p, i := range col {
				buf[i] = val[p]
			}
			w := 1.0
			if om != nil {
				w = om[k]
			}
			out := dst[k*ld : k*ld+len(rs)]
			for j, r := range rs {
				v := r.w * w
				for _, i := range r.idx {
					v *= buf[i]
				}
				out[j] = v
			}
			for _, i := range col {
				buf[i] = 0
			}
		}
	})
}

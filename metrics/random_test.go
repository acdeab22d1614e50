package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// pairAUC is the definition of the weighted AUC: every (positive,
// negative) pair, won pairs counting 1 and tied ones 1/2, weighted by
// w_i w_j.
func pairAUC(s []float64, pos func(int) bool, w []float64) float64 {
	num, den := 0.0, 0.0
	for i := range s {
		if !pos(i) {
			continue
		}
		for j := range s {
			if pos(j) {
				continue
			}
			ww := weight(w, i) * weight(w, j)
			den += ww
			switch {
			case s[i] > s[j]:
				num += ww
			case s[i] == s[j]:
				num += ww / 2
			}
		}
	}
	return num / den
}

// TestAUCPairCounting compares ROCAUC and ROCAUCMulti with the O(n^2)
// definition on random data whose scores take few values (many ties),
// with and without weights (some of them 0). Both sum the same products
// in different orders, so they agree to rounding: 1e-12 relative.
func TestAUCPairCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 2 + rng.IntN(200)
		s := make([]float64, n)
		y := make([]float64, n)
		w := make([]float64, n)
		for i := range n {
			s[i] = float64(rng.IntN(8)) / 4
			y[i] = float64(rng.IntN(2))
			w[i] = float64(rng.IntN(4)) * rng.Float64()
		}
		y[0], y[1] = 0, 1
		w[0], w[1] = 1, 1
		for _, ww := range [][]float64{nil, w} {
			got, err := ROCAUC(s, y, ww)
			if err != nil {
				t.Fatal(err)
			}
			want := pairAUC(s, func(i int) bool { return y[i] == 1 }, ww)
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("trial %d (weights %v): AUC %.17g, pair counting %.17g", trial, ww != nil, got, want)
			}
		}
	}
	// Multiclass: 4 classes, scores with ties, weighted.
	for trial := range 20 {
		n, k := 8+rng.IntN(100), 4
		p := mat.NewDense(n, k, nil)
		y := make([]float64, n)
		w := make([]float64, n)
		for i := range n {
			y[i] = float64(i % k)
			w[i] = 0.5 + float64(rng.IntN(3))
			for j := range k {
				p.Set(i, j, float64(rng.IntN(5)))
			}
		}
		classes := []float64{0, 1, 2, 3}
		got, err := ROCAUCMulti(p, classes, y, w)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for j := range k {
			want += pairAUC(mat.Col(nil, j, p), func(i int) bool { return y[i] == classes[j] }, w) / float64(k)
		}
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: multiclass AUC %.17g, pair counting %.17g", trial, got, want)
		}
	}
}

// repeat returns the rows of each slice repeated counts[i] times.
func repeat(counts []int, cols ...[]float64) [][]float64 {
	out := make([][]float64, len(cols))
	for c, col := range cols {
		for i, v := range col {
			for range counts[i] {
				out[c] = append(out[c], v)
			}
		}
	}
	return out
}

// repeatRows returns the rows of m repeated counts[i] times.
func repeatRows(m *mat.Dense, counts []int) *mat.Dense {
	_, k := m.Dims()
	var data []float64
	for i, c := range counts {
		for range c {
			data = append(data, m.RawRowView(i)...)
		}
	}
	return mat.NewDense(len(data)/k, k, data)
}

// TestWeightsAreRepeats checks every weighted metric against the
// unweighted metric of the rows repeated by integer weights (0 drops a
// row). The sums are the same up to order and grouping, so they agree to
// 1e-12 relative.
func TestWeightsAreRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		n := 10 + rng.IntN(60)
		counts := make([]int, n)
		w := make([]float64, n)
		score := make([]float64, n)
		p := make([]float64, n)
		yb := make([]float64, n)
		lab := make([]float64, n)
		pred := make([]float64, n)
		yr := make([]float64, n)
		mu := make([]float64, n)
		for i := range n {
			counts[i] = rng.IntN(4)
			w[i] = float64(counts[i])
			score[i] = float64(rng.IntN(6))
			p[i] = rng.Float64()
			yb[i] = float64(2*rng.IntN(2) - 1)
			lab[i] = float64(rng.IntN(3))
			pred[i] = float64(rng.IntN(3))
			yr[i] = float64(rng.IntN(5))
			mu[i] = 0.1 + 3*rng.Float64()
		}
		// Both classes present with positive weight in every trial.
		for i, c := range []float64{-1, 1} {
			yb[i], counts[i], w[i] = c, 1, 1
		}
		for i := range 3 {
			lab[i], counts[i], w[i] = float64(i), 1, 1
		}
		prob := mat.NewDense(n, 3, nil)
		for i := range n {
			a, b := rng.Float64(), rng.Float64()
			prob.SetRow(i, []float64{a * b, a * (1 - b), 1 - a})
		}
		classes := []float64{0, 1, 2}
		r := repeat(counts, score, p, yb, lab, pred, yr, mu)
		rs, rp, ryb, rlab, rpred, ryr, rmu := r[0], r[1], r[2], r[3], r[4], r[5], r[6]
		rprob := repeatRows(prob, counts)
		type metric struct {
			name     string
			weighted func([]float64) (float64, error)
			repeated func() (float64, error)
		}
		thresholded := func(f func(PRF) float64, s, y, w []float64) (float64, error) {
			r, err := BinaryPRF(s, y, w, 2.5)
			return f(r), err
		}
		for _, m := range []metric{
			{"Accuracy", func(w []float64) (float64, error) { return Accuracy(pred, lab, w) }, func() (float64, error) { return Accuracy(rpred, rlab, nil) }},
			{"BalancedAccuracy", func(w []float64) (float64, error) { return BalancedAccuracy(pred, lab, w) }, func() (float64, error) { return BalancedAccuracy(rpred, rlab, nil) }},
			{"ROCAUC", func(w []float64) (float64, error) { return ROCAUC(score, yb, w) }, func() (float64, error) { return ROCAUC(rs, ryb, nil) }},
			{"ROCAUCMulti", func(w []float64) (float64, error) { return ROCAUCMulti(prob, classes, lab, w) }, func() (float64, error) { return ROCAUCMulti(rprob, classes, rlab, nil) }},
			{"LogLoss", func(w []float64) (float64, error) { return LogLoss(prob, classes, lab, w) }, func() (float64, error) { return LogLoss(rprob, classes, rlab, nil) }},
			{"Brier", func(w []float64) (float64, error) { return Brier(prob, classes, lab, w) }, func() (float64, error) { return Brier(rprob, classes, rlab, nil) }},
			{"BinaryLogLoss", func(w []float64) (float64, error) { return BinaryLogLoss(p, yb, w) }, func() (float64, error) { return BinaryLogLoss(rp, ryb, nil) }},
			{"BinaryBrier", func(w []float64) (float64, error) { return BinaryBrier(p, yb, w) }, func() (float64, error) { return BinaryBrier(rp, ryb, nil) }},
			{"Recall", func(w []float64) (float64, error) {
				return thresholded(func(r PRF) float64 { return r.Recall }, score, yb, w)
			}, func() (float64, error) { return thresholded(func(r PRF) float64 { return r.Recall }, rs, ryb, nil) }},
			{"F1", func(w []float64) (float64, error) {
				return thresholded(func(r PRF) float64 { return r.F1 }, score, yb, w)
			}, func() (float64, error) { return thresholded(func(r PRF) float64 { return r.F1 }, rs, ryb, nil) }},
			{"RecallAtPrecision", func(w []float64) (float64, error) {
				r, _, err := RecallAtPrecision(score, yb, w, 0.6)
				return r, err
			}, func() (float64, error) {
				r, _, err := RecallAtPrecision(rs, ryb, nil, 0.6)
				return r, err
			}},
			{"MacroF1", func(w []float64) (float64, error) {
				s, err := PerClass(pred, lab, w, classes)
				return s.MacroF1, err
			}, func() (float64, error) {
				s, err := PerClass(rpred, rlab, nil, classes)
				return s.MacroF1, err
			}},
			{"RMSE", func(w []float64) (float64, error) { return RMSE(mu, yr, w) }, func() (float64, error) { return RMSE(rmu, ryr, nil) }},
			{"MAE", func(w []float64) (float64, error) { return MAE(mu, yr, w) }, func() (float64, error) { return MAE(rmu, ryr, nil) }},
			{"R2", func(w []float64) (float64, error) { return R2(mu, yr, w) }, func() (float64, error) { return R2(rmu, ryr, nil) }},
			{"PoissonDeviance", func(w []float64) (float64, error) { return PoissonDeviance(mu, yr, w) }, func() (float64, error) { return PoissonDeviance(rmu, ryr, nil) }},
		} {
			a, errA := m.weighted(w)
			b, errB := m.repeated()
			if (errA == nil) != (errB == nil) {
				t.Fatalf("trial %d %s: weighted error %v, repeated error %v", trial, m.name, errA, errB)
			}
			if errA != nil {
				continue // R^2 of constant repeated labels: both refuse
			}
			if !(math.Abs(a-b) <= 1e-12*max(1, math.Abs(b))) {
				t.Fatalf("trial %d %s: weighted %.17g, repeated rows %.17g", trial, m.name, a, b)
			}
		}
	}
}

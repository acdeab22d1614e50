package calibrate

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/metrics"
	"gonum.org/v1/gonum/mat"
)

// sigmoidData draws n scores s ~ N(0.3, 1.5^2) and labels y ~
// Bernoulli(sigmoid(a s + b)).
func sigmoidData(rng *rand.Rand, n int, a, b float64) (s, y []float64) {
	s, y = make([]float64, n), make([]float64, n)
	for i := range n {
		s[i] = 0.3 + 1.5*rng.NormFloat64()
		if rng.Float64() < Sigmoid(a*s[i]+b) {
			y[i] = 1
		}
	}
	return s, y
}

// TestPlattRecovers fits data generated from a known sigmoid. The maximum
// likelihood estimate is asymptotically normal with covariance the
// inverse Fisher information I^-1, I = sum_i p_i (1 - p_i) [s_i^2 s_i;
// s_i 1] at the true parameters; with n = 20000 rows the standard errors
// are about 0.03 (A) and 0.02 (B). The test allows 5 standard errors
// (a chance of about 6e-7 per parameter for a fresh sample; the sample is
// seeded). Platt's smoothed targets move them by O(1/n), under 0.01 of a
// standard error.
func TestPlattRecovers(t *testing.T) {
	const a, b, n = 2.0, -1.0, 20000
	s, y := sigmoidData(rand.New(rand.NewPCG(5, 6)), n, a, b)
	p, err := FitPlatt(s, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	var iaa, iab, ibb float64
	for _, x := range s {
		q := Sigmoid(a*x + b)
		c := q * (1 - q)
		iaa, iab, ibb = iaa+c*x*x, iab+c*x, ibb+c
	}
	det := iaa*ibb - iab*iab
	seA, seB := math.Sqrt(ibb/det), math.Sqrt(iaa/det)
	if math.Abs(p.A-a) > 5*seA || math.Abs(p.B-b) > 5*seB {
		t.Errorf("Platt fit A = %g, B = %g; want %g +- %g, %g +- %g", p.A, p.B, a, 5*seA, b, 5*seB)
	}
	t.Logf("A = %.4f (se %.4f), B = %.4f (se %.4f)", p.A, seA, p.B, seB)
}

// plattGradient is the gradient of the negative log-likelihood with
// Platt's targets at (A, B), divided by the total weight: 0 at the fit.
func plattGradient(p *Platt, s, y, w []float64) (ga, gb float64) {
	nPos, nNeg := 0.0, 0.0
	for i := range y {
		if y[i] == 1 {
			nPos += weight(w, i)
		} else {
			nNeg += weight(w, i)
		}
	}
	for i, x := range s {
		tt := 1 / (nNeg + 2)
		if y[i] == 1 {
			tt = (nPos + 1) / (nPos + 2)
		}
		r := weight(w, i) * (p.Apply(x) - tt)
		ga, gb = ga+r*x, gb+r
	}
	return ga / (nPos + nNeg), gb / (nPos + nNeg)
}

// TestPlattOptimum checks the stationarity conditions of the fit on small
// weighted samples, separable ones included (the smoothed targets keep the
// optimum finite), and that weights are repeated rows. The gradient is
// a sum of n terms of order 1, so at the optimum it is 0 to rounding,
// far below the 1e-9 allowed; the weighted and repeated fits minimise the
// same function, so they agree to the solver's precision (1e-9).
func TestPlattOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 20 {
		n := 4 + rng.IntN(40)
		s, y := sigmoidData(rng, n, 3*rng.Float64()-1, rng.NormFloat64())
		y[0], y[1] = 0, 1
		w := make([]float64, n)
		counts := make([]int, n)
		var rs, ry []float64
		for i := range n {
			counts[i] = rng.IntN(3)
			if i < 2 {
				counts[i] = 1
			}
			w[i] = float64(counts[i])
			for range counts[i] {
				rs, ry = append(rs, s[i]), append(ry, y[i])
			}
		}
		if trial%4 == 0 { // separable
			for i := range s {
				s[i] = math.Abs(s[i]) + 0.1
				if y[i] == 0 {
					s[i] = -s[i]
				}
			}
			rs, ry = nil, nil
			for i := range n {
				for range counts[i] {
					rs, ry = append(rs, s[i]), append(ry, y[i])
				}
			}
		}
		pw, err := FitPlatt(s, y, w)
		if err != nil {
			t.Fatal(err)
		}
		ga, gb := plattGradient(pw, s, y, w)
		if math.Abs(ga) > 1e-9 || math.Abs(gb) > 1e-9 {
			t.Errorf("trial %d: gradient (%g, %g) at the fit %+v", trial, ga, gb, pw)
		}
		pr, err := FitPlatt(rs, ry, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(pw.A-pr.A) > 1e-9*max(1, math.Abs(pr.A)) || math.Abs(pw.B-pr.B) > 1e-9*max(1, math.Abs(pr.B)) {
			t.Errorf("trial %d: weighted fit %+v, repeated rows %+v", trial, pw, pr)
		}
	}
	// Scores scaled by 1000: A / 1000, the same B (the fit standardises).
	s, y := sigmoidData(rng, 500, 1, 0.5)
	p1, _ := FitPlatt(s, y, nil)
	for i := range s {
		s[i] *= 1000
	}
	p2, _ := FitPlatt(s, y, nil)
	if math.Abs(p2.A*1000-p1.A) > 1e-9 || math.Abs(p2.B-p1.B) > 1e-9 {
		t.Errorf("scaled scores: %+v, unscaled %+v", p2, p1)
	}
	// Constant scores: 3 positives and 1 negative have targets 4/5 and
	// 1/3, mean (2.4 + 1/3)/4 = 41/60, so A = 0 and B = log(41/19).
	p, err := FitPlatt([]float64{2, 2, 2, 2}, []float64{1, 1, 1, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.A != 0 || math.Abs(p.B-math.Log(41.0/19)) > 1e-12 {
		t.Errorf("constant scores: %+v, want A 0, B %g", p, math.Log(41.0/19))
	}
}

func TestIsotonicByHand(t *testing.T) {
	// Scores 1..6 with labels 0 1 0 0 1 1. PAV: 0 | 1 | 0 violates, pool
	// 1, 0 to 1/2; then 0 violates, pool to 1/3 over scores 2..4; 1 | 1
	// pool to 1 over 5..6. Knots (1, 0), (2, 1/3), (4, 1/3), (5, 1), (6, 1).
	x := []float64{4, 1, 6, 2, 5, 3} // unsorted on purpose
	y := []float64{0, 0, 1, 1, 1, 0}
	c, err := FitIsotonic(x, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantX := []float64{1, 2, 4, 5, 6}
	wantY := []float64{0, 1.0 / 3, 1.0 / 3, 1, 1}
	if !slices.Equal(c.X, wantX) || !close(c.Y, wantY, 1e-15) {
		t.Fatalf("knots %v %v, want %v %v", c.X, c.Y, wantX, wantY)
	}
	// Interpolation and clipping: 1.5 is half way from 0 to 1/3, 4.5 half
	// way from 1/3 to 1, 3 inside the pooled block, 0 and 7 clip.
	for _, v := range [][2]float64{{1.5, 1.0 / 6}, {4.5, 2.0 / 3}, {3, 1.0 / 3}, {0, 0}, {7, 1}, {1, 0}, {6, 1}} {
		if got := c.Apply(v[0]); math.Abs(got-v[1]) > 1e-15 {
			t.Errorf("Apply(%g) = %g, want %g", v[0], got, v[1])
		}
	}
	if !math.IsNaN(c.Apply(math.NaN())) {
		t.Error("Apply(NaN) is not NaN")
	}
	// Weight 3 on the positive at score 2: 1 (w 3) | 0 pools to 3/4, the
	// next 0 to 3/5 over 2..4. Knots (1, 0), (2, 3/5), (4, 3/5), (5, 1),
	// (6, 1).
	w := []float64{1, 1, 1, 3, 1, 1}
	c, err = FitIsotonic(x, y, w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.X, wantX) || !close(c.Y, []float64{0, 0.6, 0.6, 1, 1}, 1e-15) {
		t.Errorf("weighted knots %v %v", c.X, c.Y)
	}
	// Tied scores are one point: scores 1, 1, 2 with labels 1, 0, 0 are the
	// points (1, 1/2, weight 2) and (2, 0), pooled to 1/3.
	c, err = FitIsotonic([]float64{1, 1, 2}, []float64{1, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.X, []float64{1, 2}) || !close(c.Y, []float64{1.0 / 3, 1.0 / 3}, 1e-15) {
		t.Errorf("tied knots %v %v", c.X, c.Y)
	}
	// A weight of 0 drops its row: without row 3 (the positive at 2) the
	// labels are 0 0 0 1 1 over scores 1, 3, 4, 5, 6.
	w[3] = 0
	c, err = FitIsotonic(x, y, w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.X, []float64{1, 4, 5, 6}) || !close(c.Y, []float64{0, 0, 1, 1}, 0) {
		t.Errorf("zero weight knots %v %v", c.X, c.Y)
	}
}

func close(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// miscalibrated draws n rows with true probability p ~ U(0, 1), label
// ~ Bernoulli(p) and score p^3, a probability that is much too low.
func miscalibrated(rng *rand.Rand, n int) (s, y []float64) {
	s, y = make([]float64, n), make([]float64, n)
	for i := range n {
		p := rng.Float64()
		s[i] = p * p * p
		if rng.Float64() < p {
			y[i] = 1
		}
	}
	return s, y
}

// TestCalibrationImproves fits both calibrators on 4000 miscalibrated rows
// and scores 4000 others. Brier of the raw score p^3 is E[p(1-p)] +
// E[(p - p^3)^2] = 1/6 + 8/105 = 0.243, of perfect calibration 1/6 =
// 0.167: isotonic must recover most of the gap (below 0.18, a sampling
// error of about 0.003), Platt, whose sigmoid cannot match the map
// p^(1/3) exactly, must beat the raw score by 0.03.
func TestCalibrationImproves(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sFit, yFit := miscalibrated(rng, 4000)
	sTest, yTest := miscalibrated(rng, 4000)
	raw, err := metrics.BinaryBrier(sTest, yTest, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Method{MethodPlatt, MethodIsotonic} {
		c, err := Fit(m, sFit, yFit, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, len(sTest))
		for i, s := range sTest {
			p[i] = c.Apply(s)
		}
		br, err := metrics.BinaryBrier(p, yTest, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: Brier %.4f, raw %.4f", m, br, raw)
		if br > raw-0.03 || (m == MethodIsotonic && br > 0.18) {
			t.Errorf("%s: Brier %.4f, raw scores %.4f", m, br, raw)
		}
	}
}

// TestIsotonicMonotone checks on random data with ties and weights that
// the fitted function is nondecreasing, valid, and a least-squares fit no
// worse than any pooling of the same points into a constant (the mean).
func TestIsotonicMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 50 {
		n := 2 + rng.IntN(100)
		s, y, w := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			s[i] = float64(rng.IntN(20))
			y[i] = float64(rng.IntN(2))
			w[i] = rng.Float64() + 0.01
		}
		y[0], y[1] = 0, 1
		c, err := FitIsotonic(s, y, w)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(-1)
		for x := -1.0; x <= 21; x += 0.125 {
			v := c.Apply(x)
			if v < prev {
				t.Fatalf("not monotone at %g: %g after %g", x, v, prev)
			}
			prev = v
		}
		sse, sseMean, mean, tw := 0.0, 0.0, 0.0, 0.0
		for i := range n {
			mean, tw = mean+w[i]*y[i], tw+w[i]
		}
		mean /= tw
		for i := range n {
			d := c.Apply(s[i]) - y[i]
			sse += w[i] * d * d
			sseMean += w[i] * (mean - y[i]) * (mean - y[i])
		}
		if sse > sseMean+1e-12 {
			t.Fatalf("isotonic fit SSE %g above the constant fit's %g", sse, sseMean)
		}
	}
}

// multiData draws n rows of 3 classes with noisy one-vs-rest scores.
func multiData(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	scores := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		c := rng.IntN(3)
		y[i] = float64(c)
		for j := range 3 {
			v := -1 + 0.8*rng.NormFloat64()
			if j == c {
				v += 2
			}
			scores.Set(i, j, v)
		}
	}
	return scores, y
}

// TestMulticlass checks that calibrated rows are probability distributions:
// entries in [0, 1] summing to 1 within 1e-12 (k = 3 divisions by the same
// sum leave errors of a few ulps).
func TestMulticlass(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	scores, y := multiData(rng, 600)
	classes := []float64{0, 1, 2}
	for _, m := range []Method{MethodPlatt, MethodIsotonic} {
		mc, err := FitMulticlass(m, scores, classes, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mc.Validate(); err != nil {
			t.Fatal(err)
		}
		test, _ := multiData(rng, 200)
		test.Set(0, 0, 50) // far outside the fitted range
		test.Set(1, 0, -50)
		test.Set(1, 1, -50)
		test.Set(1, 2, -50)
		p, err := mc.Apply(test)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			sum := 0.0
			for j := range 3 {
				v := p.At(i, j)
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%s row %d: probability %g", m, i, v)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("%s row %d sums to %.17g", m, i, sum)
			}
		}
	}
	if _, err := FitMulticlass(MethodPlatt, scores, classes, make([]float64, 600), nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("a class absent from the labels: %v", err)
	}
	if _, err := FitMulticlass(MethodPlatt, scores, []float64{0, 1}, y, nil); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("classes of the wrong length: %v", err)
	}
}

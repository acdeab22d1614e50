package calibrate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// stairData draws n scores uniform on (-2, 2) and labels whose
// probability is a staircase of the score, flat within each step and
// jumping between them (0.1 below -0.7, 0.5 up to 0.7, 0.9 above): a
// monotone map no sigmoid follows.
func stairData(rng *rand.Rand, n int) (s, y []float64) {
	s, y = make([]float64, n), make([]float64, n)
	for i := range n {
		s[i] = -2 + 4*rng.Float64()
		if rng.Float64() < stair(s[i]) {
			y[i] = 1
		}
	}
	return s, y
}

func stair(s float64) float64 {
	switch {
	case s < -0.7:
		return 0.1
	case s < 0.7:
		return 0.5
	}
	return 0.9
}

// checkRule checks that a Choice's method follows its own numbers.
func checkRule(t *testing.T, name string, c Choice) {
	t.Helper()
	if c.Folds < 2 || !(c.Platt > 0) || !(c.Isotonic > 0) || !(c.SE >= 0) {
		t.Fatalf("%s: implausible choice %+v", name, c)
	}
	if got := decide(c.Platt, c.Isotonic, c.SE); got != c.Method {
		t.Errorf("%s: method %v, the rule gives %v on %+v", name, c.Method, got, c)
	}
	t.Logf("%s: %v (%s)", name, c.Method, c.Reason())
}

// On 150 rows of truly sigmoid data Platt's two parameters fit the map and
// isotonic regression's steps only add variance: Platt. On 6000 rows of a
// staircase map, Platt's best sigmoid misses the flat steps by far more
// than 1% of log-loss (the staircase's entropy is 0.454 nats a row; the
// seeded run gives Platt 0.488, isotonic 0.466, 4.5% lower at 3 standard
// errors): isotonic, by at least 3%.
func TestChooseMethodPicks(t *testing.T) {
	s, y := sigmoidData(rand.New(rand.NewPCG(1, 2)), 150, 2, -1)
	c, err := ChooseMethod(s, y, nil, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	checkRule(t, "sigmoid, 150 rows", c)
	if c.Method != MethodPlatt {
		t.Errorf("sigmoid data on 150 rows: chose %v (%s)", c.Method, c.Reason())
	}

	s, y = stairData(rand.New(rand.NewPCG(3, 4)), 6000)
	c, err = ChooseMethod(s, y, nil, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	checkRule(t, "staircase, 6000 rows", c)
	if c.Method != MethodIsotonic || c.Isotonic > 0.97*c.Platt {
		t.Errorf("staircase data on 6000 rows: chose %v (%s), want isotonic at least 3%% better", c.Method, c.Reason())
	}

	// Weight 2 on every row is the unweighted choice: the same folds and
	// fits, but for Platt's smoothed targets (n+1)/(n+2), which move with
	// the weighted counts (by 1e-7 here; 1e-5 allowed).
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 2
	}
	cw, err := ChooseMethod(s, y, w, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	if cw.Method != c.Method || math.Abs(cw.Platt-c.Platt) > 1e-5 || math.Abs(cw.Isotonic-c.Isotonic) > 1e-12 {
		t.Errorf("weights 2: %+v, unweighted %+v", cw, c)
	}
}

// The rule: isotonic only when at least 1% and more than one standard
// error better.
func TestChooseRule(t *testing.T) {
	for _, tc := range []struct {
		platt, iso, se float64
		want           Method
	}{
		{0.30, 0.28, 0.005, MethodIsotonic}, // 6.7% lower, 4 SE
		{0.30, 0.28, 0.03, MethodPlatt},     // 6.7% lower, under 1 SE
		{0.30, 0.28, 0.02, MethodPlatt},     // exactly 1 SE: not more
		{0.30, 0.2985, 1e-6, MethodPlatt},   // 0.5% lower: too little
		{0.30, 0.297, 1e-6, MethodIsotonic}, // exactly 1% lower
		{0.30, 0.31, 0.001, MethodPlatt},    // isotonic worse
		{0.30, 0.30, 0, MethodPlatt},        // a tie
	} {
		if got := decide(tc.platt, tc.iso, tc.se); got != tc.want {
			t.Errorf("platt %g, isotonic %g, SE %g: %v, want %v", tc.platt, tc.iso, tc.se, got, tc.want)
		}
	}
}

// The folds are seeded: the same seed gives the same choice to the bit,
// another seed other folds (other losses).
func TestChooseMethodDeterministic(t *testing.T) {
	s, y := stairData(rand.New(rand.NewPCG(5, 6)), 800)
	a, err := ChooseMethod(s, y, nil, 5, 11)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ChooseMethod(s, y, nil, 5, 11)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("same seed: %+v then %+v", a, b)
	}
	c, err := ChooseMethod(s, y, nil, 5, 12)
	if err != nil {
		t.Fatal(err)
	}
	if c.Platt == a.Platt && c.Isotonic == a.Isotonic {
		t.Errorf("seeds 11 and 12 gave the same losses %+v", a)
	}
	checkRule(t, "seed 11", a)
	checkRule(t, "seed 12", c)
}

// Multiclass: a staircase per class on 6000 rows is isotonic's, smooth
// softmax data on 150 rows Platt's.
func TestChooseMulticlassMethod(t *testing.T) {
	classes := []float64{0, 1, 2}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 6000
	scores := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		u := -2 + 4*rng.Float64()
		// Class 0 likely below -0.7, 1 in the middle, 2 above 0.7; each
		// column rises with its class's probability.
		p := []float64{0.1, 0.1, 0.1}
		switch {
		case u < -0.7:
			p[0] = 0.8
		case u < 0.7:
			p[1] = 0.8
		default:
			p[2] = 0.8
		}
		scores.SetRow(i, []float64{-u, -math.Abs(u), u})
		r := rng.Float64()
		y[i] = 2
		if r < p[0] {
			y[i] = 0
		} else if r < p[0]+p[1] {
			y[i] = 1
		}
	}
	c, err := ChooseMulticlassMethod(scores, classes, y, nil, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkRule(t, "multiclass staircase", c)
	if c.Method != MethodIsotonic {
		t.Errorf("multiclass staircase on 6000 rows: chose %v (%s)", c.Method, c.Reason())
	}

	const m = 150
	small := mat.NewDense(m, 3, nil)
	ys := make([]float64, m)
	for i := range m {
		z := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		small.SetRow(i, z)
		e := []float64{math.Exp(2 * z[0]), math.Exp(2 * z[1]), math.Exp(2 * z[2])}
		r := rng.Float64() * (e[0] + e[1] + e[2])
		ys[i] = 2
		if r < e[0] {
			ys[i] = 0
		} else if r < e[0]+e[1] {
			ys[i] = 1
		}
	}
	c, err = ChooseMulticlassMethod(small, classes, ys, nil, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkRule(t, "multiclass softmax, 150 rows", c)
	if c.Method != MethodPlatt {
		t.Errorf("multiclass softmax on 150 rows: chose %v (%s)", c.Method, c.Reason())
	}
}

func TestChooseMethodErrors(t *testing.T) {
	s, y := sigmoidData(rand.New(rand.NewPCG(9, 10)), 60, 2, 0)
	nan := append([]float64(nil), s...)
	nan[3] = math.NaN()
	for _, tc := range []struct {
		name     string
		s, y, w  []float64
		k        int
		sentinel error
	}{
		{"empty", nil, nil, nil, 5, zonal.ErrEmpty},
		{"NaN score", nan, y, nil, 5, zonal.ErrNonFinite},
		{"short scores", s[:59], y, nil, 5, zonal.ErrShape},
		{"short weights", s, y, make([]float64, 59), 5, zonal.ErrShape},
		{"one fold", s, y, nil, 1, zonal.ErrParam},
		{"more folds than rows of a class", s, y, nil, 61, zonal.ErrParam},
		{"one class", s, make([]float64, 60), nil, 5, zonal.ErrParam},
	} {
		if _, err := ChooseMethod(tc.s, tc.y, tc.w, tc.k, 1); !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.sentinel)
		}
	}

	classes := []float64{0, 1}
	sm := mat.NewDense(60, 2, nil)
	for i, v := range s {
		sm.SetRow(i, []float64{-v, v})
	}
	nanm := mat.DenseCopyOf(sm)
	nanm.Set(4, 1, math.NaN())
	for _, tc := range []struct {
		name     string
		s        *mat.Dense
		y, w     []float64
		sentinel error
	}{
		{"empty", sm, nil, nil, zonal.ErrEmpty},
		{"nil scores", nil, y, nil, zonal.ErrParam},
		{"wrong rows", sm, y[:59], nil, zonal.ErrShape},
		{"short weights", sm, y, make([]float64, 59), zonal.ErrShape},
		{"NaN score", nanm, y, nil, zonal.ErrNonFinite},
		{"label outside classes", sm, append(append([]float64(nil), y[:59]...), 7), nil, zonal.ErrParam},
	} {
		if _, err := ChooseMulticlassMethod(tc.s, classes, tc.y, tc.w, 5, 1); !errors.Is(err, tc.sentinel) {
			t.Errorf("multiclass %s: %v, want %v", tc.name, err, tc.sentinel)
		}
	}
}

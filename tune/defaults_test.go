package tune

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

func TestMedianSigmaExact(t *testing.T) {
	// Points 0, 1, 2, 3 on a line: distances 1,1,1,2,2,3, median 1.5.
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	got, err := MedianSigma(x, 0, 1)
	if err != nil || got != 1.5 {
		t.Fatalf("MedianSigma = %g, %v; want 1.5", got, err)
	}
	// Mostly duplicates: 5 copies of 0 and one 4: 10 of 15 distances are 0;
	// the positive ones are all 4.
	dup := mat.NewDense(6, 1, []float64{0, 0, 0, 0, 0, 4})
	if got, err := MedianSigma(dup, 0, 1); err != nil || got != 4 {
		t.Fatalf("duplicates: %g, %v; want 4", got, err)
	}
}

func TestMedianSigmaSampled(t *testing.T) {
	x, _ := regData(400, 3, 8)
	exact, err := MedianSigma(x, 400*399/2, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := MedianSigma(x, 2000, 5)
	b, _ := MedianSigma(x, 2000, 5)
	c, _ := MedianSigma(x, 2000, 6)
	if a != b {
		t.Fatalf("same seed: %g then %g", a, b)
	}
	// 2000 pairs: the sample median's relative error is ~ 1/sqrt(2000) times a
	// density factor of order 1; 5% is several standard errors.
	for _, v := range []float64{a, c} {
		if math.Abs(v-exact) > 0.05*exact {
			t.Fatalf("sampled median %g far from exact %g", v, exact)
		}
	}
}

func TestSigmaErrors(t *testing.T) {
	same := mat.NewDense(5, 2, []float64{1, 2, 1, 2, 1, 2, 1, 2, 1, 2})
	if _, err := MedianSigma(same, 0, 0); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("identical rows: %v", err)
	}
	if _, err := MedianSigma(mat.NewDense(1, 2, nil), 0, 0); !errors.Is(err, zonal.ErrEmpty) {
		t.Fatalf("one row: %v", err)
	}
	if _, err := ScaleSigma(mat.NewDense(3, 2, []float64{4, 4, 4, 4, 4, 4})); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("constant: %v", err)
	}
	if _, err := ScaleSigma(mat.NewDense(1, 2, []float64{1, math.Inf(1)})); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("Inf: %v", err)
	}
}

// TestScaleSigma: zonal's Gaussian at ScaleSigma is scikit-learn's RBF
// kernel with gamma = 1 / (d var(X)).
func TestScaleSigma(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	// entries 0..5: mean 2.5, var 35/12; d = 2.
	gamma := 1 / (2 * 35.0 / 12)
	s, err := ScaleSigma(x)
	if err != nil {
		t.Fatal(err)
	}
	k := kernels.Gaussian{Sigma: s}
	a, b := []float64{0, 1}, []float64{4, 5}
	want := math.Exp(-gamma * 32)
	if got := k.Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Fatalf("k = %.17g, sklearn 'scale' gives %.17g", got, want)
	}
}

func TestAutoCenters(t *testing.T) {
	for _, c := range []struct {
		n     int
		limit int64
		want  int
		f32   bool
	}{
		{0, 0, 0, false},
		{1, 0, 1, false},
		{2, 0, 1, false},        // ceil(sqrt 2 ln 2) = 1
		{5, 0, 4, false},        // ceil(2.236 * 1.609) = 4
		{405, 0, 121, false},    // ceil(20.12 * 6.004) = 121 <= n
		{60000, 0, 2695, false}, // ceil(244.9 * 11.0)
		{60000, 8 * (100*100 + 60000*100), 100, false}, // budget for exactly M = 100
		{60000, 8*(100*100+60000*100) - 1, 99, false},  // one byte short of it
		{60000, 8*100*100 + 4*60000*100, 100, true},    // float32 K_nM: 4 bytes an entry
		{60000, 8 * (100*100 + 60000*100), 199, true},  // the float64 budget of M = 100 holds M = 199 in float32
	} {
		p := zonal.Float64
		if c.f32 {
			p = zonal.Float32
		}
		if got := AutoCenters(c.n, c.limit, p); got != c.want {
			t.Errorf("AutoCenters(%d, %d, %v) = %d, want %d", c.n, c.limit, p, got, c.want)
		}
	}
}

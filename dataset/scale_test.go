package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

func TestStandardizerMath(t *testing.T) {
	const n = 501
	rng := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(n, 4, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 3+2*rng.NormFloat64())
		x.Set(i, 1, 1e9+0.5*float64(i))  // large offset: cancellation trap
		x.Set(i, 2, 7.25)                // constant column
		x.Set(i, 3, 1e-200*float64(i%3)) // tiny values: squares underflow
	}
	s, err := FitStandardizer(x)
	if err != nil {
		t.Fatal(err)
	}
	// Column 1 is an arithmetic sequence: mean 1e9 + 0.5 (n-1)/2 and
	// population std 0.5 sqrt((n^2-1)/12) exactly. The inputs are exact in
	// float64. The mean is a sum of n values of size 1e9 (rounding error
	// about n eps 1e9 before the correction pass, ~1 eps after): 1e-15
	// relative. The residuals x - mean are then exact, so the std carries
	// only the rounding of n squares and a square root: 1e-14 relative
	// (observed 2e-16). A one-pass formula E[x^2] - E[x]^2 fails here: it
	// loses all digits (1e18 - 1e18).
	wantMean := 1e9 + 0.5*float64(n-1)/2
	wantStd := 0.5 * math.Sqrt(float64(n*n-1)/12)
	if math.Abs(s.Mean[1]-wantMean) > 1e-15*wantMean || math.Abs(s.Scale[1]-wantStd) > 1e-14*wantStd {
		t.Errorf("column 1: mean %v std %v, want %v %v", s.Mean[1], s.Scale[1], wantMean, wantStd)
	}
	if s.Mean[2] != 7.25 || s.Scale[2] != 1 {
		t.Errorf("constant column: mean %v scale %v, want 7.25 and 1", s.Mean[2], s.Scale[2])
	}
	// Column 3 takes 0, 1e-200, 2e-200 (167 of each): mean 1e-200, std
	// 1e-200*sqrt(2/3), found although (1e-200)^2 underflows to 0.
	if math.Abs(s.Mean[3]-1e-200) > 1e-14*1e-200 || math.Abs(s.Scale[3]-1e-200*math.Sqrt(2.0/3)) > 1e-14*1e-200 {
		t.Errorf("tiny column: mean %v std %v", s.Mean[3], s.Scale[3])
	}
	z := mat.NewDense(n, 4, nil)
	if err := s.ApplyTo(z, x); err != nil {
		t.Fatal(err)
	}
	// After Apply every non-constant column has mean 0 and population std 1;
	// the constant column is all zero. Errors are sums of n roundings of
	// O(1) values: 1e-12 is generous.
	for j := 0; j < 4; j++ {
		var m, v float64
		for i := 0; i < n; i++ {
			m += z.At(i, j)
		}
		m /= n
		for i := 0; i < n; i++ {
			v += (z.At(i, j) - m) * (z.At(i, j) - m)
		}
		std := math.Sqrt(v / n)
		wantStd := 1.0
		if j == 2 {
			wantStd = 0
		}
		if math.Abs(m) > 1e-12 || math.Abs(std-wantStd) > 1e-12 {
			t.Errorf("column %d after Apply: mean %v std %v", j, m, std)
		}
	}
	// In place gives the same as into dst; Inverse restores x (to rounding:
	// 1e-15 relative, 1e9 magnitudes in column 1).
	y := mat.DenseCopyOf(x)
	if err := s.Apply(y); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(y, z) {
		t.Fatal("Apply in place differs from ApplyTo")
	}
	if err := s.Inverse(y); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(y, x, 1e-15*1e9) {
		t.Fatal("Inverse(Apply(x)) != x")
	}
	// ApplyVec on one row matches Apply and allocates nothing.
	row := append([]float64(nil), x.RawRowView(3)...)
	if err := s.ApplyVec(row); err != nil {
		t.Fatal(err)
	}
	for j, v := range row {
		if v != z.At(3, j) {
			t.Fatalf("ApplyVec[%d] = %v, Apply %v", j, v, z.At(3, j))
		}
	}
	if a := testing.AllocsPerRun(100, func() { _ = s.ApplyVec(row) }); a != 0 {
		t.Errorf("ApplyVec allocates %v times", a)
	}
	// A non-Dense input fits the same.
	s2, err := FitStandardizer(x.T().T())
	if err != nil {
		t.Fatal(err)
	}
	for j := range s.Mean {
		if s2.Mean[j] != s.Mean[j] || s2.Scale[j] != s.Scale[j] {
			t.Fatal("Fit on a non-Dense matrix differs")
		}
	}
}

func TestStandardizerFitMatchesNaiveFormula(t *testing.T) {
	// On well-scaled data the textbook formulas are accurate to ~1e-15;
	// agreement to 1e-13 checks the careful version computes the same thing.
	rng := rand.New(rand.NewPCG(9, 9))
	x := mat.NewDense(200, 6, nil)
	for i := 0; i < 200; i++ {
		for j := 0; j < 6; j++ {
			x.Set(i, j, float64(j)+float64(j+1)*rng.NormFloat64())
		}
	}
	var s Standardizer
	if err := s.Fit(x); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 6; j++ {
		col := mat.Col(nil, j, x)
		var sum, sq float64
		for _, v := range col {
			sum += v
		}
		mean := sum / 200
		for _, v := range col {
			sq += (v - mean) * (v - mean)
		}
		std := math.Sqrt(sq / 200)
		if math.Abs(s.Mean[j]-mean) > 1e-13*(1+math.Abs(mean)) || math.Abs(s.Scale[j]-std) > 1e-13*std {
			t.Errorf("column %d: %v %v, naive %v %v", j, s.Mean[j], s.Scale[j], mean, std)
		}
	}
}

func TestScalerErrors(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{1, 2, math.NaN(), 4})
	var s Standardizer
	if err := s.Fit(x); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
	x.Set(1, 0, math.Inf(-1))
	if err := s.Fit(x); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("Inf: %v", err)
	}
	if s.Mean != nil {
		t.Error("failed Fit changed the Standardizer")
	}
	if err := s.Apply(mat.NewDense(1, 2, nil)); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Apply before Fit: %v", err)
	}
	if err := s.Fit(&mat.Dense{}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if err := s.Fit(mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(mat.NewDense(1, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong width: %v", err)
	}
	if err := s.ApplyTo(mat.NewDense(2, 2, nil), mat.NewDense(1, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("wrong dst: %v", err)
	}
	if err := s.ApplyVec(make([]float64, 3)); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("ApplyVec wrong length: %v", err)
	}
	var mm MinMaxScaler
	if err := mm.Fit(mat.NewDense(1, 1, []float64{math.NaN()})); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("MinMax NaN: %v", err)
	}
	if err := mm.Inverse(mat.NewDense(1, 1, nil)); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("MinMax Inverse before Fit: %v", err)
	}
}

func TestMinMaxScaler(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{
		1, -5, 2,
		3, 5, 2,
		2, 0, 2,
		-1, 1, 2,
	})
	var s MinMaxScaler
	if err := s.Fit(x); err != nil {
		t.Fatal(err)
	}
	z := mat.DenseCopyOf(x)
	if err := s.Apply(z); err != nil {
		t.Fatal(err)
	}
	// (x - min) / (max - min): exact here (denominators 4 and 10, the
	// constant column maps to 0).
	want := mat.NewDense(4, 3, []float64{
		0.5, 0, 0,
		1, 1, 0,
		0.75, 0.5, 0,
		0, 0.6, 0,
	})
	if !mat.Equal(z, want) {
		t.Fatalf("MinMax:\n%v", mat.Formatted(z))
	}
	if err := s.Inverse(z); err != nil || !mat.Equal(z, x) {
		t.Fatalf("Inverse: %v\n%v", err, mat.Formatted(z))
	}
	v := []float64{5, 0, 3}
	if err := s.ApplyVec(v); err != nil || v[0] != 1.5 || v[1] != 0.5 || v[2] != 1 {
		t.Fatalf("ApplyVec outside the training range: %v %v", v, err)
	}
	dst := mat.NewDense(4, 3, nil)
	if err := s.ApplyTo(dst, x); err != nil || !mat.Equal(dst, want) {
		t.Fatalf("ApplyTo: %v", err)
	}
}

func ExampleStandardizer() {
	train := mat.NewDense(4, 2, []float64{
		1, 10,
		2, 10,
		3, 10,
		4, 10,
	})
	var s Standardizer
	if err := s.Fit(train); err != nil {
		panic(err)
	}
	fmt.Printf("mean %v, scale %.4f\n", s.Mean, s.Scale)
	test := mat.NewDense(1, 2, []float64{5, 11})
	if err := s.Apply(test); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", test.RawRowView(0))
	// Output:
	// mean [2.5 10], scale [1.1180 1.0000]
	// [2.2361 1.0000]
}

// Values near MaxFloat64 of both signs: x - mean would overflow, yet the
// fitted mean and scale are finite and the standardized column has mean 0
// and population deviation 1 (to 1e-12).
func TestStandardizerExtremeValues(t *testing.T) {
	col := []float64{1e308, -1e308, 9e307, -0.5e308, 1.7e308, -1.7e308, 0}
	x := mat.NewDense(len(col), 1, slices.Clone(col))
	s, err := FitStandardizer(x)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(s.Scale[0]) || math.IsInf(s.Scale[0], 0) || math.IsNaN(s.Mean[0]) || s.Scale[0] == 1 {
		t.Fatalf("mean %g scale %g", s.Mean[0], s.Scale[0])
	}
	if err := s.Apply(x); err != nil {
		t.Fatal(err)
	}
	sum, sq := 0.0, 0.0
	for i := range col {
		v := x.At(i, 0)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("row %d standardized to %g", i, v)
		}
		sum += v
		sq += v * v
	}
	n := float64(len(col))
	if math.Abs(sum/n) > 1e-12 || math.Abs(sq/n-1) > 1e-12 {
		t.Errorf("standardized mean %g, variance %g", sum/n, sq/n)
	}
}

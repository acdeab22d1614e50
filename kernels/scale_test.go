package kernels

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

func TestCheckScale(t *testing.T) {
	x := randMatrix(71, 300, 4, 1)
	huge := mat.DenseCopyOf(x)
	huge.Scale(1e200, huge)
	same := mat.NewDense(50, 3, nil)
	for i := 0; i < 50; i++ {
		same.SetRow(i, []float64{500, 500, 500})
	}
	poly, _ := NewPolynomial(2, 1, 0)
	cases := []struct {
		name string
		k    Kernel
		x    mat.Matrix
		want error  // nil: accepted
		says string // part of the message
	}{
		{"gaussian on standardized data", Gaussian{1}, x, nil, ""},
		{"narrow but not underflowing", Gaussian{0.05}, x, nil, ""},
		{"identical rows, tiny sigma", Gaussian{1e-100}, same, nil, ""},
		{"one row", Gaussian{1e-100}, x.Slice(0, 1, 0, 4), nil, ""},
		{"sigma 1e-100", Gaussian{1e-100}, x, zonal.ErrParam, "sigma=1e-100"},
		{"laplacian sigma 1e-100", Laplacian{1e-100}, x, zonal.ErrParam, "median distance"},
		{"features 1e200", Gaussian{1}, huge, zonal.ErrNonFinite, "overflows"},
		{"polynomial overflow", Polynomial{Degree: 2, Gamma: 1e300, Coef0: 0}, x, zonal.ErrNonFinite, "is +Inf"},
		{"zero kernel", poly, mat.NewDense(5, 2, nil), zonal.ErrParam, "kernel matrix is zero"},
		{"NaN", Gaussian{1}, mat.NewDense(2, 1, []float64{1, 0 / zeroF()}), zonal.ErrNonFinite, "NaN"},
	}
	for _, c := range cases {
		err := CheckScale(c.k, c.x)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.says)
		}
	}
	// The Nystrom build refuses the underflowing kernel before K_CC.
	if _, err := NewNystrom(context.Background(), Gaussian{1e-100}, x, NystromOptions{Landmarks: 50}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("NewNystrom with sigma 1e-100: %v", err)
	}
}

func zeroF() float64 { return 0 }

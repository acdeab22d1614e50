package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

func randMatrix(seed uint64, n, d int, scale float64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 99))
	m := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			m.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return m
}

func allKernels(t *testing.T) []Kernel {
	t.Helper()
	must := func(k Kernel, err error) Kernel {
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	return []Kernel{
		must(NewGaussian(1.7)), must(NewGaussianGamma(0.2)), must(NewLaplacian(2.5)),
		must(NewPolynomial(3, 0.5, 1)), must(NewExpDot(2)), must(NewArcCosine(0)),
		must(NewArcCosine(1)), must(NewNTK(3)), must(NewDotProduct([]float64{1, 0.5, 0.25})),
	}
}

func TestKernelFormulas(t *testing.T) {
	x := []float64{0.3, -1.2, 0.5}
	y := []float64{1.1, 0.4, -0.2}
	d2, d1, ip := 0.0, 0.0, dot(x, y)
	for i := range x {
		d2 += (x[i] - y[i]) * (x[i] - y[i])
		d1 += math.Abs(x[i] - y[i])
	}
	nx, ny := math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y))
	th := math.Acos(ip / (nx * ny))
	g, _ := NewGaussianGamma(0.2)
	cases := []struct {
		k    Kernel
		want float64
	}{
		{Gaussian{Sigma: 1.7}, math.Exp(-d2 / (2 * 1.7 * 1.7))},
		{g, math.Exp(-0.2 * d2)},
		{Laplacian{Sigma: 2.5}, math.Exp(-d1 / 2.5)},
		{Polynomial{3, 0.5, 1}, math.Pow(0.5*ip+1, 3)},
		{ExpDot{2}, math.Exp(ip / 4)},
		{ArcCosine{0}, 1 - th/math.Pi},
		{ArcCosine{1}, nx * ny * (math.Sin(th) + (math.Pi-th)*math.Cos(th)) / math.Pi},
		{DotProduct{[]float64{1, 0.5, 0.25}}, 1 + 0.5*ip + 0.25*ip*ip},
	}
	for _, c := range cases {
		if got := c.k.Eval(x, y); math.Abs(got-c.want) > 1e-14*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%v: %.17g, want %.17g", c.k, got, c.want)
		}
	}
	// NTK of depth 1 by hand: Theta_1 = t kappa_0(t) + kappa_1(t).
	tt := ip / (nx * ny)
	want := nx * ny * (tt*(1-th/math.Pi) + (math.Sin(th)+(math.Pi-th)*tt)/math.Pi)
	if got := (NTK{1}).Eval(x, y); math.Abs(got-want) > 1e-14 {
		t.Errorf("ntk(1) = %.17g, want %.17g", got, want)
	}
	if got := (NTK{4}).Kappa(1); math.Abs(got-5) > 1e-14 {
		t.Errorf("kappa_4(1) = %g, want L+1 = 5", got)
	}
	if g.Gamma() != 0.2 && math.Abs(g.Gamma()-0.2) > 1e-16 {
		t.Errorf("Gamma() = %g", g.Gamma())
	}
}

func TestKernelBadParams(t *testing.T) {
	for _, err := range []error{
		func() error { _, e := NewGaussian(0); return e }(),
		func() error { _, e := NewGaussian(-1); return e }(),
		func() error { _, e := NewGaussian(math.NaN()); return e }(),
		func() error { _, e := NewGaussianGamma(math.Inf(1)); return e }(),
		func() error { _, e := NewLaplacian(0); return e }(),
		func() error { _, e := NewPolynomial(0, 1, 1); return e }(),
		func() error { _, e := NewPolynomial(2, 0, 1); return e }(),
		func() error { _, e := NewPolynomial(2, 1, -1); return e }(),
		func() error { _, e := NewExpDot(-2); return e }(),
		func() error { _, e := NewArcCosine(2); return e }(),
		func() error { _, e := NewNTK(0); return e }(),
		func() error { _, e := NewDotProduct(nil); return e }(),
		func() error { _, e := NewDotProduct([]float64{1, -1}); return e }(),
		func() error { _, e := NewDotProduct([]float64{0, 0}); return e }(),
	} {
		if !errors.Is(err, zonal.ErrParam) {
			t.Errorf("got %v, want zonal.ErrParam", err)
		}
	}
}

func TestKernelMarshalRoundTrip(t *testing.T) {
	ks := append(allKernels(t), mustGZK(t, Gaussian{1.5}, 4, 6, 3))
	x, y := []float64{0.1, 0.2, -0.3, 0.4}, []float64{-0.5, 0.3, 0.2, 0.1}
	for _, k := range ks {
		b, err := k.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		k2, err := UnmarshalKernel(k.Kind(), b)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if k2.String() != k.String() || k2.Eval(x, y) != k.Eval(x, y) {
			t.Errorf("round trip of %v gave %v", k, k2)
		}
	}
	if _, err := UnmarshalKernel("nope", nil); !errors.Is(err, zonal.ErrUnknown) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := UnmarshalKernel("gaussian", []byte{1, 2}); err == nil {
		t.Error("malformed encoding accepted")
	}
}

func mustGZK(t *testing.T, k Kernel, d, q, s int) *GZK {
	t.Helper()
	g, err := NewGZKFor(k, d, q, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestMatrixIntoMatchesEval(t *testing.T) {
	// Gemm-based kernels reassociate the inner products: 1e-12 relative.
	nx := 300 // > blockRows: several parallel blocks
	if testing.Short() {
		nx = 150 // still two blocks
	}
	x := randMatrix(1, nx, 5, 0.7)
	y := randMatrix(2, 17, 5, 0.7)
	x.Set(3, 0, 0) // a row with a zero: no special case
	zero := mat.NewDense(1, 5, nil)
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		for _, k := range append(allKernels(t), mustGZK(t, Gaussian{1.2}, 5, 8, 4)) {
			for _, yy := range []mat.Matrix{y, x, zero, y.T().T()} {
				ny, _ := yy.Dims()
				dst := mat.NewDense(nx, ny, nil)
				in := yy
				if yy == x {
					in = x // x == y path
				}
				if err := MatrixInto(context.Background(), dst, k, x, in, Options{Backend: b}); err != nil {
					t.Fatal(err)
				}
				xr, yr := make([]float64, 5), make([]float64, 5)
				for i := 0; i < nx; i++ {
					mat.Row(xr, i, x)
					for j := 0; j < ny; j++ {
						mat.Row(yr, j, yy)
						want := k.Eval(xr, yr)
						tol := 1e-12
						switch k.(type) {
						case ArcCosine, NTK:
							// arccos(1-delta) ~ sqrt(2 delta): round-off
							// delta ~ 1e-15 in the cosine of x with itself
							// becomes ~5e-8 in the angle.
							tol = 1e-7
						}
						if got := dst.At(i, j); math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
							t.Fatalf("%v (%d,%d): %.17g, want %.17g", k, i, j, got, want)
						}
					}
				}
			}
		}
	})
}

func TestMatrixIntoErrors(t *testing.T) {
	b := backend.Default()
	k := Gaussian{1}
	x := randMatrix(1, 4, 3, 1)
	if err := MatrixInto(context.Background(), mat.NewDense(4, 4, nil), k, x, randMatrix(2, 4, 2, 1), Options{Backend: b}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("d mismatch: %v", err)
	}
	if err := MatrixInto(context.Background(), mat.NewDense(3, 4, nil), k, x, x, Options{Backend: b}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("dst shape: %v", err)
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 1, math.NaN())
	if err := MatrixInto(context.Background(), mat.NewDense(4, 4, nil), k, bad, x, Options{Backend: b}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
	bad.Set(2, 1, math.Inf(-1))
	if err := MatrixInto(context.Background(), mat.NewDense(4, 4, nil), k, x, bad, Options{Backend: b}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("Inf: %v", err)
	}
	if _, err := Matrix(context.Background(), k, &mat.Dense{}, x, Options{Backend: b}); !errors.Is(err, zonal.ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
}

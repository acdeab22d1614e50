package kernels

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// TestNystromBasisSameKernel: the eigenbasis map has Rank() features, the
// same rank as the m-column map of the same landmarks, and the same
// approximate kernel Z Z^T. A wide Gaussian on 60 landmarks makes K_CC
// numerically singular, so the rank is below m and the two maps differ in
// width. Tolerance: both Gram matrices are K_xC K_CC^+ K_Cx formed from the
// same eigendecomposition; their difference is the rounding of the two
// products, each about m eps |K_xC|^2 |diag(f)|^2, and f reaches
// (mu_max m 2^-52)^(-1/2) at the floor, so the bound is taken relative to
// the largest entry and loose (1e-6) where the retained eigenvalues are
// tiny; a wrong rotation or dropped column differs at order 1.
func TestNystromBasisSameKernel(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend.Backend) {
		x := randMatrix(21, 200, 4, 1)
		land := dataset.MustSelectRows[mat.Matrix](x, seq(60))
		for _, sigma := range []float64{0.5, 40} {
			k := Gaussian{sigma}
			full, err := NewNystromFromLandmarks(context.Background(), k, land, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			nb, err := NewNystromBasis(context.Background(), k, land, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			if nb.Dim() != nb.Rank() || nb.Rank() != full.Rank() || full.Dim() != 60 || !nb.Basis() || full.Basis() {
				t.Fatalf("sigma %g: basis Dim %d Rank %d, full Dim %d Rank %d", sigma, nb.Dim(), nb.Rank(), full.Dim(), full.Rank())
			}
			if sigma == 40 && nb.Rank() >= 60 {
				t.Fatalf("sigma 40: rank %d, want a numerically singular K_CC (rank < 60)", nb.Rank())
			}
			gf, gb := gram(transform(t, full, x)), gram(transform(t, nb, x))
			var e mat.Dense
			e.Sub(gf, gb)
			tol := 1e-6 * mat.Norm(gf, math.Inf(1))
			if v := mat.Norm(&e, math.Inf(1)); !(v <= tol) {
				t.Fatalf("sigma %g (rank %d): |Z Z^T - Zb Zb^T| = %g, want <= %g", sigma, nb.Rank(), v, tol)
			}
		}
	})
}

// TestNystromBasisMarshal: a basis map survives MarshalBinary (versions 3
// and 4, dense and sparse landmarks) with the same features bit for bit,
// and its Transform32 agrees with Transform to float32 accuracy; a header
// whose rank exceeds m is refused.
func TestNystromBasisMarshal(t *testing.T) {
	b := backend.Default()
	x := randMatrix(22, 80, 5, 1)
	dense := dataset.MustSelectRows[mat.Matrix](x, seq(30))
	sparse := dataset.NewCSRFromDense(dense)
	for name, land := range map[string]mat.Matrix{"dense": dense, "sparse": sparse} {
		nb, err := NewNystromBasis(context.Background(), Gaussian{2}, land, Options{Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		want := transform(t, nb, x)
		data, err := nb.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if wantV := map[string]byte{"dense": 3, "sparse": 4}[name]; data[0] != wantV {
			t.Fatalf("%s: encoding version %d, want %d", name, data[0], wantV)
		}
		m2, err := UnmarshalMap(nb.Kind(), data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m2.Dim() != nb.Dim() || !mat.Equal(transform(t, m2, x), want) {
			t.Fatalf("%s: decoded basis map differs (Dim %d against %d)", name, m2.Dim(), nb.Dim())
		}
		if _, err := UnmarshalMap(nb.Kind(), data[:len(data)-8]); err == nil {
			t.Fatalf("%s: truncated encoding accepted", name)
		}
		// Transform32: float32 kernel block and product; within 1e-4 of
		// the largest feature (the float32 error bound of Transform32 with
		// m = 30 and f at most a few hundred here).
		z32 := blas32.General{Rows: 80, Cols: nb.Dim(), Stride: nb.Dim(), Data: make([]float32, 80*nb.Dim())}
		if err := nb.Transform32(z32, x); err != nil {
			t.Fatal(err)
		}
		top := mat.Norm(want, math.Inf(1))
		for i := 0; i < 80; i++ {
			for j := 0; j < nb.Dim(); j++ {
				if d := math.Abs(float64(z32.Data[i*nb.Dim()+j]) - want.At(i, j)); d > 1e-4*top {
					t.Fatalf("%s: Transform32 (%d,%d) = %g, Transform %g", name, i, j, z32.Data[i*nb.Dim()+j], want.At(i, j))
				}
			}
		}
	}
	// A dense basis encoding whose rank field is m + 1: refused.
	nb, _ := NewNystromBasis(context.Background(), Gaussian{2}, dense, Options{Backend: b})
	data, _ := nb.MarshalBinary()
	bad := append([]byte(nil), data...)
	_, rest, err := readKernel(bad[1:])
	if err != nil {
		t.Fatal(err)
	}
	off := len(bad) - len(rest) + 16 // the rank, after m and d
	copy(bad[off:off+8], putFloats(nil, 31))
	if _, err := UnmarshalMap(nb.Kind(), bad); err == nil {
		t.Fatal("rank > m accepted")
	}
}

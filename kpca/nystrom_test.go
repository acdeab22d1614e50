package kpca

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// TestNystromMatchesBatch: after every landmark the incremental Nystrom
// approximation K_XC K_CC^+ K_CX equals the batch one built from a batch
// eigendecomposition of K_CC with the same landmarks. The landmarks are well
// separated (K_CC well conditioned, so K_CC^+ is a continuous function of the
// data); an error E in K_CC^{-1} moves the approximation by ~|K_XC|^2 |E|, and
// with cond(K_CC) <= 1e3 and eigenvalues exact to ~1e-13 relative the
// approximations agree to 1e-9 relative to |K|; a missing or wrong landmark
// changes them at the 1e-2 level.
func TestNystromMatchesBatch(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			k := gaussian(t, 1)
			x := randPoints(21, 60, 3, 1)
			c := randPoints(22, 25, 3, 2)
			ny, err := NewNystrom(k, 3, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			kx := kernelMatrix(t, k, x)
			kn := mat.Norm(kx, 2)
			for j := 0; j < 25; j++ {
				if err := ny.Add(c.RawRowView(j)); err != nil {
					t.Fatal(err)
				}
				im, err := ny.Map()
				if err != nil {
					t.Fatal(err)
				}
				bm, err := NewNystromMap(context.Background(), k, c.Slice(0, j+1, 0, 3), Options{Backend: b})
				if err != nil {
					t.Fatal(err)
				}
				if im.Dim() != bm.Dim() {
					t.Fatalf("landmarks %d: rank %d vs batch %d", j+1, im.Dim(), bm.Dim())
				}
				ai, _ := im.Approximation(x)
				ab, _ := bm.Approximation(x)
				var diff mat.Dense
				diff.Sub(ai, ab)
				if dd := mat.Norm(&diff, 2) / kn; dd > 1e-9 {
					t.Fatalf("landmarks %d: incremental vs batch %g", j+1, dd)
				}
				// Independent check of the identity: K_XC K_CC^{-1} K_CX by a
				// dense solve.
				if j == 24 {
					kcc := kernelMatrix(t, k, c)
					kxc := mat.NewDense(60, 25, nil)
					if err := kernels.MatrixInto(context.Background(), kxc, k, x, c, kernels.Options{Backend: b}); err != nil {
						t.Fatal(err)
					}
					var sol, want mat.Dense
					if err := sol.Solve(kcc, kxc.T()); err != nil {
						t.Fatal(err)
					}
					want.Mul(kxc, &sol)
					diff.Sub(ai, &want)
					if dd := mat.Norm(&diff, 2) / kn; dd > 1e-9 {
						t.Fatalf("vs dense solve: %g", dd)
					}
				}
			}
			vals, _ := ny.Eigen()
			bv, _ := batchEig(t, kernelMatrix(t, k, c))
			for j := range vals {
				if math.Abs(vals[j]-bv[len(bv)-1-j]) > eigTol*bv[0] {
					t.Fatalf("K_CC eigenvalue %d: %g vs %g", j, vals[j], bv[len(bv)-1-j])
				}
			}
		})
	}
}

// TestNystromExactOnLandmarks: with every point a landmark and K full rank,
// the approximation is K itself; with duplicated landmarks (singular K_CC) the
// pseudo-inverse still reproduces K on the landmarks.
func TestNystromExactOnLandmarks(t *testing.T) {
	k := gaussian(t, 1)
	x := randPoints(23, 12, 2, 1)
	ny, _ := NewNystrom(k, 2, Options{})
	for i := 0; i < 12; i++ {
		if err := ny.Add(x.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if err := ny.Add(x.RawRowView(i)); err != nil { // duplicate
			t.Fatal(err)
		}
	}
	if ny.Len() != 24 {
		t.Fatalf("len %d", ny.Len())
	}
	nm, err := ny.Map()
	if err != nil {
		t.Fatal(err)
	}
	if nm.Dim() != 12 {
		t.Fatalf("numerical rank %d, want 12", nm.Dim())
	}
	a, _ := nm.Approximation(x)
	var diff mat.Dense
	diff.Sub(a, kernelMatrix(t, k, x))
	// cond(K) of 12 random Gaussian points is < 1e4: 1e-10 is safe.
	if d := mat.Norm(&diff, 2); d > 1e-10 {
		t.Fatalf("|K~ - K|_F = %g", d)
	}
}

func TestNystromMapRoundTrip(t *testing.T) {
	k := gaussian(t, 1.5)
	c := randPoints(24, 8, 3, 1)
	ny, _ := NewNystrom(k, 3, Options{})
	for i := 0; i < 8; i++ {
		if err := ny.Add(c.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
	}
	nm, _ := ny.Map()
	var pm kernels.PersistentMap = nm
	data, err := pm.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	fm, err := kernels.UnmarshalMap(pm.Kind(), data)
	if err != nil {
		t.Fatal(err)
	}
	x := randPoints(25, 5, 3, 1)
	f1 := mat.NewDense(5, nm.Dim(), nil)
	f2 := mat.NewDense(5, fm.Dim(), nil)
	if err := nm.Transform(f1, x); err != nil {
		t.Fatal(err)
	}
	if err := fm.Transform(f2, x); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(f1, f2) {
		t.Fatal("decoded map differs")
	}
	for _, bad := range [][]byte{nil, data[:10], data[:len(data)-1], append(append([]byte{}, data...), 0)} {
		if _, err := kernels.UnmarshalMap(MapKind, bad); !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("malformed data of length %d: %v", len(bad), err)
		}
	}
	other := append([]byte{}, data...)
	other[0] = 2 // version (little-endian uint32 first)
	if _, err := kernels.UnmarshalMap(MapKind, other); !errors.Is(err, zonal.ErrVersion) {
		t.Fatalf("version 2: %v", err)
	}
}

func TestNystromErrors(t *testing.T) {
	k := gaussian(t, 1)
	ny, _ := NewNystrom(k, 2, Options{})
	if _, err := ny.Map(); !errors.Is(err, zonal.ErrState) {
		t.Fatalf("empty map: %v", err)
	}
	if err := ny.Add([]float64{1}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("short: %v", err)
	}
	if err := ny.Add([]float64{1, math.NaN()}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN: %v", err)
	}
	if _, err := NewNystrom(nil, 2, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("nil kernel: %v", err)
	}
	ny.Add([]float64{0, 0})
	nm, _ := ny.Map()
	if err := nm.Transform(mat.NewDense(1, 1, nil), mat.NewDense(1, 3, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("transform width: %v", err)
	}
	if err := nm.Transform(mat.NewDense(2, 1, nil), mat.NewDense(1, 2, nil)); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("transform dst: %v", err)
	}
	for _, o := range []Options{{MeanAdjust: true}, {Components: 2}, {RCond: -1}, {RCond: math.NaN()}} {
		if _, err := NewNystrom(k, 2, o); !errors.Is(err, zonal.ErrParam) {
			t.Fatalf("options %+v: %v", o, err)
		}
		if _, err := NewNystromMap(context.Background(), k, mat.NewDense(1, 2, nil), o); !errors.Is(err, zonal.ErrParam) {
			t.Fatalf("NewNystromMap options %+v: %v", o, err)
		}
	}
	if _, err := NewNystromMap(context.Background(), k, &mat.Dense{}, Options{}); !errors.Is(err, zonal.ErrEmpty) {
		t.Fatalf("no landmarks: %v", err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewNystromMap(cctx, k, mat.NewDense(2, 2, []float64{0, 0, 1, 1}), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

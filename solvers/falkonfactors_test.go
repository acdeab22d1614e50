package solvers

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// hideTriangles hides backend.TriangleSolver: the generic CholeskyLower and
// TriSolveUpper run.
type hideTriangles struct{ backend.Backend }

// TestFalkonFactors checks the packed preconditioner factors against their
// definitions, on every backend and on the generic path, for M below, at and
// across the panel height: T^T T = K_MM + (eps M + jitter) I and A^T A =
// T T^T / M + lambda I, and op(F) X = B after each solve, in the infinity
// norm relative to the right side's. Cholesky and the triangular solves are
// backward stable (error O(M u) |F||F^T|, about 1e-13 at M = 300 for these
// entries of size <= 1); 1e-10 leaves room for the reference products and
// is still far below what a wrong triangle, a missed diagonal swap or a
// transposed solve gives (O(1)). solveT must leave A's diagonal in place.
func TestFalkonFactors(t *testing.T) {
	ctx := context.Background()
	k, _ := kernels.NewGaussian(1.5)
	for _, name := range backend.Names() {
		b0, _ := backend.ByName(name)
		for bname, be := range map[string]backend.Backend{name: b0, name + "/generic": hideTriangles{b0}} {
			for _, M := range []int{1, 2, 7, 130, 300} {
				x, _ := synth(M, 4, uint64(M))
				const lambda = 1e-3
				f, jit, err := newFalkonFactors(ctx, be, k, x, M, lambda, nil)
				if err != nil {
					t.Fatalf("%s M=%d: %v", bname, M, err)
				}
				tm := mat.NewDense(M, M, nil) // T, upper
				at := mat.NewDense(M, M, nil) // A^T, lower
				for i := 0; i < M; i++ {
					for j := 0; j < M; j++ {
						v := f.p.Data[i*f.p.Stride+j]
						switch {
						case j > i:
							tm.Set(i, j, v)
						case j < i:
							at.Set(i, j, v)
						default:
							tm.Set(i, i, f.dT[i])
							at.Set(i, i, f.dA[i])
							if v != f.dA[i] {
								t.Fatalf("%s M=%d: diagonal %d holds %v, want A's %v", bname, M, i, v, f.dA[i])
							}
						}
					}
				}
				kmm := mat.NewDense(M, M, nil)
				if err := kernels.MatrixInto(ctx, kmm, k, x, x, kernels.Options{}); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < M; i++ {
					kmm.Set(i, i, kmm.At(i, i)+1e-14*float64(M)+jit)
				}
				var ttt, tt, ata mat.Dense
				ttt.Mul(tm.T(), tm)
				checkClose(t, bname, M, "T^T T vs K_MM + eps I", &ttt, kmm)
				tt.Mul(tm, tm.T())
				tt.Scale(1/float64(M), &tt)
				for i := 0; i < M; i++ {
					tt.Set(i, i, tt.At(i, i)+lambda)
				}
				ata.Mul(at, at.T())
				checkClose(t, bname, M, "A^T A vs T T^T / M + lambda I", &ata, &tt)

				// Solves: op(F) X = B for each factor and transpose.
				rhs, _ := synth(M, 3, 99)
				for _, c := range []struct {
					what  string
					solve func(blas.Transpose, blas64.General)
					f     mat.Matrix
				}{{"T", f.solveT, tm}, {"A", f.solveA, at.T()}} {
					for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
						xs := mat.DenseCopyOf(rhs)
						c.solve(tr, xs.RawMatrix())
						var back mat.Dense
						if tr == blas.NoTrans {
							back.Mul(c.f, xs)
						} else {
							back.Mul(c.f.T(), xs)
						}
						checkClose(t, bname, M, "solve "+c.what, &back, rhs)
					}
				}
				for i := 0; i < M; i++ {
					if f.p.Data[i*f.p.Stride+i] != f.dA[i] {
						t.Fatalf("%s M=%d: solveT left diagonal %d at %v, want A's %v", bname, M, i, f.p.Data[i*f.p.Stride+i], f.dA[i])
					}
				}
			}
		}
	}
}

func checkClose(t *testing.T, bname string, M int, what string, got, want *mat.Dense) {
	t.Helper()
	scale := mat.Norm(want, math.Inf(1))
	var d mat.Dense
	d.Sub(got, want)
	if e := mat.Norm(&d, math.Inf(1)); e > 1e-10*scale {
		t.Fatalf("%s M=%d: %s: error %g (scale %g)", bname, M, what, e, scale)
	}
}

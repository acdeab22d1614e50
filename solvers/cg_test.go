package solvers

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

func randSPD(n int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 2))
	b := mat.NewDense(n, n, nil)
	for i := range b.RawMatrix().Data {
		b.RawMatrix().Data[i] = rng.NormFloat64()
	}
	a := mat.NewDense(n, n, nil)
	a.Mul(b.T(), b)
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+float64(i+1)) // spread the spectrum
	}
	return a
}

func TestCGSolvesSPD(t *testing.T) {
	const n, k = 60, 3
	a := randSPD(n, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	b := mat.NewDense(n, k, nil)
	for i := range b.RawMatrix().Data {
		b.RawMatrix().Data[i] = rng.NormFloat64()
	}
	// Jacobi preconditioner.
	jac := OperatorFunc{N: n, F: func(_ context.Context, dst, x blas64.General) error {
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				dst.Data[i*dst.Stride+j] = x.Data[i*x.Stride+j] / a.At(i, i)
			}
		}
		return nil
	}}
	for _, tc := range []struct {
		name string
		pre  Operator
	}{{"plain", nil}, {"jacobi", jac}} {
		t.Run(tc.name, func(t *testing.T) {
			x := mat.NewDense(n, k, nil)
			const tol = 1e-10
			res, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{Tol: tol, Precond: tc.pre, RecomputeEvery: 7})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Fatalf("not converged after %d iterations, history %v", res.Iterations, res.History)
			}
			if len(res.History) != res.Iterations+1 {
				t.Fatalf("history has %d entries for %d iterations", len(res.History), res.Iterations)
			}
			// The true residual meets the tolerance (up to the rounding of
			// the recurrence, a factor 10 of slack).
			var r mat.Dense
			r.Mul(a, x)
			r.Sub(b, &r)
			for j := 0; j < k; j++ {
				rel := mat.Norm(r.ColView(j), 2) / mat.Norm(b.ColView(j), 2)
				if rel > 10*tol {
					t.Errorf("column %d: true relative residual %g > %g", j, rel, 10*tol)
				}
			}
		})
	}
}

func TestCGIndefinite(t *testing.T) {
	const n = 10
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		a.Set(i, i, float64(i+1))
	}
	a.Set(4, 4, -3)
	b := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		b.Set(i, 0, 1)
	}
	x := mat.NewDense(n, 1, nil)
	_, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{})
	if !errors.Is(err, zonal.ErrNotPositiveDefinite) {
		t.Fatalf("err = %v, want zonal.ErrNotPositiveDefinite", err)
	}
	// A negative definite preconditioner is caught too.
	a.Set(4, 4, 5)
	neg := OperatorFunc{N: n, F: func(_ context.Context, dst, x blas64.General) error {
		for i := 0; i < n; i++ {
			dst.Data[i*dst.Stride] = -x.Data[i*x.Stride]
		}
		return nil
	}}
	x.Zero()
	if _, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{Precond: neg}); !errors.Is(err, zonal.ErrNotPositiveDefinite) {
		t.Fatalf("indefinite preconditioner: err = %v, want zonal.ErrNotPositiveDefinite", err)
	}
}

func TestCGZeroRHSAndCancel(t *testing.T) {
	a := randSPD(8, 5)
	b := mat.NewDense(8, 2, nil)
	b.Set(0, 1, 1)
	x := mat.NewDense(8, 2, nil)
	res, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{})
	if err != nil || !res.Converged {
		t.Fatalf("err %v converged %v", err, res.Converged)
	}
	if mat.Norm(x.ColView(0), 2) != 0 {
		t.Fatal("zero right-hand side gave a nonzero solution")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x.Zero()
	if _, err := CG(ctx, DenseOperator{A: a}, b, x, CGOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: err = %v", err)
	}
	if _, err := CG(context.Background(), DenseOperator{A: a}, mat.NewDense(7, 2, nil), x, CGOptions{}); !errors.Is(err, zonal.ErrShape) {
		t.Fatalf("shape: err = %v", err)
	}
	b.Set(3, 0, math.NaN())
	if _, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Fatalf("NaN: err = %v", err)
	}
}

// TestCGProgressAndBudget: one "cg" report per iteration whose Residual is
// the History entry; work arrays over the budget are refused before CG
// starts; bad operators are errors, not panics.
func TestCGProgressAndBudget(t *testing.T) {
	const n, k = 30, 2
	a := randSPD(n, 9)
	b := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		b.Set(i, 0, 1)
		b.Set(i, 1, float64(i%3))
	}
	x := mat.NewDense(n, k, nil)
	var reps []zonal.Progress
	res, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{
		Options: Options{Progress: func(p zonal.Progress) { reps = append(reps, p) }},
		MaxIter: 12, FixedIter: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 12 || len(reps) != 12 {
		t.Fatalf("%d iterations, %d reports; want 12 and 12", res.Iterations, len(reps))
	}
	for i, p := range reps {
		if p.Stage != "cg" || p.Done != i+1 || p.Total != 12 || p.Residual != res.History[i+1] {
			t.Fatalf("report %d = %+v, want cg %d/12 residual %g", i, p, i+1, res.History[i+1])
		}
	}

	// 3 work arrays of n x k floats = 1440 bytes (4 with a preconditioner).
	x.Zero()
	if _, err := CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{Options: Options{MemoryBudget: 1440}}); err != nil {
		t.Fatalf("budget of exactly the work arrays: %v", err)
	}
	x.Zero()
	_, err = CG(context.Background(), DenseOperator{A: a}, b, x, CGOptions{Options: Options{MemoryBudget: 1439}})
	if !errors.Is(err, zonal.ErrTooLarge) || !strings.Contains(err.Error(), "1440 bytes") {
		t.Fatalf("over budget: err = %v, want zonal.ErrTooLarge naming 1440 bytes", err)
	}

	if _, err := CG(context.Background(), nil, b, x, CGOptions{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("nil operator: %v", err)
	}
	if _, err := CG(context.Background(), DenseOperator{A: a}, nil, x, CGOptions{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("nil b: %v", err)
	}
	rect := OperatorFunc{N: n, F: DenseOperator{A: mat.NewDense(n, n+1, nil)}.Apply}
	if _, err := CG(context.Background(), rect, b, x, CGOptions{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("non-square DenseOperator: %v", err)
	}
}

// TestCGZeroStart: from x = 0 CG takes r = b without applying the
// operator, so a run of T fixed iterations applies it T times plus once
// for the final true residual; from a nonzero x, once more for the
// initial residual. The zero start's iterates are those of the operator
// applied to 0 (the same bits: A 0 = 0 exactly).
func TestCGZeroStart(t *testing.T) {
	const n, k, T = 25, 2, 6
	a := randSPD(n, 11)
	b := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		b.Set(i, 0, float64(i%4)-1)
		b.Set(i, 1, 0.5)
	}
	calls := 0
	op := OperatorFunc{N: n, F: func(ctx context.Context, dst, x blas64.General) error {
		calls++
		return DenseOperator{A: a}.Apply(ctx, dst, x)
	}}
	run := func(x *mat.Dense) (int, CGResult) {
		calls = 0
		res, err := CG(context.Background(), op, b, x, CGOptions{MaxIter: T, FixedIter: true})
		if err != nil {
			t.Fatal(err)
		}
		return calls, res
	}
	x0 := mat.NewDense(n, k, nil)
	c0, r0 := run(x0)
	x1 := mat.NewDense(n, k, nil)
	x1.Set(3, 1, 1e-3)
	c1, _ := run(x1)
	if r0.Iterations != T || c1 != c0+1 {
		t.Fatalf("%d iterations; %d applications from 0 and %d from a nonzero start, want one fewer from 0", r0.Iterations, c0, c1)
	}
	if c0 > T+1 {
		t.Fatalf("%d applications for %d iterations from 0, want at most %d", c0, T, T+1)
	}
	// The reference: the operator applied to the zero start.
	ref := mat.NewDense(n, k, nil)
	r := mat.NewDense(n, k, nil)
	if err := (DenseOperator{A: a}).Apply(context.Background(), r.RawMatrix(), ref.RawMatrix()); err != nil {
		t.Fatal(err)
	}
	r.Sub(b, r)
	if !mat.Equal(r, b) {
		t.Fatal("b - A 0 differs from b")
	}
}

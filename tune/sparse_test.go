package tune

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// sparsify zeroes about 70% of the entries of x (seeded by position), so
// that the CSR of the result is genuinely sparse.
func sparsify(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if (i*7+j*13)%10 < 3 {
				out.Set(i, j, x.At(i, j))
			}
		}
	}
	return out
}

// The defaults and every method read the same numbers from a CSR as from
// its dense copy: the tables agree to 1e-9 relative (kernel entries differ
// by the order of the sparse sums only; the systems are well conditioned at
// these lambdas) and the same setting wins.
func TestSearchSparseMatchesDense(t *testing.T) {
	xd, y := digits(t, 240)
	xd = sparsify(xd)
	xs := dataset.NewCSRFromDense(xd)
	for _, f := range []func(mat.Matrix) (float64, error){
		func(x mat.Matrix) (float64, error) { return MedianSigma(x, 500, 3) },
		ScaleSigma,
	} {
		a, err1 := f(xd)
		b, err2 := f(xs)
		if err1 != nil || err2 != nil || math.Abs(a-b) > 1e-12*a {
			t.Fatalf("default sigma: dense %g (%v), CSR %g (%v)", a, err1, b, err2)
		}
	}
	for _, o := range []SearchOptions{
		{Method: MethodExact},
		{Method: MethodRidge, Map: MapNystrom, Sizes: []int{60}},
		{Method: MethodFalkon, Sizes: []int{60}, Criterion: CriterionGCV},
		{Method: MethodParK, Cells: 2, Sizes: []int{60}, Folds: 3},
		{Method: MethodExact, Rows: 150, Refit: true},
	} {
		o.Seed, o.Lambdas = 3, []float64{1e-5, 1e-2}
		rd, err := Search(context.Background(), xd, y, o)
		if err != nil {
			t.Fatalf("%s dense: %v", o.Method, err)
		}
		rs, err := Search(context.Background(), xs, y, o)
		if err != nil {
			t.Fatalf("%s CSR: %v", o.Method, err)
		}
		if len(rd.Rows) != len(rs.Rows) || rd.Best.Setting != rs.Best.Setting {
			t.Fatalf("%s: dense best %+v, CSR best %+v", o.Method, rd.Best.Setting, rs.Best.Setting)
		}
		for i := range rd.Rows {
			a, b := rd.Rows[i].Mean, rs.Rows[i].Mean
			if math.Abs(a-b) > 1e-9*math.Max(1, math.Abs(a)) {
				t.Fatalf("%s row %d: dense %g, CSR %g", o.Method, i, a, b)
			}
		}
		if o.Refit {
			p1, p2 := make([]float64, 240), make([]float64, 240)
			if err := rd.Model.PredictLabels(p1, xd); err != nil {
				t.Fatal(err)
			}
			if err := rs.Model.Model.Predict(mat.NewDense(240, 10, nil), xs); err != nil {
				t.Fatalf("CSR refit does not predict CSR rows: %v", err)
			}
			if err := rs.Model.PredictLabels(p2, xd); err != nil {
				t.Fatal(err)
			}
			for i := range p1 {
				if p1[i] != p2[i] {
					t.Fatalf("refits disagree on row %d: %g vs %g", i, p1[i], p2[i])
				}
			}
		}
	}
	// Bad sparse input.
	bad := dataset.NewCSRFromDense(xd)
	bad.Val[3] = math.NaN()
	if _, err := Search(context.Background(), bad, y, SearchOptions{}); !errors.Is(err, zonal.ErrNonFinite) {
		t.Errorf("NaN in CSR: %v", err)
	}
	if _, err := Search(context.Background(), mat.Transpose{Matrix: xd.T()}, y, SearchOptions{}); !errors.Is(err, zonal.ErrShape) {
		t.Errorf("a mat.Transpose: %v", err)
	}
}

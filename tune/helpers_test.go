package tune

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/solvers"
)

// regData returns n rows of d uniform(-2, 2) inputs and the target
// sin(x_1) + x_2^2 / 2 + 0.1 noise (n x 1).
func regData(n, d int, seed uint64) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = 4*rng.Float64() - 2
		}
		v := math.Sin(row[0]) + 0.1*rng.NormFloat64()
		if d > 1 {
			v += row[1] * row[1] / 2
		}
		y.Set(i, 0, v)
	}
	return x, y
}

// digits returns the first n embedded digits, pixels divided by 16.
func digits(t *testing.T, n int) (*mat.Dense, *mat.Dense) {
	t.Helper()
	data, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	_, d := data.X.Dims()
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, data.X.At(i, j)/16)
		}
		y.Set(i, 0, data.Y[i])
	}
	return x, y
}

// without returns the rows of m except row i.
func without(m *mat.Dense, i int) *mat.Dense {
	n, _ := m.Dims()
	idx := make([]int, 0, n-1)
	for r := 0; r < n; r++ {
		if r != i {
			idx = append(idx, r)
		}
	}
	return dataset.MustSelectRows(m, idx)
}

// relClose reports |a-b| <= tol * max(1, |a|, |b|).
func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// sharedSet reads NAME.csv.gz from the shared data (skipping without it).
func sharedSet(t *testing.T, name string) *dataset.Data {
	t.Helper()
	d, err := dataset.ReadFile(shareddata.File(t, name+".csv.gz"), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func subset(t *testing.T, d *dataset.Data, rows []int) *dataset.Data {
	t.Helper()
	s, err := d.Subset(rows)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// standardize fits a Standardizer on the first matrix and applies it to all.
func standardize(t *testing.T, xs ...*mat.Dense) {
	t.Helper()
	st, err := dataset.FitStandardizer(xs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		if err := st.Apply(x); err != nil {
			t.Fatal(err)
		}
	}
}

// reloadsIdentically marshals and reloads the pipeline m, fails t unless
// the copy predicts the same labels on the rows of x, and returns them.
func reloadsIdentically(t *testing.T, m *solvers.Pipeline, x *mat.Dense) []float64 {
	t.Helper()
	b, err := solvers.MarshalPipeline(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := solvers.UnmarshalPipeline(b, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	p1, p2 := make([]float64, n), make([]float64, n)
	if err := m.PredictLabels(p1, x); err != nil {
		t.Fatal(err)
	}
	if err := back.PredictLabels(p2, x); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p1, p2) {
		t.Fatal("reloaded model predicts differently")
	}
	return p1
}

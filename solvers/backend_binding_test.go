package solvers

import (
	"bytes"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
)

// countingBackend is backend.Default() with its Gemm and Dot calls counted.
type countingBackend struct {
	backend.Backend
	gemm, dot atomic.Int64
}

func newCountingBackend() *countingBackend {
	return &countingBackend{Backend: backend.Default()}
}

func (c *countingBackend) Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, cm blas64.General) {
	c.gemm.Add(1)
	c.Backend.Gemm(tA, tB, alpha, a, b, beta, cm)
}

func (c *countingBackend) Dot(x, y blas64.Vector) float64 {
	c.dot.Add(1)
	return c.Backend.Dot(x, y)
}

// TestPredictUsesFitBackend: a fitted model's large-batch prediction (40
// rows > smallBatch, so kernel blocks and Gemm) runs on the backend of the
// fit; a loaded model runs on Load's Options.Backend, and on neither of the
// counted backends when Load is given none.
func TestPredictUsesFitBackend(t *testing.T) {
	x, y := synth(90, 3, 21)
	xt, _ := synth(40, 3, 22)
	k := testGauss{1.2}
	fm, err := newExactMap(k, x.Slice(0, 25, 0, 3).(*mat.Dense))
	if err != nil {
		t.Fatal(err)
	}
	fitBE := newCountingBackend()
	opts := Options{Backend: fitBE}
	fits := map[string]func() (Model, error){
		KindRidge:  func() (Model, error) { return FitRidge(bg, fm, x, y, 1e-3, RidgeOptions{Options: opts}) },
		KindKRR:    func() (Model, error) { return FitKRR(bg, k, x, y, 1e-3, opts) },
		KindFalkon: func() (Model, error) { return FitFalkon(bg, k, x, y, 1e-4, FalkonOptions{Options: opts, Centers: 20}) },
		KindParK: func() (Model, error) {
			return FitParK(bg, k, x, y, 1e-4, ParKOptions{Options: opts, Cells: 3, Centers: 30})
		},
	}
	for kind, fit := range fits {
		t.Run(kind, func(t *testing.T) {
			m, err := fit()
			if err != nil {
				t.Fatal(err)
			}
			before := fitBE.gemm.Load()
			want := predictAll(t, m, xt)
			if fitBE.gemm.Load() == before {
				t.Fatal("prediction of the fitted model did not run on the fit's backend")
			}
			p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, m)
			if err != nil {
				t.Fatal(err)
			}
			var file bytes.Buffer
			if err := Save(&file, p); err != nil {
				t.Fatal(err)
			}

			loadBE := newCountingBackend()
			q, err := Load(bytes.NewReader(file.Bytes()), Options{Backend: loadBE})
			if err != nil {
				t.Fatal(err)
			}
			f0 := fitBE.gemm.Load()
			got := predictAll(t, q.Model, xt)
			if loadBE.gemm.Load() == 0 || fitBE.gemm.Load() != f0 {
				t.Fatalf("loaded with Options.Backend: %d Gemm calls on it, %d on the fit's backend; want > 0 and 0",
					loadBE.gemm.Load(), fitBE.gemm.Load()-f0)
			}
			// Same backend implementation underneath: same bits.
			if !mat.Equal(got, want) {
				t.Fatalf("loaded model predicts differently, by %g", maxAbsDiff(got, want))
			}

			q, err = Load(bytes.NewReader(file.Bytes()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			l0 := loadBE.gemm.Load()
			_ = predictAll(t, q.Model, xt)
			if loadBE.gemm.Load() != l0 || fitBE.gemm.Load() != f0 {
				t.Fatal("a model loaded without a backend used one of the counted backends")
			}
		})
	}
}

// TestCGUsesOptionsBackend: CG's vector operations run on CGOptions.Backend.
func TestCGUsesOptionsBackend(t *testing.T) {
	a := randSPD(20, 5)
	b := mat.NewDense(20, 2, nil)
	for i := 0; i < 20; i++ {
		b.Set(i, 0, 1)
		b.Set(i, 1, float64(i))
	}
	x := mat.NewDense(20, 2, nil)
	cb := newCountingBackend()
	if _, err := CG(bg, DenseOperator{A: a}, b, x, CGOptions{Options: Options{Backend: cb}}); err != nil {
		t.Fatal(err)
	}
	if cb.dot.Load() == 0 {
		t.Fatal("CG did no dot product on CGOptions.Backend")
	}
	if cb.gemm.Load() != 0 {
		t.Fatal("DenseOperator without a Backend used CGOptions.Backend (it should use its own)")
	}
	x.Zero()
	op := newCountingBackend()
	if _, err := CG(bg, DenseOperator{A: a, Backend: op}, b, x, CGOptions{}); err != nil {
		t.Fatal(err)
	}
	if op.gemm.Load() == 0 {
		t.Fatal("DenseOperator did not use its Backend")
	}
}

package solvers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// TestPredictAllocFree: after warm-up, predicting one row or a small batch
// into a caller buffer allocates nothing, for every model kind (the ridge
// case uses the allocation-free exact Nystrom map of the tests).
func TestPredictAllocFree(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items on purpose under -race; allocation counts are checked without it")
	}
	ps, xt := fittedPipelines(t)
	for name, p := range ps {
		for _, rows := range []int{1, 8} {
			x := xt.Slice(0, rows, 0, 3).(*mat.Dense)
			out := mat.NewDense(rows, p.Outputs(), nil)
			labels := make([]float64, rows)
			if err := p.PredictOutputs(out, x); err != nil { // warm-up
				t.Fatal(err)
			}
			if err := p.PredictLabels(labels, x); err != nil {
				t.Fatal(err)
			}
			if a := testing.AllocsPerRun(50, func() { _ = p.PredictOutputs(out, x) }); a != 0 {
				t.Errorf("%s, %d rows: PredictOutputs allocates %g times", name, rows, a)
			}
			if a := testing.AllocsPerRun(50, func() { _ = p.PredictLabels(labels, x) }); a != 0 {
				t.Errorf("%s, %d rows: PredictLabels allocates %g times", name, rows, a)
			}
			if a := testing.AllocsPerRun(50, func() { _ = p.Model.Predict(out, x) }); a != 0 {
				t.Errorf("%s, %d rows: Model.Predict allocates %g times", name, rows, a)
			}
		}
	}
}

// TestPredictConcurrent: many goroutines predicting with one model get the
// serial answers (run with -race to check for data races).
func TestPredictConcurrent(t *testing.T) {
	ps, xt := fittedPipelines(t)
	n, _ := xt.Dims()
	for name, p := range ps {
		want := mat.NewDense(n, p.Outputs(), nil)
		if err := p.PredictOutputs(want, xt); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				out := mat.NewDense(1, p.Outputs(), nil)
				for it := 0; it < 20; it++ {
					i := (g*7 + it) % n
					if err := p.PredictOutputs(out, xt.Slice(i, i+1, 0, 3).(*mat.Dense)); err != nil {
						errs <- err
						return
					}
					for j := 0; j < p.Outputs(); j++ {
						// The single-row path sums directly, the batch
						// path by Gemm: rounding differences only.
						if d := out.At(0, j) - want.At(i, j); d > 1e-10 || d < -1e-10 {
							errs <- fmt.Errorf("%s row %d: %g vs %g", name, i, out.At(0, j), want.At(i, j))
							return
						}
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// BenchmarkPredictRow reports the single-row latency of every model kind
// (small models: 90 training rows, d = 3).
func BenchmarkPredictRow(b *testing.B) {
	ps, xt := fittedPipelines(b)
	for _, name := range []string{"ridge", "krr", "falkon", "park"} {
		p := ps[name]
		b.Run(name, func(b *testing.B) {
			x := xt.Slice(0, 1, 0, 3).(*mat.Dense)
			out := mat.NewDense(1, p.Outputs(), nil)
			b.ReportAllocs()
			for b.Loop() {
				_ = p.PredictOutputs(out, x)
			}
		})
	}
}

// BenchmarkPredictRowMNISTSized reports single-row latency at MNIST's
// dimension (d = 784, 10 outputs) with 1000 centres / features per model,
// on random data (latency does not depend on the values).
func BenchmarkPredictRowMNISTSized(b *testing.B) {
	const n, d, M, k = 1000, 784, 1000, 10
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.Float64()
	}
	y := mat.NewDense(n, k, nil)
	for i := range y.RawMatrix().Data {
		y.RawMatrix().Data[i] = rng.NormFloat64()
	}
	g, _ := kernels.NewGaussian(8.63)
	be := backend.Default()
	ny, err := kernels.NewNystromFromLandmarks(context.Background(), g, x, kernels.Options{Backend: be})
	if err != nil {
		b.Fatal(err)
	}
	models := map[string]func() (Model, error){
		"ridge-nystrom": func() (Model, error) { return FitRidge(bg, ny, x, y, 1e-6, RidgeOptions{}) },
		"krr":           func() (Model, error) { return FitKRR(bg, g, x, y, 1e-6, Options{}) },
		"falkon":        func() (Model, error) { return FitFalkon(bg, g, x, y, 1e-6, FalkonOptions{Centers: M, Iterations: 5}) },
		"park": func() (Model, error) {
			return FitParK(bg, g, x, y, 1e-6, ParKOptions{Cells: 4, Centers: M, Iterations: 5})
		},
	}
	for _, name := range []string{"ridge-nystrom", "krr", "falkon", "park"} {
		m, err := models[name]()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			row := x.Slice(0, 1, 0, d).(*mat.Dense)
			out := mat.NewDense(1, k, nil)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Predict(out, row)
			}
		})
	}
}

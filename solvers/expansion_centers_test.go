package solvers

import (
	"context"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// TestPredictBatchPreparedCenters: batches above DirectBatch rows take
// their kernel blocks from the centres prepared once
// (kernels.NewCenters), and their outputs are bit for bit those of the
// kernel blocks of kernels.MatrixInto against the centres followed by the
// product with alpha (what predictBatch computed before the centres were
// kept), for dense and CSR rows, on the first batch and on later ones,
// also from concurrent callers.
func TestPredictBatchPreparedCenters(t *testing.T) {
	x, y := synth(300, 5, 11)
	k := kernels.Gaussian{Sigma: 1.5}
	f, err := FitFalkon(bg, k, x, y, 1e-4, FalkonOptions{Centers: 60, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	e := f.exp
	be := backend.Default()
	// want is the former predictBatch: MatrixInto on the centres, then
	// mean + K alpha.
	want := func(xb mat.Matrix) *mat.Dense {
		n, _ := xb.Dims()
		m, _, kk := e.dims()
		kb := mat.NewDense(n, m, nil)
		if err := kernels.MatrixInto(context.Background(), kb, e.kern, xb, e.centers, kernels.Options{Backend: be}); err != nil {
			t.Fatal(err)
		}
		out := mat.NewDense(n, kk, nil)
		fillRows(out, e.mean)
		be.Gemm(blas.NoTrans, blas.NoTrans, 1, kb.RawMatrix(), e.alpha.RawMatrix(), 1, out.RawMatrix())
		return out
	}
	same := func(what string, got, want *mat.Dense) {
		t.Helper()
		r, c := want.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if math.Float64bits(got.At(i, j)) != math.Float64bits(want.At(i, j)) {
					t.Fatalf("%s: output (%d,%d) %v, MatrixInto's %v", what, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
	for _, n := range []int{DirectBatch + 1, 64, 200} {
		xb, _ := synth(n, 5, uint64(n))
		w := want(xb)
		for rep := 0; rep < 2; rep++ {
			same("dense", predictAll(t, f, xb), w)
		}
		same("csr", predictAll(t, f, dataset.NewCSRFromDense(xb)), want(dataset.NewCSRFromDense(xb)))
	}
	// A fresh model: its centres are prepared by the first of the
	// concurrent batches.
	if f, err = FitFalkon(bg, k, x, y, 1e-4, FalkonOptions{Centers: 60, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	e = f.exp
	xb, _ := synth(64, 5, 99)
	w := want(xb)
	var wg sync.WaitGroup
	outs := make([]*mat.Dense, 6)
	for g := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[g] = mat.NewDense(64, 1, nil)
			if err := f.Predict(outs[g], xb); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, o := range outs {
		same("concurrent", o, w)
	}
}

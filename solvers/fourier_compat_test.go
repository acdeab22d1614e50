package solvers

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

var updateFourierGolden = flag.Bool("update-fourier-golden", false, "rewrite testdata/ridge_fourier_mxd.zonal and its expected predictions")

// Files written, with -update-fourier-golden, by the build that kept the
// Fourier frequencies m x d in memory (commit b3708a2), before they were
// kept as W^T: the file layout did not change with the memory layout.
const (
	fourierGolden      = "ridge_fourier_mxd.zonal"
	fourierGoldenPreds = "ridge_fourier_mxd_predictions.json"
)

// fourierRows are n x d rows, half of their entries zero (as in images),
// with targets a smooth function of them.
func fourierRows(n, d int, seed uint64) (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x, y := mat.NewDense(n, d, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			if rng.Float64() < 0.5 {
				continue
			}
			v := rng.Float64()
			x.Set(i, j, v)
			s += v * float64(j%5-2)
		}
		y.Set(i, 0, math.Sin(s/4))
	}
	return x, y
}

// TestFourierRidgeFileCompat: a ridge pipeline on random Fourier features
// saved by the m x d build loads, saves again to the same bytes, and
// predicts what it predicted when written within 1e-12 (1 + max |y|) for
// single rows, a 40-row batch (the Gemm) and its 32-row head (axpys of
// the rows of W^T): the phases are now summed in another order, each
// within 2 gamma_d sum_l |x_l w_kl| of the old (about 1e-14 here), and the
// output moves by at most that times sum_j |W_j| / sqrt(m). A row alone
// and the same row in the 32-row batch give the same bits; in the 40-row
// batch the same to 1e-12 (1 + max |y|). The CSR form of the rows predicts
// the dense rows' outputs bit for bit one row at a time.
func TestFourierRidgeFileCompat(t *testing.T) {
	const d = 40
	xt, _ := fourierRows(40, d, 2)
	if *updateFourierGolden {
		x, y := fourierRows(300, d, 1)
		fm, err := kernels.NewFourierMap(kernels.Gaussian{Sigma: 1.5}, d, kernels.FourierOptions{Features: 128, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		r, err := FitRidge(context.Background(), fm, x, y, 1e-3, RidgeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPipeline(nil, Encoding{Task: TaskRegression}, r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalPipeline(p)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(singleRowOutputs(t, p, xt))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath(fourierGolden), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath(fourierGoldenPreds), js, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js, err := os.ReadFile(goldenPath(fourierGoldenPreds))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]float64
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	n := len(want)
	tol := 1e-12 * (1 + maxAbsRows(want))
	p, one := checkGoldenFile(t, goldenFile{name: fourierGolden, kind: KindRidge, x: xt, want: want, oneTol: tol, batchTol: tol})
	if _, ok := p.Model.(*Ridge).Map().(*kernels.FourierMap); !ok {
		t.Fatalf("loaded a ridge on %T, want a Fourier map", p.Model.(*Ridge).Map())
	}
	head := mat.NewDense(32, 1, nil)
	if err := p.PredictOutputs(head, xt.Slice(0, 32, 0, d)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 32; i++ {
		if head.At(i, 0) != one[i][0] {
			t.Errorf("row %d of the 32-row batch: %v, alone %v (want the same bits)", i, head.At(i, 0), one[i][0])
		}
	}
	csr := dataset.NewCSRFromDense(xt)
	for i := 0; i < n; i++ {
		row, err := dataset.SelectRows(csr, []int{i})
		if err != nil {
			t.Fatal(err)
		}
		o := mat.NewDense(1, 1, nil)
		if err := p.PredictOutputs(o, row); err != nil {
			t.Fatal(err)
		}
		if o.At(0, 0) != one[i][0] {
			t.Errorf("CSR row %d: %v, dense %v (want the same bits)", i, o.At(0, 0), one[i][0])
		}
	}
}

package main

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/kpca"
)

// normalPoints returns n x d standard normal points from seed.
func normalPoints(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return x
}

// TestGrow: the checkpoints come at the requested sizes, with drift at
// rounding level (1e-12, ~3 orders above what 40 points of updates give),
// batch eigenvalues agreeing to the same level, timings measured, and a
// "points" progress report after every added point.
func TestGrow(t *testing.T) {
	x := normalPoints(34, 40, 3)
	k, _ := kernels.NewGaussian(1.5)
	var cps []checkpoint
	reports := 0
	opts := kpca.Options{MeanAdjust: true, Progress: func(p zonal.Progress) {
		if p.Stage == "points" {
			reports++
			if p.Done != 5+reports || p.Total != 40 {
				t.Fatalf("progress %+v at report %d", p, reports)
			}
		}
	}}
	err := grow(context.Background(), growConfig{kernel: k, x: x, opts: opts, start: 5, points: 40, every: 10, batch: true},
		func(c checkpoint) error {
			cps = append(cps, c)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if reports != 35 {
		t.Fatalf("%d point reports, want 35", reports)
	}
	want := []int{5, 15, 25, 35, 40}
	if len(cps) != len(want) {
		t.Fatalf("%d checkpoints", len(cps))
	}
	for i, c := range cps {
		if c.points != want[i] || !c.meanAdjust || c.reorths != 0 {
			t.Fatalf("checkpoint %+v", c)
		}
		if c.relRecon > 1e-12 || c.orth > 1e-12 || c.batchRelDiffEigs > 1e-12 || math.IsNaN(c.batchSeconds) || !(c.totalSeconds > 0) {
			t.Fatalf("checkpoint %+v", c)
		}
		if i > 0 && (c.updateSeconds <= 0 || c.updateCPUSeconds < 0 || c.totalSeconds < cps[i-1].totalSeconds) {
			t.Fatalf("timings %+v after %+v", c, cps[i-1])
		}
	}

	cps = nil
	err = grow(context.Background(), growConfig{kernel: k, x: x, start: 1, points: 40, every: 13}, func(c checkpoint) error {
		cps = append(cps, c)
		return nil
	})
	if err != nil || len(cps) != 4 || cps[3].points != 40 || !math.IsNaN(cps[3].batchRelDiffEigs) { // 1, 14, 27, 40
		t.Fatalf("every 13: %v %+v", err, cps)
	}
	if err := grow(context.Background(), growConfig{kernel: k, x: x, start: 41, points: 40}, nil); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("start > points: %v", err)
	}
	stop := errors.New("stop")
	if err := grow(context.Background(), growConfig{kernel: k, x: x, start: 5, points: 40}, func(checkpoint) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("emit error: %v", err)
	}
}

// TestNystromErrorSeries: the error series falls to rounding level (1e-8:
// cond(K) eps for 30 Gaussian points) when every point is a landmark, the
// trace error never grows (K - K~ shrinks in the Loewner order as landmarks
// are added), and bad ranges and budgets are refused.
func TestNystromErrorSeries(t *testing.T) {
	k, _ := kernels.NewGaussian(1)
	x := normalPoints(26, 30, 2)
	errs, err := nystromErrors(context.Background(), k, x, 2, 30, 4, kpca.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 8 || errs[len(errs)-1].Landmarks != 30 { // 2, 6, ..., 26, 30
		t.Fatalf("%d checkpoints, last %+v", len(errs), errs[len(errs)-1])
	}
	last := errs[len(errs)-1]
	if last.Frobenius > 1e-8 || last.Spectral > 1e-8 || last.Trace > 1e-8 {
		t.Fatalf("all landmarks: %+v", last)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Trace > errs[i-1].Trace*(1+1e-9)+1e-12 {
			t.Fatalf("trace error grew: %+v -> %+v", errs[i-1], errs[i])
		}
		// 0 <= K - K~ <= K in the Loewner order, so every relative norm is
		// in [0, 1] (up to rounding).
		if e := errs[i]; !(e.Spectral >= 0 && e.Spectral <= 1+1e-12 && e.Frobenius >= 0 && e.Frobenius <= 1+1e-12) {
			t.Fatalf("relative errors outside [0, 1]: %+v", e)
		}
	}
	if _, err := nystromErrors(context.Background(), k, x, 5, 31, 1, kpca.Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("more landmarks than rows: %v", err)
	}
	if _, err := nystromErrors(context.Background(), k, x, 5, 20, 1, kpca.Options{MemoryBudget: 1000}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("budget: %v", err)
	}
}

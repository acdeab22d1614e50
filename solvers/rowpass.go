package solvers

import (
	"context"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
)

// rowPass runs one pass of a K_nM held in row blocks by workers (knm32,
// knm64): it transposes w into wT (kout x M, one column of w a row) when w
// is not nil, runs blocks(ctx, g, W, nb, w != nil) for the W workers used
// (worker 0 on the calling goroutine; nb blocks of rb rows in all, block s
// to worker s mod W), and sets out (M x kout) to the sum of the workers'
// acc (kout x M) in worker order, so that a pass sums in the same order on
// every run with the same number of workers.
func rowPass(ctx context.Context, out blas64.General, w *blas64.General, wT []float64, n, rb, workers int,
	acc func(g int) []float64, blocks func(ctx context.Context, g, W, nb int, useW bool) error) error {
	M, kout := out.Rows, out.Cols
	if w != nil {
		for j := 0; j < M; j++ {
			for c := 0; c < kout; c++ {
				wT[c*M+j] = w.Data[j*w.Stride+c]
			}
		}
	}
	nb := (n + rb - 1) / rb
	W := min(workers, nb)
	errs := make([]error, W)
	var wg sync.WaitGroup
	for g := 1; g < W; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = blocks(ctx, g, W, nb, w != nil)
		}()
	}
	errs[0] = blocks(ctx, 0, W, nb, w != nil)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for c := 0; c < kout; c++ {
		for j := 0; j < M; j++ {
			s := 0.0
			for g := 0; g < W; g++ {
				s += acc(g)[c*M+j]
			}
			out.Data[j*out.Stride+c] = s
		}
	}
	return nil
}

// applyBlock adds one block's share of a pass into a worker's acc
// (kout x M): for every output c, t = W_b K_b w_c (useW: dot(t, w_c) with
// w_c the row c of wT, then the rows' weights rw[i0:i0+m], if any) or
// t = yc's rows i0.. of column c, then acc_c += K_b^T t (axpy). tbuf holds
// kout runs of at least m values, one per output.
func applyBlock(acc, tbuf, wT, rw []float64, yc blas64.General, i0, m, kout int, useW bool,
	dot func(t, v []float64), axpy func(acc, t []float64)) {
	M := len(acc) / kout
	rb := len(tbuf) / kout
	for c := 0; c < kout; c++ {
		t := tbuf[c*rb : c*rb+m]
		if useW {
			dot(t, wT[c*M:(c+1)*M])
			if rw != nil {
				for i := range t {
					t[i] *= rw[i0+i]
				}
			}
		} else {
			for i := range t {
				t[i] = yc.Data[(i0+i)*yc.Stride+c]
			}
		}
		axpy(acc[c*M:(c+1)*M], t)
	}
}

package serve

import (
	"math"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Concurrent single-row requests are merged into blocks (the batch
// histogram sees blocks of more than one row) and every answer is the
// prediction of its row alone: exactly (labels, and outputs of blocks of at
// most 32 rows, which the solvers predict row by row) or, for blocks of 33
// to 64 rows (kernel blocks and Gemm in the solvers, which round in another
// order), within 1e-12 (1 + |y|); likewise without batching (exactly).
func TestBatchingExact(t *testing.T) {
	const n = 96
	xt, _ := synth(n, 4, 11)
	for name, p := range testModels(t) {
		labels, outs := want(t, p, xt)
		for _, maxBatch := range []int{32, 64, 1} {
			tol := 0.0
			if maxBatch > 32 {
				tol = 1e-12
			}
			s, ts, _ := newTestServer(t, p, Options{MaxBatch: maxBatch, BatchDelay: 20 * time.Millisecond, Workers: 1, MaxInFlight: 2 * n})
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					body := rowsJSON(t, xt.Slice(i, i+1, 0, 4).(*mat.Dense), true)
					code, b, _ := do(t, "POST", ts.URL+"/v1/predict", body)
					if code != 200 {
						t.Errorf("%s batch %d row %d: %d %s", name, maxBatch, i, code, b)
						return
					}
					a := decodeAnswer(t, b)
					if w := labels[i]; math.Abs(a.Predictions[0]-w) > tol*(1+math.Abs(w)) {
						t.Errorf("%s batch %d row %d: label %g, want %g", name, maxBatch, i, a.Predictions[0], labels[i])
					}
					for j, v := range a.Outputs[0] {
						if w := outs.At(i, j); math.Abs(v-w) > tol*(1+math.Abs(w)) {
							t.Errorf("%s batch %d row %d: output %d = %v, want %v (diff %g)", name, maxBatch, i, j, v, outs.At(i, j), v-outs.At(i, j))
						}
					}
				}()
			}
			// Hold the only worker slot until every row is queued, so that
			// blocks form whatever the timing. Admitted is not enough: a
			// request still decoding its body when the slot frees makes a
			// block of its own after BatchDelay (a loaded or -race run
			// decodes 96 bodies slowly), so with batching on wait for the
			// dispatcher to hold the first row and the queue the other
			// n-1, none still arriving.
			s.slots <- struct{}{}
			close(start)
			if s.batch != nil {
				waitFor(t, func() bool { return len(s.batch.queue) == n-1 && s.batch.arriving.Load() == 0 })
			} else {
				waitFor(t, func() bool { return gauge(t, s, "zonal_serve_in_flight_requests") == n })
			}
			<-s.slots
			wg.Wait()
			blocks := metric(t, s, "zonal_serve_batch_rows", "", "")
			switch {
			case maxBatch == 1 && blocks != 0:
				t.Errorf("%s: batching off but %g blocks made", name, blocks)
			case maxBatch > 1 && blocks != float64((n+maxBatch-1)/maxBatch):
				// Every row was queued: each block takes a full MaxBatch.
				t.Errorf("%s: %d queued rows made %g blocks of at most %d, want %d", name, n, blocks, maxBatch, (n+maxBatch-1)/maxBatch)
			}
			if got := counter(t, s, "zonal_serve_rows_predicted_total"); got != n {
				t.Errorf("%s batch %d: %g rows predicted, want %d", name, maxBatch, got, n)
			}
		}
	}
}

// An idle server answers a lone row at once: it does not wait BatchDelay
// for companions that are not coming.
func TestBatchingIdleNoDelay(t *testing.T) {
	p := testModels(t)["krr"]
	// A delay of 60 s against a bound of 10 s: a batcher that waits shows
	// a full minute, while a loaded machine (or -race) answering a local
	// request in over a second is no failure (the bound was 1 s against
	// a 2 s delay).
	const delay, bound = time.Minute, 10 * time.Second
	_, ts, _ := newTestServer(t, p, Options{BatchDelay: delay})
	do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3, 4]]}`) // warm up the connection
	for i := 0; i < 5; i++ {
		start := time.Now()
		if code, b, _ := do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3, 4]]}`); code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		if el := time.Since(start); el > bound {
			t.Fatalf("lone row took %v with BatchDelay %v: the batcher waited for nobody", el, delay)
		}
	}
}

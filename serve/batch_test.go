package serve

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
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

// A block does not wait for a request whose body is still on the network:
// with a BatchDelay of an hour, a single-row request that arrives while
// another connection has sent its headers but not its body is answered at
// once (the other request is admitted, not being decoded), on /v1/predict
// and on the v2 route. Before, reading a body counted as decoding, and the
// row would have waited for that body (here: the hour).
func TestBatchNoWaitForBodies(t *testing.T) {
	xt, _ := synth(2, 4, 3)
	p := testModels(t)["krr"]
	if p == nil {
		t.Fatal("no krr test model")
	}
	s, ts, _ := newTestServer(t, p, Options{BatchDelay: time.Hour, Workers: 1})
	v1 := rowsJSON(t, xt.Slice(0, 1, 0, 4).(*mat.Dense), false)
	v2 := fmt.Sprintf(`{"inputs":[{"name":"x","datatype":"FP64","shape":[1,4],"data":[%v,%v,%v,%v]}]}`,
		xt.At(1, 0), xt.At(1, 1), xt.At(1, 2), xt.At(1, 3))
	client := &http.Client{Timeout: 2 * time.Minute} // a failure, not a hang, if the row waits
	for _, c := range []struct{ path, body string }{{"/v1/predict", v1}, {"/v2/models/" + s.opts.Name + "/infer", v2}} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// Headers and half the body; the rest never comes.
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			c.path, len(c.body), c.body[:len(c.body)/2])
		waitFor(t, func() bool { return gauge(t, s, "zonal_serve_in_flight_requests") == 1 })
		resp, err := client.Post(ts.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatalf("%s: a row beside a body still on the network: %v", c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, b)
		}
		conn.Close()
		waitFor(t, func() bool { return gauge(t, s, "zonal_serve_in_flight_requests") == 0 })
	}
}

// A decoding that panics (the handlers recover) gives its arriving count
// back: the batcher's blocks would otherwise wait BatchDelay for a
// request that is gone, on every block from then on.
func TestDecodingPanicReleases(t *testing.T) {
	s, _, _ := newTestServer(t, testModels(t)["krr"], Options{})
	func() {
		defer func() { _ = recover() }()
		s.batch.decoding(func() {
			if got := s.batch.arriving.Load(); got != 1 {
				t.Errorf("arriving %d while decoding, want 1", got)
			}
			panic("a bad decoder")
		})
	}()
	if got := s.batch.arriving.Load(); got != 0 {
		t.Errorf("arriving %d after a panicking decode, want 0", got)
	}
}

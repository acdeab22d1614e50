package serve

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLoneRowInline: with batching on, a decoded single row that has no
// block to join (no other request being decoded, none queued) is
// predicted on the caller's goroutine: it is answered even with the
// batcher's dispatcher stopped, exactly as the model predicts the row
// alone. A row with another request still being decoded goes to the
// batcher (and gets errClosed from the stopped one), so rows that can
// share a block still do.
func TestLoneRowInline(t *testing.T) {
	for name, p := range testModels(t) {
		s, err := New(p, Options{Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if s.batch == nil {
			t.Fatalf("%s: batching is off with the default options", name)
		}
		s.batch.stop() // no dispatcher from here: only the inline path answers
		m := s.cur.Load()
		x, _ := synth(1, m.d, 31)
		want := mat.NewDense(1, m.k, nil)
		if err := p.PredictOutputs(want, x); err != nil {
			t.Fatal(err)
		}
		wantLabels := make([]float64, 1)
		if err := p.PredictLabels(wantLabels, x); err != nil {
			t.Fatal(err)
		}
		labels, outs := make([]float64, 1), make([]float64, m.k)
		st := s.met.stage("test", protoHTTP)
		if err := s.predict(context.Background(), m, x.RawMatrix().Data, 1, labels, outs, st); err != nil {
			t.Fatalf("%s: lone row: %v", name, err)
		}
		// Exactly: the same row-by-row prediction of the same row.
		if labels[0] != wantLabels[0] {
			t.Errorf("%s: label %g, the model predicts %g", name, labels[0], wantLabels[0])
		}
		for j, v := range want.RawRowView(0) {
			if outs[j] != v {
				t.Errorf("%s: output %d is %g, the model predicts %g", name, j, outs[j], v)
			}
		}
		s.batch.arriving.Add(1) // another request is being decoded
		if err := s.predict(context.Background(), m, x.RawMatrix().Data, 1, labels, outs, st); err != errClosed {
			t.Errorf("%s: a row with company arriving: %v, want the stopped batcher's %v", name, err, errClosed)
		}
		s.batch.arriving.Add(-1)
		s.closed.Store(true)
	}
}

// TestSingleRowAllocs bounds the allocations of a single-row prediction.
//
//   - Server.predict of one row (the inline path) allocates nothing: the
//     matrix headers and the model's row scratch are pooled and the
//     metrics are pre-resolved observers.
//   - The whole /v1/predict handler for one row, on a ResponseWriter that
//     reuses its header map, allocates nothing either: body, decoded row,
//     answers and response bytes come from the pooled scratch (warmed up
//     by the first request), the header values are shared and the
//     request counter is pre-resolved. The v2 infer handlers (JSON and
//     binary) allocate once: net/http's ServeMux stores the {name}
//     wildcard of /v2/models/{name}/infer for PathValue.
//
// testing.AllocsPerRun counts every goroutine's allocations, so a
// handoff to the batcher that allocated would show here too.
func TestSingleRowAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	p := testModels(t)["falkon"]
	s, err := New(p, Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := s.cur.Load()
	x, _ := synth(1, m.d, 32)
	row := x.RawMatrix().Data
	labels, outs := make([]float64, 1), make([]float64, m.k)
	st := s.met.stage("test", protoHTTP)
	ctx := context.Background()
	if a := testing.AllocsPerRun(100, func() {
		if err := s.predict(ctx, m, row, 1, labels, outs, st); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("predict, one row: %v allocations", a)
	}

	for route, rq := range benchRequests(1, m.d) {
		body := new(benchBody)
		req, err := http.NewRequest("POST", rq.path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = rq.header
		req.ContentLength = int64(len(rq.body))
		w := &benchWriter{h: http.Header{}}
		serveOne := func() {
			body.Reset(rq.body)
			w.reset()
			s.ServeHTTP(w, req)
			if w.code != http.StatusOK {
				t.Fatalf("%s: %d %s", route, w.code, w.body.String())
			}
		}
		serveOne()
		first := bytes.Clone(w.body.Bytes())
		bound := 0.0
		if route != "v1" {
			bound = 1
		}
		if a := testing.AllocsPerRun(100, serveOne); a > bound {
			t.Errorf("%s, one row: %v allocations per request, want at most %v", route, a, bound)
		}
		if !bytes.Equal(w.body.Bytes(), first) {
			t.Errorf("%s: the answer changed between requests: %q, then %q", route, first, w.body.Bytes())
		}
	}
}

package serve

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// POST /v1/reload swaps in the new file; a corrupt, truncated,
// incompatible (other d) or missing file keeps the old model, answers 422
// with the reason, is logged and counted.
func TestReload(t *testing.T) {
	ms := testModels(t)
	dir := t.TempDir()
	path := writeModel(t, dir, "m.zonal", ms["krr"])
	s, ts, logs := newTestServer(t, ms["krr"], Options{ModelFile: path, ReloadEndpoint: true})
	xt, _ := synth(3, 4, 12)
	ask := func() v1Answer {
		code, b, _ := do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, xt, true))
		if code != 200 {
			t.Fatalf("predict: %d %s", code, b)
		}
		return decodeAnswer(t, b)
	}
	wantB, _ := want(t, ms["b"], xt)
	wantA, _ := want(t, ms["krr"], xt)
	if a := ask(); fmt.Sprint(a.Predictions) != fmt.Sprint(wantA) {
		t.Fatalf("before reload %v, want %v", a.Predictions, wantA)
	}
	writeModel(t, dir, "m.zonal", ms["b"])
	code, b, _ := do(t, "POST", ts.URL+"/v1/reload", "")
	if code != 200 || !strings.Contains(b, `"kind":"krr"`) || !strings.Contains(b, `"task":"regression"`) {
		t.Fatalf("reload: %d %s", code, b)
	}
	if a := ask(); fmt.Sprint(a.Predictions) != fmt.Sprint(wantB) {
		t.Fatalf("after reload %v, want %v", a.Predictions, wantB)
	}

	good, err := solvers.MarshalPipeline(ms["b"])
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	_, wrongD := dimModel(t, 5)
	for name, c := range map[string]struct {
		content []byte
		msg     string
		is      error
	}{
		"garbage":   {[]byte("not a model"), "", zonal.ErrFormat},
		"truncated": {good[:len(good)/2], "", zonal.ErrFormat},
		"flipped":   {flipped, "", zonal.ErrFormat},
		"other d":   {wrongD, "d = 5", zonal.ErrShape},
	} {
		if err := os.WriteFile(path, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		code, b, _ := do(t, "POST", ts.URL+"/v1/reload", "")
		if code != 422 || !strings.Contains(b, "previous model keeps serving") || !strings.Contains(b, c.msg) {
			t.Errorf("%s: %d %s", name, code, b)
		}
		if err := s.Reload(); !errors.Is(err, c.is) {
			t.Errorf("%s: Reload error %v, want %v", name, err, c.is)
		}
		if a := ask(); fmt.Sprint(a.Predictions) != fmt.Sprint(wantB) {
			t.Errorf("%s: the old model should serve: %v, want %v", name, a.Predictions, wantB)
		}
	}
	os.Remove(path)
	if code, _, _ := do(t, "POST", ts.URL+"/v1/reload", ""); code != 422 {
		t.Errorf("missing file: %d", code)
	}
	if got := counterWith(t, s, "zonal_serve_reloads_total", "result", "failure"); got != 9 {
		t.Errorf("failures counted %g, want 9", got)
	}
	if got := counterWith(t, s, "zonal_serve_reloads_total", "result", "success"); got != 1 {
		t.Errorf("successes counted %g, want 1", got)
	}
	if !strings.Contains(logs.String(), "model reload failed") {
		t.Errorf("no failure logged: %s", logs.String())
	}
	if code, _, resp := do(t, "GET", ts.URL+"/v1/reload", ""); code != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET reload: %d", code)
	}
	// Without a model file Reload is an ErrParam; Swap checks its model.
	s2, _, _ := newTestServer(t, ms["krr"], Options{})
	if err := s2.Reload(); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Reload without a file: %v", err)
	}
	if err := s2.Swap(nil); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Swap(nil): %v", err)
	}
	if err := s2.Swap(ms["ridge"]); err != nil || s2.Model() != ms["ridge"] {
		t.Errorf("Swap(ridge): %v", err)
	}
}

// dimModel is a KRR model on d features and its file contents.
func dimModel(t testing.TB, d int) (*solvers.Pipeline, []byte) {
	t.Helper()
	x, y := synth(30, d, 4)
	k, err := kernels.NewGaussian(1.5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := solvers.FitKRR(bg, k, x, mat.NewDense(len(y), 1, y), 1e-2, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// Many clients predicting (single rows, batched, and blocks, on v1 and v2)
// while the model file is reloaded back and forth: every answer is 200 and
// is the exact answer of one of the two models for that row, and a block
// is answered by one model throughout. Run with -race.
func TestReloadUnderLoad(t *testing.T) {
	ms := testModels(t)
	dir := t.TempDir()
	a, b := ms["falkon"], ms["b"]
	path := writeModel(t, dir, "m.zonal", a)
	s, ts, _ := newTestServer(t, a, Options{ModelFile: path, ReloadEndpoint: true, Workers: 2, BatchDelay: 200 * time.Microsecond})
	xt, _ := synth(8, 4, 13)
	la, _ := want(t, a, xt)
	lb, _ := want(t, b, xt)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered atomic.Int64
	clients := 16
	if testing.Short() {
		clients = 4
	}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				i := (c + k) % 8
				rows := 1
				if c%4 == 3 {
					rows = 8 - i
				}
				x := xt.Slice(i, i+rows, 0, 4).(*mat.Dense)
				code, body, _ := do(t, "POST", ts.URL+"/v1/predict", rowsJSON(t, x, false))
				if code != 200 {
					t.Errorf("client %d: %d %s", c, code, body)
					return
				}
				got := decodeAnswer(t, body).Predictions
				fromA, fromB := true, true
				for r, v := range got {
					fromA = fromA && v == la[i+r]
					fromB = fromB && v == lb[i+r]
				}
				if !fromA && !fromB {
					t.Errorf("client %d rows %d..%d: %v is neither model's answer (%v, %v)", c, i, i+rows, got, la[i:i+rows], lb[i:i+rows])
					return
				}
				answered.Add(1)
			}
		}()
	}
	// Reload for at least 1.5 s, and on until there have been 10 reloads
	// and as many answers as clients: on a loaded machine (or under -race)
	// one write-and-reload round can take far more than its 20 ms pause,
	// so a fixed 1.5 s may hold fewer rounds. A server that stops
	// answering or reloading still fails, after 60 s.
	reloads := 0
	start := time.Now()
	for time.Since(start) < 1500*time.Millisecond || reloads < 10 || answered.Load() < int64(clients) {
		if time.Since(start) > time.Minute {
			break
		}
		p := b
		if reloads%2 == 1 {
			p = a
		}
		writeModel(t, dir, "m.zonal", p)
		if reloads%3 == 0 {
			if code, body, _ := do(t, "POST", ts.URL+"/v1/reload", ""); code != 200 {
				t.Errorf("reload %d: %d %s", reloads, code, body)
			}
		} else if err := s.Reload(); err != nil {
			t.Errorf("reload %d: %v", reloads, err)
		}
		reloads++
		time.Sleep(20 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if answered.Load() < int64(clients) || reloads < 10 {
		t.Errorf("only %d answers and %d reloads", answered.Load(), reloads)
	}
	if got := counterWith(t, s, "zonal_serve_reloads_total", "result", "success"); int(got) != reloads {
		t.Errorf("%g successful reloads counted, want %d", got, reloads)
	}
}

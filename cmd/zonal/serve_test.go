package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/serve/oip"
	"github.com/zonal-ml/zonal/solvers"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// constModel writes a KRR model whose prediction is about c everywhere
// (one centre, fitted to y = c) on 2 features to path.
func constModel(t *testing.T, path string, c float64) {
	t.Helper()
	k, err := kernels.NewGaussian(100)
	if err != nil {
		t.Fatal(err)
	}
	m, err := solvers.FitKRR(context.Background(), k, mat.NewDense(1, 2, []float64{0, 0}), mat.NewDense(1, 1, []float64{c}), 1e-12, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := saveModel(&env{}, path, p); err != nil {
		t.Fatal(err)
	}
}

// `zonal serve` serves the file, reloads it on SIGHUP (keeping the old
// model when the new file is bad), and on SIGTERM lets an in-flight request
// finish and returns nil (exit 0).
func TestServeCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.zonal")
	constModel(t, path, 1)
	var out, errb lockedBuffer
	sigs := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveUntil([]string{"-model", path, "-addr", "127.0.0.1:0", "-shutdown-timeout", "5s"}, &out, &errb, sigs)
	}()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no address printed: %s %s", out.String(), errb.String())
		}
	}
	// predict returns the prediction at 0 rounded to 6 decimals, or the body.
	predict := func() string {
		resp, err := http.Post(url+"/v1/predict", "application/json", strings.NewReader(`{"rows": [[0, 0]]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var a struct{ Predictions []float64 }
		if json.Unmarshal(b, &a) != nil || len(a.Predictions) != 1 {
			return string(b)
		}
		return strconv.FormatFloat(a.Predictions[0], 'f', 6, 64)
	}
	if got := predict(); got != "1.000000" {
		t.Fatalf("first model: %s", got)
	}
	constModel(t, path, 3)
	sigs <- syscall.SIGHUP
	for deadline := time.Now().Add(10 * time.Second); predict() != "3.000000"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reload: %s; log %s", predict(), errb.String())
		}
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	sigs <- syscall.SIGHUP
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(errb.String(), "model reload failed"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("bad file not reported: %s", errb.String())
		}
	}
	if got := predict(); got != "3.000000" {
		t.Errorf("after a bad reload: %s", got)
	}
	if code := get(t, url+"/v1/reload"); code != 404 {
		t.Errorf("reload endpoint without -reload-endpoint: %d", code)
	}
	// A request still being sent when SIGTERM arrives is answered.
	pr, pw := io.Pipe()
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post(url+"/v1/predict", "application/json", pr)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	io.WriteString(pw, `{"rows": [[0,`)
	// SIGTERM once the server holds the request (admitted, reading its
	// body): after a fixed 100 ms a slow machine may not have connected
	// yet, and the shutdown would then refuse the request rather than
	// drain it.
	inFlight := regexp.MustCompile(`(?m)^zonal_serve_in_flight_requests(\{[^}]*\})? 1$`)
	for deadline := time.Now().Add(10 * time.Second); !inFlight.MatchString(getBody(t, url+"/metrics")); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the request being sent is not in flight after 10 s: %s", getBody(t, url+"/metrics"))
		}
	}
	sigs <- syscall.SIGTERM
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("serve returned (%v) with a request in flight", err)
	default:
	}
	io.WriteString(pw, ` 0]]}`)
	pw.Close()
	if code := <-answered; code != 200 {
		t.Errorf("in-flight request during shutdown: %d", code)
	}
	waitServed(t, done)
	if !strings.Contains(errb.String(), "stopped") {
		t.Errorf("log: %s", errb.String())
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// getBody returns the body of a GET of url.
func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve"}, 2, "-model is required"},
		{[]string{"serve", "-model", "x", "-max-body", "lots"}, 2, "bad -max-body"},
		{[]string{"serve", "-model", "x", "-max-batch", "0"}, 2, "-max-batch must be positive"},
		// Several bad flags: the first in the order of the checks, every run.
		{[]string{"serve", "-model", "x", "-max-in-flight", "-1", "-max-rows", "0", "-max-batch", "0"}, 2, "-max-rows must be positive"},
		{[]string{"serve", "-model", "x", "-shutdown-timeout", "0s", "-read-timeout", "0s"}, 2, "-read-timeout must be positive"},
		{[]string{"serve", "-model", "x", "-shutdown-timeout", "0s"}, 2, "-shutdown-timeout must be positive"},
		{[]string{"serve", "-model", filepath.Join(t.TempDir(), "missing.zonal")}, 1, "missing.zonal"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", c.args, code, errb.String(), c.code, c.msg)
		}
	}
	var out, errb bytes.Buffer
	if code := runMain([]string{"serve", "-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-batch-delay") {
		t.Errorf("serve -h: %d %s", code, errb.String())
	}
}

// `zonal serve -grpc-addr` also serves the gRPC service: a ModelInfer call
// answers the model's prediction, and SIGTERM stops both servers (exit 0).
func TestServeCommandGRPC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.zonal")
	constModel(t, path, 2)
	addr, stop := startServe(t, []string{"-model", path, "-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0"},
		regexp.MustCompile(`gRPC \(inference.GRPCInferenceService\) on (127\.0\.0\.1:\d+)`))
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := oip.NewGRPCInferenceServiceClient(conn).ModelInfer(context.Background(), &oip.ModelInferRequest{
		ModelName: "m",
		Inputs: []*oip.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP64", Shape: []int64{1, 2},
			Contents: &oip.InferTensorContents{Fp64Contents: []float64{0, 0}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.GetOutputs()[0].GetContents().GetFp64Contents(); len(p) != 1 || math.Abs(p[0]-2) > 1e-6 {
		t.Errorf("gRPC prediction %v, want about 2 (the model's constant; 1e-6: the fit's ridge of 1e-12)", p)
	}
	stop()
}

// startServe runs `zonal serve` with args until stop, which sends SIGTERM
// and fails the test unless serve returns nil within 10 s; it returns the
// first submatch of re in serve's output (an address it printed).
// waitServed waits up to 10 s for serve's result on done and fails the
// test on an error or no result.
func waitServed(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown within 10 s")
	}
}

func startServe(t *testing.T, args []string, re *regexp.Regexp) (string, func()) {
	t.Helper()
	var out, errb lockedBuffer
	sigs := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- serveUntil(args, &out, &errb, sigs) }()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no address printed: %s %s", out.String(), errb.String())
		}
	}
	return addr, func() {
		sigs <- syscall.SIGTERM
		waitServed(t, done)
	}
}

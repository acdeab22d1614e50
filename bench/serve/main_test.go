//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the load child, as the command is.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == childFlag {
		if err := loadChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "load child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuick runs the whole program in -quick mode on the synthetic data
// (FALKON, every protocol, single-row and batched requests, the searches
// and the soaks), with cases shortened further so that it takes about ten
// seconds, and checks that every case is in the table and the JSON
// lines, that every request of every protocol was answered 200 (a request
// the server refuses would show as success < 1), and that the soaks
// reloaded without a failure. Latency verdicts are not asserted: the
// machine running the test may be busy.
func TestQuick(t *testing.T) {
	quick(t, modelFalkon, []string{"-search-duration", "300ms", "-soak", "1s", "-reload-every", "200ms"})
}

// TestQuickRidge does the same for ridge on Fourier features with FP32
// tensors, over the protocols that have them and without the searches
// and soaks, which TestQuick covers: this checks the second model's fit,
// cache and serving, and the FP32 requests.
func TestQuickRidge(t *testing.T) {
	quick(t, modelRidge, []string{"-fp32", "-protocol", protoBinary + "," + protoGRPC + "," + protoGRPCTyped, "-skip-search", "-skip-soak"})
}

// TestQuickFloor runs the floor (no model: bare net/http and grpc-go
// answering a constant) over every protocol with its searches: each of
// its requests must be answered 200, as a model's are. It has no soak.
func TestQuickFloor(t *testing.T) {
	quick(t, modelFloor, []string{"-search-duration", "300ms", "-skip-soak"})
}

// TestQuickFloorFalkon: the floor predicting with the synthetic FALKON
// model, on its two protocols; a body its scanner or the model refused
// would be answered 400 and fail the success check.
func TestQuickFloorFalkon(t *testing.T) {
	quick(t, modelFloorFalkon, []string{"-protocol", protoJSON + "," + protoGRPC, "-skip-search", "-skip-soak"})
}

func quick(t *testing.T, model string, args []string) {
	dir := t.TempDir()
	out := dir + "/out.jsonl"
	c, err := parseFlags(flag.NewFlagSet("serve", flag.ContinueOnError), append([]string{"-quick", "-synthetic", "-models", model,
		"-model-dir", dir, "-out", out, "-duration", "300ms", "-warmup", "0", "-cpuprofile", dir + "/cpu.prof"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := run(c, &table); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	var rs []result
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("JSON line %q: %v", sc.Text(), err)
		}
		rs = append(rs, r)
		seen[fmt.Sprintf("%s/%s/%d/%s", r.Model, r.Protocol, r.Rows, r.Kind)]++
		if !strings.Contains(table.String(), "| "+r.Case+" | "+r.Goal+" | "+r.Measured+" | "+r.Verdict+" |") {
			t.Errorf("case %q is not in the table:\n%s", r.Case, table.String())
		}
		if r.Verdict != "pass" && r.Verdict != "FAIL" && r.Verdict != "reported" {
			t.Errorf("%s: verdict %q", r.Case, r.Verdict)
		}
		switch r.Kind {
		case "low-load", "cpu", "soak":
			if r.Requests == 0 || r.Success != 1 {
				t.Errorf("%s: %d requests, success %v, codes %v, errors %q", r.Case, r.Requests, r.Success, r.StatusCodes, r.Errors)
			}
		case "search":
			if r.FailedReqPerSec == 0 && r.BestReqPerSec == 0 {
				t.Errorf("%s: no rate held and none failed", r.Case)
			}
			if strings.HasPrefix(r.FailedWhy, "success") {
				t.Errorf("%s: requests failed at a low rate: %s", r.Case, r.FailedWhy)
			}
		}
		if r.Kind == "cpu" && r.ServerCPUus <= 0 {
			t.Errorf("%s: server CPU %v µs/request", r.Case, r.ServerCPUus)
		}
		if r.Kind == "soak" && (r.Reloads == 0 || r.ReloadErrors != 0 || r.GoroutinesStart == 0 || r.RSSStartMiB <= 0) {
			t.Errorf("%s: %d reloads (%d failed), goroutines %d, RSS %v MiB", r.Case, r.Reloads, r.ReloadErrors, r.GoroutinesStart, r.RSSStartMiB)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.protocols {
		for _, rows := range []int{1, c.batchRows} {
			name := profileName(c.cpuProfile, model, p, rows)
			if fi, err := os.Stat(name); err != nil || fi.Size() == 0 {
				t.Errorf("no CPU profile of the low-load case %s %d-row: %v", p, rows, err)
			}
		}
	}
	kinds := []string{"low-load", "cpu"}
	if !c.skipSearch {
		kinds = append(kinds, "search")
	}
	for _, p := range c.protocols {
		for _, rows := range []int{1, c.batchRows} {
			for _, k := range kinds {
				if key := fmt.Sprintf("%s/%s/%d/%s", model, p, rows, k); seen[key] != 1 {
					t.Errorf("case %s: %d results, want 1", key, seen[key])
				}
			}
		}
		want := 1
		if c.skipSoak {
			want = 0
		}
		if key := fmt.Sprintf("%s/%s/1/soak", model, p); seen[key] != want {
			t.Errorf("case %s: %d results, want %d", key, seen[key], want)
		}
	}
	want := len(c.protocols) * 2 * len(kinds)
	if !c.skipSoak {
		want += len(c.protocols)
	}
	if len(rs) != want {
		t.Errorf("%d results, want %d", len(rs), want)
	}
	if lines := strings.Count(table.String(), "\n| "); lines != len(rs) { // the header is the first line, the separator starts "|-"
		t.Errorf("table has %d rows after the header, %d JSON lines:\n%s", lines, len(rs), table.String())
	}
}

// -cpuprofile names one file per low-load case.
func TestProfileName(t *testing.T) {
	for file, want := range map[string]string{
		"cpu.prof":       "cpu-falkon-json-64.prof",
		"/tmp/p/cpu":     "/tmp/p/cpu-falkon-json-64",
		"out.d/cpu.prof": "out.d/cpu-falkon-json-64.prof",
	} {
		if got := profileName(file, "falkon", "json", 64); got != want {
			t.Errorf("profileName(%q) = %q, want %q", file, got, want)
		}
	}
}

// The load child sends only to 127.0.0.1 and only bounded loads.
func TestCheckSpec(t *testing.T) {
	good := loadSpec{Protocol: protoJSON, Target: "http://127.0.0.1:8080/v1/predict", Rate: 10, Duration: time.Second, MaxWorkers: 1, Timeout: time.Second, Bodies: [][]byte{[]byte("{}")}}
	if err := checkSpec(good); err != nil {
		t.Fatalf("good spec refused: %v", err)
	}
	g := good
	g.Protocol, g.Target, g.Bodies, g.Blocks = protoGRPC, "127.0.0.1:9000", nil, [][]float64{{1}}
	if err := checkSpec(g); err != nil {
		t.Fatalf("good gRPC spec refused: %v", err)
	}
	for name, mod := range map[string]func(*loadSpec){
		"remote URL":     func(s *loadSpec) { s.Target = "http://example.com:80/v1/predict" },
		"remote gRPC":    func(s *loadSpec) { s.Target = "10.0.0.1:9000" },
		"localhost name": func(s *loadSpec) { s.Target = "http://localhost:8080/" },
		"no port":        func(s *loadSpec) { s.Target = "127.0.0.1" },
		"zero rate":      func(s *loadSpec) { s.Rate = 0 },
		"no duration":    func(s *loadSpec) { s.Duration = 0 },
		"two hours":      func(s *loadSpec) { s.Duration = 2 * time.Hour },
		"no workers":     func(s *loadSpec) { s.MaxWorkers = 0 },
		"no requests":    func(s *loadSpec) { s.Bodies = nil },
	} {
		s := good
		mod(&s)
		if err := checkSpec(s); err == nil {
			t.Errorf("%s: accepted %+v", name, s)
		}
	}
}

// Bad flags are errors, not a run.
func TestParseFlagsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-protocol", "json,soap"},
		{"-models", "svm"},
		{"-low-rate", "0"},
		{"-search-start", "100", "-search-max", "50"},
		{"-soak", "0s"},
		{"-max-batch", "0"},
		{"-http-buffer", "-1"},
		{"extra"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		if _, err := parseFlags(fs, args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/internal/shareddata"
)

// writeCSV writes a small CSV (target y, three features) and returns its path.
func writeCSV(t *testing.T, rows int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	sb.WriteString("y,a,b,c\n")
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "%d,%g,%g,%g\n", i%2, rng.NormFloat64(), 3+2*rng.NormFloat64(), rng.Float64())
	}
	p := filepath.Join(t.TempDir(), "small.csv")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApproxJSON(t *testing.T) {
	p := writeCSV(t, 80)
	var out, errb bytes.Buffer
	args := []string{"approx", "-data", p, "-standardize", "-methods", "gegenbauer,fourier,nystrom,rls-nystrom",
		"-features", "16,100", "-n", "50", "-lambda", "0.1,1", "-json"}
	if code := runMain(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4*2*2 {
		t.Fatalf("%d lines, want 16 (4 methods x 2 D x 2 lambdas):\n%s", len(lines), out.String())
	}
	keys := []string{"method", "kernel", "features", "n", "d", "rel_fro", "rel_spec", "eps_lambda", "lambda", "seconds"}
	for _, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Fatalf("key %q missing in %s", k, l)
			}
		}
		if len(obj) != len(keys) {
			t.Fatalf("extra keys in %s", l)
		}
		if obj["n"].(float64) != 50 || obj["d"].(float64) != 3 {
			t.Fatalf("n, d wrong in %s", l)
		}
		feat, fro, eps := obj["features"].(float64), obj["rel_fro"].(float64), obj["eps_lambda"].(float64)
		switch obj["method"] {
		case "nystrom", "rls-nystrom":
			if feat == 100 { // capped at n = 50 landmarks: exact up to round-off
				t.Fatalf("Nystrom with more landmarks than rows: %s", l)
			}
			if feat == 50 && (fro > 1e-8 || eps > 1e-6) {
				t.Fatalf("Nystrom on all rows must be exact: %s", l)
			}
		default:
			// random features: a real but imperfect approximation.
			if !(fro > 0 && fro < 1.5) || feat > 100 || math.IsNaN(eps) {
				t.Fatalf("implausible: %s", l)
			}
		}
	}
}

func TestApproxTableAndPolynomial(t *testing.T) {
	p := writeCSV(t, 60)
	var out, errb bytes.Buffer
	args := []string{"approx", "-data", p, "-kernel", "polynomial", "-degree", "2", "-methods", "gegenbauer,nystrom",
		"-features", "40", "-lambda", "0.5"}
	if code := runMain(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"eps(0.5)", "polynomial(degree=2", "gegenbauer", "nystrom"} {
		if !strings.Contains(s, want) {
			t.Fatalf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestApproxErrors(t *testing.T) {
	p := writeCSV(t, 30)
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"approx"}, 2},
		{[]string{"approx", "-data", filepath.Join(t.TempDir(), "missing.csv")}, 1},
		{[]string{"approx", "-data", p, "-methods", "nope"}, 2},
		{[]string{"approx", "-data", p, "-lambda", "0"}, 2},
		{[]string{"approx", "-data", p, "-lambda", "x"}, 2},
		{[]string{"approx", "-data", p, "-features", "0"}, 2},
		{[]string{"approx", "-data", p, "-sigma", "-1"}, 2},
		{[]string{"approx", "-data", p, "-sigma", "1", "-gamma", "1"}, 2},
		{[]string{"approx", "-data", p, "-kernel", "cosine"}, 2},
		{[]string{"approx", "-data", p, "-kernel", "polynomial", "-methods", "fourier", "-features", "8"}, 1},
		{[]string{"approx", "-data", p, "-methods", "gegenbauer", "-features", "7", "-q", "2", "-s", "2"}, 1},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := runMain(c.args, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, msg)
		}
		if code == 1 && (msg == "" || strings.Contains(msg, "\n")) {
			t.Errorf("%v: want a one-line error, got %q", c.args, msg)
		}
	}
}

// TestApproxDiabetesSmallLambda records the regime where Gegenbauer features
// beat Fourier features: on standardized diabetes (d = 10) with
// sigma = sqrt(d/2) and D = 1024, eps_lambda at lambda = 0.01 is below 1 for
// Gegenbauer (its features live in the span of low-degree harmonics, where
// K + lambda I is large) and well above 1 for Fourier (about 2.9 with this
// seed); at lambda = 10 Fourier is better. The seeds are fixed; the margins
// (a factor >= 2) are far above seed-to-seed variation seen (<30%).
func TestApproxDiabetesSmallLambda(t *testing.T) {
	// File, not Folder: a data folder without this file skips the test
	// instead of failing it on a missing path.
	p := shareddata.File(t, "diabetes.csv.gz")
	var out, errb bytes.Buffer
	n := "0" // all 442 rows
	if testing.Short() {
		n = "300" // same claim on a 300-row sample (eps 0.99 vs 2.1), 3x less eigen work under -race
	}
	args := []string{"approx", "-data", p, "-standardize", "-methods", "gegenbauer,fourier", "-features", "1024",
		"-lambda", "0.01,10", "-n", n, "-json"}
	if code := runMain(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	eps := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r approxResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		eps[fmt.Sprintf("%s@%g", r.Method, r.Lambda)] = r.EpsLambda
	}
	if !(eps["gegenbauer@0.01"] < 1 && eps["fourier@0.01"] > 2*eps["gegenbauer@0.01"]) {
		t.Errorf("lambda=0.01: gegenbauer %.3f, fourier %.3f", eps["gegenbauer@0.01"], eps["fourier@0.01"])
	}
	if !(eps["fourier@10"] < eps["gegenbauer@10"]) {
		t.Errorf("lambda=10: gegenbauer %.3f, fourier %.3f", eps["gegenbauer@10"], eps["fourier@10"])
	}
}

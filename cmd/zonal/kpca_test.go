package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
)

// TestKPCACommandJSON: `zonal kpca -incremental -json` prints one object per
// checkpoint with the keys issue 7 names (but "skipped", gone with the
// library's always-zero counter), no re-orthogonalisation and drift at
// rounding level (1e-12: the matrices have <= 80 points, the drift observed
// is ~1e-15).
func TestKPCACommandJSON(t *testing.T) {
	for _, mean := range []string{"", "-mean-adjust"} {
		args := []string{"kpca", "-incremental", "-points", "80", "-start", "10", "-every", "35", "-standardize", "-json"}
		if mean != "" {
			args = append(args, mean)
		}
		var out, errb bytes.Buffer
		if code := runMain(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 4 { // 10, 45, 80 ... and 80 once: 10, 45, 80
			if len(lines) != 3 {
				t.Fatalf("%d lines:\n%s", len(lines), out.String())
			}
		}
		wantPts := []float64{10, 45, 80}
		for i, l := range lines {
			var obj map[string]any
			if err := json.Unmarshal([]byte(l), &obj); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"points", "mean_adjust", "rel_recon", "orth", "batch_rel_diff_eigs", "update_seconds", "batch_seconds", "update_cpu_seconds", "total_seconds", "reorths"} {
				if _, ok := obj[key]; !ok {
					t.Fatalf("line %d lacks %q: %s", i, key, l)
				}
			}
			if obj["points"].(float64) != wantPts[i] || obj["reorths"].(float64) != 0 || obj["mean_adjust"].(bool) != (mean != "") {
				t.Fatalf("line %d: %s", i, l)
			}
			if obj["rel_recon"].(float64) > 1e-12 || obj["orth"].(float64) > 1e-12 || obj["batch_rel_diff_eigs"].(float64) > 1e-12 {
				t.Fatalf("line %d: drift %s", i, l)
			}
		}
	}
}

func TestKPCACommandTextBatchNystrom(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runMain([]string{"kpca", "-incremental", "-points", "40", "-start", "5", "-sigma", "30"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "reorths") || !strings.Contains(out.String(), "sigma=30") {
		t.Fatalf("output:\n%s", out.String())
	}
	out.Reset()
	if code := runMain([]string{"kpca", "-points", "50", "-mean-adjust", "-components", "3"}, &out, &errb); code != 0 {
		t.Fatalf("batch: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "component  3") {
		t.Fatalf("batch output:\n%s", out.String())
	}
	out.Reset()
	if code := runMain([]string{"kpca", "-points", "60", "-start", "5", "-nystrom", "25", "-every", "10", "-json"}, &out, &errb); code != 0 {
		t.Fatalf("nystrom: exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 { // 5, 15, 25
		t.Fatalf("nystrom output:\n%s", out.String())
	}
	var last map[string]float64
	json.Unmarshal([]byte(lines[2]), &last)
	if last["landmarks"] != 25 || !(last["rel_frobenius"] > 0 && last["rel_frobenius"] < 1) {
		t.Fatalf("nystrom last: %v", last)
	}
}

func TestKPCACommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"kpca", "-kernel", "cosine"},
		{"kpca", "-sigma", "-1"},
		{"kpca", "-sigma", "NaN"},
		{"kpca", "-scale", "0"},
		{"kpca", "-memory", "0"},
		{"kpca", "-points", "-3"},
		{"kpca", "-points", "1000", "-memory", "1M"},
		{"kpca", "-start", "0"},
		{"kpca", "-bogus"},
		{"kpca", "-checkpoints", "5,x", "-incremental", "-points", "30"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(args, &out, &errb); code != 2 {
			t.Fatalf("%v: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
	for _, args := range [][]string{
		{"kpca", "-points", "5000"},
		{"kpca", "-points", "10", "-start", "20", "-incremental"},
		{"kpca", "-data", "/nonexistent/file.csv"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(args, &out, &errb); code != 1 {
			t.Fatalf("%v: exit %d, want 1 (%s)", args, code, errb.String())
		}
	}
}

func TestMedianDistance(t *testing.T) {
	// Points 0, 1, 3 on a line: distances 1, 2, 3 -> median 2.
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	if got := medianDistance(x, 10, 1); got != 2 {
		t.Fatalf("median %g, want 2", got)
	}
	// Four points: distances 1,1,1,2,2,3 (0,1,2,3) -> median (1+2)/2.
	x = mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	if got := medianDistance(x, 10, 1); got != 1.5 {
		t.Fatalf("median %g, want 1.5", got)
	}
}

func TestIncNystromBuilder(t *testing.T) {
	k, _ := kernels.NewGaussian(2)
	x := mat.NewDense(30, 2, nil)
	for i := 0; i < 30; i++ {
		x.Set(i, 0, float64(i%7))
		x.Set(i, 1, float64(i%5))
	}
	fm, err := buildMap(context.Background(), mapSpec{Method: "inc-nystrom", Kernel: k, Features: 10, Seed: 3}, x)
	if err != nil {
		t.Fatal(err)
	}
	if fm.InputDim() != 2 || fm.Dim() < 1 || fm.Dim() > 10 {
		t.Fatalf("dims %d %d", fm.InputDim(), fm.Dim())
	}
	if _, err := buildMap(context.Background(), mapSpec{Method: "inc-nystrom", Kernel: k, Features: 31}, x); err == nil {
		t.Fatal("31 landmarks of 30 rows accepted")
	}
}

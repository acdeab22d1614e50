package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/zonal-ml/zonal/estimator"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
)

// TestKPCACommandJSON: `zonal kpca -incremental -json` prints one object per
// checkpoint with the keys points, mean_adjust, rel_recon, orth,
// batch_rel_diff_eigs, the update and batch times and reorths (no "skipped":
// the library's counter of skipped points was always zero and is gone), no re-orthogonalisation and drift at
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
	fm, err := estimator.BuildMap(context.Background(), estimator.MapSpec{Map: "inc-nystrom", Kernel: k, Features: 10, Seed: 3}, x)
	if err != nil {
		t.Fatal(err)
	}
	if fm.InputDim() != 2 || fm.Dim() < 1 || fm.Dim() > 10 {
		t.Fatalf("dims %d %d", fm.InputDim(), fm.Dim())
	}
	if _, err := estimator.BuildMap(context.Background(), estimator.MapSpec{Map: "inc-nystrom", Kernel: k, Features: 31}, x); err == nil {
		t.Fatal("31 landmarks of 30 rows accepted")
	}
}

// TestKPCAOutModelTransform: `zonal kpca -out -model` (batch, and
// incremental with mean adjustment and truncation) writes one CSV row of K
// scores per point; `zonal kpca transform` of the same points with the saved
// model reproduces that file byte for byte (same scaling, same bits), the
// model file decodes and re-encodes to the same bytes, and in the exact
// batch case the scores equal sqrt(lambda_j) U_ij (Model.Scores) to 1e-10
// relative (Transform sums n kernel products).
func TestKPCAOutModelTransform(t *testing.T) {
	dir := t.TempDir()
	digits, err := dataset.Digits()
	if err != nil {
		t.Fatal(err)
	}
	pts := mat.DenseCopyOf(digits.X.Slice(0, 120, 0, 64))
	var csvb strings.Builder
	for i := 0; i < 120; i++ {
		for j := 0; j < 64; j++ {
			if j > 0 {
				csvb.WriteByte(',')
			}
			csvb.WriteString(strconv.FormatFloat(pts.At(i, j), 'g', -1, 64))
		}
		csvb.WriteByte('\n')
	}
	data := filepath.Join(dir, "pts.csv")
	if err := os.WriteFile(data, []byte(csvb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"batch", []string{"-standardize"}},
		{"incremental", []string{"-incremental", "-start", "15", "-mean-adjust", "-scale", "0.0625", "-no-batch"}},
	} {
		out, model := filepath.Join(dir, tc.name+".csv"), filepath.Join(dir, tc.name+".model")
		args := append([]string{"kpca", "-data", data, "-points", "120", "-components", "5", "-out", out, "-model", model}, tc.args...)
		var so, se bytes.Buffer
		if code := runMain(args, &so, &se); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, se.String())
		}
		scores, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(scores)), "\n")
		if len(lines) != 121 || lines[0] != "pc1,pc2,pc3,pc4,pc5" || strings.Count(lines[1], ",") != 4 {
			t.Fatalf("%s: %d lines, header %q, row %q", tc.name, len(lines), lines[0], lines[1])
		}
		so.Reset()
		se.Reset()
		if code := runMain([]string{"kpca", "transform", "-model", model, "-data", data}, &so, &se); code != 0 {
			t.Fatalf("%s: transform: exit %d: %s", tc.name, code, se.String())
		}
		if so.String() != string(scores) {
			t.Fatalf("%s: transform output differs from -out", tc.name)
		}
		raw, _ := os.ReadFile(model)
		st, m, err := decodeKPCAModel(raw)
		if err != nil {
			t.Fatal(err)
		}
		again, err := encodeKPCAModel(st, m)
		if err != nil || !bytes.Equal(raw, again) {
			t.Fatalf("%s: model re-encoding differs (%v)", tc.name, err)
		}
		if tc.name == "batch" {
			sc := m.Scores()
			tol := 1e-10 * math.Sqrt(m.Eigenvalues()[0])
			for i := 1; i <= 120; i++ {
				for j, f := range strings.Split(lines[i], ",") {
					v, _ := strconv.ParseFloat(f, 64)
					if math.Abs(v-sc.At(i-1, j)) > tol {
						t.Fatalf("row %d col %d: %g, sqrt(lambda) U = %g", i, j, v, sc.At(i-1, j))
					}
				}
			}
		}
	}
	// Errors: usage (2) and run-time (1).
	model := filepath.Join(dir, "batch.model")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"kpca", "transform", "-data", data}, 2},
		{[]string{"kpca", "transform", "-model", model}, 2},
		{[]string{"kpca", "-nystrom", "20", "-points", "60", "-out", filepath.Join(dir, "x.csv")}, 2},
		{[]string{"kpca", "transform", "-model", data, "-data", data}, 1},
		{[]string{"kpca", "transform", "-model", filepath.Join(dir, "none"), "-data", data}, 1},
		{[]string{"kpca", "-points", "30", "-out", dir}, 1},
	} {
		var so, se bytes.Buffer
		if code := runMain(c.args, &so, &se); code != c.code {
			t.Fatalf("%v: exit %d, want %d (%s)", c.args, code, c.code, se.String())
		}
	}
	// A data file with another number of features.
	short := filepath.Join(dir, "short.csv")
	os.WriteFile(short, []byte("1,2,3\n4,5,6\n"), 0o644)
	var so, se bytes.Buffer
	if code := runMain([]string{"kpca", "transform", "-model", model, "-data", short}, &so, &se); code != 1 || !strings.Contains(se.String(), "features") {
		t.Fatalf("short data: exit %d: %s", code, se.String())
	}
}

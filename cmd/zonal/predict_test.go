package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
)

// wholePredict is `zonal predict` as it was before blocks: the whole file
// read into memory, one prediction call, the lines and the metric line.
func wholePredict(t *testing.T, model, path string, scores bool) (stdout, stderr string) {
	t.Helper()
	pipe := loadModel(t, model)
	d := pipe.InputDim()
	libsvm := !strings.Contains(path, ".csv")
	data, err := dataset.ReadFile(path, dataset.Options{MinCols: d, MaxCols: d, NoDense: libsvm})
	if err != nil && !libsvm {
		data, err = dataset.ReadFile(path, dataset.Options{MinCols: d, MaxCols: d, NoTarget: true})
	}
	if err != nil {
		t.Fatal(err)
	}
	n, _ := data.Dims()
	pred := make([]float64, n)
	var sc *mat.Dense
	if scores {
		sc = mat.NewDense(n, pipe.Outputs(), nil)
	}
	var x mat.Matrix = data.X
	if data.X == nil {
		x = data.Sparse // LIBSVM rows stay sparse
	}
	err = pipe.PredictLabels(pred, x)
	if err == nil && sc != nil {
		err = pipe.PredictOutputs(sc, x)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := writePredictLines(&out, pred, sc, ' '); err != nil {
		t.Fatal(err)
	}
	if data.Y != nil {
		m := pipe.Encoding.Evaluate(pred, data.Y)
		if m.Accuracy != nil {
			fmt.Fprintf(&errs, "accuracy %.4f on %d rows\n", *m.Accuracy, n)
		} else {
			fmt.Fprintf(&errs, "RMSE %.6g  MAE %.6g  R^2 %.4f on %d rows\n", *m.RMSE, *m.MAE, derefOr(finite(m.R2)), n)
		}
	}
	return out.String(), errs.String()
}

// blockPredict runs `zonal predict args` with blocks of rows rows.
func blockPredict(t *testing.T, stdin io.Reader, rows int, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errs bytes.Buffer
	cfg, err := parsePredict(&errs, args)
	if err != nil {
		t.Fatal(err)
	}
	cfg.blockRows = rows
	err = runPredict(context.Background(), &env{stdin: stdin, stdout: &out, stderr: &errs}, cfg)
	return out.String(), errs.String(), err
}

func gzipFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(path+".gz", z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path + ".gz"
}

// samePrediction reports whether two outputs of predict agree: byte for
// byte on the purego backend, whose products sum in the same order for any
// block of rows; on netlib, OpenBLAS picks kernels by the block's shape, so
// numbers may differ by rounding, which the Nystrom map's K_CC^{-1/2}
// amplifies by its conditioning (measured 3e-8 relative on the ridge case
// below): every token must then be equal, or both numbers within rel
// relative error (1e-6 for predictions: a wrong row or block gives O(1)
// differences; 1e-5 for the metric line, printed to 6 digits, whose last
// digit may round the other way).
func samePrediction(got, want string, rel float64) bool {
	if got == want {
		return true
	}
	if backend.Default().Name() != "netlib" {
		return false
	}
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(" ,\n[]{}:", r) })
	}
	g, w := split(got), split(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if g[i] == w[i] {
			continue
		}
		a, errA := strconv.ParseFloat(g[i], 64)
		b, errB := strconv.ParseFloat(w[i], 64)
		if errA != nil || errB != nil || math.Abs(a-b) > rel*math.Max(1, math.Abs(b)) {
			return false
		}
	}
	return true
}

// TestPredictBlocksMatchWhole: predicting block by block, with blocks of
// 1, 3, 7 rows and one block for everything, prints byte for byte what
// predicting the whole file at once prints (labels and -scores, metric
// line, -json predictions and metrics), for dense CSV (with a scaler,
// with and without the label column) and sparse LIBSVM (plain, tf-idf),
// from files, gzip files and standard input.
func TestPredictBlocksMatchWhole(t *testing.T) {
	dir := t.TempDir()
	reg := writeRegressionCSV(t, dir, "reg.csv", 250, 3)
	unlabelled := filepath.Join(dir, "x.csv")
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(stripHeaderLine(t, reg)), "\n") {
		_, rest, _ := strings.Cut(line, ",")
		b.WriteString(rest + "\n")
	}
	os.WriteFile(unlabelled, []byte("x0,x1,x2\n"+b.String()), 0o644)
	class := writeClassLIBSVM(t, dir, "class.libsvm", 2100, 4) // three CSR blocks of 1024 rows
	counts := writeCountsLIBSVM(t, dir, 80)
	cases := []struct {
		name   string
		fit    []string
		data   []string
		format string
	}{
		{"regression CSV", []string{"-train", reg, "-method", "ridge", "-map", "nystrom", "-features", "30", "-standardize"}, []string{reg, unlabelled}, "csv"},
		{"classes LIBSVM", []string{"-train", class, "-method", "falkon", "-centers", "30", "-sigma", "1"}, []string{class}, "libsvm"},
		{"tf-idf LIBSVM", []string{"-train", counts, "-method", "exact", "-tfidf", "-normalize"}, []string{counts}, "libsvm"},
	}
	for _, c := range cases {
		model := filepath.Join(dir, "m.zonal")
		if _, errs, code := runCmd(append([]string{"fit", "-model", model}, c.fit...)...); code != 0 {
			t.Fatalf("%s: fit: %s", c.name, errs)
		}
		for _, path := range c.data {
			for _, scores := range []bool{false, true} {
				wantOut, wantErr := wholePredict(t, model, path, scores)
				args := []string{"-model", model, "-data", path}
				if scores {
					args = append(args, "-scores")
				}
				raw, _ := os.ReadFile(path)
				for _, rows := range []int{1, 3, 40, 77, 1 << 20} {
					what := fmt.Sprintf("%s, %s, scores %v, blocks of %d", c.name, filepath.Base(path), scores, rows)
					out, errs, err := blockPredict(t, nil, rows, args...)
					if err != nil || !samePrediction(out, wantOut, 1e-6) || !samePrediction(errs, wantErr, 1e-5) {
						t.Fatalf("%s: error %v, stderr %q (want %q), stdout equal: %v", what, err, errs, wantErr, out == wantOut)
					}
					if rows == 3 {
						gz := gzipFile(t, path)
						out, errs, err = blockPredict(t, nil, rows, "-model", model, "-data", gz, "-format", c.format, "-scores="+fmt.Sprint(scores))
						if err != nil || !samePrediction(out, wantOut, 1e-6) || !samePrediction(errs, wantErr, 1e-5) {
							t.Fatalf("%s, gzip: %v, %q", what, err, errs)
						}
						out, errs, err = blockPredict(t, bytes.NewReader(raw), rows, "-model", model, "-data", "-", "-format", c.format, "-scores="+fmt.Sprint(scores))
						if err != nil || !samePrediction(out, wantOut, 1e-6) || !samePrediction(errs, wantErr, 1e-5) {
							t.Fatalf("%s, standard input: %v, %q", what, err, errs)
						}
					}
					// -json holds the same numbers.
					jout, _, err := blockPredict(t, nil, rows, append(args, "-json")...)
					var got, want predictResult
					wout, _, _ := blockPredict(t, nil, 1<<20, append(args, "-json")...)
					if err != nil || json.Unmarshal([]byte(jout), &got) != nil || json.Unmarshal([]byte(wout), &want) != nil {
						t.Fatalf("%s: -json: %v", what, err)
					}
					got.PredictSeconds, want.PredictSeconds = 0, 0
					gj, _ := json.Marshal(got)
					wj, _ := json.Marshal(want)
					if !samePrediction(string(gj), string(wj), 1e-6) || len(got.Predictions) != strings.Count(wantOut, "\n") {
						t.Fatalf("%s: -json differs from one block", what)
					}
				}
			}
		}
	}
}

// stripHeaderLine returns the text of path without its first line.
func stripHeaderLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	return rest
}

// TestPredictBlockErrors: a bad line in a later block is reported with
// its line number (after the lines of the blocks before it); a column count
// that is neither d nor d + 1 is refused before any output.
func TestPredictBlockErrors(t *testing.T) {
	dir := t.TempDir()
	reg := writeRegressionCSV(t, dir, "reg.csv", 40, 3)
	model := filepath.Join(dir, "m.zonal")
	if _, errs, code := runCmd("fit", "-train", reg, "-method", "exact", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	lines := strings.Split(string(mustRead(t, reg)), "\n")
	lines[30] = "1,2,x,4" // line 31
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)
	out, _, err := blockPredict(t, nil, 4, "-model", model, "-data", bad)
	var pe *dataset.ParseError
	if !errors.As(err, &pe) || pe.Line != 31 || !strings.Contains(err.Error(), "bad.csv") {
		t.Fatalf("got %v", err)
	}
	if n := strings.Count(out, "\n"); n > 29 {
		t.Fatalf("%d lines printed before the error at row 30", n)
	}
	wide := filepath.Join(dir, "wide.csv")
	os.WriteFile(wide, []byte("y,a,b,c,d\n1,2,3,4,5\n"), 0o644)
	if out, _, err := blockPredict(t, nil, 4, "-model", model, "-data", wide); err == nil || out != "" || !strings.Contains(err.Error(), "3 features") {
		t.Fatalf("wide: %v, %q", err, out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPredictCancelled: a cancelled context stops predict while standard
// input is silent (a pipe never written), and nothing is printed.
func TestPredictCancelled(t *testing.T) {
	dir := t.TempDir()
	reg := writeRegressionCSV(t, dir, "reg.csv", 40, 3)
	model := filepath.Join(dir, "m.zonal")
	if _, errs, code := runCmd("fit", "-train", reg, "-method", "exact", "-model", model); code != 0 {
		t.Fatal(errs)
	}
	pr, pw := io.Pipe()
	defer pw.Close() // lets the reader's goroutine leave the pipe's Read
	var out, errs bytes.Buffer
	cfg, err := parsePredict(&errs, []string{"-model", model, "-data", "-", "-format", "csv"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = runPredict(ctx, &env{stdin: pr, stdout: &out, stderr: &errs}, cfg)
	if !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Fatalf("got %v, %d bytes of output", err, out.Len())
	}
}

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/solvers"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// writeShard writes rows lo..hi-1 of data as a LIBSVM file, after the
// extra text (a malformed line, for instance).
func writeShard(t *testing.T, path string, data *dataset.Data, lo, hi int, extra string) {
	t.Helper()
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	sub, err := data.Subset(idx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(extra)
	if err := dataset.WriteLIBSVM(&buf, sub.X, sub.Y); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func setFlags(t *testing.T, kv map[string]string) {
	t.Helper()
	for k, v := range kv {
		old := flag.Lookup(k).Value.String()
		if err := flag.Set(k, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(k, old) })
	}
}

// TestFitCommand: zonal-beam fit over 3 training shards (one with a
// malformed line, skipped) trains on every good row, writes a model file
// that solvers.Load reads, and reports the test accuracy the model has;
// FALKON fitted on one machine with the same settings (and so the same
// centres) gets the same accuracy to within 2 test rows.
func TestFitCommand(t *testing.T) {
	data, err := dataset.ReadFile(shareddata.File(t, "digits.libsvm.gz"), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "train-0.libsvm"), data, 0, 500, "3 1:x\n")
	writeShard(t, filepath.Join(dir, "train-1.libsvm"), data, 500, 1000, "")
	writeShard(t, filepath.Join(dir, "train-2.libsvm"), data, 1000, 1400, "")
	writeShard(t, filepath.Join(dir, "test-0.libsvm"), data, 1400, 1797, "")
	modelPath := filepath.Join(dir, "m.zonal")
	setFlags(t, map[string]string{
		"train": filepath.Join(dir, "train-*"), "test": filepath.Join(dir, "test-*"), "method": "nystrom",
		"centers": "120", "sigma": "5", "lambda": "1e-4", "scale": "0.0625", "seed": "3",
		"model": modelPath, "out": filepath.Join(dir, "pred"), "on-error": "skip",
	})
	var out bytes.Buffer
	if err := fit(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"rows_trained: 1400", "lines_skipped: 1", "test rows 397: accuracy"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	rej, err := os.ReadFile(modelPath + ".rejected")
	if err != nil || !strings.Contains(string(rej), "train-0.libsvm:1:") {
		t.Errorf("dead letter %q (%v), want the line train-0.libsvm:1", rej, err)
	}
	f, err := os.Open(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := solvers.Load(f, solvers.Options{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	test, _ := data.Subset(seq(1400, 1797))
	pred := make([]float64, 397)
	if err := pipe.PredictLabels(pred, test.X); err != nil {
		t.Fatal(err)
	}
	acc := solvers.Accuracy(pred, test.Y)
	if !strings.Contains(text, fmt.Sprintf("accuracy %.4f", acc)) {
		t.Errorf("reported accuracy is not the model's %.4f:\n%s", acc, text)
	}

	// Single machine: what `zonal fit -method falkon -centers 120 -sigma 5
	// -lambda 1e-4 -scale 0.0625 -seed 3` fits on the same rows.
	train, _ := data.Subset(seq(0, 1400))
	x := train.X
	x.Scale(0.0625, x)
	enc, _ := solvers.NewEncoding(train.Y, solvers.TaskAuto)
	y, _ := enc.Targets(train.Y)
	k, _ := newTestKernel()
	fk, err := solvers.FitFalkon(context.Background(), k, x, y, 1e-4, solvers.FalkonOptions{Centers: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := solvers.NewScaler(make([]float64, 64), fill(64, 16))
	sp, _ := solvers.NewPipeline(sc, enc, fk)
	if err := sp.PredictLabels(pred, test.X); err != nil {
		t.Fatal(err)
	}
	if a := solvers.Accuracy(pred, test.Y); a < acc-2.0/397 || a > acc+2.0/397 {
		t.Errorf("FALKON on one machine: accuracy %.4f, zonal-beam %.4f", a, acc)
	}
}

// TestFitCommandSplit: without -test, zonal-beam fit holds out the rows
// of zonal fit's seeded -split (0.8 by default) and reports their accuracy.
func TestFitCommandSplit(t *testing.T) {
	data, err := dataset.ReadFile(shareddata.File(t, "digits.libsvm.gz"), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "train-0.libsvm"), data, 0, 700, "")
	writeShard(t, filepath.Join(dir, "train-1.libsvm"), data, 700, 1400, "")
	setFlags(t, map[string]string{
		"train": filepath.Join(dir, "train-*"), "test": "", "centers": "100", "sigma": "5", "lambda": "1e-4",
		"scale": "0.0625", "seed": "2", "model": filepath.Join(dir, "m.zonal"),
	})
	var out bytes.Buffer
	if err := fit(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	tr, te := dataset.Split(1400, 0.8, 2)
	for _, want := range []string{fmt.Sprintf("rows_trained: %d", len(tr)), fmt.Sprintf("held-out rows %d: accuracy", len(te))} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func seq(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

func fill(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

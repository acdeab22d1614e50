package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/internal/shareddata"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// shards writes the rows of data to n LIBSVM files in dir (the odd ones
// gzip), in order, named so that their sorted order is the row order.
func shards(t *testing.T, dir string, data *dataset.Data, n int) string {
	t.Helper()
	rows, _ := data.X.Dims()
	for s := 0; s < n; s++ {
		lo, hi := s*rows/n, (s+1)*rows/n
		idx := make([]int, hi-lo)
		for i := range idx {
			idx[i] = lo + i
		}
		sub, err := data.Subset(idx)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := dataset.WriteLIBSVM(&buf, sub.X, sub.Y); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("part-%02d.libsvm", s)
		b := buf.Bytes()
		if s%2 == 1 {
			name += ".gz"
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			b = z.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "part-*")
}

// digits returns the shared digits set read like `zonal fit` reads it.
func digits(t *testing.T) *dataset.Data {
	t.Helper()
	d, err := dataset.ReadFile(shareddata.File(t, "digits.libsvm.gz"), dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runFit runs Fit on prism and loads the model it wrote.
func runFit(t *testing.T, c Config, in Input) *solvers.Pipeline {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	Fit(s, c, in)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(c.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := solvers.Load(f, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func outputs(t *testing.T, m interface {
	PredictOutputs(dst *mat.Dense, x mat.Matrix) error
	Outputs() int
}, x *mat.Dense) *mat.Dense {
	t.Helper()
	n, _ := x.Dims()
	out := mat.NewDense(n, m.Outputs(), nil)
	if err := m.PredictOutputs(out, x); err != nil {
		t.Fatal(err)
	}
	return out
}

func relDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

// TestNystromEqualsSingleMachine: the one-pass pipeline over 3 shards
// picks FitFalkon's centres and its model equals the direct single-machine
// solution of (K_nM^T K_nM + lambda n K_MM) alpha = K_nM^T (Y - mean) for
// those centres to 1e-8 relative (predictions on every row).
func TestNystromEqualsSingleMachine(t *testing.T) {
	ctx := context.Background()
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 3)
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 150, Seed: 4, Scale: 1.0 / 16},
		Model: filepath.Join(dir, "m.zonal")}
	got := runFit(t, c, Input{Glob: glob, BlockRows: 200})

	// Single machine, same rows, same draw of centres.
	n, d := data.X.Dims()
	x := mat.NewDense(n, d, nil) // what -scale 1/16 does: (v - 0) / 16
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, data.X.At(i, j)/16)
		}
	}
	enc, err := solvers.NewEncoding(data.Y, solvers.TaskAuto)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := enc.Targets(data.Y)
	k, _ := kernels.NewGaussian(c.Options.Sigma)
	f, err := solvers.FitFalkon(ctx, k, x, y, c.Options.Lambda, solvers.FalkonOptions{Centers: c.Options.Centers, Seed: c.Options.Seed})
	if err != nil {
		t.Fatal(err)
	}
	fk := got.Model.(*solvers.Falkon)
	if !mat.Equal(fk.Centers(), f.Centers()) {
		t.Fatal("the pipeline's centres are not FitFalkon's")
	}
	ref := directNystrom(t, k, x, y, f.Centers().(*mat.Dense), c.Options.Lambda)
	pipeOut := outputs(t, got, data.X)
	refOut := mat.NewDense(n, y.RawMatrix().Cols, nil)
	if err := ref.Predict(refOut, x); err != nil {
		t.Fatal(err)
	}
	r := relDiff(pipeOut, refOut)
	t.Logf("relative difference %g", r)
	if !(r < 1e-8) {
		t.Errorf("pipeline vs single-machine direct solve: relative difference %g, want < 1e-8", r)
	}
	// And FALKON's CG solution of the same system predicts the same labels
	// on all but a few rows.
	pl, _ := solvers.NewPipeline(nil, enc, f)
	a, b := make([]float64, n), make([]float64, n)
	pl.PredictLabels(a, x)
	got.PredictLabels(b, data.X)
	diff := 0
	for i := range a {
		if a[i] != b[i] {
			diff++
		}
	}
	if diff > n/100 {
		t.Errorf("FALKON and the pipeline disagree on %d of %d labels", diff, n)
	}
}

// directNystrom solves the Nystrom normal equations on one machine with
// gonum (no preconditioning, no blocks).
func directNystrom(t *testing.T, k kernels.Kernel, x, y, c *mat.Dense, lambda float64) *solvers.Falkon {
	t.Helper()
	n, _ := x.Dims()
	m, _ := c.Dims()
	knm := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			knm.Set(i, j, k.Eval(x.RawRowView(i), c.RawRowView(j)))
		}
	}
	kmm := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			kmm.Set(i, j, k.Eval(c.RawRowView(i), c.RawRowView(j)))
		}
	}
	_, kout := y.Dims()
	mean := make([]float64, kout)
	yc := mat.DenseCopyOf(y)
	for t := 0; t < kout; t++ {
		mean[t] = mat.Sum(y.ColView(t)) / float64(n)
		for i := 0; i < n; i++ {
			yc.Set(i, t, y.At(i, t)-mean[t])
		}
	}
	var h, rhs, alpha mat.Dense
	h.Mul(knm.T(), knm)
	kmm.Scale(lambda*float64(n), kmm)
	h.Add(&h, kmm)
	rhs.Mul(knm.T(), yc)
	if err := alpha.Solve(&h, &rhs); err != nil {
		t.Fatal(err)
	}
	f, err := solvers.NewFalkonModel(k, c, &alpha, mean, lambda, solvers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRidgeEqualsSingleMachine: ridge on random Fourier features over
// shards equals solvers.FitRidge with the same map to 1e-8 relative, with
// the distributed standardizer matching dataset.FitStandardizer.
func TestRidgeEqualsSingleMachine(t *testing.T) {
	ctx := context.Background()
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 4)
	c := Config{Options: estimator.Options{Method: estimator.MethodRidge, Map: estimator.MapFourier, Features: 256, Sigma: 8,
		Lambda: 1e-5, Seed: 2, Standardize: estimator.StandardizeOn}, Model: filepath.Join(dir, "r.zonal")}
	got := runFit(t, c, Input{Glob: glob, BlockRows: 128})

	st, err := dataset.FitStandardizer(data.X)
	if err != nil {
		t.Fatal(err)
	}
	for j := range st.Mean {
		if math.Abs(st.Mean[j]-got.Scaler.Mean[j]) > 1e-12*(1+math.Abs(st.Mean[j])) ||
			math.Abs(st.Scale[j]-got.Scaler.Scale[j]) > 1e-12*st.Scale[j] {
			t.Fatalf("column %d: standardizer %g/%g, pipeline %g/%g", j, st.Mean[j], st.Scale[j], got.Scaler.Mean[j], got.Scaler.Scale[j])
		}
	}
	x := mat.NewDense(data.X.RawMatrix().Rows, data.X.RawMatrix().Cols, nil)
	if err := st.ApplyTo(x, data.X); err != nil {
		t.Fatal(err)
	}
	enc, _ := solvers.NewEncoding(data.Y, solvers.TaskAuto)
	y, _ := enc.Targets(data.Y)
	k, _ := kernels.NewGaussian(c.Options.Sigma)
	fm, err := kernelsFourier(k, x, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := solvers.FitRidge(ctx, fm, x, y, c.Options.Lambda, solvers.RidgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := solvers.NewPipeline(nil, enc, r)
	d := relDiff(outputs(t, got, data.X), outputs(t, ref, x))
	t.Logf("relative difference %g", d)
	if !(d < 1e-8) {
		t.Errorf("pipeline vs FitRidge: relative difference %g, want < 1e-8", d)
	}
}

// TestParKEqualsSingleMachine: with the centroids chosen from every row,
// the pipeline's cells are FitParK's and so are its predictions.
func TestParKEqualsSingleMachine(t *testing.T) {
	ctx := context.Background()
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 3)
	c := Config{Options: estimator.Options{Method: estimator.MethodParK, Cells: 4, Centers: 200, Sigma: 5, Lambda: 1e-4,
		Seed: 3, Scale: 1.0 / 16}, Model: filepath.Join(dir, "p.zonal")}
	got := runFit(t, c, Input{Glob: glob, BlockRows: 300})
	n, d := data.X.Dims()
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, data.X.At(i, j)/16)
		}
	}
	enc, _ := solvers.NewEncoding(data.Y, solvers.TaskAuto)
	y, _ := enc.Targets(data.Y)
	k, _ := kernels.NewGaussian(c.Options.Sigma)
	pk, err := solvers.FitParK(ctx, k, x, y, c.Options.Lambda, solvers.ParKOptions{Cells: c.Options.Cells, Centers: c.Options.Centers, Seed: c.Options.Seed, Partition: solvers.PartitionGreedy})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(got.Model.(*solvers.ParK).Centroids(), pk.Centroids(), 0) {
		t.Fatal("centroids differ from FitParK's")
	}
	ref, _ := solvers.NewPipeline(nil, enc, pk)
	r := relDiff(outputs(t, got, data.X), outputs(t, ref, x))
	t.Logf("relative difference %g", r)
	if !(r < 1e-8) {
		t.Errorf("pipeline vs FitParK: relative difference %g, want < 1e-8", r)
	}
}

// TestNystromGivenCenters: centres given in the input space (scaled by the
// pipeline like the data) give the direct single-machine solution for
// those centres, to 1e-8 relative.
func TestNystromGivenCenters(t *testing.T) {
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 2)
	n, d := data.X.Dims()
	raw := mat.DenseCopyOf(data.X.Slice(100, 180, 0, d))
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-3, Scale: 1.0 / 16, Seed: 9},
		GivenCenters: raw.RawMatrix().Data, GivenCols: d, Model: filepath.Join(dir, "g.zonal")}
	got := runFit(t, c, Input{Glob: glob})
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, data.X.At(i, j)/16)
		}
	}
	cs := mat.DenseCopyOf(x.Slice(100, 180, 0, d))
	enc, _ := solvers.NewEncoding(data.Y, solvers.TaskAuto)
	y, _ := enc.Targets(data.Y)
	k, _ := kernels.NewGaussian(c.Options.Sigma)
	ref, _ := solvers.NewPipeline(nil, enc, directNystrom(t, k, x, y, cs, c.Options.Lambda))
	r := relDiff(outputs(t, got, data.X), outputs(t, ref, x))
	t.Logf("relative difference %g", r)
	if !(r < 1e-8) {
		t.Errorf("given centres: relative difference %g, want < 1e-8", r)
	}
}

// TestSplitEqualsSingleMachine: with Split the pipeline trains on the rows
// of dataset.Split(n, 0.8, seed), as zonal fit -split does: its centres
// are FitFalkon's on those rows and its model the direct solution on them
// to 1e-8 relative; the held-out rows' metrics are the model's on the
// other rows.
func TestSplitEqualsSingleMachine(t *testing.T) {
	ctx := context.Background()
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 3)
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 120, Seed: 6, Scale: 1.0 / 16},
		Split: 0.8, Workers: 2, Model: filepath.Join(dir, "s.zonal")}
	got := runFit(t, c, Input{Glob: glob, BlockRows: 100})
	n, d := data.X.Dims()
	tr, te := dataset.Split(n, 0.8, 6)
	train, _ := data.Subset(tr)
	test, _ := data.Subset(te)
	x := mat.NewDense(len(tr), d, nil)
	x.Scale(1.0/16, train.X)
	enc, _ := solvers.NewEncoding(train.Y, solvers.TaskAuto)
	y, _ := enc.Targets(train.Y)
	k, _ := kernels.NewGaussian(5)
	f, err := solvers.FitFalkon(ctx, k, x, y, 1e-4, solvers.FalkonOptions{Centers: 120, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Model.(*solvers.Falkon).Centers(), f.Centers()) {
		t.Fatal("the pipeline's centres are not FitFalkon's on the training rows")
	}
	ref := directNystrom(t, k, x, y, f.Centers().(*mat.Dense), 1e-4)
	refOut := mat.NewDense(len(tr), y.RawMatrix().Cols, nil)
	if err := ref.Predict(refOut, x); err != nil {
		t.Fatal(err)
	}
	r := relDiff(outputs(t, got, train.X), refOut)
	t.Logf("relative difference %g", r)
	if !(r < 1e-8) {
		t.Errorf("split: relative difference %g to the direct solve on the training rows, want < 1e-8", r)
	}
	b, err := os.ReadFile(HeldOutPath(c.Model))
	if err != nil {
		t.Fatal(err)
	}
	var m Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	pred := make([]float64, len(te))
	if err := got.PredictLabels(pred, test.X); err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i, p := range pred {
		if p == test.Y[i] {
			correct++
		}
	}
	if m.N != len(te) || m.Correct != correct || m.Task != "classification" {
		t.Errorf("held-out metrics %+v, want %d rows, %d correct", m, len(te), correct)
	}
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// blocksOf returns the rows of data as Blocks of size rows of file f.
func blocksOf(f string, data *dataset.Data, size int) []Block {
	var out []Block
	bb := newBlockBuilder(f, size, true, func(b Block) { out = append(out, b) })
	addData(bb, data)
	bb.flush()
	return out
}

// summarize is the first pass's Summary of blocks (with moments).
func summarize(blocks []Block) Summary {
	fn := &summaryFn{Moments: true}
	s := fn.CreateAccumulator()
	for _, b := range blocks {
		s = fn.MergeAccumulators(s, fn.AddInput(fn.CreateAccumulator(), b))
	}
	return s
}

func layoutOf(s Summary, split float64, seed uint64) Layout {
	var l Layout
	(&layoutFn{Split: split, Seed: seed, Workers: 2}).ProcessElement(s, func(x Layout) { l = x })
	return l
}

// TestCentersAreUniformCenters: the plan's centres are the rows
// solvers.UniformCenters draws for the training rows, the draw FitFalkon
// makes with the same seed; with a split, the same draw among the training
// rows, mapped to their global indices.
func TestCentersAreUniformCenters(t *testing.T) {
	data := digits(t)
	s := summarize(blocksOf("f", data, 256))
	n := s.N
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 137, Seed: 11}, Model: "m"}
	p, err := makePlan(context.Background(), c, s, layoutOf(s, 0, 11))
	if err != nil {
		t.Fatal(err)
	}
	if want := solvers.UniformCenters(n, 137, 11); !slices.Equal(p.CenterIdx, want) {
		t.Fatalf("centres %v..., want solvers.UniformCenters %v...", p.CenterIdx[:5], want[:5])
	}
	// With a split the second pass sums the training rows only.
	l := layoutOf(s, 0.8, 11)
	train, _ := data.Subset(l.Train)
	ts := summarize(blocksOf("f", train, 256))
	p, err = makePlan(context.Background(), c, ts, l)
	if err != nil {
		t.Fatal(err)
	}
	pos := solvers.UniformCenters(len(l.Train), 137, 11)
	for i, g := range p.CenterIdx {
		if g != l.Train[pos[i]] {
			t.Fatalf("centre %d is row %d, want training row %d (global %d)", i, g, pos[i], l.Train[pos[i]])
		}
	}
}

// TestPlanDecisions: the settings left open are decided by estimator.NewPlan
// on the training rows' shape, and what the pipelines cannot do is refused
// naming the option.
func TestPlanDecisions(t *testing.T) {
	data := digits(t)
	s := summarize(blocksOf("f", data, 512))
	l := layoutOf(s, 0, 1)
	n, d := data.X.Dims()
	shape := s.shape(d)
	if !shape.Sparse || !(shape.Density > 0 && shape.Density < 1) {
		t.Fatalf("shape %+v: want LIBSVM rows with a density in (0, 1)", shape)
	}
	plan := func(o estimator.Options) (Plan, error) {
		return makePlan(context.Background(), Config{Options: o, Model: "m"}, s, l)
	}
	o := estimator.Options{Sigma: 5, Lambda: 1e-4}
	p, err := plan(o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := estimator.NewPlan(shape, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Centers != want.Centers || p.Centers != estimator.FalkonCenters(n, 0, zonal.Float64) {
		t.Errorf("centres %d, the estimator's plan has %d", p.Centers, want.Centers)
	}
	if (p.Mean != nil) != want.Standardize[0] {
		t.Errorf("standardized %v, the estimator's plan says %v", p.Mean != nil, want.Standardize[0])
	}
	o.Scale = 1.0 / 16 // a scale turns the automatic standardization off
	if p, err = plan(o); err != nil || p.Mean == nil || p.Mean[0] != 0 || p.Scale[0] != 16 {
		t.Errorf("scale 1/16: transform %v/%v (%v), want x / 16", p.Mean, p.Scale, err)
	}
	for _, c := range []struct {
		o     estimator.Options
		param string
	}{
		{estimator.Options{Sigma: 5}, "Lambda"},
		{estimator.Options{Lambda: 1e-4}, "Sigma"},
		{estimator.Options{Method: estimator.MethodExact, Sigma: 5, Lambda: 1e-4}, "Method"},
		{estimator.Options{Method: estimator.MethodRidge, Sigma: 5, Lambda: 1e-4}, "Map"},
		{estimator.Options{Method: estimator.MethodParK, Partition: solvers.PartitionKMeans, Sigma: 5, Lambda: 1e-4}, "Partition"},
		{estimator.Options{Loss: estimator.LossLogistic, Sigma: 5, Lambda: 1e-4}, "Loss"},
		{estimator.Options{Intercept: estimator.InterceptFitted, Sigma: 5, Lambda: 1e-4}, "Intercept"},
		{estimator.Options{Weights: []float64{1, 2}, Sigma: 5, Lambda: 1e-4}, "Weights"},
		{estimator.Options{Sigma: 5, Lambda: 1e-4, Precision: zonal.Float32}, "Precision"},
		{estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: n + 1}, "Centers"},
	} {
		_, err := plan(c.o)
		var pe *zonal.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%+v: error %v, want a ParamError on %s", c.o, err, c.param)
		}
	}
	_, err = plan(estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 1000, MemoryBudget: 1 << 20})
	var tl *zonal.TooLargeError
	if !errors.As(err, &tl) || tl.Param != "Centers" {
		t.Errorf("1000 centres in 1 MiB: error %v, want the estimator's TooLargeError on Centers", err)
	}
}

// TestScaleSigma: the scale rule from the distributed column moments is
// tune.ScaleSigma of the transformed training rows, to 1e-12 relative (the
// moments are merged pairwise over blocks: rounding only).
func TestScaleSigma(t *testing.T) {
	data := digits(t)
	s := summarize(blocksOf("f", data, 300))
	l := layoutOf(s, 0, 1)
	for _, o := range []estimator.Options{
		{SigmaRule: estimator.SigmaScale, Lambda: 1e-4, Standardize: estimator.StandardizeOn},
		{SigmaRule: estimator.SigmaScale, Lambda: 1e-4, Scale: 1.0 / 16},
	} {
		p, err := makePlan(context.Background(), Config{Options: o, Model: "m"}, s, l)
		if err != nil {
			t.Fatal(err)
		}
		st, err := estimator.InputScaler(data.X, o.Scale, o.Standardize == estimator.StandardizeOn)
		if err != nil {
			t.Fatal(err)
		}
		x, err := estimator.Scaled(st, data.X)
		if err != nil {
			t.Fatal(err)
		}
		want, err := tune.ScaleSigma(x)
		if err != nil {
			t.Fatal(err)
		}
		k, err := p.kernel()
		if err != nil {
			t.Fatal(err)
		}
		got := math.NaN()
		switch g := k.(type) {
		case kernels.Gaussian:
			got = g.Sigma
		case *kernels.Gaussian:
			got = g.Sigma
		}
		if !(math.Abs(got-want) <= 1e-12*want) {
			t.Errorf("%+v: sigma %.17g, tune.ScaleSigma %.17g", o, got, want)
		}
	}
}

// TestConfigJSON: a Config travels to the workers as JSON without its
// Backend and Progress, every other setting intact.
func TestConfigJSON(t *testing.T) {
	c := Config{Options: estimator.Options{Method: estimator.MethodParK, Sigma: 2, Lambda: 1e-3, Cells: 3,
		Precision: zonal.Float64, Seed: 7, Backend: backend.Default(), Progress: func(zonal.Progress) {}},
		GivenCenters: []float64{1, 2}, GivenCols: 2, Split: 0.75, Workers: 3, Model: "m"}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got Config
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Options.Backend != nil || got.Options.Progress != nil {
		t.Error("Backend or Progress travelled")
	}
	c.Options.Backend, c.Options.Progress = nil, nil
	b1, _ := json.Marshal(c)
	b2, _ := json.Marshal(got)
	if string(b1) != string(b2) || got.Options.Cells != 3 || got.Split != 0.75 || got.GivenCols != 2 {
		t.Errorf("round trip changed the config:\n%s\n%s", b1, b2)
	}
}

// TestGroupFiles: files are dealt into the requested groups with row
// counts as even as the files allow, never more groups than files.
func TestGroupFiles(t *testing.T) {
	counts := []int{7500, 7500, 7500, 7500, 7500, 7500, 7500, 7500, 100}
	g := groupFiles(counts, 2)
	load := make([]int, 2)
	for i, c := range counts {
		load[g[i]] += c
	}
	if load[0]-load[1] > 100 || load[1]-load[0] > 100 {
		t.Errorf("loads %v, want within the smallest file", load)
	}
	if g := groupFiles([]int{5, 5}, 8); g[0] == g[1] || max(g[0], g[1]) > 1 {
		t.Errorf("2 files in 8 groups: %v, want groups 0 and 1", g)
	}
}

// Command zonal-beam fits and applies zonal models on Apache Beam: the same
// binary runs in-process on the prism runner (the default), on a prism,
// Flink or Spark job server (--runner=universal --endpoint=HOST:PORT), or on
// Google Cloud Dataflow (--runner=dataflow).
//
//	zonal-beam fit -train 'shards/train-*.libsvm.gz' [-test 'shards/test-*'] -method nystrom|ridge|park \
//	    -sigma S -lambda L [-centers M] [-cells Q] [-map fourier -features D] [-standardize | -scale F] \
//	    [-task auto] [-seed N] [-on-error fail|skip] -model out.zonal [-out DIR] [Beam flags]
//	zonal-beam predict -model out.zonal -test 'shards/*' -out DIR [-on-error fail|skip] [Beam flags]
//
// The model file is an ordinary zonal model file (`zonal predict`, `zonal
// serve`). Beam's own flags (--runner, --endpoint, --environment_type,
// --environment_config, --worker_binary, --project, --region,
// --staging_location, ...) go in the same command line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"gonum.org/v1/gonum/mat"

	// Runners and filesystems the binary may be asked for.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/zonal-ml/zonal/beam/pipeline"
	"github.com/zonal-ml/zonal/dataset"
)

var (
	train       = flag.String("train", "", "fit: training files, a glob (LIBSVM or CSV, plain or gzip; local, gs://, ...)")
	test        = flag.String("test", "", "fit: test files to evaluate on after fitting; predict: the files to predict (a glob)")
	format      = flag.String("format", "", "libsvm or csv (default: from each file's name)")
	method      = flag.String("method", "nystrom", "nystrom (one-pass Nystrom KRR, a falkon model), ridge (on -map features) or park")
	kernel      = flag.String("kernel", "gaussian", "gaussian or laplacian")
	sigma       = flag.Float64("sigma", 1, "kernel bandwidth")
	lambda      = flag.Float64("lambda", 1e-6, "ridge parameter: objective (1/n)|f(X)-y|^2 + lambda |f|^2")
	centers     = flag.Int("centers", 1000, "Nystrom centres M (nystrom); total over the cells (park)")
	centersFile = flag.String("centers-file", "", "nystrom: read the centres from this data file (local) instead of sampling them")
	cells       = flag.Int("cells", 4, "ParK cells Q")
	sample      = flag.Int("sample", 0, "ParK: choose the centroids from a uniform sample of this many rows (0 = all rows, as zonal fit)")
	iterations  = flag.Int("iterations", 20, "ParK: CG iterations per cell")
	mapName     = flag.String("map", "fourier", "ridge feature map: fourier or fourier-orth")
	features    = flag.Int("features", 1024, "ridge: number of features D")
	standardize = flag.Bool("standardize", false, "standardize each feature (distributed mean/variance); stored in the model")
	scale       = flag.Float64("scale", 1, "multiply every feature by this factor first (e.g. 1/255 for MNIST); stored in the model")
	task        = flag.String("task", "auto", "auto, regression or classification")
	seed        = flag.Uint64("seed", 1, "random seed (centres, features, centroids)")
	model       = flag.String("model", "", "fit: model file to write; predict: model file to read")
	out         = flag.String("out", "", "predict (and fit with -test): directory for the <shard>.pred files and metrics.json")
	onError     = flag.String("on-error", "fail", "fail: a malformed line fails the job naming file:line; skip: it goes to -dead-letter and is counted")
	deadLetter  = flag.String("dead-letter", "", "with -on-error skip: file for the skipped lines (default <model or out>.rejected)")
)

func usage() {
	fmt.Fprintf(os.Stderr, "usage: zonal-beam fit|predict [flags] [Beam flags]\n\n")
	flag.PrintDefaults()
}

func main() {
	flag.Usage = usage
	if len(os.Args) < 2 || (os.Args[1] != "fit" && os.Args[1] != "predict") {
		// Beam starts workers with the binary and worker flags only.
		if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") {
			flag.Parse()
			beam.Init()
		}
		usage()
		os.Exit(2)
	}
	cmd := os.Args[1]
	os.Args = append(os.Args[:1], os.Args[2:]...)
	flag.Parse()
	beam.Init()
	ctx := context.Background()
	var err error
	if cmd == "fit" {
		err = fit(ctx, os.Stdout)
	} else {
		err = predict(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zonal-beam "+cmd+":", err)
		os.Exit(1)
	}
}

func input(glob string) (pipeline.Input, error) {
	if *onError != "fail" && *onError != "skip" {
		return pipeline.Input{}, fmt.Errorf("-on-error %q: want fail or skip", *onError)
	}
	return pipeline.Input{Glob: glob, Format: *format, SkipErrors: *onError == "skip"}, nil
}

// writeDead writes the dead-letter lines to one text file.
func writeDead(s beam.Scope, dead beam.PCollection, def string) {
	if *onError != "skip" {
		return
	}
	path := *deadLetter
	if path == "" {
		path = def + ".rejected"
	}
	textio.Write(s, path, dead)
}

func fit(ctx context.Context, w io.Writer) error {
	if *train == "" || *model == "" {
		return errors.New("-train and -model are required")
	}
	in, err := input(*train)
	if err != nil {
		return err
	}
	c := pipeline.Config{Method: *method, Kernel: *kernel, Sigma: *sigma, Lambda: *lambda, Centers: *centers,
		Cells: *cells, Sample: *sample, Iterations: *iterations, Map: *mapName, Features: *features,
		Standardize: *standardize, Scale: *scale, Task: *task, Seed: *seed, Model: *model}
	if *centersFile != "" {
		d, err := dataset.ReadFile(*centersFile, dataset.Options{Format: *format})
		if err != nil {
			return err
		}
		r, cols := d.X.Dims()
		c.GivenCols = cols
		c.GivenCenters = mat.DenseCopyOf(d.X).RawMatrix().Data[:r*cols]
	}
	p, s := beam.NewPipelineWithRoot()
	_, dead := pipeline.Fit(s, c, in)
	writeDead(s, dead, *model)
	start := time.Now()
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: fit in %.1f s, model written to %s\n", *method, time.Since(start).Seconds(), *model)
	printCounters(w, res)
	if *test == "" {
		return nil
	}
	dir := *out
	if dir == "" {
		dir = *model + ".pred"
	}
	return runPredict(ctx, w, *model, *test, dir)
}

func predict(ctx context.Context, w io.Writer) error {
	if *model == "" || *test == "" || *out == "" {
		return errors.New("-model, -test and -out are required")
	}
	return runPredict(ctx, w, *model, *test, *out)
}

func runPredict(ctx context.Context, w io.Writer, modelPath, glob, dir string) error {
	in, err := input(glob)
	if err != nil {
		return err
	}
	if !strings.Contains(dir, "://") {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	p, s := beam.NewPipelineWithRoot()
	dead := pipeline.Predict(s, modelPath, in, dir)
	writeDead(s, dead, strings.TrimSuffix(dir, "/"))
	start := time.Now()
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "predictions written to %s in %.1f s\n", dir, time.Since(start).Seconds())
	printCounters(w, res)
	if b, err := os.ReadFile(filepath.Join(dir, "metrics.json")); err == nil {
		var m pipeline.Metrics
		if json.Unmarshal(b, &m) == nil && m.N > 0 {
			if m.Task == "classification" {
				fmt.Fprintf(w, "test rows %d: accuracy %.4f\n", m.N, m.Accuracy())
			} else {
				fmt.Fprintf(w, "test rows %d: RMSE %.6g\n", m.N, m.RMSE())
			}
		}
	}
	return nil
}

func printCounters(w io.Writer, res beam.PipelineResult) {
	if res == nil {
		return
	}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "zonal" {
			fmt.Fprintf(w, "  %s: %d\n", c.Key.Name, c.Committed)
		}
	}
}

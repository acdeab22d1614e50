// Command zonal-beam fits and applies zonal models on Apache Beam: the same
// binary runs in-process on the prism runner (the default), on a prism,
// Flink or Spark job server (--runner=universal --endpoint=HOST:PORT), or on
// Google Cloud Dataflow (--runner=dataflow).
//
//	zonal-beam fit -train 'shards/train-*.libsvm.gz' [-test 'shards/test-*' | -split 0.8] -method falkon|ridge|park \
//	    -sigma S|scale -lambda L [-centers auto|M] [-cells Q] [-map fourier -features D] [-standardize | -scale F] \
//	    [-task auto] [-seed N] [-memory 8G] [-workers W] [-on-error fail|skip] -model out.zonal [-out DIR] [-memprofile FILE] [Beam flags]
//	zonal-beam predict -model out.zonal -test 'shards/*' -out DIR [-on-error fail|skip] [Beam flags]
//
// The fitting flags are `zonal fit`'s and map to estimator.Options; every
// setting they leave open is decided by the library's plan (see package
// pipeline), and an error about an option names its flag.
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
	"math"
	"os"
	"path/filepath"
	"strconv"
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

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/beam/pipeline"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

var (
	train       = flag.String("train", "", "fit: training files, a glob (LIBSVM or CSV, plain or gzip; local, gs://, ...)")
	test        = flag.String("test", "", "fit: test files to evaluate on after fitting (without it -split holds out part of -train); predict: the files to predict (a glob)")
	split       = flag.Float64("split", 0.8, "fit without -test: fraction of the -train rows trained on, the rest held out (seeded, as zonal fit -split), in (0, 1)")
	format      = flag.String("format", "", "libsvm or csv (default: from each file's name)")
	method      = flag.String("method", "falkon", "falkon (one-pass Nystrom KRR, a falkon model; also nystrom), ridge (on -map features) or park")
	kernel      = flag.String("kernel", "gaussian", "kernel: "+strings.Join(estimator.KernelKinds(), ", "))
	sigma       = flag.String("sigma", "auto", "bandwidth: a number, or scale (sqrt(d var(X)/2) from the distributed moments); auto (the median heuristic) is not distributed")
	gamma       = flag.Float64("gamma", 1, "polynomial kernel scale")
	coef0       = flag.Float64("coef0", 1, "polynomial kernel offset")
	degree      = flag.Int("degree", 2, "polynomial kernel degree")
	lambda      = flag.String("lambda", "auto", "ridge parameter of (1/n)|f(X)-y|^2 + lambda |f|^2 (required: choosing it is not distributed)")
	centers     = flag.String("centers", "auto", "Nystrom centres M (falkon; total over the cells for park): a count or auto (as zonal fit: FALKON the larger of ceil(sqrt(n) ln n) and min(n, 2048), ParK ceil(sqrt(n) ln n))")
	centersFile = flag.String("centers-file", "", "falkon: read the centres from this data file (local) instead of drawing them")
	cells       = flag.Int("cells", estimator.DefaultCells, "ParK cells Q")
	partition   = flag.String("partition", "", "ParK centroids: greedy (the one distributed; the default here)")
	sample      = flag.Int("sample", 0, "ParK: choose the centroids from a uniform sample of this many rows (0 = all rows, as zonal fit)")
	iterations  = flag.Int("iterations", 0, "ParK: cap on each cell's CG iterations (0: the solver's rule)")
	mapName     = flag.String("map", "", "ridge feature map: fourier or fourier-orth (the maps built without a pass over the data)")
	features    = flag.Int("features", estimator.DefaultFeatures, "ridge: number of features D")
	standardize = flag.Bool("standardize", true, "standardize each feature (distributed mean/variance), stored in the model; the default follows zonal fit's rule")
	scale       = flag.Float64("scale", 1, "multiply every feature by this factor instead of standardizing (e.g. 1/255 for MNIST); stored in the model")
	sparse      = flag.String("sparse", "auto", "treat LIBSVM rows as sparse (no standardization): auto, yes or no, as zonal fit")
	task        = flag.String("task", "auto", "auto, regression or classification")
	seed        = flag.Uint64("seed", 1, "random seed (split, centres, features, centroids)")
	memory      = flag.String("memory", "", "memory budget for the M x M (or D x D) matrices, e.g. 8G (default 2G)")
	workers     = flag.Int("workers", 0, "falkon, ridge: number of partial sums (file groups, one worker each; 0 = GOMAXPROCS)")
	model       = flag.String("model", "", "fit: model file to write; predict: model file to read")
	out         = flag.String("out", "", "predict (and fit with -test): directory for the <shard>.pred files and metrics.json")
	onError     = flag.String("on-error", "fail", "fail: a malformed line fails the job naming file:line; skip: it goes to -dead-letter and is counted")
	deadLetter  = flag.String("dead-letter", "", "with -on-error skip: file for the skipped lines (default <model or out>.rejected)")
	memProfile  = flag.String("memprofile", "", "write heap profiles of this process (the whole job with the in-process prism runner) to FILE at each new high of the live heap, and FILE.end at the end (go tool pprof)")
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
	var prof *memProfiler
	if *memProfile != "" {
		prof = startMemProfile(*memProfile, os.Stderr)
	}
	var err error
	if cmd == "fit" {
		err = fit(ctx, os.Stdout)
	} else {
		err = predict(ctx, os.Stdout)
	}
	if prof != nil {
		err = errors.Join(err, prof.finish())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zonal-beam "+cmd+":", flagMessage(err))
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
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c, err := config(set)
	if err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	_, dead := pipeline.Fit(s, c, in)
	writeDead(s, dead, *model)
	start := time.Now()
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: fit in %.1f s, model written to %s\n", c.Options.Method, time.Since(start).Seconds(), *model)
	printCounters(w, res)
	if *test == "" {
		printMetrics(w, "held-out", pipeline.HeldOutPath(*model))
		return nil
	}
	dir := *out
	if dir == "" {
		dir = *model + ".pred"
	}
	return runPredict(ctx, w, *model, *test, dir)
}

// config maps the flags to the pipeline's Config: the settings go to
// estimator.Options as `zonal fit` maps its flags (set names the flags given
// on the command line); every decision is the library's.
func config(set map[string]bool) (pipeline.Config, error) {
	var o estimator.Options
	var err error
	m := *method
	if m == "nystrom" {
		m = "falkon" // the one-pass solve of FALKON's system
	}
	if o.Method, err = estimator.ParseMethod(m); err != nil {
		return pipeline.Config{}, err
	}
	if o.Kernel, err = estimator.ParseKernelKind(*kernel); err != nil {
		return pipeline.Config{}, err
	}
	switch v := strings.TrimSpace(*sigma); v {
	case "auto":
	case "scale":
		o.SigmaRule = estimator.SigmaScale
	default:
		if o.Sigma, err = number("sigma", v); err != nil {
			return pipeline.Config{}, err
		}
	}
	if v := strings.TrimSpace(*lambda); v != "auto" {
		if o.Lambda, err = number("lambda", v); err != nil {
			return pipeline.Config{}, err
		}
	}
	if v := strings.TrimSpace(*centers); v != "auto" {
		if o.Centers, err = strconv.Atoi(v); err != nil || o.Centers < 1 {
			return pipeline.Config{}, fmt.Errorf("-centers %q: want auto or a count >= 1", v)
		}
	}
	o.Gamma, o.Coef0, o.Degree = *gamma, *coef0, *degree
	o.Cells, o.Partition, o.Iterations, o.Features, o.Seed = *cells, solvers.Partition(*partition), *iterations, *features, *seed
	if *mapName != "" {
		o.Map = estimator.Map(*mapName)
	}
	if o.Task, err = solvers.ParseTask(*task); err != nil {
		return pipeline.Config{}, err
	}
	if o.Sparse, err = estimator.ParseSparse(*sparse); err != nil {
		return pipeline.Config{}, err
	}
	switch {
	case set["standardize"] && *standardize:
		o.Standardize = estimator.StandardizeOn
	case set["standardize"] || set["scale"]:
		o.Standardize = estimator.StandardizeOff // -scale asks for its own input transformation
	}
	o.Scale = *scale
	if o.MemoryBudget, err = zonal.ParseBytes(*memory); err != nil {
		return pipeline.Config{}, fmt.Errorf("-memory: %w", err)
	}
	c := pipeline.Config{Options: o, Sample: *sample, Workers: *workers, Model: *model}
	// As zonal fit: -split is checked even with -test, which makes it unused.
	if !(*split > 0 && *split < 1) {
		return c, fmt.Errorf("-split must be in (0, 1), got %g", *split)
	}
	if *test == "" {
		c.Split = *split
	}
	if *centersFile != "" {
		d, err := dataset.ReadFile(*centersFile, dataset.Options{Format: *format})
		if err != nil {
			return c, err
		}
		r, cols := d.X.Dims()
		c.GivenCols = cols
		c.GivenCenters = mat.DenseCopyOf(d.X).RawMatrix().Data[:r*cols]
	}
	return c, nil
}

// number parses a finite float flag value.
func number(name, v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("-%s %q: want a number", name, v)
	}
	return f, nil
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
	printMetrics(w, "test", filepath.Join(dir, "metrics.json"))
	return nil
}

// printMetrics prints the metrics file a pipeline wrote (a local path).
func printMetrics(w io.Writer, what, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var m pipeline.Metrics
	if json.Unmarshal(b, &m) == nil && m.N > 0 {
		if m.Task == "classification" {
			fmt.Fprintf(w, "%s rows %d: accuracy %.4f\n", what, m.N, m.Accuracy())
		} else {
			fmt.Fprintf(w, "%s rows %d: RMSE %.6g\n", what, m.N, m.RMSE())
		}
	}
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

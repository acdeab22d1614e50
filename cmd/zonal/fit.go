package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

const fitSynopsis = "-train FILE [-test FILE | -split 0.8] [-standardize] [-task auto|regression|classification] " +
	"-kernel gaussian -sigma S -lambda L (-method exact | -method ridge -map NAME -features D | -method falkon -centers M | " +
	"-method park -cells Q -centers M) [-iterations T] [-seed N] [-model out.zonal] [-json]"

func init() {
	addCommand(command{name: "fit", summary: "fit a kernel model (exact, ridge on features, FALKON, ParK) and report its test metric", run: runFit})
}

type fitFlags struct {
	train, test  string
	split        float64
	standardize  bool
	scale        float64
	task         string
	kernel       string
	sigma        float64
	gamma, coef0 float64
	degree       int
	lambda       float64
	method       string
	mapName      string
	features     int
	centers      int
	cells        int
	sampling     string
	iterations   int
	seed         uint64
	subsample    int
	memory       string
	workers      int
	model        string
	json         bool
}

// fitResult is the -json object of `zonal fit`; absent values are null.
type fitResult struct {
	Method         string   `json:"method"`
	Map            *string  `json:"map"`
	Task           string   `json:"task"`
	NTrain         int      `json:"n_train"`
	NTest          int      `json:"n_test"`
	D              int      `json:"d"`
	Features       *int     `json:"features"`
	Centers        *int     `json:"centers"`
	Cells          *int     `json:"cells"`
	RMSE           *float64 `json:"rmse"`
	MAE            *float64 `json:"mae"`
	R2             *float64 `json:"r2"`
	Accuracy       *float64 `json:"accuracy"`
	FitSeconds     float64  `json:"fit_seconds"`
	PredictSeconds float64  `json:"predict_seconds"`
}

func runFit(args []string, stdout, stderr io.Writer) error {
	var f fitFlags
	fs := newFlagSet("fit", fitSynopsis, stderr)
	fs.StringVar(&f.train, "train", "", "training data (LIBSVM or CSV, gzip allowed; CSV target column y or the first)")
	fs.StringVar(&f.test, "test", "", "test data in the same format; without it -split holds out part of -train")
	fs.Float64Var(&f.split, "split", 0.8, "fraction of -train used for training when there is no -test")
	fs.BoolVar(&f.standardize, "standardize", false, "standardize each feature (mean 0, variance 1 on the training rows); stored in the model")
	fs.Float64Var(&f.scale, "scale", 1, "multiply every feature by this factor first (e.g. 0.00392156862745098 = 1/255 for MNIST pixels); stored in the model")
	fs.StringVar(&f.task, "task", "auto", "auto, regression or classification (auto: integer labels with at most 20 values are classes)")
	fs.StringVar(&f.kernel, "kernel", "gaussian", "kernel: gaussian exp(-|x-y|^2/(2 sigma^2)), laplacian exp(-|x-y|/sigma), polynomial (gamma <x,y> + coef0)^degree")
	fs.Float64Var(&f.sigma, "sigma", 1, "bandwidth of the gaussian and laplacian kernels")
	fs.Float64Var(&f.gamma, "gamma", 1, "polynomial kernel scale")
	fs.Float64Var(&f.coef0, "coef0", 1, "polynomial kernel offset")
	fs.IntVar(&f.degree, "degree", 2, "polynomial kernel degree")
	fs.Float64Var(&f.lambda, "lambda", 1e-6, "ridge parameter: objective (1/n)|f(X)-y|^2 + lambda |f|^2 (scikit-learn's alpha = lambda n)")
	fs.StringVar(&f.method, "method", "falkon", "exact (Cholesky of K + lambda n I), ridge (on -map features), falkon, park")
	fs.StringVar(&f.mapName, "map", "nystrom", "feature map for -method ridge: "+mapNames())
	fs.IntVar(&f.features, "features", 1024, "number of features D for -method ridge")
	fs.IntVar(&f.centers, "centers", 1000, "Nystrom centres M for falkon; total over the cells for park")
	fs.IntVar(&f.cells, "cells", 4, "Voronoi cells Q for -method park")
	fs.StringVar(&f.sampling, "sampling", "uniform", "FALKON centre sampling: uniform or rls (ridge leverage scores)")
	fs.IntVar(&f.iterations, "iterations", 20, "maximum CG iterations (falkon, park)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (split, centres, features)")
	fs.IntVar(&f.subsample, "subsample", 0, "use only this many training rows (seeded uniform subsample); 0 = all")
	fs.StringVar(&f.memory, "memory", "", "memory budget for kernel matrices, e.g. 8G (default 2G): exact KRR refuses above it, FALKON caches K_nM below it")
	fs.IntVar(&f.workers, "workers", 0, "ParK cells fitted at once (0 = GOMAXPROCS)")
	fs.StringVar(&f.model, "model", "", "write the fitted model (with its scaler and classes) to this file")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of text")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.train == "" {
		return usageError{errors.New("-train is required")}
	}
	if f.test == "" && !(f.split > 0 && f.split < 1) {
		return usageError{fmt.Errorf("-split must be in (0, 1), got %g", f.split)}
	}
	if !(f.scale > 0) || math.IsInf(f.scale, 0) {
		return usageError{fmt.Errorf("-scale must be positive and finite, got %g", f.scale)}
	}
	task, err := solvers.ParseTask(f.task)
	if err != nil {
		return usageError{err}
	}
	budget, err := parseBytes(f.memory)
	if err != nil {
		return usageError{err}
	}
	be, err := backend.FromEnv()
	if err != nil {
		return err
	}
	k, err := kernelByName(f)
	if err != nil {
		return usageError{err}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	train, test, err := loadFitData(f)
	if err != nil {
		return err
	}
	ntr, d := train.X.Dims()
	nte, _ := test.X.Dims()

	enc, err := solvers.NewEncoding(train.Y, task)
	if err != nil {
		return fmt.Errorf("%s: %w", f.train, err)
	}
	bar := newProgressBar(stderr)
	defer bar.done()
	opts := solvers.Options{Backend: be, MemoryBudget: budget, Progress: bar.report}

	start := time.Now()
	scaler, xtr, err := fitScaler(f, train.X)
	if err != nil {
		return err
	}
	y, err := enc.Targets(train.Y)
	if err != nil {
		return err
	}
	res := fitResult{Method: f.method, Task: enc.Task.String(), NTrain: ntr, NTest: nte, D: d}
	var model solvers.Model
	switch f.method {
	case "exact":
		model, err = solvers.FitKRR(ctx, k, xtr, y, f.lambda, opts)
	case "ridge":
		spec := mapSpec{Method: f.mapName, Kernel: k, KernelID: f.kernel, Sigma: f.sigma, Gamma: f.gamma,
			Coef0: f.coef0, Degree: f.degree, Features: f.features, Lambda: f.lambda, Seed: f.seed, Backend: be}
		var fm kernels.FeatureMap
		fm, err = buildMap(ctx, spec, xtr)
		if err == nil {
			model, err = solvers.FitRidge(ctx, fm, xtr, y, f.lambda, opts)
			D := fm.Dim()
			res.Map, res.Features = &f.mapName, &D
		}
	case "falkon":
		model, err = solvers.FitFalkon(ctx, k, xtr, y, f.lambda, solvers.FalkonOptions{Options: opts,
			Centers: f.centers, Sampling: f.sampling, Iterations: f.iterations, Seed: f.seed})
		res.Centers = &f.centers
	case "park":
		model, err = solvers.FitParK(ctx, k, xtr, y, f.lambda, solvers.ParKOptions{Options: opts,
			Cells: f.cells, Centers: f.centers, Iterations: f.iterations, Seed: f.seed, Workers: f.workers})
		res.Centers, res.Cells = &f.centers, &f.cells
	default:
		return usageError{fmt.Errorf("unknown -method %q (exact, ridge, falkon, park)", f.method)}
	}
	if err != nil {
		return err
	}
	pipe, err := solvers.NewPipeline(scaler, enc, model)
	if err != nil {
		return err
	}
	res.FitSeconds = time.Since(start).Seconds()
	bar.done()

	start = time.Now()
	pred := make([]float64, nte)
	if err := pipe.PredictLabels(pred, test.X); err != nil {
		return err
	}
	res.PredictSeconds = time.Since(start).Seconds()
	m := enc.Evaluate(pred, test.Y)
	res.RMSE, res.MAE, res.R2, res.Accuracy = finite(m.RMSE), finite(m.MAE), finite(m.R2), finite(m.Accuracy)

	if f.model != "" {
		if err := saveModel(f.model, pipe); err != nil {
			return err
		}
	}
	if f.json {
		e := json.NewEncoder(stdout)
		return e.Encode(res)
	}
	desc := f.method
	switch f.method {
	case "ridge":
		desc += fmt.Sprintf(" on %s features (D = %d)", f.mapName, *res.Features)
	case "falkon":
		desc += fmt.Sprintf(" (M = %d centres)", f.centers)
	case "park":
		desc += fmt.Sprintf(" (Q = %d cells, M = %d centres in all)", f.cells, f.centers)
	}
	fmt.Fprintf(stdout, "%s, %s kernel %s, lambda %g, backend %s\n", desc, f.kernel, kernelDesc(k), f.lambda, be.Name())
	fmt.Fprintf(stdout, "task %s: %d training rows, %d test rows, %d features\n", enc.Task, ntr, nte, d)
	if m.Accuracy != nil {
		fmt.Fprintf(stdout, "test accuracy %.4f\n", *m.Accuracy)
	}
	if m.RMSE != nil {
		fmt.Fprintf(stdout, "test RMSE %.6g  MAE %.6g  R^2 %.4f\n", *m.RMSE, *m.MAE, *m.R2)
	}
	fmt.Fprintf(stdout, "fit %.3f s, predict %.3f s\n", res.FitSeconds, res.PredictSeconds)
	if pk, ok := model.(*solvers.ParK); ok {
		sizes := slices.Clone(pk.CellSizes())
		slices.Sort(sizes)
		fmt.Fprintf(stdout, "cell sizes: min %d, median %d, max %d\n", sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
	}
	if f.model != "" {
		fmt.Fprintf(stdout, "model written to %s\n", f.model)
	}
	return nil
}

func kernelDesc(k kernels.Kernel) string {
	s := k.String()
	if i := strings.IndexByte(s, '('); i >= 0 {
		return s[i:]
	}
	return s
}

// finite maps nil and NaN to nil (JSON null).
func finite(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

func kernelByName(f fitFlags) (kernels.Kernel, error) {
	switch f.kernel {
	case "gaussian":
		return kernels.NewGaussian(f.sigma)
	case "laplacian":
		return kernels.NewLaplacian(f.sigma)
	case "polynomial":
		return kernels.NewPolynomial(f.degree, f.gamma, f.coef0)
	}
	return nil, fmt.Errorf("unknown -kernel %q (gaussian, laplacian, polynomial)", f.kernel)
}

// parseBytes parses a byte count with an optional K, M, G or T suffix
// (powers of 1024); "" is 0 (the solvers' default).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	if s == "" {
		return 0, nil
	}
	mult := 1.0
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("bad -memory %q (want e.g. 512M, 8G)", s)
	}
	return int64(v * mult), nil
}

// loadFitData reads the training data and the test data (from -test, or
// a seeded -split of -train), then applies -subsample to the training part.
func loadFitData(f fitFlags) (train, test *dataset.Data, err error) {
	all, err := dataset.ReadFile(f.train, dataset.Options{})
	if err != nil {
		return nil, nil, err
	}
	if all.X == nil || all.Y == nil {
		return nil, nil, fmt.Errorf("%s: no labelled dense data", f.train)
	}
	n, d := all.X.Dims()
	if f.test != "" {
		train = all
		// A LIBSVM test file may stop below column d (zeros are omitted):
		// pad it; an index beyond d, or a CSV with another column count,
		// is an error.
		test, err = dataset.ReadFile(f.test, dataset.Options{MinCols: d, MaxCols: d})
		if err != nil {
			return nil, nil, fmt.Errorf("test data for a model of %d features: %w", d, err)
		}
		if test.Y == nil {
			return nil, nil, fmt.Errorf("%s: test data has no labels", f.test)
		}
	} else {
		tr, te := dataset.Split(n, f.split, f.seed)
		if len(tr) == 0 || len(te) == 0 {
			return nil, nil, fmt.Errorf("%s: %d rows are too few to split", f.train, n)
		}
		if train, err = all.Subset(tr); err != nil {
			return nil, nil, err
		}
		if test, err = all.Subset(te); err != nil {
			return nil, nil, err
		}
	}
	if f.subsample > 0 {
		ntr, _ := train.X.Dims()
		if f.subsample < ntr {
			rows, err := dataset.Subsample(ntr, f.subsample, f.seed)
			if err != nil {
				return nil, nil, err
			}
			if train, err = train.Subset(rows); err != nil {
				return nil, nil, err
			}
		}
	}
	train.Sparse, test.Sparse = nil, nil
	runtime.GC()
	return train, test, nil
}

// fitScaler builds the input scaler (-scale, then -standardize on the
// training rows) and returns it with the scaled training matrix.
func fitScaler(f fitFlags, x *mat.Dense) (*solvers.Scaler, *mat.Dense, error) {
	if f.scale == 1 && !f.standardize {
		return nil, x, nil
	}
	_, d := x.Dims()
	mean := make([]float64, d)
	scale := make([]float64, d)
	for j := range scale {
		scale[j] = 1 / f.scale
	}
	if f.standardize {
		st, err := dataset.FitStandardizer(x)
		if err != nil {
			return nil, nil, err
		}
		// Standardizing f.scale*x gives (x - mu)/s, the same as
		// standardizing x: -scale does not matter then.
		copy(mean, st.Mean)
		copy(scale, st.Scale)
	}
	s, err := solvers.NewScaler(mean, scale)
	if err != nil {
		return nil, nil, err
	}
	n, _ := x.Dims()
	xs := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		dst, src := xs.RawRowView(i), x.RawRowView(i)
		for j, v := range src {
			dst[j] = (v - mean[j]) / scale[j]
		}
	}
	return s, xs, nil
}

func saveModel(path string, p *solvers.Pipeline) error {
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

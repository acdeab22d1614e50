package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

const fitSynopsis = "-train FILE|- [-test FILE|- | -split 0.8] [-format csv|libsvm] [-sparse auto|yes|no] [-tfidf] [-normalize] [-standardize=false] [-task auto|regression|classification] " +
	"[-kernel gaussian] [-sigma auto|scale|S] [-lambda auto|L] (-method exact | -method ridge -map NAME -features D | -method falkon [-centers auto|M] | " +
	"-method park -cells Q -centers M [-partition kmeans|subsample|greedy] [-cell-cap C] [-cell-centers size|effdim] [-cell-validation F]) [-precision float64|float32] [-iterations T] [-seed N] [-model out.zonal] [-json]"

func init() {
	addCommand(command{name: "fit", summary: "fit a kernel model (exact, ridge on features, FALKON, ParK) and report its test metric", run: fitCommand})
}

// fitMethods are the -method names.
var fitMethods = []string{"exact", "ridge", "falkon", "park"}

// fitConfig is a validated `zonal fit` command line.
type fitConfig struct {
	data                     dataFlags
	train, test              string
	split                    float64
	standardize              bool
	standardizeAuto          bool // neither -standardize nor -scale given
	scale                    float64
	task                     solvers.Task
	kernel                   kernelParams
	lambda                   float64 // 0: auto
	sigmaMode                string  // "auto", "scale" or "" (kernel.Sigma given)
	method, mapName          string
	features, centers, cells int
	park                     parkFlags
	sampling                 string
	iterations               int
	seed                     uint64
	subsample                int
	memory                   int64
	precision                zonal.Precision
	workers                  int
	model                    string
	json                     bool
	text                     dataset.TextOptions // -tfidf, -normalize
	sparse                   string              // -sparse auto, yes or no
}

// fitResult is the -json object of `zonal fit`; absent values are null.
type fitResult struct {
	Method      string     `json:"method"`
	Map         *string    `json:"map"`
	Task        string     `json:"task"`
	Kernel      string     `json:"kernel"`
	Sigma       *float64   `json:"sigma"`
	Gamma       *float64   `json:"gamma"`
	Coef0       *float64   `json:"coef0"`
	Degree      *int       `json:"degree"`
	Lambda      float64    `json:"lambda"`
	Standardize bool       `json:"standardize"`
	Chosen      fitChoices `json:"chosen"`
	Seed        uint64     `json:"seed"`
	Backend     string     `json:"backend"`
	NTrain      int        `json:"n_train"`
	NTest       int        `json:"n_test"`
	D           int        `json:"d"`
	Features    *int       `json:"features"`
	Centers     *int       `json:"centers"`
	Cells       *int       `json:"cells"`
	Partition   *parkJSON  `json:"partition"`
	Precision   *string    `json:"precision"` // ridge, falkon, park only
	metricsJSON
	FitSeconds     float64 `json:"fit_seconds"`
	PredictSeconds float64 `json:"predict_seconds"`
	TFIDF          bool    `json:"tfidf"`
	Normalize      bool    `json:"normalize"`
	Sparse         bool    `json:"sparse"`
	Density        float64 `json:"density"` // nnz / (n d) of the training file (LIBSVM), 0 for CSV
}

// fitOutcome is what runFit hands to reportFit.
type fitOutcome struct {
	res        fitResult
	kernel     kernels.Kernel
	metrics    solvers.Metrics
	cfg        fitConfig           // c with the auto values filled in
	cellSizes  []int               // ParK only
	parkReport *solvers.ParKReport // ParK only
	modelSaved bool
}

func fitCommand(ctx context.Context, e *env, args []string) error {
	cfg, err := parseFit(e.stderr, args)
	if err != nil {
		return err
	}
	out, err := runFit(ctx, e, cfg)
	if err != nil {
		return err
	}
	return reportFit(e.stdout, out.cfg, out)
}

// parseFit parses and validates the flags of `zonal fit`.
func parseFit(stderr io.Writer, args []string) (fitConfig, error) {
	var c fitConfig
	var task, memory, sigma, lambda, centers, precision string
	fs := newFlagSet("fit", fitSynopsis, stderr)
	fs.StringVar(&c.train, "train", "", "training data (LIBSVM or CSV, gzip allowed; CSV target column y or the first; - for standard input)")
	fs.StringVar(&c.test, "test", "", "test data in the same format (- for standard input); without it -split holds out part of -train")
	c.data.register(fs)
	fs.Float64Var(&c.split, "split", 0.8, "fraction of -train used for training when there is no -test, in (0, 1)")
	fs.BoolVar(&c.standardize, "standardize", true, "standardize each feature (mean 0, variance 1 on the training rows; -standardize=false to turn off, as giving -scale alone does); when neither is given and -sigma and -lambda are auto, the raw features are tuned too and kept if they score better; stored in the model")
	fs.Float64Var(&c.scale, "scale", 1, "multiply every feature by this factor (e.g. 0.00392156862745098 = 1/255 for MNIST pixels) instead of standardizing; stored in the model")
	fs.StringVar(&task, "task", "auto", "auto, regression or classification (auto: two integer values, or integer values each seen at least 5 times, are classes)")
	fs.StringVar(&c.kernel.Name, "kernel", "gaussian", kernelHelp())
	fs.StringVar(&sigma, "sigma", autoValue, "bandwidth of the gaussian and laplacian kernels: a number, auto (the median distance m between training rows; with -lambda auto, the best of a golden-section search on log sigma over m x [1/8, 8]) or scale (scikit-learn's gamma = 'scale': sqrt(d var(X) / 2))")
	fs.Float64Var(&c.kernel.Gamma, "gamma", 1, "polynomial kernel scale")
	fs.Float64Var(&c.kernel.Coef0, "coef0", 1, "polynomial kernel offset")
	fs.IntVar(&c.kernel.Degree, "degree", 2, "polynomial kernel degree")
	fs.StringVar(&lambda, "lambda", autoValue, "ridge parameter: objective (1/n)|f(X)-y|^2 + lambda |f|^2 (scikit-learn's alpha = lambda n); auto: the best of 1e-10 ... 1e-1 by leave-one-out on at most 4000 training rows (exact: on at most 2000, by an 80/20 split above 1000), scaled by rows/n when that is a subsample")
	fs.StringVar(&c.method, "method", "falkon", "exact (Cholesky of K + lambda n I), ridge (on -map features), falkon, park")
	fs.StringVar(&c.mapName, "map", "nystrom", "feature map for -method ridge: "+mapNames())
	fs.IntVar(&c.features, "features", 1024, "number of features D for -method ridge")
	fs.StringVar(&centers, "centers", autoValue, "Nystrom centres M for falkon; total over the cells for park; auto: ceil(sqrt(n) ln n), at most n and what -memory holds")
	fs.IntVar(&c.cells, "cells", 4, "Voronoi cells Q for -method park")
	c.park.register(fs)
	fs.StringVar(&c.sampling, "sampling", "uniform", "FALKON centre sampling: uniform or rls (ridge leverage scores)")
	fs.IntVar(&c.iterations, "iterations", 20, "maximum CG iterations (falkon, park), at least 1")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (split, centres, features)")
	fs.IntVar(&c.subsample, "subsample", 0, "use only this many training rows (seeded uniform subsample); 0 = all")
	fs.StringVar(&memory, "memory", "", "memory budget for kernel matrices, e.g. 8G (default 2G): exact KRR refuses above it, FALKON caches K_nM below it")
	fs.StringVar(&precision, "precision", "float64", "precision of FALKON's and ParK's K_nM and of ridge's feature blocks: float64, or float32 (half the memory, so -memory caches K_nM for twice the centres and holds ridge blocks of twice the rows; kernel blocks and features computed in float32, Z^T Z summed in float64 across blocks; factors, CG, solves and coefficients stay float64; recorded in the model); not for -method exact")
	fs.IntVar(&c.workers, "workers", 0, "ParK cells fitted at once (0 = GOMAXPROCS)")
	fs.StringVar(&c.model, "model", "", "write the fitted model (with its scaler and classes) to this file")
	fs.BoolVar(&c.json, "json", false, "print one JSON object instead of text")
	fs.BoolVar(&c.text.TFIDF, "tfidf", false, "weight each feature (a count >= 0) by its smoothed inverse document frequency ln((1+n)/(1+df_j)) + 1 on the training rows (scikit-learn's TfidfTransformer); stored in the model")
	fs.BoolVar(&c.text.Normalize, "normalize", false, "divide each row (after -tfidf) by its Euclidean norm; stored in the model")
	fs.StringVar(&c.sparse, "sparse", "auto", fmt.Sprintf("keep LIBSVM input as sparse CSR rows: auto (when its density nnz/(n d) is below %g%%), yes or no; sparse input is not standardized (centering would make every row dense)", 100*sparseDensity))
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if c.sparse != "auto" && c.sparse != "yes" && c.sparse != "no" {
		return c, usagef("-sparse %q: want auto, yes or no", c.sparse)
	}
	if c.train == "" {
		return c, usagef("-train is required")
	}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	if setFlags["scale"] && !setFlags["standardize"] {
		c.standardize = false // -scale asks for its own input transformation
	}
	c.standardizeAuto = !setFlags["scale"] && !setFlags["standardize"]
	var err error
	if c.sigmaMode, c.kernel.Sigma, err = parseAutoFloat("sigma", sigma, scaleValue); err != nil {
		return c, err
	}
	var lambdaMode string
	if lambdaMode, c.lambda, err = parseAutoFloat("lambda", lambda); err != nil {
		return c, err
	}
	if lambdaMode == "" {
		if err := positiveFloat("lambda", c.lambda); err != nil {
			return c, err
		}
	}
	if c.centers, err = parseAutoCount("centers", centers); err != nil {
		return c, err
	}
	if c.task, err = solvers.ParseTask(task); err != nil {
		return c, usageError{err}
	}
	if c.memory, err = parseBytes(memory); err != nil {
		return c, usageError{err}
	}
	if c.precision, err = zonal.ParsePrecision(precision); err != nil || precision == "" {
		return c, usagef("-precision %q: want float64 or float32", precision)
	}
	if c.precision != zonal.Float64 && c.method != "falkon" && c.method != "park" && c.method != "ridge" {
		return c, usagef("-precision %s applies to -method ridge, falkon and park only, not %s (exact KRR factors the full n x n kernel matrix, which stays float64)", c.precision, c.method)
	}
	if !(c.split > 0 && c.split < 1) {
		return c, usagef("-split must be in (0, 1), got %g", c.split)
	}
	if !slices.Contains(fitMethods, c.method) {
		return c, usagef("unknown -method %q (%s)", c.method, strings.Join(fitMethods, ", "))
	}
	if _, ok := mapBuilders[c.mapName]; !ok {
		return c, usagef("unknown -map %q; available: %s", c.mapName, mapNames())
	}
	if c.sampling != "uniform" && c.sampling != "rls" {
		return c, usagef("-sampling %q: want uniform or rls", c.sampling)
	}
	if _, err := checkKernel(c.kernel, c.sigmaMode != ""); err != nil {
		return c, err
	}
	return c, firstError(
		c.park.check(),
		c.data.checkInputs([2]string{"train", c.train}, [2]string{"test", c.test}),
		positiveFloat("scale", c.scale),
		countAtLeast("features", c.features, 1),
		countAtLeast("cells", c.cells, 1),
		countAtLeast("iterations", c.iterations, 1),
		countAtLeast("subsample", c.subsample, 0),
		countAtLeast("workers", c.workers, 0),
	)
}

// runFit reads the data, fits the model of c, evaluates it on the test rows
// and writes the model file.
func runFit(ctx context.Context, e *env, c fitConfig) (*fitOutcome, error) {
	if err := checkOutputPath("model", c.model); err != nil {
		return nil, err
	}
	be, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	train, test, density, err := loadFitData(e, c)
	if err != nil {
		return nil, err
	}
	if train.X == nil {
		return runSparseFit(ctx, e, c, train, test, density, be)
	}
	text, err := fitText(c, train.X)
	if err != nil {
		return nil, err
	}
	ntr, d := train.X.Dims()
	nte, _ := test.X.Dims()
	enc, err := fitEncoding(c, train.Y)
	if err != nil {
		return nil, err
	}
	bar := newProgressBar(e.stderr)
	defer bar.done()
	opts := solvers.Options{Backend: be, MemoryBudget: c.memory, Progress: bar.report}

	start := time.Now()
	var st *dataset.Standardizer
	var xtr *mat.Dense
	var chosen fitChoices
	c, err = chooseWithinMemory(c, ntr, func() (fitConfig, error) {
		cc, s, x, ch, err := scaleAndChoose(ctx, c, train, enc.Task, be, bar.report)
		st, xtr, chosen = s, x, ch
		return cc, err
	})
	if err != nil {
		return nil, err
	}
	k, err := newKernel(c.kernel)
	if err != nil {
		return nil, err
	}
	res := newFitResult(c, enc, ntr, nte, d, chosen, be)
	y, err := enc.Targets(train.Y)
	if err != nil {
		return nil, err
	}
	spec := newMapSpec(c, k, be)
	model, err := fitMethod(ctx, c, k, xtr, y, opts, &res, func() (kernels.FeatureMap, error) { return buildMap(ctx, spec, xtr) })
	if err != nil {
		return nil, err
	}
	var scaler *solvers.Scaler
	if st != nil {
		if scaler, err = solvers.NewScaler(st.Mean, st.Scale); err != nil {
			return nil, err
		}
	}
	pipe, err := solvers.NewPipeline(scaler, enc, model)
	if err == nil {
		pipe, err = pipe.WithText(text)
	}
	if err != nil {
		return nil, err
	}
	res.Density = density
	res.FitSeconds = time.Since(start).Seconds()
	bar.done()
	return evaluateFit(e, c, res, k, model, pipe, test.Y, func(pred []float64) error { return pipe.PredictLabels(pred, test.X) })
}

// fitMethod fits the model of -method on x (dense; CSR once the solvers
// take it, see solverInput), with the map that build makes for -method
// ridge, and records the sizes in res.
func fitMethod(ctx context.Context, c fitConfig, k kernels.Kernel, x mat.Matrix, y *mat.Dense, opts solvers.Options,
	res *fitResult, build func() (kernels.FeatureMap, error)) (solvers.Model, error) {
	var fm kernels.FeatureMap
	if c.method == "ridge" {
		var err error
		if fm, err = build(); err != nil {
			return nil, err
		}
		D := fm.Dim()
		res.Map, res.Features, res.Precision = &c.mapName, &D, ptr(c.precision.String())
	}
	xs := x
	switch c.method {
	case "exact":
		return solvers.FitKRR(ctx, k, xs, y, c.lambda, opts)
	case "ridge":
		return solvers.FitRidge(ctx, fm, xs, y, c.lambda, solvers.RidgeOptions{Options: opts, Precision: c.precision})
	case "falkon":
		res.Centers, res.Precision = &c.centers, ptr(c.precision.String())
		return solvers.FitFalkon(ctx, k, xs, y, c.lambda, solvers.FalkonOptions{Options: opts,
			Centers: c.centers, Sampling: c.sampling, Iterations: c.iterations, Seed: c.seed, Precision: c.precision})
	case "park":
		res.Centers, res.Cells, res.Precision = &c.centers, &c.cells, ptr(c.precision.String())
		return solvers.FitParK(ctx, k, xs, y, c.lambda, c.park.options(solvers.ParKOptions{Options: opts,
			Cells: c.cells, Centers: c.centers, Iterations: c.iterations, Seed: c.seed, Workers: c.workers, Precision: c.precision}))
	}
	return nil, usagef("unknown -method %q (%s)", c.method, strings.Join(fitMethods, ", "))
}

// newMapSpec is the -map request of c with kernel k.
func newMapSpec(c fitConfig, k kernels.Kernel, be backend.Backend) mapSpec {
	return mapSpec{Method: c.mapName, Kernel: k, KernelID: c.kernel.Name, Sigma: c.kernel.Sigma, Gamma: c.kernel.Gamma,
		Coef0: c.kernel.Coef0, Degree: c.kernel.Degree, Features: c.features, Lambda: c.lambda, Seed: c.seed, Backend: be}
}

// fitEncoding checks the labels of a forced classification and returns the
// label encoding of the task.
func fitEncoding(c fitConfig, y []float64) (solvers.Encoding, error) {
	if c.task == solvers.TaskClassification {
		if err := checkClassLabels(y); err != nil {
			return solvers.Encoding{}, fmt.Errorf("%s: %w", c.train, err)
		}
	}
	enc, err := solvers.NewEncoding(y, c.task)
	if err != nil {
		return enc, fmt.Errorf("%s: %w", c.train, err)
	}
	return enc, nil
}

// newFitResult fills the settings of the -json result (c completed with
// the chosen values).
func newFitResult(c fitConfig, enc solvers.Encoding, ntr, nte, d int, chosen fitChoices, be backend.Backend) fitResult {
	res := fitResult{Method: c.method, Task: enc.Task.String(), NTrain: ntr, NTest: nte, D: d,
		Kernel: c.kernel.Name, Lambda: c.lambda, Standardize: c.standardize, Chosen: chosen, Seed: c.seed, Backend: be.Name(),
		TFIDF: c.text.TFIDF, Normalize: c.text.Normalize}
	if kk, _ := lookupKernel(c.kernel.Name); kk.bandwidth {
		res.Sigma = &c.kernel.Sigma
	} else {
		res.Gamma, res.Coef0, res.Degree = &c.kernel.Gamma, &c.kernel.Coef0, &c.kernel.Degree
	}
	return res
}

// evaluateFit predicts the test rows (predict), scores them against testY,
// and writes the model file of -model.
func evaluateFit(e *env, c fitConfig, res fitResult, k kernels.Kernel, model solvers.Model, pipe *solvers.Pipeline,
	testY []float64, predict func(pred []float64) error) (*fitOutcome, error) {
	start := time.Now()
	pred := make([]float64, len(testY))
	if err := predict(pred); err != nil {
		return nil, err
	}
	res.PredictSeconds = time.Since(start).Seconds()
	m := pipe.Encoding.Evaluate(pred, testY)
	res.metricsJSON = newMetricsJSON(m)
	out := &fitOutcome{res: res, kernel: k, metrics: m, cfg: c}
	if pk, ok := model.(*solvers.ParK); ok {
		out.cellSizes = slices.Clone(pk.CellSizes())
		out.parkReport = pk.Report()
		out.res.Partition = newParkJSON(pk.Report(), out.cellSizes)
	}
	if c.model != "" {
		if err := saveModel(e, c.model, pipe); err != nil {
			return nil, err
		}
		out.modelSaved = true
	}
	return out, nil
}

// reportFit prints the outcome: one JSON object, or a few lines of text.
func reportFit(w io.Writer, c fitConfig, out *fitOutcome) error {
	res, m := out.res, out.metrics
	if c.json {
		return json.NewEncoder(w).Encode(res)
	}
	desc := c.method
	switch c.method {
	case "ridge":
		desc += fmt.Sprintf(" on %s features (D = %d%s)", c.mapName, *res.Features, precisionNote(c.precision, "features"))
	case "falkon":
		desc += fmt.Sprintf(" (M = %d centres%s)", c.centers, precisionNote(c.precision, "K_nM"))
	case "park":
		desc += fmt.Sprintf(" (Q = %d cells, M = %d centres in all%s)", c.cells, c.centers, precisionNote(c.precision, "K_nM"))
	}
	if line := res.Chosen.line(c); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%s, %s kernel %s, lambda %g, backend %s\n", desc, c.kernel.Name, kernelDesc(out.kernel), c.lambda, res.Backend)
	fmt.Fprintf(w, "task %s: %d training rows, %d test rows, %d features\n", res.Task, res.NTrain, res.NTest, res.D)
	if m.Accuracy != nil {
		fmt.Fprintf(w, "test accuracy %.4f\n", *m.Accuracy)
	}
	if m.RMSE != nil {
		fmt.Fprintf(w, "test RMSE %.6g  MAE %.6g  R^2 %.4f\n", *m.RMSE, *m.MAE, *m.R2)
	}
	fmt.Fprintf(w, "fit %.3f s, predict %.3f s\n", res.FitSeconds, res.PredictSeconds)
	if sizes := out.cellSizes; len(sizes) > 0 {
		slices.Sort(sizes)
		fmt.Fprintf(w, "cell sizes: min %d, median %d, max %d\n", sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
	}
	if r := out.parkReport; r != nil {
		fmt.Fprintf(w, "partition %s (cap %g, centres by %s): largest cell / (n/Q) = %.2f, partition %.3f s\n",
			r.Partition, r.Cap, r.Budget, r.Imbalance, r.PartitionSeconds)
		if v := cellValidation(r); len(v) > 0 {
			fmt.Fprintf(w, "cell validation RMSE: min %.4g, median %.4g, max %.4g\n", v[0], v[len(v)/2], v[len(v)-1])
		}
	}
	if res.TFIDF || res.Normalize {
		fmt.Fprintf(w, "text transform: %s\n", textDesc(c.text))
	}
	if out.modelSaved {
		fmt.Fprintf(w, "model written to %s\n", c.model)
	}
	return nil
}

// precisionNote is ", float32 " + what (K_nM, features) for a float32
// fit, else "".
func precisionNote(p zonal.Precision, what string) string {
	if p == zonal.Float64 {
		return ""
	}
	return ", " + p.String() + " " + what
}

func kernelDesc(k kernels.Kernel) string {
	s := k.String()
	if i := strings.IndexByte(s, '('); i >= 0 {
		return s[i:]
	}
	return s
}

// metricsJSON are the test metrics in -json (null where they do not apply).
type metricsJSON struct {
	RMSE     *float64 `json:"rmse"`
	MAE      *float64 `json:"mae"`
	R2       *float64 `json:"r2"`
	Accuracy *float64 `json:"accuracy"`
}

func newMetricsJSON(m solvers.Metrics) metricsJSON {
	return metricsJSON{finite(m.RMSE), finite(m.MAE), finite(m.R2), finite(m.Accuracy)}
}

// finite maps nil and NaN to nil (JSON null).
func finite(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

// checkFitMemory refuses sizes whose main allocation cannot fit in the
// -memory budget, before any of it is made: the D x D Gram matrix of -method
// ridge, the M x M array of FALKON's and ParK's
// preconditioners.
func checkFitMemory(c fitConfig, n int) error {
	switch c.method {
	case "ridge":
		D := c.features
		if strings.HasSuffix(c.mapName, "nystrom") {
			D = min(D, n) // landmarks are training rows
		}
		// FitRidge streams the features in row blocks: the D x D Gram
		// matrix is what must fit (FitRidge checks the rest).
		return checkMemory(fmt.Sprintf("-features %d (the %d x %d Gram matrix)", c.features, D, D),
			budget.Floats(D, D), c.memory)
	case "falkon", "park":
		return checkMemory(fmt.Sprintf("-centers %d (the %d x %d preconditioner)", c.centers, c.centers, c.centers),
			budget.Floats(c.centers, c.centers), c.memory)
	}
	return nil
}

// maxForcedClasses is how many distinct values a -task classification target
// with non-integer values may have before it is refused as continuous.
const maxForcedClasses = 20

// checkClassLabels refuses a forced classification of a target that looks
// continuous: more than maxForcedClasses distinct values, some of them not
// integers.
func checkClassLabels(y []float64) error {
	vals := slices.Clone(y)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	frac := 0
	for _, v := range vals {
		if v != math.Trunc(v) {
			frac++
		}
	}
	if len(vals) > maxForcedClasses && frac > 0 {
		return fmt.Errorf("-task classification: the target has %d distinct values, %d of them not integers: it looks continuous, not like class labels (use -task regression or -task auto)", len(vals), frac)
	}
	return nil
}

// parseBytes parses a byte count with an optional K, M, G or T suffix
// (powers of 1024); "" is 0 (the solvers' default).
func parseBytes(flagValue string) (int64, error) {
	s := strings.TrimSpace(strings.ToUpper(flagValue))
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
	if err != nil || !(v*mult >= 1) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("bad -memory %q (want a positive size, e.g. 512M, 8G)", flagValue)
	}
	return int64(v * mult), nil
}

// loadFitData reads the training data and the test data (from -test, or
// a seeded -split of -train), then applies -subsample to the training part.
// LIBSVM input is read as CSR; it stays so (X nil, Sparse set) when
// keepSparse says so, else X is filled and Sparse dropped. density is
// nnz / (n d) of the training file (0 for CSV).
func loadFitData(e *env, c fitConfig) (train, test *dataset.Data, density float64, err error) {
	train, test, density, err = readFitData(e, c)
	if err != nil {
		return nil, nil, 0, err
	}
	if train.X == nil && !keepSparse(e, c, train, density) {
		for _, p := range []*dataset.Data{train, test} {
			if p.X, err = denseOf(p.Sparse); err != nil {
				return nil, nil, 0, fmt.Errorf("%s: %w", c.train, err)
			}
		}
	}
	if train.X != nil {
		train.Sparse, test.Sparse = nil, nil
	}
	runtime.GC()
	return train, test, density, nil
}

func readFitData(e *env, c fitConfig) (train, test *dataset.Data, density float64, err error) {
	format, err := c.data.formatOf("train", c.train)
	if err != nil {
		return nil, nil, 0, err
	}
	// LIBSVM is read as CSR only: the dense matrix is built after the split,
	// and only when the rows are not kept sparse.
	ropts := dataset.Options{NoDense: format == "libsvm"}
	all, err := readData(e, c.data, "train", c.train, ropts)
	if err != nil {
		return nil, nil, 0, err
	}
	if all.Y == nil {
		return nil, nil, 0, fmt.Errorf("%s: no labelled dense data", c.train)
	}
	n, d := all.Dims()
	if all.Sparse != nil {
		density = float64(all.Sparse.NNZ()) / (float64(n) * float64(d))
	}
	if c.test != "" {
		train = all
		// A LIBSVM test file may stop below column d (zeros are omitted):
		// pad it; an index beyond d, or a CSV with another column count,
		// is an error.
		topts := dataset.Options{MinCols: d, MaxCols: d}
		if tf, err := c.data.formatOf("test", c.test); err == nil && tf == "libsvm" && all.X == nil {
			topts.NoDense = true
		}
		test, err = readData(e, c.data, "test", c.test, topts)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("test data for a model of %d features: %w", d, err)
		}
		if test.Y == nil {
			return nil, nil, 0, fmt.Errorf("%s: test data has no labels", c.test)
		}
		if (test.X == nil) != (all.X == nil) {
			return nil, nil, 0, fmt.Errorf("%s and %s: give both in LIBSVM or both in CSV", c.train, c.test)
		}
	} else {
		tr, te := dataset.Split(n, c.split, c.seed)
		if len(tr) == 0 || len(te) == 0 {
			return nil, nil, 0, fmt.Errorf("%s: %d rows are too few to split", c.train, n)
		}
		if train, err = all.Subset(tr); err != nil {
			return nil, nil, 0, err
		}
		if test, err = all.Subset(te); err != nil {
			return nil, nil, 0, err
		}
	}
	if ntr, _ := train.Dims(); c.subsample > 0 && c.subsample < ntr {
		rows, err := dataset.Subsample(ntr, c.subsample, c.seed)
		if err != nil {
			return nil, nil, 0, err
		}
		if train, err = train.Subset(rows); err != nil {
			return nil, nil, 0, err
		}
	}
	return train, test, density, nil
}

func saveModel(e *env, path string, p *solvers.Pipeline) error {
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		return err
	}
	return writeOutput(e, path, b)
}

func ptr[T any](v T) *T { return &v }

// chooseWithinMemory checks c's memory need for ntr training rows, runs
// choose (which fills in the auto values) and checks the need again with
// the values chosen. The first check is skipped while the centre count of
// falkon or park is still to be chosen.
func chooseWithinMemory(c fitConfig, ntr int, choose func() (fitConfig, error)) (fitConfig, error) {
	if c.centers > 0 || c.method != "falkon" && c.method != "park" {
		if err := checkFitMemory(c, ntr); err != nil {
			return c, err
		}
	}
	c, err := choose()
	if err != nil {
		return c, err
	}
	return c, checkFitMemory(c, ntr)
}

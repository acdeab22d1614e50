package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

const fitSynopsis = "-train FILE|- [-test FILE|- | -split 0.8] [-format csv|libsvm] [-sparse auto|yes|no] [-tfidf] [-normalize] [-standardize=false] [-task auto|regression|classification] [-loss squared|logistic] " +
	"[-kernel gaussian] [-sigma auto|scale|S] [-lambda auto|L] (-method exact | -method ridge -map NAME -features D | -method falkon [-centers auto|M] | " +
	"-method park -cells Q -centers M [-partition kmeans|subsample|greedy] [-cell-cap C] [-cell-centers size|effdim] [-cell-validation F]) [-precision float64|float32] [-iterations T] [-intercept auto|mean|fitted] [-calibration auto|platt|isotonic|none] [-threshold P] [-weights FILE | -weight-column NAME] [-class-weight none|balanced|LABEL:W,...] [-seed N] [-model out.zonal] [-json] [-dry-run]"

func init() {
	addCommand(command{name: "fit", summary: "fit a kernel model (exact, ridge on features, FALKON, ParK) and report its test metric", run: fitCommand})
}

// Values of -sigma, -lambda and -centers that ask the library to choose.
const (
	autoValue  = "auto"
	scaleValue = "scale" // -sigma only: scikit-learn's gamma = 'scale'
)

// fitConfig is a validated `zonal fit` command line: the data flags, and
// the estimator's options.
type fitConfig struct {
	shared    sharedFlags
	subsample int
	dryRun    bool
	threshold thresholdFlag
	opts      estimator.Options
}

// fitResult is the -json object of `zonal fit`; absent values are null.
type fitResult struct {
	Method      string           `json:"method"`
	Loss        string           `json:"loss"`
	Map         *string          `json:"map"`
	Task        string           `json:"task"`
	Kernel      string           `json:"kernel"`
	Sigma       *float64         `json:"sigma"`
	Gamma       *float64         `json:"gamma"`
	Coef0       *float64         `json:"coef0"`
	Degree      *int             `json:"degree"`
	Lambda      float64          `json:"lambda"`
	Standardize bool             `json:"standardize"`
	Intercept   string           `json:"intercept"`
	Chosen      estimator.Chosen `json:"chosen"`
	Seed        uint64           `json:"seed"`
	Backend     string           `json:"backend"`
	NTrain      int              `json:"n_train"`
	NTest       int              `json:"n_test"`
	D           int              `json:"d"`
	Features    *int             `json:"features"`
	Centers     *int             `json:"centers"`
	Cells       *int             `json:"cells"`
	Partition   *parkJSON        `json:"partition"`
	Precision   *string          `json:"precision"` // ridge, falkon, park only
	// RowsPrecision is the precision the fit held its dense training rows
	// in ("float32": FALKON -precision float32 on scaled rows; null for
	// CSR rows) and RowBytes their memory.
	RowsPrecision *string    `json:"rows_precision"`
	RowBytes      int64      `json:"row_bytes"`
	Solve         *solveJSON `json:"solve"`
	// Calibration is the method of the model's calibration ("none" when
	// it has none), CalibrationRows the rows it was fitted on.
	Calibration        string  `json:"calibration"`
	CalibrationRows    int     `json:"calibration_rows"`
	CalibrationFolds   int     `json:"calibration_folds"`
	CalibrationSeconds float64 `json:"calibration_seconds"`
	// Notes are the fit's decisions the user should hear of (the plan's,
	// printed before the fit, and those of the fit itself, such as a
	// calibration left out); never null.
	Notes []string `json:"notes"`
	evaluation
	FitSeconds     float64 `json:"fit_seconds"`
	PredictSeconds float64 `json:"predict_seconds"`
	TFIDF          bool    `json:"tfidf"`
	Normalize      bool    `json:"normalize"`
	Sparse         bool    `json:"sparse"`
	Density        float64 `json:"density"` // nnz / (n d) of the training rows (LIBSVM), 0 for CSV
	// Weights are the row weights of the fit (null when unweighted).
	Weights *weightsJSON `json:"weights"`
}

// weightsJSON is the "weights" object of -json: the sum of the training
// rows' weights, the number of rows of positive weight and the factor of
// each class (-class-weight; null without it). A model file records them
// (solvers.TrainingWeights), and `zonal predict -json` shows those of the
// model it loaded.
type weightsJSON struct {
	Sum          float64                 `json:"sum"`
	Rows         int                     `json:"rows"`
	ClassWeights []estimator.LabelWeight `json:"class_weights"`
}

// solveJSON is the "solve" object of -json: how the model's linear system
// was solved (solvers.Diagnostics), and whether it counts as solved.
type solveJSON struct {
	Solver     string  `json:"solver"`
	Iterations int     `json:"iterations"`
	Cap        int     `json:"cap"`
	Automatic  bool    `json:"automatic_cap"`
	Residual   float64 `json:"residual"`
	Tol        float64 `json:"tol"`
	Converged  bool    `json:"converged"`
	Stalled    bool    `json:"stalled"`
	Condition  float64 `json:"condition_estimate"`
	// NewtonSteps is the Newton steps of the logistic loss's fit (0 for
	// the squared loss); Iterations are then its CG iterations in all.
	NewtonSteps int    `json:"newton_steps,omitempty"`
	Solved      bool   `json:"solved"`
	Message     string `json:"message"`
}

func newSolveJSON(rep *estimator.Report) *solveJSON {
	d := rep.Diagnostics
	if !d.Known() {
		return nil
	}
	return &solveJSON{Solver: d.Solver, Iterations: d.Iterations, Cap: d.Cap, Automatic: d.Automatic, Residual: d.Residual,
		Tol: d.Tol, Converged: d.Converged, Stalled: d.Stalled, Condition: d.Condition, NewtonSteps: d.NewtonSteps, Solved: rep.Solved, Message: d.String()}
}

// fitOutcome is what runFit hands to reportFit.
type fitOutcome struct {
	res        fitResult
	rep        *estimator.Report
	kernel     kernels.Kernel
	modelSaved bool
	plan       *estimator.Plan // -dry-run: the plan only
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
	return reportFit(e.stdout, cfg, out)
}

// estimatorFlags are fit's own flags of the estimator's options (the
// shared ones are sharedFlags); their explanations are in `zonal help fit`.
type estimatorFlags struct {
	o                      *estimator.Options
	sigma, lambda, centers string
	precision              string
	calibration            string
	intercept              string
	cellBudget, sampling   string
}

func (f *estimatorFlags) register(fs *flag.FlagSet, o *estimator.Options) {
	f.o = o
	fs.StringVar(&f.sigma, "sigma", autoValue, "bandwidth: a number, auto or scale (see `zonal help fit`)")
	fs.Float64Var(&o.Gamma, "gamma", 1, "polynomial kernel scale")
	fs.Float64Var(&o.Coef0, "coef0", 1, "polynomial kernel offset")
	fs.IntVar(&o.Degree, "degree", 2, "polynomial kernel degree")
	fs.StringVar(&f.lambda, "lambda", autoValue, "ridge parameter of (1/n)|f(X)-y|^2 + lambda |f|^2 (-loss logistic: of the mean loss + lambda/2 |f|^2): a number or auto")
	fs.StringVar(&f.centers, "centers", autoValue, "Nystrom centres M (falkon; total over the cells for park): a count or auto")
	fs.IntVar(&o.Features, "features", estimator.DefaultFeatures, "feature count D of -method ridge")
	fs.Float64Var(&o.CellCap, "cell-cap", 0, "ParK: no cell above C n/Q rows (0 = no cap, else >= 1)")
	fs.StringVar(&f.cellBudget, "cell-centers", solvers.BudgetSize.String(), "ParK: share of -centers per cell: size or effdim")
	fs.Float64Var(&o.CellOverlap, "cell-overlap", 0, "ParK: fraction (0 to 1) of neighbouring rows each cell also trains on")
	fs.Float64Var(&o.CellValidation, "cell-validation", 0, "ParK: held-out fraction (0 to 0.5) of every cell, RMSE reported per cell")
	fs.StringVar(&f.sampling, "sampling", solvers.SamplingUniform.String(), "FALKON centre sampling: uniform or rls")
	fs.IntVar(&o.Iterations, "iterations", 0, "cap on the CG iterations of falkon and park (0: the solver's rule)")
	fs.StringVar(&f.precision, "precision", "float64", "precision of K_nM (falkon, park) and feature blocks (ridge): float64 or float32")
	fs.BoolVar(&o.Text.TFIDF, "tfidf", false, "weight count features by their smoothed idf on the training rows")
	fs.BoolVar(&o.Text.Normalize, "normalize", false, "divide each row (after -tfidf) by its Euclidean norm")
	fs.StringVar(&f.calibration, "calibration", "auto", "classifiers: how scores become class probabilities, fitted on held-out folds: auto, platt, isotonic or none")
	fs.StringVar(&f.intercept, "intercept", estimator.InterceptAuto.String(), "falkon: the model's constant, the targets' mean (mean; none for -loss logistic), fitted unpenalised with the expansion (fitted), or auto (fitted when it scores clearly better)")
}

// finish converts the string flags into the options, after parsing; set
// names the flags given on the command line.
func (f *estimatorFlags) finish(sh *sharedFlags) error {
	o, set := f.o, sh.set
	var err error
	if o.Method, err = estimator.ParseMethod(sh.method); err != nil {
		return flagError(err)
	}
	if o.Kernel, err = estimator.ParseKernelKind(sh.kernel); err != nil {
		return flagError(err)
	}
	if o.Loss, err = estimator.ParseLoss(sh.loss); err != nil {
		return flagError(err)
	}
	o.Cells, o.Seed, o.Workers, o.Scale = sh.cells, sh.seed, sh.workers, sh.scale
	if o.Partition, err = solvers.ParsePartition(sh.partition); err != nil {
		return flagError(err)
	}
	if o.CellBudget, err = solvers.ParseCellBudget(f.cellBudget); err != nil {
		return flagError(err)
	}
	if o.Sampling, err = solvers.ParseSampling(f.sampling); err != nil {
		return flagError(err)
	}
	o.Standardize = sh.standardizeMode()
	o.ClassWeight = sh.weights.cw
	mode, v, err := parseAutoFloat("sigma", f.sigma, scaleValue)
	if err != nil {
		return err
	}
	o.Sigma = v
	if mode == scaleValue {
		o.SigmaRule = estimator.SigmaScale
	} else if mode == "" && !(v > 0) {
		return usagef("-sigma must be positive and finite, got %g", v)
	}
	if mode, o.Lambda, err = parseAutoFloat("lambda", f.lambda); err != nil {
		return err
	} else if mode == "" && !(o.Lambda > 0) {
		return usagef("-lambda must be positive and finite, got %g", o.Lambda)
	}
	if o.Centers, err = parseAutoCount("centers", f.centers); err != nil {
		return err
	}
	if o.Task, err = solvers.ParseTask(sh.task); err != nil {
		return usageError{err}
	}
	if o.MemoryBudget, err = parseBytes(sh.memory); err != nil {
		return usageError{err}
	}
	if o.Precision, err = zonal.ParsePrecision(f.precision); err != nil || f.precision == "" {
		return usagef("-precision %q: want float64 or float32", f.precision)
	}
	if o.Sparse, err = estimator.ParseSparse(sh.sparse); err != nil {
		return flagError(err)
	}
	if o.Map, err = estimator.ParseMap(sh.mapName); err != nil {
		return flagError(err)
	}
	if o.Calibration, err = estimator.ParseCalibration(f.calibration); err != nil {
		return usagef("-calibration %q: want auto, platt, isotonic or none", f.calibration)
	}
	if o.Intercept, err = estimator.ParseIntercept(f.intercept); err != nil {
		return usagef("-intercept %q: want %s", f.intercept, strings.Join(estimator.Intercepts(), ", "))
	}
	if o.Kernel == estimator.Polynomial {
		if err := countAtLeast("degree", o.Degree, 1); err != nil {
			return err
		}
		if err := positiveFloat("gamma", o.Gamma); err != nil {
			return err
		}
	}
	if o.Features < 1 {
		return usagef("-features must be at least 1, got %d", o.Features)
	}
	if set["iterations"] && o.Iterations < 1 {
		return usagef("-iterations must be at least 1, got %d", o.Iterations)
	}
	return flagError(o.Validate())
}

// parseAutoFloat parses a flag that takes "auto" (and the extra words given)
// or a number: it returns the word, or "" and the number.
func parseAutoFloat(flagName, s string, words ...string) (string, float64, error) {
	s = strings.TrimSpace(s)
	if s == autoValue || slices.Contains(words, s) {
		return s, 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		want := append([]string{autoValue}, words...)
		return "", 0, usagef("-%s %q: want %s or a number", flagName, s, strings.Join(want, ", "))
	}
	return "", v, nil
}

// parseAutoCount parses "auto" (0) or a count >= 1.
func parseAutoCount(flagName, s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == autoValue {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, usagef("-%s %q: want auto or a whole number", flagName, s)
	}
	return v, countAtLeast(flagName, v, 1)
}

// parseFit parses and validates the flags of `zonal fit`.
func parseFit(stderr io.Writer, args []string) (fitConfig, error) {
	var c fitConfig
	var ef estimatorFlags
	fs := newFlagSet("fit", fitSynopsis, stderr)
	c.shared.register(fs)
	fs.IntVar(&c.subsample, "subsample", 0, "use only this many training rows (seeded uniform subsample); 0 = all")
	fs.BoolVar(&c.dryRun, "dry-run", false, "read the training data and print the plan (what would be chosen, and how), without fitting")
	fs.Float64Var(&c.threshold.value, "threshold", solvers.DefaultThreshold, "calibrated binary classifiers: predict the larger label when its probability exceeds P (the test metrics' decisions; not stored in the model)")
	ef.register(fs, &c.opts)
	if err := c.shared.parse(fs, args); err != nil {
		return c, err
	}
	if err := ef.finish(&c.shared); err != nil {
		return c, err
	}
	c.threshold.set = c.shared.set["threshold"]
	if err := c.threshold.check(); err != nil {
		return c, err
	}
	if c.threshold.set && c.opts.Calibration == estimator.CalibrationNone && c.opts.Loss != estimator.LossLogistic {
		return c, usagef("-threshold is a probability: it needs a calibration, not -calibration none")
	}
	if c.threshold.set && c.opts.Task == solvers.TaskRegression {
		return c, usagef("-threshold applies to binary classification, not -task regression")
	}
	return c, countAtLeast("subsample", c.subsample, 0)
}

// runFit reads the data, plans and fits through the estimator, evaluates
// the model on the test rows and writes the model file.
func runFit(ctx context.Context, e *env, c fitConfig) (*fitOutcome, error) {
	if err := checkOutputPath("model", c.shared.model); err != nil {
		return nil, err
	}
	be, err := backend.FromEnv()
	if err != nil {
		return nil, err
	}
	train, test, weights, err := loadTrainTest(e, c.shared.dataSpec(c.subsample))
	if err != nil {
		return nil, err
	}
	// LIBSVM rows arrive as CSR: the estimator keeps or densifies them,
	// and the test rows are predicted from their CSR either way.
	xtr, xte := train.Matrix(), test.Matrix()
	opts := c.opts
	opts.Backend = be
	opts.Weights = weights
	plan, err := estimator.NewPlan(shapeOf(xtr), opts)
	if err != nil {
		return nil, flagError(err)
	}
	if c.dryRun {
		return &fitOutcome{plan: plan}, nil
	}
	if plan.KeepSparse {
		fmt.Fprintf(e.stderr, "input is sparse (density %.2f%%): kept as CSR\n", 100*plan.Shape.Density)
	}
	for _, n := range plan.Notes {
		fmt.Fprintln(e.stderr, cliMessage(flagError(fmt.Errorf("%s", n))))
	}
	bar := newProgressBar(e.stderr)
	defer bar.done()
	opts.Progress = bar.report
	pipe, rep, err := estimator.Fit(ctx, xtr, train.Y, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.shared.train, err)
	}
	bar.done()
	// The plan's notes were printed before the fit; the fit's own (a
	// calibration left out or reduced) follow its progress bar.
	for _, n := range rep.Notes[min(len(plan.Notes), len(rep.Notes)):] {
		fmt.Fprintln(e.stderr, "note: "+cliMessage(fmt.Errorf("%s", n)))
	}
	if !rep.Solved {
		// Never a silent stop: the model is kept (it is the best iterate),
		// and the user is told its solve did not reach the tolerance.
		fmt.Fprintf(e.stderr, "warning: the solve did not converge: %s; the model may be far from the fit it asks for (raise -iterations, or -lambda)\n", rep.Diagnostics)
	}
	k, err := rep.Kernel.New()
	if err != nil {
		return nil, err
	}
	res := newFitResult(c, rep, len(test.Y))
	if res.Weights != nil && pipe.Weights != nil {
		res.Weights.Rows = pipe.Weights.Rows
	}
	start := time.Now()
	_, ev, err := evaluate(pipe, xte, test.Y, c.threshold)
	if err != nil {
		return nil, err
	}
	res.PredictSeconds = time.Since(start).Seconds()
	res.evaluation = ev
	out := &fitOutcome{res: res, rep: rep, kernel: k}
	if c.shared.model != "" {
		if err := saveModel(e, c.shared.model, pipe); err != nil {
			return nil, err
		}
		out.modelSaved = true
	}
	return out, nil
}

// shapeOf is the estimator's view of the training rows.
func shapeOf(x mat.Matrix) estimator.Shape {
	n, d := x.Dims()
	s := estimator.Shape{Rows: n, Cols: d}
	if c, ok := x.(*dataset.CSR); ok && n > 0 && d > 0 {
		s.Sparse, s.Density = true, float64(c.NNZ())/(float64(n)*float64(d))
	}
	return s
}

// newFitResult fills the settings of the -json result from the report.
func newFitResult(c fitConfig, rep *estimator.Report, nte int) fitResult {
	res := fitResult{Method: rep.Method.String(), Loss: rep.Loss.String(), Task: rep.Task.String(), NTrain: rep.Rows, NTest: nte, D: rep.Cols,
		Kernel: rep.Kernel.Kind.String(), Lambda: rep.Lambda, Standardize: rep.Standardize, Intercept: interceptName(rep), Chosen: rep.Chosen, Seed: c.opts.Seed,
		Backend: rep.Backend, TFIDF: c.opts.Text.TFIDF, Normalize: c.opts.Text.Normalize, Sparse: rep.Sparse, Density: rep.Density,
		FitSeconds: rep.Seconds, Solve: newSolveJSON(rep), Calibration: rep.Calibration.String(), CalibrationRows: rep.CalibrationRows, CalibrationFolds: rep.CalibrationFolds, CalibrationSeconds: rep.CalibrationSeconds,
		Notes: append([]string{}, rep.Notes...)}
	if rep.Weighted {
		res.Weights = &weightsJSON{Sum: rep.WeightSum, ClassWeights: rep.ClassWeights}
	}
	if rep.Kernel.Kind.HasBandwidth() {
		res.Sigma = ptr(rep.Kernel.Sigma)
	} else {
		res.Gamma, res.Coef0, res.Degree = ptr(rep.Kernel.Gamma), ptr(rep.Kernel.Coef0), ptr(rep.Kernel.Degree)
	}
	prec := ptr(rep.Precision.String())
	if res.RowBytes = rep.RowBytes; rep.Rows32 {
		res.RowsPrecision = ptr(zonal.Float32.String())
	} else if rep.RowBytes > 0 {
		res.RowsPrecision = ptr(zonal.Float64.String())
	}
	switch rep.Method {
	case estimator.MethodRidge:
		res.Map, res.Features, res.Precision = ptr(rep.Map.String()), ptr(rep.Features), prec
	case estimator.MethodFalkon:
		res.Centers, res.Precision = ptr(rep.Centers), prec
	case estimator.MethodParK:
		res.Centers, res.Cells, res.Precision = ptr(rep.Centers), ptr(rep.Cells), prec
		res.Partition = newParkJSON(rep.ParK, rep.CellSizes)
	}
	return res
}

// reportFit prints the outcome: one JSON object, or a few lines of text.
func reportFit(w io.Writer, c fitConfig, out *fitOutcome) error {
	if out.plan != nil {
		if c.shared.json {
			return json.NewEncoder(w).Encode(out.plan)
		}
		_, err := io.WriteString(w, out.plan.String())
		return err
	}
	res, rep := out.res, out.rep
	if c.shared.json {
		return json.NewEncoder(w).Encode(res)
	}
	desc := rep.Method.String()
	switch rep.Method {
	case estimator.MethodRidge:
		desc += fmt.Sprintf(" on %s features (D = %d%s)", rep.Map, rep.Features, precisionNote(rep.Precision, "features"))
	case estimator.MethodFalkon:
		desc += fmt.Sprintf(" (M = %d centres%s)", rep.Centers, precisionNote(rep.Precision, "K_nM"))
	case estimator.MethodParK:
		desc += fmt.Sprintf(" (Q = %d cells, M = %d centres in all%s)", rep.Cells, rep.Centers, precisionNote(rep.Precision, "K_nM"))
	}
	if rep.Loss != estimator.LossSquared {
		desc += fmt.Sprintf(", %s loss", rep.Loss)
	}
	if line := rep.Line(); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%s, %s kernel %s, lambda %g, backend %s\n", desc, rep.Kernel.Kind, kernelDesc(out.kernel), rep.Lambda, res.Backend)
	fmt.Fprintf(w, "task %s: %d training rows, %d test rows, %d features\n", res.Task, res.NTrain, res.NTest, res.D)
	if rep.Weighted {
		fmt.Fprintf(w, "weighted fit: row weights sum to %.6g%s (test metrics unweighted)\n", rep.WeightSum, classWeightNote(rep.ClassWeights))
	}
	writeEvaluation(w, res.evaluation)
	if rep.Loss == estimator.LossLogistic {
		fmt.Fprintln(w, "probabilities: the logistic model's own (sigmoid or softmax of its logits), no calibration")
	} else if rep.Calibration != estimator.CalibrationNone {
		fmt.Fprintf(w, "probabilities: %s calibration on the out-of-fold scores of %d rows (%d folds, %.3f s)\n",
			rep.Calibration, rep.CalibrationRows, rep.CalibrationFolds, rep.CalibrationSeconds)
	}
	if ch := rep.Chosen; ch.TuneMetric != "" {
		// The tuner's own estimate, beside the test metric: a large gap
		// says the tuning proxy (a subsample, leave-one-out) misjudged the
		// fitted model.
		fmt.Fprintf(w, "tuning %s %.4g (on %d rows, the setting chosen)\n", ch.TuneMetric, ch.TuneScore, ch.TuneRows)
	}
	fmt.Fprintf(w, "fit %.3f s (choosing %.3f s), predict %.3f s\n", res.FitSeconds, rep.Chosen.TuneSeconds, res.PredictSeconds)
	if d := rep.Diagnostics; d.Known() && d.Solver != solvers.SolverCholesky {
		fmt.Fprintf(w, "solve: %s\n", d)
	}
	if r := rep.ParK; r != nil {
		sizes := slices.Clone(rep.CellSizes)
		slices.Sort(sizes)
		if len(sizes) > 0 {
			fmt.Fprintf(w, "cell sizes: min %d, median %d, max %d\n", sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
		}
		fmt.Fprintf(w, "partition %s (cap %g, centres by %s): largest cell / (n/Q) = %.2f, partition %.3f s\n",
			r.Partition, r.Cap, r.Budget, r.Imbalance, r.PartitionSeconds)
		if v := cellValidation(r); len(v) > 0 {
			fmt.Fprintf(w, "cell validation RMSE: min %.4g, median %.4g, max %.4g\n", v[0], v[len(v)/2], v[len(v)-1])
		}
	}
	if res.TFIDF || res.Normalize {
		fmt.Fprintf(w, "text transform: %s\n", textDesc(c.opts.Text))
	}
	if out.modelSaved {
		fmt.Fprintf(w, "model written to %s\n", c.shared.model)
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

// textDesc names the text transforms of o, e.g. "tf-idf, then L2 rows".
func textDesc(o dataset.TextOptions) string {
	var parts []string
	if o.TFIDF {
		parts = append(parts, "tf-idf (smoothed idf of the training rows)")
	}
	if o.Normalize {
		parts = append(parts, "L2-normalized rows")
	}
	return strings.Join(parts, ", then ")
}

// finite maps nil and NaN to nil (JSON null).
func finite(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

// parseBytes parses -memory (zonal.ParseBytes); "" is 0 (the solvers'
// default).
func parseBytes(flagValue string) (int64, error) {
	v, err := zonal.ParseBytes(flagValue)
	if err != nil {
		return 0, fmt.Errorf("bad -memory %q (want a positive size, e.g. 512M, 8G)", flagValue)
	}
	return v, nil
}

func saveModel(e *env, path string, p *solvers.Pipeline) error {
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		return err
	}
	return writeOutput(e, path, b)
}

func ptr[T any](v T) *T { return &v }

// interceptName is -json's "intercept": the model's (mean or fitted); for
// the logistic loss fitted or none (its logits have no constant term).
func interceptName(rep *estimator.Report) string {
	if rep.Loss == estimator.LossLogistic && rep.Intercept != solvers.InterceptFitted {
		return "none"
	}
	return rep.Intercept.String()
}

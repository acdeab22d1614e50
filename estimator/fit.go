package estimator

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// Chosen says how Fit chose the values it was not given (a field is empty
// when the option gave the value). Its JSON form is `zonal fit -json`'s
// "chosen" object.
type Chosen struct {
	Sigma   string `json:"sigma,omitempty"`
	Lambda  string `json:"lambda,omitempty"`
	Centers string `json:"centers,omitempty"`
	// TuneRows is the number of training rows lambda was chosen on, and
	// TuneSeconds the time choosing took (0 when lambda was given).
	TuneRows    int     `json:"tune_rows,omitempty"`
	TuneSeconds float64 `json:"tune_seconds"`
	// Standardize says how StandardizeAuto was settled (the raw features
	// tuned too, the better kept).
	Standardize string `json:"standardize,omitempty"`
	// TuneMetric and TuneScore are the tuner's score of the chosen
	// setting on the tuning rows ("" and 0 when lambda was given).
	TuneMetric string  `json:"tune_metric,omitempty"`
	TuneScore  float64 `json:"tune_score,omitempty"`
	// SelectScore is the tuner's selection score of the chosen setting
	// when it is not TuneScore: the mean squared error of the left-out
	// outputs against the encoded targets (Plan.Score tune.ScoreSquared).
	SelectScore float64 `json:"select_score,omitempty"`
	// Calibration says how CalibrationAuto chose the calibration method,
	// and CalibrationPlatt and CalibrationIsotonic are the two methods'
	// cross-validated log-losses on the out-of-fold scores it chose by
	// (calibrate.Choice; 0 when the method was given).
	Calibration         string  `json:"calibration,omitempty"`
	CalibrationPlatt    float64 `json:"calibration_platt_logloss,omitempty"`
	CalibrationIsotonic float64 `json:"calibration_isotonic_logloss,omitempty"`
	// Intercept says how InterceptAuto chose the intercept.
	Intercept string `json:"intercept,omitempty"`
	// TuneNewtonSteps and TuneCGIterations are the Newton steps and CG
	// iterations choosing the logistic loss's lambda took, over all folds
	// and both intercepts (0 for the squared loss, whose tuning solves in
	// closed form); the final fit's own are in the model's Diagnostics.
	TuneNewtonSteps  int `json:"tune_newton_steps,omitempty"`
	TuneCGIterations int `json:"tune_cg_iterations,omitempty"`
}

// clearlyBeats reports whether c's tuning loss (the selection score, or the
// error rate 1 - accuracy, or the RMSE) is below (1 - RawMargin) times d's.
func (c Chosen) clearlyBeats(d Chosen) bool {
	if c.SelectScore > 0 && d.SelectScore > 0 {
		return c.SelectScore < (1-RawMargin)*d.SelectScore
	}
	lc, ld := c.TuneScore, d.TuneScore
	if c.TuneMetric == "accuracy" {
		lc, ld = 1-lc, 1-ld
	}
	return lc < (1-RawMargin)*ld
}

// Report is what Fit did: the plan, the values it settled on and how.
type Report struct {
	Plan *Plan
	// Loss is the training loss.
	Loss Loss
	// Method, Kernel (with its chosen sigma), Lambda, Centers (FALKON,
	// ParK), Features (ridge: the map's dimension), Cells (ParK) and
	// Standardize are the settings of the fitted model.
	Method      Method
	Kernel      KernelSpec
	Lambda      float64
	Centers     int
	Map         Map
	Features    int
	Cells       int
	Precision   zonal.Precision
	Standardize bool
	// Intercept is the model's intercept (solvers.InterceptMean or
	// solvers.InterceptFitted; for the logistic loss InterceptMean means
	// none: its logits are the expansion alone).
	Intercept solvers.Intercept
	Task      solvers.Task
	Chosen    Chosen
	// Rows and Cols are the training data's shape; Sparse says the model
	// was fitted on CSR rows.
	Rows, Cols int
	Sparse     bool
	Density    float64
	Backend    string
	// Seconds is the wall time of Fit (choosing included).
	Seconds float64
	// ParK is ParK's partition report and CellSizes its cells' training
	// rows (nil for the other methods).
	ParK      *solvers.ParKReport
	CellSizes []int
	// Calibration is the method of the pipeline's calibration
	// (CalibrationNone when it has none: regression, CalibrationNone
	// asked for, or a class too small), CalibrationRows the training rows
	// whose out-of-fold scores it was fitted on, CalibrationFolds the
	// folds those scores came from (CalibrationFolds, fewer for a class
	// of fewer rows; see the package documentation) and
	// CalibrationSeconds the time its fold refits and fit took.
	Calibration        Calibration
	CalibrationRows    int
	CalibrationFolds   int
	CalibrationSeconds float64
	// Diagnostics is how the model's linear system was solved (CG
	// iterations, cap, final relative residual; a direct solve for exact
	// KRR and ridge). Solved says whether it counts as solved (see
	// SolveFloor); when it does not, Fit still returns the model, and the
	// caller should say so.
	Diagnostics solvers.Diagnostics
	Solved      bool
	// Rows32 says the fit held its scaled training rows in float32 (a
	// *dataset.Dense32; see "Float32 rows" in the package documentation)
	// and RowBytes is the memory of the dense rows it held (4 or 8 bytes
	// an entry; 0 for CSR rows).
	Rows32   bool
	RowBytes int64
	// Notes are decisions the user should hear of (see Plan.Notes).
	Notes []string
	// Weighted says the fit was weighted (Options.Weights or
	// Options.ClassWeight); WeightSum is then the sum of the row weights
	// used, and ClassWeights the factor of each class (nil without
	// ClassWeight), in the order of the encoding's classes. The pipeline
	// Fit returns records them (Pipeline.Weights, kept by its model file).
	Weighted     bool
	WeightSum    float64
	ClassWeights []LabelWeight
}

// SolveFloor is the relative residual below which a CG solve that stalled
// (rounding stopped improving it; solvers.Diagnostics.Stalled) counts as
// solved: the test error stops changing at relative residuals around 1e-4
// on FALKON's systems (solvers' package documentation), while the default
// tolerance, 1e-9, is often below what rounding allows.
const SolveFloor = 1e-4

// solved reports whether d counts as a solved system.
func solved(d solvers.Diagnostics) bool {
	return !d.Known() || d.Converged || d.Stalled && d.Residual <= SolveFloor
}

// MaxLambdaRaises is how many times Fit raises a chosen lambda tenfold
// when its solve does not count as solved (see Fit).
const MaxLambdaRaises = 2

// Line is the one-line summary of what was chosen ("" when nothing was).
func (r *Report) Line() string {
	var parts []string
	if r.Chosen.Sigma != "" {
		parts = append(parts, fmt.Sprintf("sigma %.3g (%s)", r.Kernel.Sigma, r.Chosen.Sigma))
	}
	if r.Chosen.Lambda != "" {
		parts = append(parts, fmt.Sprintf("lambda %.3g (%s)", r.Lambda, r.Chosen.Lambda))
	}
	if r.Chosen.Centers != "" {
		parts = append(parts, fmt.Sprintf("centres %d (%s)", r.Centers, r.Chosen.Centers))
	}
	if r.Chosen.Standardize != "" {
		parts = append(parts, fmt.Sprintf("standardize %v (%s)", r.Standardize, r.Chosen.Standardize))
	}
	if r.Chosen.Intercept != "" {
		name := r.Intercept.String()
		if r.Loss == LossLogistic && r.Intercept != solvers.InterceptFitted {
			name = "none" // the logistic loss's mean: no constant
		}
		parts = append(parts, fmt.Sprintf("intercept %s (%s)", name, r.Chosen.Intercept))
	}
	if r.Chosen.Calibration != "" {
		parts = append(parts, fmt.Sprintf("calibration %s (%s)", r.Calibration, r.Chosen.Calibration))
	}
	if len(parts) == 0 {
		return ""
	}
	return "chose " + strings.Join(parts, ", ")
}

// Fit fits the pipeline (input scaling, text transform, label encoding and
// model) that opts describe on the training rows x (a *mat.Dense or a
// *dataset.CSR; any other mat.Matrix is copied into a dense one) and their
// raw targets y (class labels or values), choosing every value opts leave
// zero, and reports what it chose. x and y are not modified.
//
// Errors: *zonal.ParamError for a bad option, *zonal.TooLargeError when the
// main allocation exceeds the memory budget, zonal.ErrShape when len(y)
// differs from the row count, zonal.ErrEmpty for no rows, zonal.ErrNonFinite
// for a NaN or Inf in x or y, the context's error when ctx ends, and the
// solvers' errors.
func Fit(ctx context.Context, x mat.Matrix, y []float64, opts Options) (*solvers.Pipeline, *Report, error) {
	start := time.Now()
	be := opts.Backend
	if be == nil {
		be = backend.Default()
	}
	opts.Backend = be
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	in, err := checkInput(x, y)
	if err != nil {
		return nil, nil, err
	}
	n, d := in.Dims()
	shape := Shape{Rows: n, Cols: d}
	csr, isCSR := in.(*dataset.CSR)
	if isCSR {
		shape.Sparse, shape.Density = true, float64(csr.NNZ())/(float64(n)*float64(d))
	}
	plan, err := NewPlan(shape, opts)
	if err != nil {
		return nil, nil, err
	}
	enc, err := Encoding(y, opts.Task)
	if err != nil {
		return nil, nil, err
	}
	weights, classWeights, err := rowWeights(opts, y, enc)
	if err != nil {
		return nil, nil, err
	}
	if isCSR && !plan.KeepSparse {
		if in, err = DenseOf(csr); err != nil {
			return nil, nil, err
		}
	}
	text, in, err := fitText(opts.Text, in)
	if err != nil {
		return nil, nil, err
	}
	if opts.Loss == LossLogistic && enc.Task != solvers.TaskClassification {
		reason := "the logistic loss is a classification loss; the task is " + enc.Task.String()
		if opts.Task == solvers.TaskAuto {
			reason += " (" + regressionWhy(y) + "; Task = classification fits integer labels as classes)"
		}
		return nil, nil, &zonal.ParamError{Param: "Loss", Value: opts.Loss, Reason: reason}
	}
	rep := &Report{Plan: plan, Loss: plan.Loss, Method: plan.Method, Map: plan.Map, Precision: plan.Precision, Task: enc.Task,
		Rows: n, Cols: d, Sparse: plan.KeepSparse && isCSR, Density: shape.Density, Backend: be.Name(), Notes: plan.Notes, Calibration: CalibrationNone}
	if weights != nil {
		// rowWeights validated them: CheckWeights only sums here.
		rep.Weighted, rep.ClassWeights = true, classWeights
		rep.WeightSum, _ = solvers.CheckWeights(weights, n)
	}
	ch, err := choose(ctx, plan, opts, in, y, weights, enc.Task)
	if err != nil {
		return nil, nil, err
	}
	if err := ch.rowsTo32(plan, opts, in); err != nil {
		return nil, nil, err
	}
	rep.Rows32, rep.RowBytes = ch.rowBytes()
	if ch.centers > 0 || ch.intercept != plan.Intercept {
		chosen := *plan
		if ch.centers > 0 {
			chosen.Centers = ch.centers
		}
		chosen.Intercept = ch.intercept
		plan = &chosen
	}
	rep.Intercept = plan.Intercept
	rep.Kernel, rep.Lambda, rep.Centers, rep.Standardize, rep.Chosen = ch.kernel, ch.lambda, plan.Centers, ch.standardize, ch.chosen
	if plan.Method == MethodParK {
		rep.Cells = plan.Cells
	}
	k, err := ch.kernel.New()
	if err != nil {
		return nil, nil, err
	}
	targets, err := enc.Targets(y)
	if err != nil {
		return nil, nil, err
	}
	sopts := solvers.Options{Backend: be, MemoryBudget: opts.MemoryBudget, Progress: opts.Progress, Weights: weights}
	fitAt := func(lambda float64) (solvers.Model, error) {
		m, err := fitModel(ctx, plan, opts, k, lambda, ch.x, targets, sopts)
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *solvers.Ridge:
			rep.Features = m.Map().Dim()
		case *solvers.ParK:
			rep.ParK, rep.CellSizes = m.Report(), slices.Clone(m.CellSizes())
		}
		return m, nil
	}
	model, err := fitAt(ch.lambda)
	if err != nil {
		return nil, nil, err
	}
	rep.Diagnostics = diagnosticsOf(model)
	// A chosen lambda must be one the solver reaches within its automatic
	// cap: when it does not, the lambda and the iteration budget were not
	// chosen together, so the lambda is raised tenfold (a better
	// conditioned system) and the model refitted, up to MaxLambdaRaises
	// times. A lambda or cap the caller gave is used as given.
	for raise := 0; raise < MaxLambdaRaises && !solved(rep.Diagnostics) && plan.TuneLambda && plan.Iterations == 0; raise++ {
		from, d := rep.Lambda, rep.Diagnostics
		next, err := fitAt(10 * from)
		if err != nil {
			return nil, nil, err
		}
		model, rep.Lambda, rep.Diagnostics = next, 10*from, diagnosticsOf(next)
		rep.Chosen.Lambda += fmt.Sprintf("; raised to %.3g: at %.3g %s", rep.Lambda, from, d)
	}
	rep.Solved = solved(rep.Diagnostics)
	var scaler *solvers.Scaler
	if ch.scaler != nil {
		if scaler, err = solvers.NewScaler(ch.scaler.Mean, ch.scaler.Scale); err != nil {
			return nil, nil, err
		}
	}
	pipe, err := solvers.NewPipeline(scaler, enc, model)
	if err == nil {
		pipe, err = pipe.WithText(text)
	}
	if err != nil {
		return nil, nil, err
	}
	if enc.Task == solvers.TaskClassification && plan.Loss == LossLogistic {
		rep.Calibration = CalibrationNone // the logits are the probabilities' own
	} else if enc.Task == solvers.TaskClassification {
		cal, err := fitCalibration(ctx, plan, opts, k, &ch, enc, y, sopts, rep)
		if err != nil {
			return nil, nil, err
		}
		if cal != nil {
			if pipe, err = pipe.WithCalibration(cal); err != nil {
				return nil, nil, err
			}
		}
	} else if opts.Calibration == CalibrationPlatt || opts.Calibration == CalibrationIsotonic {
		return nil, nil, &zonal.ParamError{Param: "Calibration", Value: opts.Calibration, Reason: "calibration turns class scores into probabilities: it applies to classification only, the task is " + enc.Task.String()}
	}
	if weights != nil {
		tw, err := TrainingWeights(weights, classWeights)
		if err == nil {
			pipe, err = pipe.WithWeights(tw)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return pipe, rep, nil
}

// TrainingWeights is the record of a fit on the row weights w (sample
// weight times class factor, as RowWeights returns them) with the class
// weights cw (nil: none; in the order of the encoding's classes, as
// RowWeights returns them): nil for nil w. Fit gives it to the pipeline it
// returns (solvers.Pipeline.WithWeights), whose model file keeps it.
//
// Errors: those of solvers.NewTrainingWeights.
func TrainingWeights(w []float64, cw []LabelWeight) (*solvers.TrainingWeights, error) {
	var f []float64
	if cw != nil {
		f = make([]float64, len(cw))
		for c, lw := range cw {
			f[c] = lw.Weight
		}
	}
	return solvers.NewTrainingWeights(w, f)
}

// fitModel fits the plan's model at kernel k and lambda on the rows x
// (already scaled and transformed) and targets: the final model, and the
// held-out fold models of the calibration.
func fitModel(ctx context.Context, plan *Plan, opts Options, k kernels.Kernel, lambda float64, x mat.Matrix, targets *mat.Dense, sopts solvers.Options) (solvers.Model, error) {
	switch plan.Method {
	case MethodExact:
		return solvers.FitKRR(ctx, k, x, targets, lambda, sopts)
	case MethodRidge:
		fm, err := BuildMap(ctx, MapSpec{Map: plan.Map, Kernel: k, Features: plan.Features, Lambda: lambda, Seed: opts.Seed, Backend: sopts.Backend}, x)
		if err != nil {
			return nil, err
		}
		return solvers.FitRidge(ctx, fm, x, targets, lambda, solvers.RidgeOptions{Options: sopts, Precision: plan.Precision})
	case MethodFalkon:
		if plan.Loss == LossLogistic {
			return solvers.FitLogistic(ctx, k, x, targets, lambda, solvers.LogisticOptions{Options: sopts,
				Centers: plan.Centers, Iterations: plan.Iterations, Seed: opts.Seed, Intercept: plan.Intercept})
		}
		return solvers.FitFalkon(ctx, k, x, targets, lambda, solvers.FalkonOptions{Options: sopts,
			Centers: plan.Centers, Sampling: opts.Sampling, Iterations: plan.Iterations, Seed: opts.Seed, Precision: plan.Precision, Intercept: plan.Intercept})
	case MethodParK:
		return solvers.FitParK(ctx, k, x, targets, lambda, plan.parkOptions(opts, sopts))
	}
	return nil, &zonal.ParamError{Param: "Method", Value: int(plan.Method), Reason: "unknown method", Err: zonal.ErrUnknown}
}

// diagnosticsOf is the model's solve diagnostics (zero when it has none).
func diagnosticsOf(m solvers.Model) solvers.Diagnostics {
	if d, ok := m.(solvers.Diagnosed); ok {
		return d.Diagnostics()
	}
	return solvers.Diagnostics{}
}

// checkInput validates the training rows once, at the boundary: a dense or
// CSR matrix with rows and columns, finite values, and one finite target a
// row. Any other mat.Matrix is copied into a *mat.Dense.
func checkInput(x mat.Matrix, y []float64) (mat.Matrix, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil training data", zonal.ErrEmpty)
	}
	switch m := x.(type) {
	case *dataset.CSR:
		if m == nil {
			return nil, fmt.Errorf("%w: nil training data", zonal.ErrEmpty)
		}
		if err := m.Validate(); err != nil {
			return nil, err
		}
	case *mat.Dense:
		if m == nil || m.IsEmpty() {
			return nil, fmt.Errorf("%w: no training rows", zonal.ErrEmpty)
		}
	default:
		x = mat.DenseCopyOf(x)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("%w: %d x %d training data", zonal.ErrEmpty, n, d)
	}
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d targets for %d training rows", zonal.ErrShape, len(y), n)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: target %d is %g", zonal.ErrNonFinite, i, v)
		}
	}
	if err := checkFinite(x); err != nil {
		return nil, err
	}
	return x, nil
}

func checkFinite(x mat.Matrix) error {
	if c, ok := x.(*dataset.CSR); ok {
		for i := 0; i < c.Rows; i++ {
			cols, vals := c.Row(i)
			for p, v := range vals {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%w: row %d column %d is %g", zonal.ErrNonFinite, i, cols[p], v)
				}
			}
		}
		return nil
	}
	m := x.(*mat.Dense)
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		for j, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: row %d column %d is %g", zonal.ErrNonFinite, i, j, v)
			}
		}
	}
	return nil
}

// MaxForcedClasses is how many distinct values a TaskClassification target
// with non-integer values may have before it is refused as continuous.
const MaxForcedClasses = 20

// Encoding returns the label encoding of task for the targets y, refusing
// a forced classification of a target that looks continuous (more than
// MaxForcedClasses distinct values, some of them not integers).
func Encoding(y []float64, task solvers.Task) (solvers.Encoding, error) {
	if task == solvers.TaskClassification {
		vals := slices.Clone(y)
		slices.Sort(vals)
		vals = slices.Compact(vals)
		frac := 0
		for _, v := range vals {
			if v != math.Trunc(v) {
				frac++
			}
		}
		if len(vals) > MaxForcedClasses && frac > 0 {
			return solvers.Encoding{}, &zonal.ParamError{Param: "Task", Value: task,
				Reason: fmt.Sprintf("the target has %d distinct values, %d of them not integers: it looks continuous, not like class labels (use regression or auto)", len(vals), frac)}
		}
	}
	return solvers.NewEncoding(y, task)
}

// DenseOf returns the dense form of s, refusing (zonal.ErrTooLarge) one of
// more than dataset.MaxDenseElements entries as the LIBSVM reader does.
func DenseOf(s *dataset.CSR) (*mat.Dense, error) {
	if s.Rows > 0 && s.Cols > dataset.MaxDenseElements/s.Rows {
		return nil, fmt.Errorf("%w: dense %d x %d matrix exceeds %d entries (the input is sparse enough to keep as CSR: Sparse on)",
			zonal.ErrTooLarge, s.Rows, s.Cols, dataset.MaxDenseElements)
	}
	return s.ToDense(), nil
}

// fitText fits the tf-idf / normalization transform on the training rows
// and returns it with the transformed rows (a copy: x is not modified), or
// nil and x when none is asked for.
func fitText(o dataset.TextOptions, x mat.Matrix) (*dataset.TextTransform, mat.Matrix, error) {
	if !o.TFIDF && !o.Normalize {
		return nil, x, nil
	}
	t, err := dataset.FitTextTransform(x, o)
	if err != nil {
		return nil, nil, err
	}
	if c, ok := x.(*dataset.CSR); ok {
		xt, err := t.ApplyCSR(c)
		return t, xt, err
	}
	xd := mat.DenseCopyOf(x)
	if err := t.Apply(xd); err != nil {
		return nil, nil, err
	}
	return t, xd, nil
}

// choice is one tuned input transform and the values chosen on it.
type choice struct {
	standardize bool
	scaler      *dataset.Standardizer
	x           mat.Matrix
	kernel      KernelSpec
	lambda      float64
	// centers is FALKON's grown centre count (0: the plan's; see grow).
	centers int
	// intercept is the model's intercept (see chooseIntercept).
	intercept solvers.Intercept
	chosen    Chosen
}

// choose tunes each input transform of the plan and keeps the best: the
// first (standardized, when there are two) unless the second's tuning
// loss is lower by RawMargin; a failing second candidate is ignored.
func choose(ctx context.Context, p *Plan, o Options, x mat.Matrix, y, w []float64, task solvers.Task) (choice, error) {
	prepare := func(standardize bool) (choice, error) {
		c := choice{standardize: standardize, x: x}
		if xd, ok := x.(*mat.Dense); ok {
			st, err := InputScaler(xd, p.Scale, standardize)
			if err != nil {
				return c, err
			}
			if c.x, err = Scaled(st, xd); err != nil {
				return c, err
			}
			c.scaler = st
		}
		return c, CheckMagnitude(c.x)
	}
	if len(p.Standardize) == 2 && p.Sigma == SigmaGolden && p.TuneLambda && p.Loss == LossSquared {
		return chooseEarly(ctx, p, o, prepare, y, w, task)
	}
	try := func(standardize bool) (choice, error) {
		c, err := prepare(standardize)
		if err != nil {
			return c, err
		}
		return c, c.tune(ctx, p, o, y, w, task)
	}
	best, err := try(p.Standardize[0])
	if err != nil || len(p.Standardize) == 1 {
		return best, err
	}
	alt, err := try(p.Standardize[1])
	if ctx.Err() != nil {
		return best, ctx.Err()
	}
	return keepTransform(best, alt, err, ""), nil
}

// keepTransform is the whole-search rule of choose and finishBoth: of the
// tuned standardized input a and raw input b (whose tuning failed when
// errb is not nil), b only when it clearly beats a (clearlyBeats). The one
// kept says why in Chosen.Standardize, note appended, and counts both
// tunings' seconds.
func keepTransform(a, b choice, errb error, note string) choice {
	if errb == nil && b.chosen.clearlyBeats(a.chosen) {
		b.chosen.Standardize = fmt.Sprintf("raw features tuned better: %s %.4g vs %.4g standardized%s", b.chosen.TuneMetric, b.chosen.TuneScore, a.chosen.TuneScore, note)
		b.chosen.TuneSeconds += a.chosen.TuneSeconds
		return b
	}
	if errb == nil {
		a.chosen.Standardize = fmt.Sprintf("%s %.4g vs %.4g on the raw features%s", a.chosen.TuneMetric, a.chosen.TuneScore, b.chosen.TuneScore, note)
	}
	a.chosen.TuneSeconds += b.chosen.TuneSeconds
	return a
}

// EarlyEvaluations is the number of golden-section evaluations after which
// Fit settles the input transform (see chooseEarly).
const EarlyEvaluations = 2

// chooseEarly settles the input transform on the first EarlyEvaluations
// golden-section evaluations of each when one is clearly better there (its
// best selection loss below (1 - RawMargin) times the other's, the margin
// choose applies to whole searches) and finishes the search on that one,
// which reuses its own; when neither is, both searches run to the end and
// choose's whole-search rule decides (finishBoth). The early rule alone
// chose differently from the whole searches on PSID7682, whose two
// transforms were within 3% after two evaluations and whose raw features
// won after six (test RMSE 0.248 against 0.227, mean of 5 splits). The first two points
// are the bracket's interior golden points, the median heuristic times
// GoldenSpread^(-0.236) and GoldenSpread^(0.236) (0.61 and 1.63 at
// spread 8), where both transforms' losses are already near their
// minima; the later evaluations refine sigma within a factor of two. When
// it settles early it costs 2 + GoldenEvaluations evaluations instead of 2
// GoldenEvaluations (8 instead of 12).
func chooseEarly(ctx context.Context, p *Plan, o Options, prepare func(bool) (choice, error), y, w []float64, task solvers.Task) (choice, error) {
	type probed struct {
		c       choice
		res     *tune.Result
		seconds float64
		err     error
	}
	probe := func(standardize bool) probed {
		start := time.Now()
		c, err := prepare(standardize)
		if err != nil {
			return probed{c: c, err: err}
		}
		if err := c.initSigma(p, o); err != nil {
			return probed{c: c, err: err}
		}
		so, yy := c.searchSetup(ctx, p, o, y, w, task)
		res, err := c.golden(ctx, so, yy, EarlyEvaluations, nil)
		if err != nil {
			err = fmt.Errorf("choosing lambda: %w", err)
		}
		return probed{c: c, res: res, seconds: time.Since(start).Seconds(), err: err}
	}
	first := probe(p.Standardize[0])
	if first.err != nil {
		return first.c, first.err
	}
	second := probe(p.Standardize[1])
	if ctx.Err() != nil {
		return first.c, ctx.Err()
	}
	lf := selectionLoss(first.res, task)
	if second.err == nil {
		ls := selectionLoss(second.res, task)
		if !(ls < (1-RawMargin)*lf) && !(lf < (1-RawMargin)*ls) {
			// Neither clearly better after two evaluations: both
			// searches run to the end (reusing their two), and the
			// whole-search rule decides.
			return finishBoth(ctx, p, o, y, w, task, first.c, first.res, first.seconds, second.c, second.res, second.seconds)
		}
	}
	keep, other := first, second
	if second.err == nil && selectionLoss(second.res, task) < (1-RawMargin)*lf {
		keep, other = second, first
	}
	c := keep.c
	if err := c.tuneFrom(ctx, p, o, y, w, task, keep.res); err != nil {
		return c, err
	}
	c.chosen.TuneSeconds += keep.seconds + other.seconds
	if other.err != nil {
		return c, nil
	}
	name := map[bool]string{true: "standardized", false: "on the raw features"}
	c.chosen.Standardize = fmt.Sprintf("%s kept: selection loss %.4g against %.4g %s after %d golden-section evaluations each",
		map[bool]string{true: "standardized", false: "raw features"}[c.standardize], selectionLoss(keep.res, task), selectionLoss(other.res, task), name[other.c.standardize], EarlyEvaluations)
	return c, nil
}

// finishBoth finishes the golden-section searches of both transforms from
// their probes and keeps one by choose's rule (keepTransform).
func finishBoth(ctx context.Context, p *Plan, o Options, y, w []float64, task solvers.Task,
	a choice, ra *tune.Result, sa float64, b choice, rb *tune.Result, sb float64) (choice, error) {
	if err := a.tuneFrom(ctx, p, o, y, w, task, ra); err != nil {
		return a, err
	}
	a.chosen.TuneSeconds += sa
	errb := b.tuneFrom(ctx, p, o, y, w, task, rb)
	if ctx.Err() != nil {
		return a, ctx.Err()
	}
	b.chosen.TuneSeconds += sb
	return keepTransform(a, b, errb, fmt.Sprintf(" (both searched: within %.0f%% after %d evaluations)", 100*RawMargin, EarlyEvaluations)), nil
}

// selectionLoss is the loss a transform is chosen by: the selection score
// (the left-out squared error against the encoded targets) for
// classification, the left-out RMSE for regression, as clearlyBeats.
func selectionLoss(r *tune.Result, task solvers.Task) float64 {
	switch {
	case r.Metric == "squared_error" && task != solvers.TaskClassification:
		return r.Best.TaskScore
	case r.HigherIsBetter():
		return 1 - r.Best.Mean
	}
	return r.Best.Mean
}

// tune fills in sigma and lambda on c.x (see the package documentation),
// the scores and fits weighted by w (nil: unweighted).
func (c *choice) tune(ctx context.Context, p *Plan, o Options, y, w []float64, task solvers.Task) error {
	return c.tuneFrom(ctx, p, o, y, w, task, nil)
}

// initSigma sets c's kernel and the values the plan gives, and the sigma
// rule's starting value.
func (c *choice) initSigma(p *Plan, o Options) error {
	c.kernel, c.lambda, c.intercept = p.Kernel, p.Lambda, p.Intercept
	var err error
	switch p.Sigma {
	case SigmaMedian, SigmaGolden:
		if c.kernel.Sigma, err = tune.MedianSigma(c.x, 0, o.Seed); err != nil {
			return &zonal.ParamError{Param: "SigmaRule", Value: SigmaAuto, Reason: "the median heuristic cannot choose sigma: " + err.Error(), Err: err}
		}
		c.chosen.Sigma = "median heuristic"
	case SigmaScaled:
		if c.kernel.Sigma, err = tune.ScaleSigma(c.x); err != nil {
			return &zonal.ParamError{Param: "SigmaRule", Value: SigmaScale, Reason: "the scale rule cannot choose sigma: " + err.Error(), Err: err}
		}
		c.chosen.Sigma = "scale rule, sqrt(d var(X) / 2)"
	}
	if p.Sigma != SigmaGiven {
		if err := c.kernel.Check(false); err != nil {
			return &zonal.ParamError{Param: "SigmaRule", Value: o.SigmaRule, Reason: fmt.Sprintf("chose sigma %g: %v", c.kernel.Sigma, err), Err: err}
		}
	}
	if p.CentersChosen {
		c.chosen.Centers = "auto, ceil(sqrt(n) ln n)"
		if p.Method == MethodFalkon {
			c.chosen.Centers = fmt.Sprintf("auto, the most of ceil(sqrt(n) ln n) and min(n, %d)", MinCenters)
		}
	}
	return nil
}

// searchSetup is the tuner's options and labels for c.
func (c *choice) searchSetup(ctx context.Context, p *Plan, o Options, y, w []float64, task solvers.Task) (tune.SearchOptions, *mat.Dense) {
	n, _ := c.x.Dims()
	so := p.searchOptions(ctx, o, c.kernel, c.x)
	so.Task = task
	so.Weights = w
	return so, mat.NewDense(n, 1, slices.Clone(y))
}

// golden is the golden-section search on sigma of c's search options with
// evals evaluations, reusing those of an earlier shorter search.
func (c *choice) golden(ctx context.Context, so tune.SearchOptions, y *mat.Dense, evals int, reuse *tune.Result) (*tune.Result, error) {
	med := c.kernel.Sigma
	return tune.Golden(ctx, c.x, y, tune.GoldenOptions{SearchOptions: so, Lo: med / GoldenSpread, Hi: med * GoldenSpread, Evaluations: evals, Reuse: reuse})
}

// tuneFrom is tune, whose golden-section search reuses the evaluations
// of probe (nil: none; see chooseEarly).
func (c *choice) tuneFrom(ctx context.Context, p *Plan, o Options, y, w []float64, task solvers.Task, probe *tune.Result) error {
	if probe == nil {
		if err := c.initSigma(p, o); err != nil {
			return err
		}
	}
	if !p.TuneLambda {
		return nil
	}
	n, _ := c.x.Dims()
	var err error
	start := time.Now()
	if p.Loss == LossLogistic && p.Sigma != SigmaGolden {
		return c.tuneLogistic(ctx, p, o, y, w, start)
	}
	so, yy := c.searchSetup(ctx, p, o, y, w, task)
	// The search scores the fitted intercept too at the sigma it chooses,
	// from the kernel or features it built there (chooseIntercept).
	main := so
	main.BothIntercepts = p.ChooseIntercept
	var res *tune.Result
	if p.Sigma == SigmaGolden {
		res, err = c.golden(ctx, main, yy, GoldenEvaluations, probe)
	} else {
		res, err = tune.Search(ctx, c.x, yy, main)
	}
	if err != nil {
		return fmt.Errorf("choosing lambda: %w", err)
	}
	rows := p.TuneRows
	// lambda was chosen on rows of the n training rows. The objective
	// (1/n)|f(X)-y|^2 + lambda |f|^2 weighs the data more as n grows, and
	// the lambda that is best on rows rows is too strong on n: keep the
	// balance of the sums, i.e. scikit-learn's alpha = lambda n, which
	// scales lambda by rows/n. Weighted, the balance is that of the weight
	// sums, lambda sum(w): tune subsamples among the rows of positive
	// weight, so the expected ratio of the sums is min(rows, n+)/n+ with
	// n+ those rows.
	c.lambda = allRowsLambda(res.Best.Lambda, rows, n, w)
	if p.Sigma == SigmaGolden {
		c.kernel.Sigma = res.Best.Sigma
		c.chosen.Sigma = fmt.Sprintf("golden-section search on log sigma over the median heuristic %.3g x [1/%d, %d], %d evaluations", so.Sigmas[0], GoldenSpread, GoldenSpread, GoldenEvaluations)
	}
	how := "leave-one-out"
	if so.Validation > 0 {
		how = fmt.Sprintf("%.0f/%.0f validation split", 100*(1-so.Validation), 100*so.Validation)
	}
	c.chosen.Lambda = fmt.Sprintf("%s over %d values on %d rows", how, len(so.Lambdas), rows)
	if rows < n {
		c.chosen.Lambda += fmt.Sprintf(" (%.3g there, times %d/%d for all rows: the same lambda n)", res.Best.Lambda, rows, n)
	}
	if err := c.grow(ctx, p, o, so, yy, res); err != nil {
		return err
	}
	res = c.chooseIntercept(p, res, w)
	c.chosen.TuneRows, c.chosen.TuneSeconds = rows, time.Since(start).Seconds()
	c.chosen.TuneMetric, c.chosen.TuneScore = res.Metric, res.Best.Mean
	if res.Metric == "squared_error" {
		// Chosen by the squared error, reported in the task's metric (the
		// test metric's scale), whose selection loss clearlyBeats compares.
		c.chosen.TuneMetric, c.chosen.TuneScore = "rmse", res.Best.TaskScore
		if task == solvers.TaskClassification {
			c.chosen.TuneMetric, c.chosen.SelectScore = "accuracy", res.Best.Mean
		}
	}
	if p.Loss == LossLogistic {
		// The squared loss's search chose sigma; lambda is the logistic
		// loss's own.
		c.chosen.Sigma += " (of the squared loss)"
		return c.tuneLogistic(ctx, p, o, y, w, start)
	}
	return nil
}

// tuneLogistic chooses the logistic loss's lambda at c's kernel
// (chooseLogisticLambda), and with InterceptAuto its intercept
// (chooseLogistic), and records the choice; its held-out log-loss is
// also the selection score clearlyBeats compares.
func (c *choice) tuneLogistic(ctx context.Context, p *Plan, o Options, y, w []float64, start time.Time) error {
	pick, err := c.chooseLogistic(ctx, p, o, y, w)
	if err != nil {
		return err
	}
	c.lambda = pick.lambda
	c.chosen.Lambda = pick.desc
	c.chosen.TuneRows, c.chosen.TuneSeconds = pick.rows, time.Since(start).Seconds()
	c.chosen.TuneMetric, c.chosen.TuneScore, c.chosen.SelectScore = "logloss", pick.loss, pick.loss
	c.chosen.TuneNewtonSteps, c.chosen.TuneCGIterations = pick.cost.steps, pick.cost.cg
	return nil
}

// allRowsLambda is the lambda for all n rows of the one best on rows
// tuning rows (see choice.tune): the balance of the sums, lambda n, kept.
func allRowsLambda(best float64, rows, n int, w []float64) float64 {
	if w != nil {
		pos := positiveCount(w)
		return best * float64(min(rows, pos)) / float64(pos)
	}
	return best * float64(rows) / float64(n)
}

// chooseIntercept settles InterceptAuto (Plan.ChooseIntercept): the
// fitted intercept is scored at the chosen sigma (and the tuning centres)
// over the same lambdas, and kept, with its own lambda, when its best
// selection loss is below (1 - RawMargin) times the mean intercept's: the
// mean is the default, and like the raw input transform the alternative
// must clearly beat it, by more than the few per cent the left-out errors
// of the same setting vary between samples of a few hundred rows. It returns the
// result of the intercept kept. The search scored it (res.Fitted,
// tune.SearchOptions.BothIntercepts) from the kernel or features it built
// at that sigma: one more eigendecomposition, an eighth or less of the
// choosing, which tunes six sigmas per input transform.
func (c *choice) chooseIntercept(p *Plan, res *tune.Result, w []float64) *tune.Result {
	if !p.ChooseIntercept || res.Metric != "squared_error" {
		return res
	}
	r := res.Fitted
	if r == nil {
		why := "not scored"
		if res.FittedErr != nil {
			why = res.FittedErr.Error()
		}
		c.chosen.Intercept = "the targets' mean (the fitted intercept could not be scored: " + why + ")"
		return res
	}
	n, _ := c.x.Dims()
	if r.Best.Mean < (1-RawMargin)*res.Best.Mean {
		c.intercept, c.lambda = solvers.InterceptFitted, allRowsLambda(r.Best.Lambda, p.TuneRows, n, w)
		c.chosen.Intercept = fmt.Sprintf("fitted: left-out squared error %.4g against %.4g with the targets' mean", r.Best.Mean, res.Best.Mean)
		if c.chosen.Lambda != "" && r.Best.Lambda != res.Best.Lambda {
			c.chosen.Lambda += fmt.Sprintf("; %.3g on the tuning rows with the fitted intercept", r.Best.Lambda)
		}
		return r
	}
	c.chosen.Intercept = fmt.Sprintf("the targets' mean: left-out squared error %.4g against %.4g fitted", res.Best.Mean, r.Best.Mean)
	return res
}

// GrowCenters is the most centres Fit grows FALKON's chosen count to when
// more centres pay (see grow).
const GrowCenters = 4096

// grow doubles FALKON's chosen centre count (up to GrowCenters, n and what
// the memory budget holds) when the tuning rows say more centres pay: the
// best setting scored with half the tuning centres, at the chosen sigma,
// has a selection loss that the full count lowers by more than RawMargin.
// The error of a Nystrom model falls with M and then flattens once M covers
// the data's effective dimension (low-dimensional, low-noise targets on many
// rows keep gaining), so a gain still above the noise of the left-out
// scores from M/2 to M predicts a gain from M to 2M. It costs one more
// lambda path at half the centres (an eighth of one at the full count).
func (c *choice) grow(ctx context.Context, p *Plan, o Options, so tune.SearchOptions, y *mat.Dense, res *tune.Result) error {
	n, _ := c.x.Dims()
	half := p.TuneCenters / 2
	// Only the Nystrom proxy (tune.MethodFalkon) has a centre count to
	// halve: the exact path scores every tuning row as a centre.
	if p.Method != MethodFalkon || so.Method != tune.MethodFalkon || !p.CentersChosen || p.TuneCenters < TuneCenters || n <= p.Centers || p.Centers >= GrowCenters || res.Metric != "squared_error" {
		return nil
	}
	so.Sigmas, so.Sizes = []float64{res.Best.Sigma}, []int{half}
	r, err := tune.Search(ctx, c.x, y, so)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil // the check is optional: keep the plan's count
	}
	full, halfLoss := res.Best.Mean, r.Best.Mean
	m := grownCenters(full, halfLoss, p.Centers, n, o.MemoryBudget, p.Precision)
	if m == p.Centers {
		c.chosen.Centers += fmt.Sprintf(" (kept: left-out squared error %.4g with %d tuning centres, %.4g with %d)", full, p.TuneCenters, halfLoss, half)
		return nil
	}
	c.centers = m
	c.chosen.Centers += fmt.Sprintf(", grown to %d: more centres pay (left-out squared error %.4g with %d tuning centres against %.4g with %d)", m, full, p.TuneCenters, halfLoss, half)
	return nil
}

// grownCenters is the centre count after grow's test: 2 M (at most n,
// GrowCenters and tune.MaxCenters) when the selection loss with the full
// tuning centres is below (1 - RawMargin) times the loss with half of them,
// else M.
func grownCenters(full, half float64, m, n int, limit int64, prec zonal.Precision) int {
	if !(full < (1-RawMargin)*half) {
		return m
	}
	return max(m, min(n, 2*m, GrowCenters, tune.MaxCenters(n, limit, prec)))
}

// searchOptions are the tune.Search options that choose lambda for the
// plan's method at kernel k and size.
func (p *Plan) searchOptions(ctx context.Context, o Options, k KernelSpec, x mat.Matrix) tune.SearchOptions {
	sigma := 1.0 // a kernel without a bandwidth ignores it
	if k.Kind.HasBandwidth() {
		sigma = k.Sigma
	}
	so := tune.SearchOptions{
		Options:    tune.Options{Backend: o.Backend, MemoryBudget: o.MemoryBudget, Progress: o.Progress},
		Kernel:     func(s float64) (kernels.Kernel, error) { return k.withSigma(s).New() },
		Sigmas:     []float64{sigma},
		Lambdas:    p.Lambdas,
		Criterion:  p.Criterion,
		Validation: p.Validation,
		Seed:       o.Seed,
		Rows:       p.TuneRows,
		Score:      p.Score,
	}
	sub := p.TuneRows
	switch p.Method {
	case MethodExact:
		so.Method = tune.MethodExact
	case MethodFalkon, MethodParK:
		so.Method, so.Sizes = tune.MethodFalkon, []int{p.TuneCenters}
		if p.TuneCenters == sub {
			so.Method, so.Sizes = tune.MethodExact, nil // the same model, one eigendecomposition per sigma
		}
	case MethodRidge:
		so.Method = tune.MethodRidge
		switch p.Map {
		case MapFourier:
			so.Map, so.Sizes = tune.MapFourier, []int{p.Features + p.Features%2}
		case MapNystrom:
			so.Map, so.Sizes = tune.MapNystrom, []int{min(p.Features, sub)}
		default:
			// Any other map is built as Fit builds it, on every training
			// row, and tuned as a custom map.
			so.Sizes = []int{p.Features}
			so.NewMap = func(kk kernels.Kernel, size int) (kernels.FeatureMap, error) {
				return BuildMap(ctx, MapSpec{Map: p.Map, Kernel: kk, Features: size, Lambda: 1e-6, Seed: o.Seed, Backend: o.Backend}, x)
			}
		}
	}
	return so
}

// regressionWhy says why solvers.DetectTask reads the labels y as a
// regression target.
func regressionWhy(y []float64) string {
	counts := map[float64]int{}
	for _, v := range y {
		if v != math.Trunc(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("label %g is not an integer", v)
		}
		counts[v]++
	}
	if len(counts) < 2 {
		return "the labels take one value"
	}
	rare, least := 0.0, len(y)+1
	for v, c := range counts {
		if c < least || (c == least && v < rare) {
			rare, least = v, c
		}
	}
	return fmt.Sprintf("the labels are %d integer values, and %g is seen %d times, fewer than the %d of a class", len(counts), rare, least, solvers.MinClassRows)
}

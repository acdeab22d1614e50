package estimator

import (
	"fmt"
	"math"
	"strings"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// Options are the overrides of Fit. The zero value means "choose
// everything": FALKON with a Gaussian kernel, sigma, lambda, the centre
// count and standardization chosen from the data, the task read from the
// labels, sparse rows kept sparse when sparse enough. Every field that is
// set is used as given.
type Options struct {
	// Method is the estimator family (zero: MethodFalkon).
	Method Method
	// Loss is the training loss (zero: LossSquared). LossLogistic fits a
	// kernel logistic classifier on FALKON's centres: classification
	// only, MethodFalkon, float64, uniform centres, no calibration (its
	// outputs are logits, its probabilities its own).
	Loss Loss
	// Intercept is how the model's constant is fitted (zero:
	// InterceptAuto, chosen by the tuning score where both are scored).
	Intercept Intercept
	// Kernel is the kernel family (zero: Gaussian).
	Kernel KernelKind
	// Sigma is the bandwidth of the Gaussian and Laplacian kernels; zero
	// means chosen by SigmaRule.
	Sigma float64
	// SigmaRule is how a zero Sigma is chosen (zero: SigmaAuto).
	SigmaRule SigmaRule
	// Gamma, Coef0 and Degree are the polynomial kernel's
	// (gamma <x,y> + coef0)^degree (zero Gamma: 1, zero Degree: 2; Coef0 is
	// used as given).
	Gamma  float64
	Coef0  float64
	Degree int
	// Lambda is the ridge parameter of the objective
	// (1/n)|f(X)-y|^2 + lambda |f|^2 (scikit-learn's alpha = lambda n),
	// with LossLogistic of (1/n) sum_i loss_i + (lambda/2) |f|^2; zero
	// means chosen (see the package documentation).
	Lambda float64
	// Centers is the Nystrom centre count M of FALKON (the total over the
	// cells for ParK); zero means AutoCenters.
	Centers int
	// Map and Features are the feature map and its size D of MethodRidge
	// (zero: MapNystrom, 1024 features).
	Map      Map
	Features int
	// Cells is ParK's cell count Q (zero: 4); Partition, CellCap,
	// CellBudget, CellOverlap and CellValidation are the solvers.ParKOptions
	// of the same meaning (zero: their defaults).
	Cells          int
	Partition      solvers.Partition
	CellCap        float64
	CellBudget     solvers.CellBudget
	CellOverlap    float64
	CellValidation float64
	// Sampling is FALKON's centre sampling (zero: uniform).
	Sampling solvers.Sampling
	// Iterations caps the CG iterations of FALKON and ParK (zero: the
	// solver's own rule).
	Iterations int
	// Precision of the cached kernel blocks and feature blocks (zero:
	// float64); not for MethodExact.
	Precision zonal.Precision
	// Task is what the labels mean (zero: read from them).
	Task solvers.Task
	// Standardize and Scale transform the features before the kernel:
	// Scale (zero: 1) multiplies every feature when they are not
	// standardized; a Scale other than 1 with StandardizeAuto means off.
	Standardize Standardize
	Scale       float64
	// Sparse says whether *dataset.CSR rows stay sparse (zero: SparseAuto).
	Sparse Sparse
	// Text is the tf-idf / row-normalization transform fitted on the
	// training rows and stored in the pipeline.
	Text dataset.TextOptions
	// Calibration is how a classifier's scores become class probabilities
	// (zero: CalibrationAuto; see Calibration). Regression ignores
	// CalibrationAuto and CalibrationNone and refuses the others.
	Calibration Calibration
	// Weights are per-row sample weights (nil: all 1), one per training
	// row, finite and >= 0, not all zero (solvers.CheckWeights) and, for
	// classification, not all zero on the rows of any one class: the fit
	// minimises (1/sum w) sum_i w_i |f(x_i) - y_i|^2 + lambda |f|^2 (the
	// solvers package's weighted objective), lambda is tuned on weighted
	// scores, and the calibration is fitted on weighted folds.
	Weights []float64
	// ClassWeight multiplies each row's weight by a factor of its class
	// (classification only; see ClassWeight): none (zero), balanced, or
	// explicit factors, each positive (a class of factor 0 is refused:
	// drop its rows instead).
	ClassWeight ClassWeight
	// Seed seeds every random choice (subsamples, centres, features).
	Seed uint64
	// Workers is how many ParK cells are fitted at once (zero: GOMAXPROCS).
	Workers int
	// MemoryBudget bounds the large working arrays (zero:
	// zonal.DefaultMemoryBudget).
	MemoryBudget int64
	// Backend runs the linear algebra (nil: backend.Default()).
	Backend backend.Backend
	// Progress, when set, receives progress reports.
	Progress zonal.ProgressFunc
}

// DefaultFeatures is the feature count of MethodRidge when Features is 0.
const DefaultFeatures = 1024

// DefaultCells is ParK's cell count when Cells is 0.
const DefaultCells = 4

// maxCount bounds the counts (far above anything that fits in memory, so
// only typos and overflow hit it).
const maxCount = 1 << 31

// kernelSpec is the kernel of o, with the polynomial defaults filled in.
func (o Options) kernelSpec() KernelSpec {
	p := KernelSpec{Kind: o.Kernel, Sigma: o.Sigma, Gamma: o.Gamma, Coef0: o.Coef0, Degree: o.Degree}
	if p.Kind == Polynomial {
		if p.Gamma == 0 {
			p.Gamma = 1
		}
		if p.Degree == 0 {
			p.Degree = 2
		}
	}
	return p
}

func (o Options) features() int {
	if o.Features == 0 {
		return DefaultFeatures
	}
	return o.Features
}

func (o Options) cells() int {
	if o.Cells == 0 {
		return DefaultCells
	}
	return o.Cells
}

func (o Options) scale() float64 {
	if o.Scale == 0 {
		return 1
	}
	return o.Scale
}

// Validate checks every override without looking at data; errors are
// *zonal.ParamError naming the field.
func (o Options) Validate() error {
	if o.Method < MethodFalkon || o.Method > MethodParK {
		return &zonal.ParamError{Param: "Method", Value: int(o.Method), Reason: "unknown method; want " + strings.Join(Methods(), ", "), Err: zonal.ErrUnknown}
	}
	if err := o.kernelSpec().Check(true); err != nil {
		return err
	}
	if err := o.checkLoss(); err != nil {
		return err
	}
	if err := o.checkIntercept(); err != nil {
		return err
	}
	if o.SigmaRule < SigmaAuto || o.SigmaRule > SigmaScale {
		return &zonal.ParamError{Param: "SigmaRule", Value: int(o.SigmaRule), Reason: "unknown rule"}
	}
	if o.Lambda != 0 {
		if err := positive("Lambda", o.Lambda); err != nil {
			return err
		}
	}
	if o.Scale != 0 {
		if err := positive("Scale", o.Scale); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"Centers", o.Centers}, {"Features", o.Features}, {"Cells", o.Cells}, {"Iterations", o.Iterations}, {"Workers", o.Workers}} {
		if c.v < 0 || c.v > maxCount {
			return &zonal.ParamError{Param: c.name, Value: c.v, Reason: fmt.Sprintf("must be in [0, %d] (0: chosen)", maxCount)}
		}
	}
	if err := o.Precision.Check(); err != nil {
		return &zonal.ParamError{Param: "Precision", Value: o.Precision, Reason: "want float64 or float32"}
	}
	if o.Precision != zonal.Float64 && o.Method == MethodExact {
		return &zonal.ParamError{Param: "Precision", Value: o.Precision, Reason: "applies to the ridge, falkon and park methods only, not exact (exact KRR factors the full n x n kernel matrix, which stays float64)"}
	}
	if o.Method == MethodRidge {
		if _, err := ParseMap(o.Map.String()); err != nil {
			return err
		}
	}
	if o.Sampling != "" {
		if _, err := solvers.ParseSampling(string(o.Sampling)); err != nil {
			return err
		}
	}
	if o.Partition != "" {
		if _, err := solvers.ParsePartition(string(o.Partition)); err != nil {
			return err
		}
	}
	if o.CellCap != 0 && !(o.CellCap >= 1 && !math.IsInf(o.CellCap, 0)) {
		return &zonal.ParamError{Param: "CellCap", Value: o.CellCap, Reason: "must be 0 or a finite factor >= 1"}
	}
	if o.CellBudget != "" {
		if _, err := solvers.ParseCellBudget(string(o.CellBudget)); err != nil {
			return err
		}
	}
	if !(o.CellOverlap >= 0 && o.CellOverlap <= 1) {
		return &zonal.ParamError{Param: "CellOverlap", Value: o.CellOverlap, Reason: "must be in [0, 1]"}
	}
	if !(o.CellValidation >= 0 && o.CellValidation <= 0.5) {
		return &zonal.ParamError{Param: "CellValidation", Value: o.CellValidation, Reason: "must be in [0, 0.5]"}
	}
	if o.Standardize < StandardizeAuto || o.Standardize > StandardizeOff {
		return &zonal.ParamError{Param: "Standardize", Value: int(o.Standardize), Reason: "unknown setting"}
	}
	if o.Sparse < SparseAuto || o.Sparse > SparseOff {
		return &zonal.ParamError{Param: "Sparse", Value: int(o.Sparse), Reason: "unknown setting"}
	}
	if o.Calibration < CalibrationAuto || o.Calibration > CalibrationNone {
		return &zonal.ParamError{Param: "Calibration", Value: int(o.Calibration), Reason: "unknown setting; want " + strings.Join(calibrationSetting.names, ", ")}
	}
	if err := o.ClassWeight.check(); err != nil {
		return err
	}
	if o.MemoryBudget < 0 {
		return &zonal.ParamError{Param: "MemoryBudget", Value: o.MemoryBudget, Reason: "must be >= 0 (0: the default)"}
	}
	return nil
}

// checkLoss refuses a Loss outside its range and the settings
// LossLogistic does not combine with.
func (o Options) checkLoss() error {
	if o.Loss < LossSquared || o.Loss > LossLogistic {
		return &zonal.ParamError{Param: "Loss", Value: int(o.Loss), Reason: "unknown loss; want " + strings.Join(Losses(), ", ")}
	}
	if o.Loss != LossLogistic {
		return nil
	}
	why := ""
	switch {
	case o.Method != MethodFalkon:
		why = fmt.Sprintf("the logistic loss is fitted on FALKON's centres (method falkon), not method %s", o.Method)
	case o.Task == solvers.TaskRegression:
		why = "the logistic loss is a classification loss; the task is regression"
	case o.Precision != zonal.Float64:
		why = "the logistic fit keeps K_nM in float64 (precision float32 is for the squared loss)"
	case o.Sampling != "" && o.Sampling != solvers.SamplingUniform:
		why = "the logistic fit draws its centres uniformly (sampling uniform)"
	case o.Calibration == CalibrationPlatt || o.Calibration == CalibrationIsotonic:
		why = "the logistic loss gives class probabilities itself; calibration must be auto or none"
	}
	if why != "" {
		return &zonal.ParamError{Param: "Loss", Value: o.Loss, Reason: why}
	}
	return nil
}

// checkIntercept refuses an Intercept outside its range and a fitted one
// where the solver has none.
func (o Options) checkIntercept() error {
	if o.Intercept < InterceptAuto || o.Intercept > InterceptFitted {
		return &zonal.ParamError{Param: "Intercept", Value: int(o.Intercept), Reason: "unknown setting; want " + strings.Join(Intercepts(), ", "), Err: zonal.ErrUnknown}
	}
	if o.Intercept != InterceptFitted {
		return nil
	}
	why := ""
	switch {
	case o.Method != MethodFalkon:
		why = fmt.Sprintf("a fitted intercept is fitted by FALKON (method falkon), not method %s", o.Method)
	case o.Precision != zonal.Float64:
		why = "a fitted intercept needs precision float64"
	}
	if why != "" {
		return &zonal.ParamError{Param: "Intercept", Value: o.Intercept, Reason: why}
	}
	return nil
}

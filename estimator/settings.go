package estimator

import (
	"fmt"
	"strings"

	"github.com/zonal-ml/zonal"
)

// setting is the String/Parse table of one enumerated option: names[i] is
// the name of value i, names[0] that of the zero value.
type setting struct {
	what  string
	names []string
}

func (s setting) name(i int) string {
	if i >= 0 && i < len(s.names) {
		return s.names[i]
	}
	return fmt.Sprintf("%s(%d)", s.what, i)
}

func (s setting) parse(v string) (int, error) {
	v = strings.TrimSpace(v)
	for i, n := range s.names {
		if v == n {
			return i, nil
		}
	}
	return 0, &zonal.ParamError{Param: s.what, Value: fmt.Sprintf("%q", v), Reason: "want " + strings.Join(s.names, ", ")}
}

// Method is the estimator family Fit fits.
type Method int

const (
	// MethodFalkon is FALKON (Nystrom KRR on M centres solved by
	// preconditioned CG), the default: near-exact accuracy at O(n M) cost.
	MethodFalkon Method = iota
	// MethodExact is exact kernel ridge regression (a Cholesky factorization
	// of the n x n kernel matrix): the reference, for up to a few 10^4 rows.
	MethodExact
	// MethodRidge is ridge regression on an explicit feature map (Map).
	MethodRidge
	// MethodParK is ParK: a Voronoi partition into Cells, one FALKON per cell.
	MethodParK
)

var methodSetting = setting{"Method", []string{"falkon", "exact", "ridge", "park"}}

func (m Method) String() string { return methodSetting.name(int(m)) }

// ParseMethod parses falkon, exact, ridge or park.
func ParseMethod(s string) (Method, error) {
	i, err := methodSetting.parse(s)
	return Method(i), err
}

// Methods lists the methods in the order of their values.
func Methods() []string { return append([]string(nil), methodSetting.names...) }

// usesCentres reports whether m draws Nystrom centres (Centers applies).
func (m Method) usesCentres() bool { return m == MethodFalkon || m == MethodParK }

// SigmaRule says how Fit chooses the bandwidth when Options.Sigma is 0.
type SigmaRule int

const (
	// SigmaAuto is the median heuristic m (the median distance between
	// training rows); when lambda is chosen too and the map allows it, a
	// golden-section search on log sigma over m x [1/8, 8] refines it.
	SigmaAuto SigmaRule = iota
	// SigmaScale is scikit-learn's gamma = 'scale' rule, sqrt(d var(X) / 2).
	SigmaScale
)

var sigmaSetting = setting{"SigmaRule", []string{"auto", "scale"}}

func (r SigmaRule) String() string { return sigmaSetting.name(int(r)) }

// ParseSigmaRule parses auto or scale.
func ParseSigmaRule(s string) (SigmaRule, error) {
	i, err := sigmaSetting.parse(s)
	return SigmaRule(i), err
}

// Standardize says whether the features are standardized (mean 0, variance
// 1 on the training rows) before the kernel sees them.
type Standardize int

const (
	// StandardizeAuto standardizes, except that when sigma and lambda are
	// both chosen the raw features are tuned too and kept when their tuning
	// loss is clearly lower (RawMargin). Sparse rows are never standardized.
	StandardizeAuto Standardize = iota
	// StandardizeOn always standardizes dense rows.
	StandardizeOn
	// StandardizeOff never standardizes (Options.Scale still applies).
	StandardizeOff
)

var standardizeSetting = setting{"Standardize", []string{"auto", "on", "off"}}

func (s Standardize) String() string { return standardizeSetting.name(int(s)) }

// ParseStandardize parses auto, on or off.
func ParseStandardize(s string) (Standardize, error) {
	i, err := standardizeSetting.parse(s)
	return Standardize(i), err
}

// Sparse says whether *dataset.CSR training rows stay sparse.
type Sparse int

const (
	// SparseAuto keeps CSR rows sparse when their density nnz/(n d) is
	// below SparseDensity, and densifies them otherwise.
	SparseAuto Sparse = iota
	// SparseOn always keeps CSR rows sparse.
	SparseOn
	// SparseOff densifies CSR rows (refused above dataset.MaxDenseElements).
	SparseOff
)

var sparseSetting = setting{"Sparse", []string{"auto", "yes", "no"}}

func (s Sparse) String() string { return sparseSetting.name(int(s)) }

// ParseSparse parses auto, yes or no.
func ParseSparse(s string) (Sparse, error) {
	i, err := sparseSetting.parse(s)
	return Sparse(i), err
}

// KernelKind names a kernel family.
type KernelKind int

const (
	// Gaussian is exp(-|x-y|^2/(2 sigma^2)), the default.
	Gaussian KernelKind = iota
	// Laplacian is exp(-|x-y|_1/sigma).
	Laplacian
	// Polynomial is (gamma <x,y> + coef0)^degree.
	Polynomial
)

var kernelSetting = setting{"Kernel", []string{"gaussian", "laplacian", "polynomial"}}

func (k KernelKind) String() string { return kernelSetting.name(int(k)) }

// ParseKernelKind parses gaussian, laplacian or polynomial.
func ParseKernelKind(s string) (KernelKind, error) {
	i, err := kernelSetting.parse(s)
	return KernelKind(i), err
}

// KernelKinds lists the kernel names with their formulas, for help texts.
func KernelKinds() []string {
	f := []string{"exp(-|x-y|^2/(2 sigma^2))", "exp(-|x-y|_1/sigma)", "(gamma <x,y> + coef0)^degree"}
	out := make([]string, len(kernelSetting.names))
	for i, n := range kernelSetting.names {
		out[i] = n + " " + f[i]
	}
	return out
}

// HasBandwidth reports whether the kernel takes a bandwidth sigma.
func (k KernelKind) HasBandwidth() bool { return k == Gaussian || k == Laplacian }

// Loss is the training loss of Fit.
type Loss int

const (
	// LossSquared is the squared loss of kernel ridge regression, the
	// default: every method, regression and classification (the latter on
	// +-1 targets, calibrated into probabilities afterwards).
	LossSquared Loss = iota
	// LossLogistic is the logistic loss (binary) or the softmax loss
	// (multiclass) of solvers.FitLogistic: classification only, on
	// FALKON's centres (MethodFalkon). Its model's outputs are logits, so
	// the pipeline gives probabilities without a calibration.
	LossLogistic
)

var lossSetting = setting{"Loss", []string{"squared", "logistic"}}

func (l Loss) String() string { return lossSetting.name(int(l)) }

// ParseLoss parses squared or logistic.
func ParseLoss(s string) (Loss, error) {
	i, err := lossSetting.parse(s)
	return Loss(i), err
}

// Losses lists the losses in the order of their values.
func Losses() []string { return append([]string(nil), lossSetting.names...) }

// Intercept is how Fit gets the model's constant term.
type Intercept int

const (
	// InterceptAuto chooses: where the tuner scores both (FALKON with the
	// squared loss in float64, lambda chosen by leave-one-out), the fitted
	// intercept is scored at the chosen sigma and kept when its left-out
	// error is lower by more than RawMargin; the fitted one for the
	// logistic loss (see the package documentation); elsewhere the mean.
	InterceptAuto Intercept = iota
	// InterceptMean centres the targets by their training mean
	// (solvers.InterceptMean); for the logistic loss it means no constant
	// (the logits are the expansion alone).
	InterceptMean
	// InterceptFitted fits the constant with the expansion, unpenalised
	// (solvers.InterceptFitted; scikit-learn's Ridge(fit_intercept=True),
	// and for the logistic loss LogisticRegression(fit_intercept=True)):
	// FALKON in float64 only.
	InterceptFitted
)

var interceptSetting = setting{"Intercept", []string{"auto", "mean", "fitted"}}

func (c Intercept) String() string { return interceptSetting.name(int(c)) }

// ParseIntercept parses auto, mean or fitted.
func ParseIntercept(s string) (Intercept, error) {
	i, err := interceptSetting.parse(s)
	return Intercept(i), err
}

// Intercepts lists the intercept settings in the order of their values.
func Intercepts() []string { return append([]string(nil), interceptSetting.names...) }

package estimator

import (
	"fmt"
	"math"
	"strings"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// Shape is what the plan needs to know of the training data.
type Shape struct {
	Rows, Cols int
	// Sparse says the rows are a *dataset.CSR, of Density nnz / (n d).
	Sparse  bool
	Density float64
}

// SparseDensity is the density nnz/(n d) below which SparseAuto keeps CSR
// rows sparse. At 10% a CSR (16 bytes per entry: value and column index)
// is 5x smaller than the dense matrix (8 bytes per entry), and the sparse
// products cost about as much as the dense BLAS ones around there; below
// it, sparse wins on both counts.
const SparseDensity = 0.10

// KeepSparse reports whether CSR rows of the given density stay sparse
// under mode.
func KeepSparse(mode Sparse, density float64) bool {
	return mode == SparseOn || mode == SparseAuto && density < SparseDensity
}

// RawMargin is how much lower (relatively) the tuning loss of the raw
// features must be for them to replace the standardized ones under
// StandardizeAuto: on a few hundred rows leave-one-out scores differ by
// noise at this level.
const RawMargin = 0.05

// The bracket and evaluations of the golden-section search on log sigma
// when sigma and lambda are both chosen.
const (
	GoldenSpread      = 8
	GoldenEvaluations = 6
)

// ExactLOORows is the most tuning rows exact KRR is scored on by
// closed-form leave-one-out (one n x n eigendecomposition per sigma); above
// it one 80/20 split (a Cholesky factorization per lambda) is cheaper, and
// with that many rows less noisy than on a few hundred.
const ExactLOORows = 1000

// ExactTuneRows is the subsample exact KRR's lambda is chosen on (its split
// path factors an n x n matrix per lambda); the other methods use
// tune.AutoRows.
const ExactTuneRows = 2000

// TuneRowsFraction and MaxTuneRows set the tuning subsample of FALKON and
// ParK with the squared loss (NystromTuneRows): a TuneRowsFraction-th of
// the training rows, at least tune.AutoRows and at most MaxTuneRows.
const (
	TuneRowsFraction = 4
	MaxTuneRows      = 2 * tune.AutoRows
)

// NystromTuneRows is the number of rows sigma and lambda are chosen on for
// FALKON and ParK (squared loss) with n training rows: all of them up to
// tune.AutoRows, then n / TuneRowsFraction clamped to [tune.AutoRows,
// MaxTuneRows], at most n. Why more than tune.AutoRows on large sets: the
// leave-one-out score of r rows varies by about 1/sqrt(r) between samples,
// and over sigma it has local minima of that size, which a golden-section
// search can land in; on a sparse 20-class set of 33441 rows the score at
// 4000 rows had three minima within 2% of each other (sigma 12, 35, 42),
// at 8000 rows one (sigma 24.5). The extra rows cost the proxy's kernel
// rows and their share of Phi^T Phi (M^2 multiply-adds a row at the
// tuning centres), not the eigendecompositions: on that set a grid of 7
// sigmas at 1024 centres took 7.1 s on 4000 rows and 11.0 s on 8000 (one
// run each, 2-core machine). Sets below 4 tune.AutoRows rows are
// unchanged.
func NystromTuneRows(n int) int {
	return min(n, max(tune.AutoRows, min(MaxTuneRows, n/TuneRowsFraction)))
}

// MinCenters is the fewest centres the plan gives FALKON when it chooses
// the count and the rows allow (see FalkonCenters).
const MinCenters = 2048

// TuneCenters is the most centres sigma and lambda are scored with (see
// Plan.TuneCenters).
const TuneCenters = 1024

// ExactLOOCenters is the most tuning rows that are scored by exact KRR's
// leave-one-out when the model's centres cover them all (see
// Plan.TuneCenters).
const ExactLOOCenters = 2048

// FalkonCenters is the centre count the plan chooses for FALKON on n
// training rows: at least the statistical floor tune.AutoCenters, ceil(sqrt(n)
// ln n), and at least MinCenters, at most n and at most what the memory
// budget holds for the M x M factors and the cached n x M kernel block
// (tune.MaxCenters).
func FalkonCenters(n int, limit int64, p zonal.Precision) int {
	if n <= 0 {
		return 0
	}
	floor := tune.AutoCenters(n, limit, p)
	return max(floor, min(n, MinCenters, tune.MaxCenters(n, limit, p)))
}

// SigmaChoice is how the plan sets the bandwidth.
type SigmaChoice int

const (
	SigmaGiven  SigmaChoice = iota // Options.Sigma, or a kernel without one
	SigmaMedian                    // the median heuristic
	SigmaGolden                    // median heuristic, then golden-section search with lambda
	SigmaScaled                    // scikit-learn's 'scale' rule
)

var sigmaChoiceSetting = setting{"SigmaChoice", []string{"given", "median", "golden", "scale"}}

func (s SigmaChoice) String() string { return sigmaChoiceSetting.name(int(s)) }

// Plan is what Fit will do with data of a given shape: every choice that
// does not need the data's values. NewPlan makes it; `zonal fit -dry-run`
// prints it.
type Plan struct {
	Shape  Shape
	Method Method
	// Loss is the training loss; with LossLogistic, lambda is chosen by
	// held-out log-loss (LogisticValidation) and sigma as for the squared
	// loss.
	Loss   Loss
	Kernel KernelSpec
	// KeepSparse: CSR rows stay sparse (else they are densified).
	KeepSparse bool
	// Standardize lists the input transforms tuned, in order: true is
	// standardized, false raw (Scale applied); with two, the raw one wins
	// only by RawMargin.
	Standardize []bool
	Scale       float64
	Sigma       SigmaChoice
	// TuneLambda says lambda is chosen: on TuneRows rows, by Criterion
	// (with Validation, the held-out fraction of a split) over Lambdas.
	TuneLambda bool
	Lambda     float64
	TuneRows   int
	Criterion  tune.Criterion
	// Score is what the tuner selects by: tune.ScoreSquared, the squared
	// error of the left-out outputs (for regression the same choice as
	// RMSE; see the package documentation for classification).
	Score      tune.Score
	Validation float64
	Lambdas    []float64
	// Centers is FALKON's or ParK's centre count (CentersChosen when it
	// was chosen here), Map and Features ridge's map, Cells ParK's.
	// TuneCenters is the centre count sigma and lambda are scored with:
	// Centers, at most the tuning rows and TuneCenters; all the tuning rows
	// (exact KRR) when Centers covers them and they are at most
	// ExactLOOCenters.
	Centers       int
	CentersChosen bool
	TuneCenters   int
	Map           Map
	Features      int
	Cells         int
	Precision     zonal.Precision
	Iterations    int
	// Intercept is the model's intercept; ChooseIntercept says Fit scores
	// the fitted one too at the chosen sigma and keeps the better
	// (InterceptAuto; Intercept is then the mean until it is chosen).
	Intercept       solvers.Intercept
	ChooseIntercept bool
	// chooseLogisticIntercept says the logistic loss's lambda choice
	// scores the fitted intercept too (InterceptAuto; chooseLogistic).
	chooseLogisticIntercept bool
	// Need is the main allocation's bytes (the M x M factor array, the
	// D x D Gram matrix, the n x n kernel matrix) and Budget the memory
	// budget it is checked against.
	Need, Budget int64
	needWhat     string
	needParam    string
	needValue    int
	// Notes are decisions worth telling the user (a setting ignored and
	// why).
	Notes []string
}

// NewPlan plans a fit of data of shape s with options o. Errors:
// *zonal.ParamError for a bad option, *zonal.TooLargeError when the main
// allocation cannot fit the memory budget, zonal.ErrEmpty for no rows or
// columns.
func NewPlan(s Shape, o Options) (*Plan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if s.Rows <= 0 || s.Cols <= 0 {
		return nil, fmt.Errorf("%w: %d x %d training data", zonal.ErrEmpty, s.Rows, s.Cols)
	}
	n := s.Rows
	p := &Plan{Shape: s, Method: o.Method, Loss: o.Loss, Kernel: o.kernelSpec(), Scale: o.scale(), Lambda: o.Lambda,
		Map: Map(o.Map.String()), Precision: o.Precision, Iterations: o.Iterations, Budget: budget.Or(o.MemoryBudget)}
	if s.Sparse {
		p.KeepSparse = KeepSparse(o.Sparse, s.Density)
	}
	sigmaAuto := o.SigmaRule == SigmaAuto && o.Sigma == 0
	switch {
	case s.Sparse && p.KeepSparse:
		p.Standardize = []bool{false}
		if o.Standardize == StandardizeOn {
			p.Notes = append(p.Notes, "Standardize is ignored for sparse input: centering would make every row dense")
		} else if o.Standardize == StandardizeAuto && p.Scale == 1 {
			p.Notes = append(p.Notes, "standardize off for sparse input (centering would make every row dense)")
		}
		if p.Scale != 1 {
			return nil, &zonal.ParamError{Param: "Scale", Value: p.Scale, Reason: "not supported for sparse input (use Text.Normalize, or Sparse off)"}
		}
	case o.Standardize == StandardizeOn:
		p.Standardize = []bool{true}
	case o.Standardize == StandardizeOff || p.Scale != 1:
		p.Standardize = []bool{false}
	case sigmaAuto && o.Lambda == 0:
		p.Standardize = []bool{true, false}
	default:
		p.Standardize = []bool{true}
	}
	if p.Kernel.Kind.HasBandwidth() && o.Sigma == 0 {
		switch {
		case o.SigmaRule == SigmaScale:
			p.Sigma = SigmaScaled
		case o.Lambda == 0 && !p.customMap():
			p.Sigma = SigmaGolden
		default:
			p.Sigma = SigmaMedian
		}
	}
	switch o.Method {
	case MethodFalkon, MethodParK:
		p.Centers = o.Centers
		if p.Centers == 0 {
			p.CentersChosen = true
			p.Centers = tune.AutoCenters(n, o.MemoryBudget, o.Precision)
			if o.Method == MethodFalkon {
				p.Centers = FalkonCenters(n, o.MemoryBudget, o.Precision)
			}
		}
		if o.Method == MethodParK {
			p.Cells = o.cells()
			// ParK's centres are shared by its cells: at least one each.
			if p.CentersChosen {
				p.Centers = max(p.Centers, p.Cells)
			}
		}
	case MethodRidge:
		p.Features = o.features()
	}
	if o.Lambda == 0 {
		p.TuneLambda = true
		p.Lambdas = AutoLambdas()
		p.Criterion = tune.CriterionLOO
		p.Score = tune.ScoreSquared
		p.TuneRows = tune.AutoRows
		if (p.Method == MethodFalkon || p.Method == MethodParK) && p.Loss == LossSquared {
			p.TuneRows = NystromTuneRows(n)
		}
		if o.Method == MethodExact {
			p.TuneRows = ExactTuneRows
			if min(n, p.TuneRows) > ExactLOORows {
				p.Criterion, p.Validation = tune.CriterionCV, 0.2
			}
		}
		p.TuneRows = min(p.TuneRows, n)
		if p.Method == MethodFalkon || p.Method == MethodParK {
			p.TuneCenters = min(p.Centers, p.TuneRows, TuneCenters)
			if p.Centers >= p.TuneRows && p.TuneRows <= ExactLOOCenters {
				// Every tuning row is a centre: the Nystrom model on them
				// is exact KRR, scored by its leave-one-out from one
				// eigendecomposition per sigma (the Nystrom path takes
				// two).
				p.TuneCenters = p.TuneRows
			}
		}
	}
	p.Intercept = solvers.InterceptMean
	if o.Intercept == InterceptFitted {
		p.Intercept = solvers.InterceptFitted
	}
	p.ChooseIntercept = o.Intercept == InterceptAuto && p.Method == MethodFalkon && p.Loss == LossSquared &&
		p.Precision == zonal.Float64 && p.TuneLambda && p.Criterion == tune.CriterionLOO
	// The logistic loss scores both on its own held-out folds
	// (chooseLogistic) whenever it chooses lambda.
	p.chooseLogisticIntercept = o.Intercept == InterceptAuto && p.Loss == LossLogistic && p.TuneLambda
	if err := p.checkMemory(); err != nil {
		return nil, err
	}
	return p, nil
}

// customMap reports whether ridge's map is one tune does not build itself
// (it is then built as Fit builds it, and sigma cannot be searched with it).
func (p *Plan) customMap() bool {
	return p.Method == MethodRidge && p.Map != MapFourier && p.Map != MapNystrom
}

// checkMemory refuses sizes whose main allocation cannot fit the budget,
// before any of it is made: the D x D Gram matrix of ridge, the M x M
// array of FALKON's and ParK's preconditioners.
func (p *Plan) checkMemory() error {
	n := p.Shape.Rows
	switch p.Method {
	case MethodRidge:
		D := p.Features
		if strings.HasSuffix(string(p.Map), "nystrom") {
			D = min(D, n) // landmarks are training rows
		}
		// FitRidge streams the features in row blocks: the D x D Gram
		// matrix is what must fit (FitRidge checks the rest).
		p.needWhat, p.needParam, p.needValue = fmt.Sprintf("%d features (the %d x %d Gram matrix)", p.Features, D, D), "Features", p.Features
		p.Need = budget.Floats(D, D)
	case MethodFalkon, MethodParK:
		p.needWhat, p.needParam, p.needValue = fmt.Sprintf("%d centres (the %d x %d preconditioner)", p.Centers, p.Centers, p.Centers), "Centers", p.Centers
		p.Need = budget.Floats(p.Centers, p.Centers)
	default:
		return nil
	}
	if p.Need > p.Budget {
		return &zonal.TooLargeError{What: p.needWhat, Setting: "MemoryBudget", Need: p.Need, Budget: p.Budget, Param: p.needParam, Value: p.needValue}
	}
	return nil
}

// AutoLambdas is the lambda path Fit chooses from: 1e-10, 1e-9, ..., 1e-1.
func AutoLambdas() []float64 {
	l := make([]float64, 10)
	for i := range l {
		l[i] = math.Pow(10, float64(i-10))
	}
	return l
}

// String describes the plan, one decision a line.
func (p *Plan) String() string {
	var b strings.Builder
	s := p.Shape
	fmt.Fprintf(&b, "data: %d rows x %d features", s.Rows, s.Cols)
	if s.Sparse {
		fmt.Fprintf(&b, ", sparse (density %.3g%%), kept %s", 100*s.Density, map[bool]string{true: "as CSR", false: "dense"}[p.KeepSparse])
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "method: %s", p.Method)
	if p.Loss != LossSquared {
		fmt.Fprintf(&b, ", %s loss", p.Loss)
	}
	switch p.Method {
	case MethodFalkon:
		fmt.Fprintf(&b, ", M = %d centres%s", p.Centers, chosenNote(p.CentersChosen, fmt.Sprintf("the most of ceil(sqrt(n) ln n) and %d, at most n and what the memory budget holds", MinCenters)))
	case MethodParK:
		fmt.Fprintf(&b, ", Q = %d cells, M = %d centres in all%s", p.Cells, p.Centers, chosenNote(p.CentersChosen, "ceil(sqrt(n) ln n)"))
	case MethodRidge:
		fmt.Fprintf(&b, " on %s features, D = %d", p.Map, p.Features)
	}
	if p.Method != MethodExact {
		fmt.Fprintf(&b, ", precision %s", p.Precision)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "kernel: %s", p.Kernel.Kind)
	if p.Kernel.Kind.HasBandwidth() {
		switch p.Sigma {
		case SigmaGiven:
			fmt.Fprintf(&b, ", sigma %g", p.Kernel.Sigma)
		case SigmaMedian:
			b.WriteString(", sigma by the median heuristic")
		case SigmaGolden:
			fmt.Fprintf(&b, ", sigma by golden-section search on log sigma over the median heuristic x [1/%d, %d], %d evaluations", GoldenSpread, GoldenSpread, GoldenEvaluations)
			if p.Loss != LossSquared {
				b.WriteString(" of the squared loss")
			}
		case SigmaScaled:
			b.WriteString(", sigma by the scale rule sqrt(d var(X) / 2)")
		}
	} else {
		fmt.Fprintf(&b, ", gamma %g, coef0 %g, degree %d", p.Kernel.Gamma, p.Kernel.Coef0, p.Kernel.Degree)
	}
	b.WriteString("\n")
	switch {
	case len(p.Standardize) == 2:
		fmt.Fprintf(&b, "input: standardized, unless the raw features tune %.0f%% better\n", 100*RawMargin)
	case p.Standardize[0]:
		b.WriteString("input: standardized\n")
	case p.Scale != 1:
		fmt.Fprintf(&b, "input: scaled by %g\n", p.Scale)
	default:
		b.WriteString("input: raw\n")
	}
	if p.TuneLambda && p.Loss == LossLogistic {
		fmt.Fprintf(&b, "lambda: held-out log-loss of the logistic fit on stratified %.0f/%.0f folds (until %d rows, %d of every class, are held out) over %d values (%g ... %g), refined to 1/%d of their step around the best, on %d rows, scaled by rows/n\n",
			100*(1-LogisticValidation), 100*LogisticValidation, LogisticHeldOutRows, LogisticHeldOutClassRows, len(p.Lambdas), p.Lambdas[0], p.Lambdas[len(p.Lambdas)-1], LogisticRefine, p.TuneRows)
	} else if p.TuneLambda {
		how := "leave-one-out"
		if p.Validation > 0 {
			how = fmt.Sprintf("%.0f/%.0f validation split", 100*(1-p.Validation), 100*p.Validation)
		}
		fmt.Fprintf(&b, "lambda: %s over %d values (%g ... %g) on %d rows, scaled by rows/n", how, len(p.Lambdas), p.Lambdas[0], p.Lambdas[len(p.Lambdas)-1], p.TuneRows)
		if p.TuneCenters > 0 {
			fmt.Fprintf(&b, ", scored with %d centres", p.TuneCenters)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "lambda: %g\n", p.Lambda)
	}
	switch {
	case p.chooseLogisticIntercept:
		fmt.Fprintf(&b, "intercept: none, or fitted with the expansion (unpenalised, one per logit) when its held-out log-loss is lower by more than %.0f%%\n", 100*RawMargin)
	case p.Loss == LossLogistic && p.Intercept == solvers.InterceptFitted:
		b.WriteString("intercept: fitted with the expansion (unpenalised, one per logit)\n")
	case p.Loss == LossLogistic:
		b.WriteString("intercept: none (the logits are the expansion alone)\n")
	case p.ChooseIntercept:
		b.WriteString("intercept: the targets' mean, or fitted with the expansion (unpenalised) when that scores lower at the chosen sigma\n")
	case p.Intercept == solvers.InterceptFitted:
		b.WriteString("intercept: fitted with the expansion (unpenalised)\n")
	default:
		b.WriteString("intercept: the targets' mean\n")
	}
	if p.Need > 0 {
		fmt.Fprintf(&b, "memory: %s needs %s of a %s budget\n", p.needWhat, budget.Format(p.Need), budget.Format(p.Budget))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

func chosenNote(chosen bool, rule string) string {
	if !chosen {
		return ""
	}
	return " (" + rule + ")"
}

// solversParK is the ParK options of o for the plan.
func (p *Plan) parkOptions(o Options, opts solvers.Options) solvers.ParKOptions {
	return solvers.ParKOptions{Options: opts, Cells: p.Cells, Centers: p.Centers, Iterations: p.Iterations, Seed: o.Seed,
		Workers: o.Workers, Precision: p.Precision, Partition: o.Partition, Cap: o.CellCap, Budget: o.CellBudget,
		Validation: o.CellValidation, Overlap: o.CellOverlap}
}

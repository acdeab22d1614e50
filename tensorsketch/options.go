package tensorsketch

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Options are the fields every long operation of the module shares; the
// adaptive fit's AdaptiveOptions embed them.
type Options struct {
	// Backend does the dense algebra of the adaptive fit (the Woodbury
	// solves with B B^T + lambda I); nil means backend.Default().
	Backend backend.Backend
	// Progress, if set, is called from the fitting goroutine after each
	// level of the recursive sampler with Stage "level", Done the levels
	// finished and Total the levels planned (when the recursion stops
	// early, the last report has Done == Total == the levels run).
	Progress zonal.ProgressFunc
	// MemoryBudget bounds the working arrays whose size follows from the
	// input and the options (the copy of the nonzeros, the PolySketches of
	// the points, the n x t projections, B B^T, the n x R features of the
	// previous level), in bytes; zero means zonal.DefaultMemoryBudget. A fit
	// that would exceed it returns an error wrapping zonal.ErrTooLarge
	// before allocating.
	MemoryBudget int64
}

// SketchOptions configure the oblivious sketches (NewCountSketch,
// NewTensorSketch, NewPolySketch). Building a sketch is cheap, so there is
// no Backend or Progress; MemoryBudget has the meaning of
// Options.MemoryBudget.
type SketchOptions struct {
	// Features is the target dimension D >= 1. Polynomial kernel: exactly D
	// features. Gaussian kernel: one feature for degree 0 and
	// m = floor((D-1)/q) per degree 1..q, so Dim() = 1 + q*m <= D (D >= q+1).
	Features int
	// TaylorDegree is the truncation degree q of the Gaussian kernel's
	// Taylor series (1..MaxDegree; see TaylorDegree for choosing it from the
	// data radius). Required for kernels.Gaussian, ignored for
	// kernels.Polynomial.
	TaylorDegree int
	// Seed drives every random choice; equal seeds give equal maps.
	Seed uint64
	// MemoryBudget bounds the hash tables and sketch nodes at construction
	// and the copy of the input's nonzeros and per-worker scratch in
	// Transform, in bytes; zero means zonal.DefaultMemoryBudget. A map
	// decoded with kernels.UnmarshalMap uses the default.
	MemoryBudget int64
}

// AdaptiveOptions configure FitAdaptive.
type AdaptiveOptions struct {
	Options
	// Samples is s, the number of row draws at the final level; it is the
	// requested feature dimension D. Repeated draws (and draws that are
	// permutations of one another, whose features are identical) are merged,
	// so the map usually has fewer than s features.
	Samples int
	// Lambda is the ridge parameter lambda > 0 of the (eps, lambda) guarantee.
	Lambda float64
	// TaylorDegree is the truncation degree q of the Gaussian kernel's
	// Taylor series (ignored for kernels.Polynomial); 0 chooses
	// q = TaylorDegree(max_i |x_i|^2 / sigma^2, 1e-3) from the data.
	TaylorDegree int
	// SketchDim is m, the PolySketch size used to estimate conditional
	// marginals (default 32).
	SketchDim int
	// Projections is t, the number of Gaussian columns of the
	// Johnson-Lindenstrauss sketch of (B^T B + lambda I)^{-1/2} (default
	// 64). With t columns the estimate of each row's leverage is a
	// chi-square with t degrees of freedom over t, so a small t under-samples
	// some rows badly, and at a budget near the statistical dimension those
	// rows set eps: at Samples = 2 s_lambda on 400 digits rows (degree 2,
	// lambda 1, 5 seeds) the mean eps was 2.01 with t = 16 and 1.73 with
	// t = 64 (exact leverage sampling 1.45). The last coordinate of every
	// drawn prefix costs t operations per nonzero of its support, the n x t
	// arrays of a level grow with t, and the first coordinates pair the m
	// sketch entries with the JL columns, so t > SketchDim uses only
	// SketchDim of them there.
	Projections int
	// Mix is the weight alpha of the "diagonal" proposal mixed into every
	// sketched conditional so no row of nonzero leverage gets probability 0
	// (default 0.05).
	Mix float64
	// Oversample c sets the draws of the intermediate levels to
	// min(4 Samples, ceil(c * s_hat * ln(s_hat + e))) with s_hat the
	// estimated statistical dimension at that level (default 2). These
	// levels only build the next level's leverage estimates, so they may
	// draw more rows than the final level's Samples.
	Oversample float64
	// SupportSample L: below the first coordinate, a prefix whose points
	// number more than L estimates its conditional from L points sampled by
	// their diagonal mass (default 2048); see the package documentation.
	SupportSample int
	// RowNormMix beta: a quarter of the t columns of W are Gaussian columns
	// scaled so that about a fraction beta of the sampling mass follows the
	// row norms |Phi_r|^2 / tr(K) rather than the leverage estimate. Every
	// row then has probability >= ~beta |Phi_r|^2/tr(K), which bounds the
	// weight of any sampled row (its contribution to Z^T Z has norm at most
	// ~tr(K)/(s beta)) and keeps the recursion stable when s is small
	// against the statistical dimension (default 0.05; negative disables).
	RowNormMix float64
	// ExactLambda keeps halving lambda down to Lambda even when a level
	// after the first estimates a statistical dimension s_t > Samples/2. By
	// default the recursion stops at that level and draws the Samples rows
	// there: fewer than two draws per unit of statistical dimension give no
	// (eps, lambda) guarantee below it, and sampling at the larger lambda_t
	// keeps the top of the spectrum accurate (Levels reports the lambda used).
	ExactLambda bool
	// Seed drives every random choice.
	Seed uint64
}

// defaults fills the zero fields and checks the others (errors wrap
// zonal.ErrParam). TaylorDegree is resolved by FitAdaptive, which needs
// the data.
func (o *AdaptiveOptions) defaults() error {
	if o.Samples < 1 {
		return fmt.Errorf("%w: Samples must be >= 1, got %d", zonal.ErrParam, o.Samples)
	}
	if !(o.Lambda > 0) || math.IsInf(o.Lambda, 0) {
		return fmt.Errorf("%w: Lambda must be positive and finite, got %g", zonal.ErrParam, o.Lambda)
	}
	if o.SketchDim == 0 {
		o.SketchDim = 32
	}
	if o.Projections == 0 {
		o.Projections = 64
	}
	if o.Mix == 0 {
		o.Mix = 0.05
	}
	if o.RowNormMix == 0 {
		o.RowNormMix = 0.05
	}
	if o.RowNormMix < 0 {
		o.RowNormMix = 0
	}
	if o.SupportSample == 0 {
		o.SupportSample = 2048
	}
	if o.Oversample == 0 {
		o.Oversample = 2
	}
	if o.SketchDim < 1 || o.Projections < 1 || o.SupportSample < 1 || !(o.Mix > 0 && o.Mix < 1) || !(o.Oversample > 0) || o.RowNormMix >= 1 {
		return fmt.Errorf("%w: bad sampler options (SketchDim %d, Projections %d, Mix %g, Oversample %g)",
			zonal.ErrParam, o.SketchDim, o.Projections, o.Mix, o.Oversample)
	}
	if o.TaylorDegree < 0 || o.TaylorDegree > MaxDegree {
		return fmt.Errorf("%w: TaylorDegree must be in [0,%d], got %d", zonal.ErrParam, MaxDegree, o.TaylorDegree)
	}
	if o.Backend == nil {
		o.Backend = backend.Default()
	}
	return nil
}

package tune

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/metrics"
	"github.com/zonal-ml/zonal/solvers"
)

// Loss is the training loss of the fits a search scores.
type Loss string

// Losses a search can tune.
const (
	// LossSquared ("" too) is the squared loss of every method.
	LossSquared Loss = "squared"
	// LossLogistic is the logistic (two classes) or softmax loss of
	// logistic FALKON (solvers.FitLogistic), MethodFalkon only and a
	// classification task: per sigma, size and fold the lambdas are one
	// warm-started regularisation path (solvers.FitLogisticPath), scored
	// on the fold's held-out rows by k-fold cross-validation or a split.
	LossLogistic Loss = "logistic"
)

func (l Loss) String() string {
	if l == "" {
		return string(LossSquared)
	}
	return string(l)
}

// ParseLoss parses squared (or "") and logistic.
func ParseLoss(s string) (Loss, error) {
	if s == "" {
		return LossSquared, nil
	}
	return zonal.ParseSetting("Loss", s, LossSquared, LossLogistic)
}

// LogisticPathGradTol is the relative gradient tolerance (solvers'
// LogisticOptions.GradTol) of the fold models of a LossLogistic search:
// looser than the refit's 1e-6 (solvers' default), as the estimator's
// choice of the logistic lambda, because the held-out scores only have to
// rank the settings and the last Newton steps change them far less than
// neighbouring lambdas do.
const LogisticPathGradTol = 1e-4

// checkLoss validates SearchOptions.Loss against the method, the task, the
// criterion, the score and the intercept, and sets the logistic loss's
// defaults (MethodFalkon for "", log loss for metrics.NameAuto). It runs
// after the encoding and before setMetric.
func (s *searcher) checkLoss(opts *SearchOptions, methodGiven bool) error {
	switch opts.Loss {
	case "", LossSquared:
		opts.Loss = LossSquared
		s.opts.Loss = LossSquared
		return nil
	case LossLogistic:
	default:
		return &zonal.ParamError{Param: "Loss", Value: opts.Loss, Reason: "unknown loss (squared, logistic)", Err: zonal.ErrUnknown}
	}
	bad := func(reason string) error {
		return &zonal.ParamError{Param: "Loss", Value: opts.Loss, Reason: reason}
	}
	switch {
	case methodGiven && opts.Method != MethodFalkon:
		return bad(fmt.Sprintf("the logistic loss is fitted by logistic FALKON (MethodFalkon), not %s", opts.Method))
	case s.enc.Task != solvers.TaskClassification:
		return bad(fmt.Sprintf("the logistic loss needs a classification task, the task is %s", s.enc.Task))
	case opts.Criterion == CriterionLOO || opts.Criterion == CriterionGCV:
		return bad(fmt.Sprintf("the logistic fit has no closed-form %s; use CriterionCV (k folds or a Validation split)", opts.Criterion))
	case opts.Score != ScoreTask:
		return bad(fmt.Sprintf("Score %s scores the squared loss's outputs; the logistic loss is scored by a Metric", opts.Score))
	case opts.NewMap != nil:
		return bad("logistic FALKON draws its own Nystrom centres; NewMap is for MethodRidge")
	}
	opts.Method = MethodFalkon
	if opts.Metric == metrics.NameAuto {
		opts.Metric = metrics.NameLogLoss
	}
	s.opts.Method, s.opts.Metric, s.opts.Loss = opts.Method, opts.Metric, opts.Loss
	return nil
}

// logistic reports whether the search fits the logistic loss.
func (s *searcher) logistic() bool { return s.opts.Loss == LossLogistic }

// logisticScores scores every lambda of a sigma-size group with the
// logistic loss: on each fold's training rows (with the search's
// intercept, solvers.LogisticOptions.Intercept) one regularisation path
// over the lambdas (largest first, each warm-started from the one before;
// duplicates share a model) with min(size, training rows) centres, the
// held-out logits scored by the metric: log loss as solvers.LogisticLoss
// of the logits' own probabilities (weighted), any other metric as for the
// squared loss. Folds run in parallel, each with its share of
// MemoryBudget (K_nM is cached when it fits it).
func (s *searcher) logisticScores(ctx context.Context, k kernels.Kernel, size int) ([][]float64, error) {
	n, _ := s.x.Dims()
	order := slices.Clone(s.lambdas)
	slices.Sort(order)
	slices.Reverse(order)
	order = slices.Compact(order)
	at := make([]int, len(s.lambdas)) // s.lambdas[li] is order[at[li]]
	for li, l := range s.lambdas {
		at[li] = slices.IndexFunc(order, func(v float64) bool { return v == l })
	}
	// A fold holds copies of its rows and solvers' arrays: K_nM (cached
	// when it fits the fold's share), the M x M factors and scratch, and
	// the logits and curvatures; folds run in parallel as far as each can
	// cache its K_nM.
	ntr := len(s.folds[0].Train)
	m := min(size, ntr)
	_, d := s.x.Dims()
	_, kout := s.t.Dims()
	perFold := budget.Floats(n, d+kout) + budget.Floats(ntr, m+4*kout) + budget.Floats(4*m, m)
	w := s.workers(0, perFold)
	limit := budget.Or(s.opts.MemoryBudget) / int64(w)
	return s.eachFold(ctx, w, func(fi int, f dataset.Fold, pred *mat.Dense, truth []float64, scores [][]float64) error {
		if len(f.Train) == 0 || len(f.Test) == 0 {
			return fmt.Errorf("%w: a fold has no training or no held-out rows", zonal.ErrEmpty)
		}
		wtr, wte := s.weightsOf(f.Train), s.weightsOf(f.Test)
		models, err := solvers.FitLogisticPath(ctx, k, dataset.MustSelectRows(s.x, f.Train), dataset.MustSelectRows(s.t, f.Train), order, solvers.LogisticOptions{
			Options: solvers.Options{Backend: s.be, MemoryBudget: limit, Weights: wtr},
			Centers: min(size, len(f.Train)), Seed: s.opts.Seed, GradTol: LogisticPathGradTol, Intercept: s.opts.Intercept,
		})
		if err != nil {
			return fmt.Errorf("logistic path, fold %d: %w", fi, err)
		}
		xte, tte := dataset.MustSelectRows(s.x, f.Test), dataset.MustSelectRows(s.t, f.Test)
		for li := range s.lambdas {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := models[at[li]].Predict(pred, xte); err != nil {
				return err
			}
			scores[li][fi] = s.logisticScore(pred, tte, truth, wte)
		}
		return nil
	})
}

// logisticScore is the metric of the held-out logits out (targets t,
// labels truth, weights w): log loss from the logits (NaN when they are
// not finite), any other metric by metricScore.
func (s *searcher) logisticScore(out, t *mat.Dense, truth, w []float64) float64 {
	if s.by != metrics.NameLogLoss {
		return s.metricScore(out, truth, w)
	}
	v, err := solvers.LogisticLoss(out, t, w)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

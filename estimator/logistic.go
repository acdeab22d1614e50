package estimator

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// LogisticValidation is the held-out fraction of the tuning rows on which
// the logistic loss's lambda is scored: one stratified split, as exact
// KRR's split path, because the logistic fit has no closed-form
// leave-one-out; a fifth of AutoRows (800 rows) estimates a log-loss to
// about 2% of its value.
const LogisticValidation = 0.2

// LogisticTuneGradTol is the relative gradient tolerance of the path
// models lambda is chosen with, looser than the final fit's 1e-6: the
// held-out log-loss only has to rank the lambdas, and its differences
// between neighbouring lambdas are far larger than what the last Newton
// steps change. On digits (10 classes, 318 centres, seed 1) 1e-4 chose
// the same lambda as 1e-6 (held-out log-loss 0.0488 against 0.0489) with
// 18% of the CG iterations (272 against 1513 over AutoLambdas).
const LogisticTuneGradTol = 1e-4

// logisticFolds is the number of stratified folds the tuning rows are cut
// into (1/LogisticValidation).
const logisticFolds = 5

// LogisticHeldOutRows is how many held-out rows the logistic lambda is
// scored on at least, as far as the folds allow: the first fold alone
// from 5 LogisticHeldOutRows tuning rows (AutoRows: 800), more folds
// below, all five under 1000 rows. A log-loss on fewer
// rows is too noisy to rank lambdas: on breast_cancer (455 rows, one
// split) the held-out log-loss of the chosen lambda was 0.028 on its 91
// rows and 0.103 on the test rows, an overconfident model chosen by the
// few rows it happened to fit.
const LogisticHeldOutRows = 800

// chooseLogisticLambda chooses the logistic loss's lambda at kernel spec
// ks on the rows x (n of them, already transformed) with labels y and row
// weights w (nil: unweighted): on the plan's tuning subsample (of the
// rows of positive weight), seeded stratified 80/20 folds (as many as
// LogisticHeldOutRows asks, up to logisticFolds), the regularisation path
// over the plan's lambdas fitted on each fold's 80%
// (solvers.FitLogisticPath, each lambda warm-started from the larger one),
// and the lambda of least held-out (weighted) mean log-loss over the
// folds' held-out rows, scaled to all
// rows as the squared loss's is: the objective's data term is a weighted
// mean, so lambda sum(w) is kept, lambda times the training part's weight
// sum over all rows' (rows/n unweighted), with the plan's intercept
// (fitted or none). It returns the lambda for all rows, the best log-loss, the rows the path was fitted on and a
// description.
func chooseLogisticLambda(ctx context.Context, p *Plan, o Options, ks KernelSpec, x mat.Matrix, y, w []float64) (float64, float64, int, string, error) {
	n, _ := x.Dims()
	enc, err := Encoding(y, solvers.TaskClassification)
	if err != nil {
		return 0, 0, 0, "", err
	}
	cand := make([]int, 0, n) // the rows that enter the objective
	for i := 0; i < n; i++ {
		if w == nil || w[i] > 0 {
			cand = append(cand, i)
		}
	}
	pick, err := dataset.Subsample(len(cand), min(p.TuneRows, len(cand)), o.Seed+17)
	if err != nil {
		return 0, 0, 0, "", err
	}
	sub := make([]int, len(pick))
	for i, j := range pick {
		sub[i] = cand[j]
	}
	ysub := make([]float64, len(sub))
	for i, r := range sub {
		ysub[i] = y[r]
	}
	how := "stratified"
	var parts []dataset.Fold
	if folds, err := calibrate.StratifiedFolds(ysub, logisticFolds, o.Seed+18); err == nil {
		// Folds until the held-out rows reach LogisticHeldOutRows (all
		// logisticFolds of them below 5 LogisticHeldOutRows tuning rows).
		held := 0
		for _, f := range folds {
			parts = append(parts, dataset.Fold{Train: f.Train, Test: f.Test})
			if held += len(f.Test); held >= LogisticHeldOutRows {
				break
			}
		}
	} else {
		// A class with fewer than 5 tuning rows cannot be in every fold:
		// a plain split (that class may then miss a side).
		how = "unstratified (a class has fewer than 5 tuning rows)"
		train, test := dataset.Split(len(sub), 1-LogisticValidation, o.Seed+18)
		parts = []dataset.Fold{{Train: train, Test: test}}
	}
	part := func(idx []int) (mat.Matrix, []float64, []float64, error) {
		rows := make([]int, len(idx))
		lab := make([]float64, len(idx))
		for i, j := range idx {
			rows[i], lab[i] = sub[j], ysub[j]
		}
		xs, err := rowsOf(x, rows)
		return xs, lab, solvers.SubsetWeights(w, rows), err
	}
	k, err := ks.New()
	if err != nil {
		return 0, 0, 0, "", err
	}
	lambdas := slices.Clone(p.Lambdas)
	slices.Sort(lambdas)
	slices.Reverse(lambdas)
	lambdas = slices.Compact(lambdas)
	// sums[i]: the held-out weighted log-loss sums at lambdas[i] over the
	// parts, held their held-out weight; trsum the parts' mean training
	// weight.
	sums := make([]float64, len(lambdas))
	held, trsum, trrows := 0.0, 0.0, 0
	for _, f := range parts {
		if len(f.Test) == 0 || len(f.Train) == 0 {
			return 0, 0, 0, "", fmt.Errorf("%w: %d tuning rows cannot be split to choose lambda (give Lambda)", zonal.ErrEmpty, len(sub))
		}
		xtr, ytr, wtr, err := part(f.Train)
		if err != nil {
			return 0, 0, 0, "", err
		}
		xte, yte, wte, err := part(f.Test)
		if err != nil {
			return 0, 0, 0, "", err
		}
		ttr, err := enc.Targets(ytr)
		if err != nil {
			return 0, 0, 0, "", err
		}
		models, err := solvers.FitLogisticPath(ctx, k, xtr, ttr, lambdas, solvers.LogisticOptions{
			Options: solvers.Options{Backend: o.Backend, MemoryBudget: o.MemoryBudget, Progress: o.Progress, Weights: wtr},
			Centers: min(tuneCentres(p), len(f.Train)), Seed: o.Seed, Iterations: p.Iterations, GradTol: LogisticTuneGradTol,
			Intercept: p.Intercept,
		})
		if err != nil {
			return 0, 0, 0, "", fmt.Errorf("choosing the logistic lambda: %w", err)
		}
		tte, err := enc.Targets(yte)
		if err != nil {
			return 0, 0, 0, "", err
		}
		hw, err := solvers.CheckWeights(wte, len(f.Test))
		if err != nil {
			return 0, 0, 0, "", err
		}
		tw, err := solvers.CheckWeights(wtr, len(f.Train))
		if err != nil {
			return 0, 0, 0, "", err
		}
		out := mat.NewDense(len(f.Test), enc.Outputs(), nil)
		for i, m := range models {
			if err := m.Predict(out, xte); err != nil {
				return 0, 0, 0, "", err
			}
			l, err := solvers.LogisticLoss(out, tte, wte)
			if err != nil {
				return 0, 0, 0, "", err
			}
			sums[i] += l * hw
		}
		held += hw
		trsum += tw / float64(len(parts))
		trrows += len(f.Train)
	}
	best, bestLoss := 0, math.Inf(1)
	for i, v := range sums {
		// Ties keep the larger lambda (the smoother model).
		if l := v / held; l < bestLoss {
			best, bestLoss = i, l
		}
	}
	trrows /= len(parts)
	wsum, err := solvers.CheckWeights(w, n)
	if err != nil {
		return 0, 0, 0, "", err
	}
	lambda := lambdas[best] * trsum / wsum
	desc := fmt.Sprintf("held-out log-loss of the logistic fit, %s %.0f/%.0f split of %d rows, over %d values",
		how, 100*(1-LogisticValidation), 100*LogisticValidation, len(sub), len(lambdas))
	if len(parts) > 1 {
		desc = fmt.Sprintf("held-out log-loss of the logistic fit, %d of %d stratified folds of %d rows, over %d values",
			len(parts), logisticFolds, len(sub), len(lambdas))
	}
	switch {
	case w != nil:
		desc += fmt.Sprintf(" (%.3g on %d rows, times their weight sum over all rows' for all rows: the same lambda sum(w))", lambdas[best], trrows)
	case trrows < n:
		desc += fmt.Sprintf(" (%.3g on %d rows, times %d/%d for all rows: the same lambda n)", lambdas[best], trrows, trrows, n)
	}
	return lambda, bestLoss, trrows, desc, nil
}

// chooseLogistic is chooseLogisticLambda at c's kernel and intercept
// and, with InterceptAuto (Plan.chooseLogisticIntercept), its choice of
// the intercept: the lambda path is scored without and with the fitted
// intercept on the same folds, and the fitted one is kept (c.intercept,
// with its own lambda) when its best held-out log-loss is lower by more
// than RawMargin, the squared loss's rule (chooseIntercept). It records
// the choice in c.chosen.Intercept and returns what chooseLogisticLambda
// returns for the intercept kept.
func (c *choice) chooseLogistic(ctx context.Context, p *Plan, o Options, y, w []float64) (float64, float64, int, string, error) {
	lambda, score, rows, desc, err := chooseLogisticLambda(ctx, p, o, c.kernel, c.x, y, w)
	if err != nil || !p.chooseLogisticIntercept {
		return lambda, score, rows, desc, err
	}
	fp := *p
	fp.Intercept = solvers.InterceptFitted
	fl, fs, frows, fdesc, err := chooseLogisticLambda(ctx, &fp, o, c.kernel, c.x, y, w)
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, 0, "", ctx.Err()
		}
		c.chosen.Intercept = "none (the fitted intercept could not be scored: " + err.Error() + ")"
		return lambda, score, rows, desc, nil
	}
	if fs < (1-RawMargin)*score {
		c.intercept = solvers.InterceptFitted
		c.chosen.Intercept = fmt.Sprintf("fitted: held-out log-loss %.4g against %.4g without", fs, score)
		return fl, fs, frows, fdesc, nil
	}
	c.chosen.Intercept = fmt.Sprintf("none: held-out log-loss %.4g against %.4g fitted", score, fs)
	return lambda, score, rows, desc, nil
}

// tuneCentres is the centre count the lambda path is fitted with: the
// plan's TuneCenters, as the squared loss's tuning (Centers when the plan
// has none).
func tuneCentres(p *Plan) int {
	if p.TuneCenters > 0 {
		return p.TuneCenters
	}
	return p.Centers
}

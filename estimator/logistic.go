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
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
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

// LogisticHeldOutClassRows is how many held-out rows of every class the
// logistic lambda is scored on at least, as far as the folds allow: folds
// are added past LogisticHeldOutRows until every class has that many
// held-out rows (all logisticFolds when a class has fewer tuning rows). On
// a rare class the first fold alone holds out a fifth of its tuning rows
// (16 of AutoRows at 2% positives), and the held-out log-loss, whose
// differences between lambdas come mostly from the rare class's rows,
// then ranks the lambdas on a handful of them; 50 rows put the rare
// class's mean log-loss to about a seventh (1/sqrt(50)) of itself.
const LogisticHeldOutClassRows = 50

// LogisticRefine is how finely the logistic lambda is refined around the
// best of the plan's lambdas: after the grid (AutoLambdas: decades), the
// LogisticRefine-1 log-even values between the best and each of its
// neighbours (quarter decades) are scored on the same folds and centres,
// one more path per fold, and the least held-out log-loss of the union
// wins; cost: one more path per fold of 2 (LogisticRefine-1) = 6 lambdas
// (3 at the grid's ends), at the same centre count, warm-started from the
// fold's grid model just above them (no path down from alpha = 0). A decade is too coarse for the log-loss, which
// near its minimum changes by about 1% per half decade, as much as the
// differences that matter between tools: on
// bench/probs' PimaIndiansDiabetes split (491-row folds, sigma 5.21) the
// held-out log-loss was 0.4921 at 1e-3, 0.4896 at 3.2e-4 and 0.4949 at
// 1e-4, so the decade grid chose 1e-3 (test log-loss 0.448) against the
// refined 3.2e-4 (0.435). Over five outer folds of the whole set (Pima
// and breast_cancer, half-decade grid) the lambda of least mean held-out
// log-loss of the inner folds was also that of least mean outer test
// log-loss (3.2e-4 and 3.2e-5), so the held-out curve is not biased in
// lambda and the tuning-to-all-rows scaling (lambda sum(w) kept) holds;
// what was lost was its resolution.
const LogisticRefine = 4

// LogisticPatience is how many grid lambdas in a row past a fold's least
// held-out log-loss, all worse than it by more than LogisticPatienceRise,
// end that fold's path in
// chooseLogisticLambda: the smaller lambdas, the costliest to solve (the
// most Newton steps and CG iterations), are not fitted, and the grid is
// cut to the lambdas every fold reached. The held-out log-loss of a
// logistic path rises steadily below its minimum (the models grow
// overconfident), so two decades of rise put the folds' mean minimum
// within what was fitted: on bench/probs' spam, PimaIndiansDiabetes and
// breast_cancer splits the chosen lambdas and their held-out log-losses
// are those of the whole grid.
const LogisticPatience = 2

// LogisticPatienceRise is the relative rise of a fold's held-out log-loss
// above its least that counts towards LogisticPatience: a lambda within
// it (1%) resets the count. A path can start on a plateau: with the fitted
// intercept the largest lambdas are the constant model of the class
// priors, whose held-out log-loss barely moves until lambda is small
// enough for the kernel part to matter, and on a rare class its noise
// makes it wander up and down by less than 0.2% there. Counted as a rise,
// that ended the path at the plateau: on a synthetic 1%-positive set (6400
// training rows, 8 features, wide sigma) the fitted intercept's held-out
// log-loss was 0.056002, 0.056009, 0.056084 at lambda 0.1, 0.01, 1e-3,
// the path stopped there and chose 0.05 (test AUC 0.81), where the whole
// path falls to 0.0222 at 5.6e-8 (test AUC 0.9955). Past a true minimum
// the rise is steady and soon well above 1% (there 10% and 100% one and
// two decades below it).
const LogisticPatienceRise = 0.01

// chooseLogisticLambda chooses the logistic loss's lambda on the folds t
// (newLogisticTuning: the plan's tuning subsample of the rows of positive
// weight, seeded stratified 80/20 folds, as many as LogisticHeldOutRows
// and LogisticHeldOutClassRows ask, up to logisticFolds): the regularisation path over the plan's
// lambdas fitted on each fold's 80% (solvers.FitLogisticPath, each lambda
// warm-started from the larger one, ended LogisticPatience lambdas past
// the fold's best), refined (LogisticRefine), and the lambda of least
// held-out (weighted) mean log-loss over the folds' held-out rows, scaled
// to all rows as the squared loss's is: the objective's data term is a
// weighted mean, so lambda sum(w) is kept, lambda times the training
// part's weight sum over all rows' (rows/n unweighted), with the plan's
// intercept (fitted or none). It returns the lambda for all rows, the
// best log-loss, the rows the path was fitted on, a description and the
// Newton steps and CG iterations it took.
func chooseLogisticLambda(ctx context.Context, p *Plan, o Options, t *logisticTuning) (logisticPick, error) {
	var pick logisticPick
	n, _ := t.x.Dims()
	w := t.w
	lambdas := slices.Clone(p.Lambdas)
	slices.Sort(lambdas)
	slices.Reverse(lambdas)
	lambdas = slices.Compact(lambdas)
	cv, paths, err := t.curve(ctx, p, o, lambdas, -1, nil, t.patience)
	if err != nil {
		return pick, err
	}
	losses := cv.loss
	cut := len(lambdas) - len(losses)
	lambdas = lambdas[:len(losses)] // the grid every fold reached
	pick.cost = cv.cost
	grid := len(lambdas)
	if best := leastLoss(losses); len(refineLambdas(lambdas, best)) > 0 {
		// The same folds and centres, each fold's refinement warm-started
		// from its grid model just above the refined values (the best's
		// upper neighbour, or the best at the grid's top), so the two
		// curves are one curve on the union of the lambdas.
		fine := refineLambdas(lambdas, best)
		cf, _, err := t.curve(ctx, p, o, fine, max(best-1, 0), paths, 0)
		if err != nil {
			return pick, err
		}
		lambdas, losses = mergeCurves(lambdas, losses, fine, cf.loss)
		pick.cost.steps += cf.cost.steps
		pick.cost.cg += cf.cost.cg
	}
	best := leastLoss(losses)
	bestLoss := losses[best]
	wsum, err := solvers.CheckWeights(w, n)
	if err != nil {
		return pick, err
	}
	lambda := lambdas[best] * t.trsum / wsum
	trrows := t.trrows
	values := fmt.Sprintf("%d values (%d on the grid, %d refining around its best)", len(lambdas), grid, len(lambdas)-grid)
	if cut > 0 {
		values += fmt.Sprintf(", the grid's %d smallest not fitted: every fold's held-out log-loss had risen above its least (by more than %g%%) for %d lambdas", cut, 100*LogisticPatienceRise, t.patience)
	}
	desc := fmt.Sprintf("held-out log-loss of the logistic fit, %s %.0f/%.0f split of %d rows, over %s",
		t.how, 100*(1-LogisticValidation), 100*LogisticValidation, len(t.sub), values)
	if len(t.folds) > 1 {
		desc = fmt.Sprintf("held-out log-loss of the logistic fit, %d of %d stratified folds of %d rows, over %s",
			len(t.folds), logisticFolds, len(t.sub), values)
	}
	switch {
	case w != nil:
		desc += fmt.Sprintf(" (%.3g on %d rows, times their weight sum over all rows' for all rows: the same lambda sum(w))", lambdas[best], trrows)
	case trrows < n:
		desc += fmt.Sprintf(" (%.3g on %d rows, times %d/%d for all rows: the same lambda n)", lambdas[best], trrows, trrows, n)
	}
	pick.lambda, pick.loss, pick.rows, pick.desc = lambda, bestLoss, trrows, desc
	return pick, nil
}

// logisticPick is what chooseLogisticLambda chose: the lambda for all
// rows, its held-out log-loss, the rows the path was fitted on, a
// description and the cost of choosing.
type logisticPick struct {
	lambda, loss float64
	rows         int
	desc         string
	cost         tuneCost
}

// tuneCost counts the Newton steps and CG iterations of choosing the
// logistic lambda (Chosen.TuneNewtonSteps, Chosen.TuneCGIterations).
type tuneCost struct{ steps, cg int }

// add adds a path fit's Newton steps and CG iterations.
func (c *tuneCost) add(r solvers.NewtonResult) { c.steps += r.Steps; c.cg += r.CGIterations }

// pathEnded reports whether a fold's path with held-out log-losses
// losses (lambdas decreasing) ends at patience > 0 (LogisticPatience): its
// last patience losses all lie more than LogisticPatienceRise above the
// least of them all, which comes before them.
func pathEnded(losses []float64, patience int) bool {
	if patience <= 0 || len(losses) == 0 {
		return false
	}
	best := leastLoss(losses)
	run := 0
	for _, l := range losses[best+1:] {
		if l > losses[best]*(1+LogisticPatienceRise) {
			run++
		} else {
			run = 0
		}
	}
	return run >= patience
}

// leastLoss is the index of the least of losses (of lambdas in
// decreasing order): ties keep the larger lambda (the smoother model).
func leastLoss(losses []float64) int {
	best, bestLoss := 0, math.Inf(1)
	for i, l := range losses {
		if l < bestLoss {
			best, bestLoss = i, l
		}
	}
	return best
}

// refineLambdas is the lambdas LogisticRefine scores around grid[best]
// (grid decreasing): LogisticRefine-1 geometrically even steps between it
// and each neighbour on the grid, largest first, the grid's own values
// left out.
func refineLambdas(grid []float64, best int) []float64 {
	var fine []float64
	between := func(hi, lo float64) {
		for j := 1; j < LogisticRefine; j++ {
			fine = append(fine, hi*math.Pow(lo/hi, float64(j)/LogisticRefine))
		}
	}
	if best > 0 {
		between(grid[best-1], grid[best])
	}
	if best+1 < len(grid) {
		between(grid[best], grid[best+1])
	}
	return fine
}

// mergeCurves merges two held-out curves over disjoint decreasing lambdas
// into one over their union, decreasing.
func mergeCurves(la, ca, lb, cb []float64) ([]float64, []float64) {
	l := make([]float64, 0, len(la)+len(lb))
	c := make([]float64, 0, len(la)+len(lb))
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		if j == len(lb) || i < len(la) && la[i] > lb[j] {
			l, c = append(l, la[i]), append(c, ca[i])
			i++
		} else {
			l, c = append(l, lb[j]), append(c, cb[j])
			j++
		}
	}
	return l, c
}

// heldOutCurve is the held-out log-loss of a logistic lambda path
// (logisticTuning.curve): loss[i] the weighted mean held-out log-loss at
// the i-th lambda over all folds' held-out rows, cost the Newton steps and
// CG iterations of its fits.
type heldOutCurve struct {
	loss []float64
	cost tuneCost
}

// logisticTuning is the tuning rows of the logistic lambda choice cut
// into the folds chooseLogisticLambda describes, made once for every path
// scored on them (the grid and its refinement, without and with the
// fitted intercept): sub the tuning rows (indices into x), folds their
// parts, trsum the folds' mean training weight sum (their mean row count
// unweighted), trrows their mean training rows, how the folds' kind.
type logisticTuning struct {
	x       mat.Matrix
	w       []float64
	k       kernels.Kernel
	centres int
	sub     []int
	folds   []logisticFold
	trsum   float64
	trrows  int
	how     string
	// patience ends each fold's grid path (LogisticPatience; 0: the
	// whole grid).
	patience int
}

// logisticFold is one fold of logisticTuning: its training rows, encoded
// targets and weights, its held-out rows (and their weight sum hw), and
// once a path was fitted the held-out rows' kernel against the fold's
// centres (kte; nil when it does not fit the memory budget), shared by
// every path of the fold, whose centres are the same (same rows, count
// and seed).
type logisticFold struct {
	xtr, xte mat.Matrix
	ttr, tte *mat.Dense
	wtr, wte []float64
	hw       float64
	kte      *mat.Dense
}

// newLogisticTuning draws the tuning rows (of positive weight) and cuts
// them into folds (stratified, as many as LogisticHeldOutRows and
// LogisticHeldOutClassRows ask, up to
// logisticFolds; one plain split when a class is too small), at kernel
// spec ks with centres centres (at most each fold's training rows).
func newLogisticTuning(p *Plan, o Options, ks KernelSpec, x mat.Matrix, y, w []float64, centres int) (*logisticTuning, error) {
	n, _ := x.Dims()
	enc, err := Encoding(y, solvers.TaskClassification)
	if err != nil {
		return nil, err
	}
	cand := make([]int, 0, n) // the rows that enter the objective
	for i := 0; i < n; i++ {
		if w == nil || w[i] > 0 {
			cand = append(cand, i)
		}
	}
	pick, err := dataset.Subsample(len(cand), min(p.TuneRows, len(cand)), o.Seed+17)
	if err != nil {
		return nil, err
	}
	t := &logisticTuning{x: x, w: w, centres: centres, sub: make([]int, len(pick)), how: "stratified", patience: LogisticPatience}
	for i, j := range pick {
		t.sub[i] = cand[j]
	}
	ysub := make([]float64, len(t.sub))
	for i, r := range t.sub {
		ysub[i] = y[r]
	}
	var parts []dataset.Fold
	if folds, err := calibrate.StratifiedFolds(ysub, logisticFolds, o.Seed+18); err == nil {
		// Folds until the held-out rows reach LogisticHeldOutRows (all
		// logisticFolds of them below 5 LogisticHeldOutRows tuning rows)
		// and those of every class LogisticHeldOutClassRows.
		held := 0
		heldClass := make([]int, len(enc.Classes))
		for _, f := range folds {
			parts = append(parts, dataset.Fold{Train: f.Train, Test: f.Test})
			for _, j := range f.Test {
				c, _ := slices.BinarySearch(enc.Classes, ysub[j])
				heldClass[c]++
			}
			if held += len(f.Test); held >= LogisticHeldOutRows && slices.Min(heldClass) >= LogisticHeldOutClassRows {
				break
			}
		}
	} else {
		// A class with fewer than 5 tuning rows cannot be in every fold:
		// a plain split (that class may then miss a side).
		t.how = "unstratified (a class has fewer than 5 tuning rows)"
		train, test := dataset.Split(len(t.sub), 1-LogisticValidation, o.Seed+18)
		parts = []dataset.Fold{{Train: train, Test: test}}
	}
	part := func(idx []int) (mat.Matrix, *mat.Dense, []float64, float64, error) {
		rows := make([]int, len(idx))
		lab := make([]float64, len(idx))
		for i, j := range idx {
			rows[i], lab[i] = t.sub[j], ysub[j]
		}
		xs, err := rowsOf(x, rows)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		tg, err := enc.Targets(lab)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		ws := solvers.SubsetWeights(w, rows)
		sum, err := solvers.CheckWeights(ws, len(rows))
		return xs, tg, ws, sum, err
	}
	for _, f := range parts {
		if len(f.Test) == 0 || len(f.Train) == 0 {
			return nil, fmt.Errorf("%w: %d tuning rows cannot be split to choose lambda (give Lambda)", zonal.ErrEmpty, len(t.sub))
		}
		var lf logisticFold
		var tw float64
		if lf.xtr, lf.ttr, lf.wtr, tw, err = part(f.Train); err != nil {
			return nil, err
		}
		if lf.xte, lf.tte, lf.wte, lf.hw, err = part(f.Test); err != nil {
			return nil, err
		}
		t.folds = append(t.folds, lf)
		t.trsum += tw / float64(len(parts))
		t.trrows += len(f.Train)
	}
	t.trrows /= len(parts)
	if t.k, err = ks.New(); err != nil {
		return nil, err
	}
	return t, nil
}

// curve fits the logistic lambda path lambdas (decreasing, no
// duplicates) with p's intercept on every fold and scores it on the
// fold's held-out rows. With from >= 0 each fold's path starts from the
// model from of that fold's earlier path in starts (solvers'
// LogisticOptions.Start) instead of from alpha = 0 through the automatic
// path. With patience > 0 a fold's path stops once patience lambdas in a
// row were all worse than its least held-out log-loss by more than
// LogisticPatienceRise (LogisticPatience), and the curve covers the
// lambdas every fold reached (len(cv.loss) may be less than
// len(lambdas)). It returns the curve and every fold's models.
func (t *logisticTuning) curve(ctx context.Context, p *Plan, o Options, lambdas []float64, from int, starts [][]*solvers.Logistic, patience int) (heldOutCurve, [][]*solvers.Logistic, error) {
	var cv heldOutCurve
	paths := make([][]*solvers.Logistic, len(t.folds))
	losses := make([][]float64, len(t.folds)) // each fold's held-out log-loss per lambda solved
	reached := len(lambdas)
	for fi := range t.folds {
		f := &t.folds[fi]
		var lerr error
		lo := solvers.LogisticOptions{
			Options: solvers.Options{Backend: o.Backend, MemoryBudget: o.MemoryBudget, Progress: o.Progress, Weights: f.wtr},
			Centers: min(t.centres, f.ttr.RawMatrix().Rows), Seed: o.Seed, Iterations: p.Iterations, GradTol: LogisticTuneGradTol,
			Intercept: p.Intercept,
			Stop: func(m *solvers.Logistic) bool {
				l, err := f.heldOutLoss(ctx, o, t.k, m, len(t.folds))
				if err != nil {
					lerr = err
					return true
				}
				losses[fi] = append(losses[fi], l)
				return pathEnded(losses[fi], patience)
			},
		}
		if from >= 0 {
			lo.Start = starts[fi][from]
		}
		models, err := solvers.FitLogisticPath(ctx, t.k, f.xtr, f.ttr, lambdas, lo)
		if err == nil {
			err = lerr
		}
		if err != nil {
			return cv, nil, fmt.Errorf("choosing the logistic lambda: %w", err)
		}
		cv.cost.add(models[len(models)-1].Newton())
		paths[fi] = models
		reached = min(reached, len(models))
	}
	// The weighted mean over all folds' held-out rows.
	cv.loss = make([]float64, reached)
	held := 0.0
	for fi, f := range t.folds {
		for i := range cv.loss {
			cv.loss[i] += losses[fi][i] * f.hw
		}
		held += f.hw
	}
	for i := range cv.loss {
		cv.loss[i] /= held
	}
	return cv, paths, nil
}

// heldOutLoss is the held-out (weighted mean) log-loss of the fold's
// model m.
func (f *logisticFold) heldOutLoss(ctx context.Context, o Options, k kernels.Kernel, m *solvers.Logistic, parts int) (float64, error) {
	if err := f.heldOutKernel(ctx, o, k, m, parts); err != nil {
		return 0, err
	}
	out := mat.NewDense(f.tte.RawMatrix().Rows, f.tte.RawMatrix().Cols, nil)
	if err := f.predict(out, m); err != nil {
		return 0, err
	}
	return solvers.LogisticLoss(out, f.tte, f.wte)
}

// heldOutKernel makes f.kte, the kernel of the held-out rows against m's
// centres (those of every path of the fold), once, when the folds' parts
// of them fit o's memory budget; otherwise f.kte stays nil and predict
// uses the model.
func (f *logisticFold) heldOutKernel(ctx context.Context, o Options, k kernels.Kernel, m *solvers.Logistic, parts int) error {
	if f.kte != nil {
		return nil
	}
	nte, _ := f.xte.Dims()
	cm, _ := m.Centers().Dims()
	if budget.Check("held-out kernel rows", budget.Floats(parts, nte, cm), o.MemoryBudget) != nil {
		return nil
	}
	kte, err := kernels.Matrix(ctx, k, f.xte, m.Centers(), kernels.Options{Backend: o.Backend})
	if err != nil {
		return err
	}
	f.kte = kte
	return nil
}

// predict writes m's held-out logits to out: K_te alpha + 1 b^T from the
// fold's held-out kernel (m's centres are the fold's), or m.Predict
// without it.
func (f *logisticFold) predict(out *mat.Dense, m *solvers.Logistic) error {
	if f.kte == nil {
		return m.Predict(out, f.xte)
	}
	out.Mul(f.kte, m.Alpha())
	b := m.Intercept()
	r := out.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+r.Cols]
		for j := range row {
			row[j] += b[j]
		}
	}
	return nil
}

// logisticHeldOut is the held-out curve of the lambda path lambdas
// (decreasing, no duplicates) from alpha = 0 at kernel spec ks with
// centres centres on the folds chooseLogisticLambda uses, and those
// folds.
func logisticHeldOut(ctx context.Context, p *Plan, o Options, ks KernelSpec, x mat.Matrix, y, w, lambdas []float64, centres int) (heldOutCurve, *logisticTuning, error) {
	t, err := newLogisticTuning(p, o, ks, x, y, w, centres)
	if err != nil {
		return heldOutCurve{}, nil, err
	}
	cv, _, err := t.curve(ctx, p, o, lambdas, -1, nil, 0)
	return cv, t, err
}

// chooseLogistic is chooseLogisticLambda at c's kernel and intercept
// and, with InterceptAuto (Plan.chooseLogisticIntercept), its choice of
// the intercept: the lambda path is scored without and with the fitted
// intercept on the same folds, and the fitted one is kept (c.intercept,
// with its own lambda) when its best held-out log-loss is lower by more
// than RawMargin, the squared loss's rule (chooseIntercept). It records
// the choice in c.chosen.Intercept and returns what chooseLogisticLambda
// returns for the intercept kept, with the cost of both.
func (c *choice) chooseLogistic(ctx context.Context, p *Plan, o Options, y, w []float64) (logisticPick, error) {
	t, err := newLogisticTuning(p, o, c.kernel, c.x, y, w, tuneCentres(p))
	if err != nil {
		return logisticPick{}, err
	}
	pick, err := chooseLogisticLambda(ctx, p, o, t)
	if err != nil || !p.chooseLogisticIntercept {
		return pick, err
	}
	fp := *p
	fp.Intercept = solvers.InterceptFitted
	fpick, err := chooseLogisticLambda(ctx, &fp, o, t)
	if err != nil {
		if ctx.Err() != nil {
			return logisticPick{}, ctx.Err()
		}
		c.chosen.Intercept = "none (the fitted intercept could not be scored: " + err.Error() + ")"
		return pick, nil
	}
	cost := tuneCost{steps: pick.cost.steps + fpick.cost.steps, cg: pick.cost.cg + fpick.cost.cg}
	if fpick.loss < (1-RawMargin)*pick.loss {
		c.intercept = solvers.InterceptFitted
		c.chosen.Intercept = fmt.Sprintf("fitted: held-out log-loss %.4g against %.4g without", fpick.loss, pick.loss)
		fpick.cost = cost
		return fpick, nil
	}
	c.chosen.Intercept = fmt.Sprintf("none: held-out log-loss %.4g against %.4g fitted", pick.loss, fpick.loss)
	pick.cost = cost
	return pick, nil
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

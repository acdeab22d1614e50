package estimator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// Calibration says how Fit turns a classifier's scores into class
// probabilities (solvers.Pipeline.PredictProba); see the package
// documentation for the rule of CalibrationAuto.
type Calibration int

const (
	// CalibrationAuto is the method the out-of-fold scores prefer
	// (calibrate.ChooseMethod): isotonic regression when its
	// cross-validated log-loss is at least 1% and one standard error below
	// Platt scaling's, Platt scaling otherwise.
	CalibrationAuto Calibration = iota
	// CalibrationPlatt is Platt scaling (calibrate.FitPlatt).
	CalibrationPlatt
	// CalibrationIsotonic is isotonic regression (calibrate.FitIsotonic).
	CalibrationIsotonic
	// CalibrationNone fits no calibration: the pipeline has no
	// probabilities, and the fit costs no held-out refits.
	CalibrationNone
)

var calibrationSetting = setting{"Calibration", []string{"auto", "platt", "isotonic", "none"}}

func (c Calibration) String() string { return calibrationSetting.name(int(c)) }

// ParseCalibration parses auto, platt, isotonic or none.
func ParseCalibration(s string) (Calibration, error) {
	i, err := calibrationSetting.parse(s)
	return Calibration(i), err
}

const (
	// CalibrationFolds is the number of held-out folds the calibrator's
	// scores come from. Each fold model trains on 4/5 of the calibration
	// rows (3 folds gave 2/3): more training rows per fold model make its
	// scores closer to those of the final model, fitted on all rows,
	// whose scores the calibrator maps; the price is four model fits on
	// those rows in all instead of two. scikit-learn's
	// CalibratedClassifierCV also defaults to 5 folds.
	CalibrationFolds = 5
	// CalibrationChoiceFolds is the number of stratified folds of the
	// out-of-fold scores on which CalibrationAuto scores Platt scaling
	// against isotonic regression (calibrate.ChooseMethod). They split
	// the scores, not the data: no model is refitted, and the choice
	// costs ten calibrator fits.
	CalibrationChoiceFolds = 5
	// CalibrationRows caps the rows the calibration refits on: above it, a
	// seeded stratified subsample of CalibrationRows rows (every class in
	// proportion, and at least CalibrationFolds rows of each). 5000 keeps
	// the refits a minor cost on large n, and still gives isotonic
	// regression a thousand rows in each class of a balanced problem of up
	// to five classes.
	CalibrationRows = 5000
)

// fitCalibration fits the calibration of a classifier (see the package
// documentation): the plan's model, at the fitted model's lambda
// (rep.Lambda, after any raise; see foldLambda), refitted on
// CalibrationFolds stratified folds of the calibration rows, each scoring
// its held-out rows, the method chosen on those out-of-fold scores
// (CalibrationAuto) and the calibrator fitted on them. It records what it
// did in rep, and returns nil for CalibrationNone and, with a note, for
// CalibrationAuto when a class has fewer rows than folds.
func fitCalibration(ctx context.Context, plan *Plan, o Options, k kernels.Kernel, ch *choice, enc solvers.Encoding, y []float64, sopts solvers.Options, rep *Report) (*solvers.Calibration, error) {
	rep.Calibration = CalibrationNone
	if o.Calibration == CalibrationNone {
		return nil, nil
	}
	start := time.Now()
	n := len(y)
	rows, err := calibrationRows(y, enc.Classes, o.Seed)
	if err != nil {
		return nil, err
	}
	yc := make([]float64, len(rows))
	for i, r := range rows {
		yc[i] = y[r]
	}
	counts := classCounts(yc, enc.Classes)
	small := slices.Index(counts, slices.Min(counts))
	folds, setting := CalibrationFolds, o.Calibration
	if setting == CalibrationAuto {
		folds = max(folds, CalibrationChoiceFolds)
	}
	if least := counts[small]; least < folds {
		// A class of fewer rows than folds cannot be in every fold. Platt
		// scaling, two parameters, still fits on the out-of-fold scores of
		// as many folds as that class has rows (at least 2, so that every
		// fold model trains on a row of it); isotonic regression's steps,
		// and the choice between the two on folds of the scores, need
		// more rows than that.
		reason := fmt.Sprintf("class %g has %d training rows, fewer than the %d calibration folds", enc.Classes[small], least, folds)
		if setting == CalibrationIsotonic || least < 2 {
			if setting == CalibrationAuto {
				rep.Notes = append(slices.Clip(rep.Notes), "no calibration, so no probabilities: "+reason+" (Platt scaling on fewer folds needs 2 rows of every class)")
				return nil, nil
			}
			if setting == CalibrationIsotonic {
				reason += " (Platt scaling needs only 2 rows of every class)"
			}
			return nil, &zonal.ParamError{Param: "Calibration", Value: o.Calibration, Reason: reason}
		}
		if setting == CalibrationAuto {
			rep.Notes = append(slices.Clip(rep.Notes), fmt.Sprintf("platt calibration on %d folds, not chosen against isotonic: %s", least, reason))
		}
		folds, setting = least, CalibrationPlatt
	} else {
		folds = CalibrationFolds
	}
	xc, err := rowsOf(ch.x, rows)
	if err != nil {
		return nil, err
	}
	// The weights follow the rows: each fold model is fitted on its
	// training rows' weights, and the calibrator on the held-out rows'.
	wc := solvers.SubsetWeights(sopts.Weights, rows)
	tc, err := enc.Targets(yc)
	if err != nil {
		return nil, err
	}
	fold := *plan
	score := func(train, test []int) (*mat.Dense, error) {
		xtr, err := rowsOf(xc, train)
		if err != nil {
			return nil, err
		}
		xte, err := rowsOf(xc, test)
		if err != nil {
			return nil, err
		}
		if x32, ok := xte.(*dataset.Dense32); ok {
			xte = x32.ToDense() // models predict float64 rows; one fold's held-out rows
		}
		fold.Centers = foldCenters(plan, o, len(train), len(rows) < n)
		fo := sopts
		fo.Weights = solvers.SubsetWeights(wc, train)
		lf, err := foldLambda(rep.Lambda, sopts.Weights, n, fo.Weights, len(train))
		if err != nil {
			return nil, err
		}
		m, err := fitModel(ctx, &fold, o, k, lf, xtr, denseRows(tc, train), fo)
		if err != nil {
			return nil, err
		}
		out := mat.NewDense(len(test), m.Outputs(), nil)
		if err := m.Predict(out, xte); err != nil {
			return nil, err
		}
		return out, nil
	}
	cvFolds, err := calibrate.StratifiedFolds(yc, folds, o.Seed)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	oof, err := calibrate.OutOfFoldMatrix(ctx, len(rows), cvFolds, score)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	method, err := calibrationMethod(setting, oof, enc.Classes, yc, wc, o.Seed, rep)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	cal := &solvers.Calibration{}
	if len(enc.Classes) == 2 {
		cal.Binary, err = calibrate.Fit(method, mat.Col(nil, 0, oof), yc, wc)
	} else {
		cal.Multiclass, err = calibrate.FitMulticlass(method, oof, enc.Classes, yc, wc)
	}
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	rep.Calibration = CalibrationPlatt
	if method == calibrate.MethodIsotonic {
		rep.Calibration = CalibrationIsotonic
	}
	rep.CalibrationRows, rep.CalibrationFolds, rep.CalibrationSeconds = len(rows), folds, time.Since(start).Seconds()
	return cal, nil
}

// calibrationMethod is the method of setting c: the one asked for, or for
// CalibrationAuto the one calibrate.ChooseMethod (ChooseMulticlassMethod
// beyond two classes) picks on the out-of-fold scores oof, on
// CalibrationChoiceFolds folds seeded with seed, the calibration folds'
// seed: with as many choice folds as calibration folds (both 5) the
// choice folds are the calibration folds again (the same labels, count
// and seed), so each choice fold holds the scores of one fold model, and
// each calibrator is judged on the scores of a model whose scores it was
// not fitted on, as the final calibrator is on the final model's. It
// records the choice and the two losses in rep.Chosen.
func calibrationMethod(c Calibration, oof *mat.Dense, classes, y, w []float64, seed uint64, rep *Report) (calibrate.Method, error) {
	switch c {
	case CalibrationPlatt:
		return calibrate.MethodPlatt, nil
	case CalibrationIsotonic:
		return calibrate.MethodIsotonic, nil
	}
	var ch calibrate.Choice
	var err error
	if len(classes) == 2 {
		ch, err = calibrate.ChooseMethod(mat.Col(nil, 0, oof), y, w, CalibrationChoiceFolds, seed)
	} else {
		ch, err = calibrate.ChooseMulticlassMethod(oof, classes, y, w, CalibrationChoiceFolds, seed)
	}
	if err != nil {
		return 0, err
	}
	rep.Chosen.Calibration = ch.Reason()
	rep.Chosen.CalibrationPlatt, rep.Chosen.CalibrationIsotonic = ch.Platt, ch.Isotonic
	return ch.Method, nil
}

// foldLambda is the lambda of a calibration fold model on r training rows
// (weights wr, nil for none) when the final model has lambda on all n
// training rows (weights w): lambda n / r, with the weight sums for n and r
// when weighted (solvers' "n" of a weighted fit). The objective
// (1/n)|f(X)-y|^2 + lambda |f|^2 is, times n, |f(X)-y|^2 + lambda n |f|^2:
// lambda n is the penalty against the sum of squared errors, and a fold
// model at lambda n / r has the final model's lambda n on its own sum, the
// way a scikit-learn estimator of fixed alpha = lambda n would be refitted
// on the folds.
//
// Errors: those of solvers.CheckWeights for w or wr (a *zonal.ParamError
// wrapping zonal.ErrParam when a fold's weights are all zero, whose
// lambda would be a division by zero).
func foldLambda(lambda float64, w []float64, n int, wr []float64, r int) (float64, error) {
	all, err := solvers.CheckWeights(w, n)
	if err != nil {
		return 0, fmt.Errorf("the training weights: %w", err)
	}
	part, err := solvers.CheckWeights(wr, r)
	if err != nil {
		return 0, fmt.Errorf("the fold model's %d training rows (when every row of positive weight is held out of this fold, give more rows a positive weight or use CalibrationNone): %w", r, err)
	}
	return lambda * all / part, nil
}

// foldCenters is the centre count of a calibration fold model on r
// training rows: the plan's, at most r; on a subsample (large n) also at
// most tune.AutoCenters(r), so that the M x M factorizations of the fold
// models stay as cheap as their rows.
func foldCenters(p *Plan, o Options, r int, subsampled bool) int {
	m := min(p.Centers, r)
	if subsampled {
		m = min(m, tune.AutoCenters(r, o.MemoryBudget, p.Precision))
	}
	if p.Method == MethodParK {
		m = max(m, min(p.Cells, r))
	}
	return m
}

// calibrationRows returns the rows the calibration refits on, increasing:
// all n rows up to CalibrationRows, else a seeded stratified subsample of
// about CalibrationRows rows, every class's share kept and at least
// CalibrationFolds rows of a class kept (all of a smaller class).
func calibrationRows(y, classes []float64, seed uint64) ([]int, error) {
	n := len(y)
	if n <= CalibrationRows {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows, nil
	}
	byClass := make([][]int, len(classes))
	for i, v := range y {
		c, _ := slices.BinarySearch(classes, v)
		byClass[c] = append(byClass[c], i)
	}
	var rows []int
	for c, idx := range byClass {
		want := int(float64(len(idx)) * CalibrationRows / float64(n))
		want = min(len(idx), max(want, CalibrationFolds))
		pick, err := dataset.Subsample(len(idx), want, seed+uint64(c)+1)
		if err != nil {
			return nil, err
		}
		for _, p := range pick {
			rows = append(rows, idx[p])
		}
	}
	slices.Sort(rows)
	return rows, nil
}

// classCounts counts the labels y of each class.
func classCounts(y, classes []float64) []int {
	counts := make([]int, len(classes))
	for _, v := range y {
		c, _ := slices.BinarySearch(classes, v)
		counts[c]++
	}
	return counts
}

// rowsOf returns the rows idx of x (a *mat.Dense, a *dataset.Dense32 or a
// *dataset.CSR) as a new matrix of the same kind.
func rowsOf(x mat.Matrix, idx []int) (mat.Matrix, error) {
	if c, ok := x.(*dataset.Dense32); ok {
		return c.Subset(idx)
	}
	if c, ok := x.(*dataset.CSR); ok {
		return c.Subset(idx)
	}
	return denseRows(x.(*mat.Dense), idx), nil
}

// denseRows copies the rows idx of x.
func denseRows(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for i, r := range idx {
		copy(out.RawRowView(i), x.RawRowView(r))
	}
	return out
}

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
	// CalibrationAuto is Platt scaling when the smallest class has fewer
	// than IsotonicMinRows calibration rows, isotonic regression otherwise.
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
	// scores come from: each fold model trains on 2/3 of the calibration
	// rows, the fewest folds whose models still see most rows, at about
	// two model fits on those rows in all (5 folds would cost four).
	CalibrationFolds = 3
	// CalibrationRows caps the rows the calibration refits on: above it, a
	// seeded stratified subsample of CalibrationRows rows (every class in
	// proportion, and at least CalibrationFolds rows of each). 5000 keeps
	// the refits a minor cost on large n, and still gives isotonic
	// regression its IsotonicMinRows in each class of a balanced problem
	// of up to five classes.
	CalibrationRows = 5000
	// IsotonicMinRows is the calibration-row count of the smallest class
	// from which CalibrationAuto chooses isotonic regression over Platt
	// scaling.
	IsotonicMinRows = 1000
)

// fitCalibration fits the calibration of a classifier (see the package
// documentation): the plan's model, at the fitted model's lambda
// (rep.Lambda, after any raise), refitted on CalibrationFolds stratified
// folds of the calibration rows, each scoring its held-out rows, and the
// calibrator fitted on those out-of-fold scores. It records what it did in
// rep, and returns nil for CalibrationNone and, with a note, for
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
	if counts[small] < CalibrationFolds {
		reason := fmt.Sprintf("class %g has %d training rows, fewer than the %d calibration folds", enc.Classes[small], counts[small], CalibrationFolds)
		if o.Calibration == CalibrationAuto {
			rep.Notes = append(slices.Clip(rep.Notes), "no calibration, so no probabilities: "+reason)
			return nil, nil
		}
		return nil, &zonal.ParamError{Param: "Calibration", Value: o.Calibration, Reason: reason}
	}
	method := calibrate.MethodPlatt
	switch o.Calibration {
	case CalibrationIsotonic:
		method = calibrate.MethodIsotonic
	case CalibrationAuto:
		if counts[small] >= IsotonicMinRows {
			method = calibrate.MethodIsotonic
			rep.Chosen.Calibration = fmt.Sprintf("smallest class %d calibration rows, at least %d", counts[small], IsotonicMinRows)
		} else {
			rep.Chosen.Calibration = fmt.Sprintf("smallest class %d calibration rows, below %d", counts[small], IsotonicMinRows)
		}
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
		m, err := fitModel(ctx, &fold, o, k, rep.Lambda, xtr, denseRows(tc, train), fo)
		if err != nil {
			return nil, err
		}
		out := mat.NewDense(len(test), m.Outputs(), nil)
		if err := m.Predict(out, xte); err != nil {
			return nil, err
		}
		return out, nil
	}
	cal := &solvers.Calibration{}
	if len(enc.Classes) == 2 {
		cal.Binary, _, err = calibrate.FitCV(ctx, method, yc, wc, CalibrationFolds, o.Seed, func(train, test []int) ([]float64, error) {
			out, err := score(train, test)
			if err != nil {
				return nil, err
			}
			return mat.Col(nil, 0, out), nil
		})
	} else {
		cal.Multiclass, _, err = calibrate.FitMulticlassCV(ctx, method, enc.Classes, yc, wc, CalibrationFolds, o.Seed, score)
	}
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	rep.Calibration = CalibrationPlatt
	if method == calibrate.MethodIsotonic {
		rep.Calibration = CalibrationIsotonic
	}
	rep.CalibrationRows, rep.CalibrationSeconds = len(rows), time.Since(start).Seconds()
	return cal, nil
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

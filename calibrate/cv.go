package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"gonum.org/v1/gonum/mat"
)

// StratifiedFolds partitions the rows 0..n-1 of labels y into k folds
// that each hold about 1/k of every class: the rows of each class are split
// by dataset.KFold (seeded, seed plus the class's position in sorted
// order). Stratifying matters on imbalanced data, where plain folds of a
// 1%-positive set may hold no positive at all, and a calibrator fitted on
// out-of-fold scores needs every class in them.
//
// Errors: zonal.ErrParam for k < 2 and for a class with fewer than k rows
// (it cannot be in every fold: lower k); ErrEmpty for no labels;
// ErrNonFinite for a NaN or Inf label.
func StratifiedFolds(y []float64, k int, seed uint64) ([]dataset.Fold, error) {
	if len(y) == 0 {
		return nil, fmt.Errorf("%w: no labels", zonal.ErrEmpty)
	}
	if k < 2 {
		return nil, fmt.Errorf("%w: %d folds, want at least 2", zonal.ErrParam, k)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: label %d is %g", zonal.ErrNonFinite, i, v)
		}
	}
	classes := slices.Clone(y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	folds := make([]dataset.Fold, k)
	for ci, c := range classes {
		var rows []int
		for i, v := range y {
			if v == c {
				rows = append(rows, i)
			}
		}
		if len(rows) < k {
			return nil, fmt.Errorf("%w: class %g has %d rows, fewer than the %d folds", zonal.ErrParam, c, len(rows), k)
		}
		part, err := dataset.KFold(len(rows), k, seed+uint64(ci))
		if err != nil {
			return nil, err
		}
		for f, p := range part {
			for _, i := range p.Test {
				folds[f].Test = append(folds[f].Test, rows[i])
			}
		}
	}
	inTest := make([]int, len(y)) // fold of each row
	for f := range folds {
		slices.Sort(folds[f].Test)
		for _, i := range folds[f].Test {
			inTest[i] = f
		}
	}
	for f := range folds {
		folds[f].Train = make([]int, 0, len(y)-len(folds[f].Test))
		for i := range y {
			if inTest[i] != f {
				folds[f].Train = append(folds[f].Train, i)
			}
		}
	}
	return folds, nil
}

// OutOfFold collects out-of-fold scores: for every fold it calls
// fitAndScore(fold.Train, fold.Test), which fits a model on the training
// rows and returns its scores of the test rows (one per test row, in the
// order of fold.Test), and writes them to their rows. The folds must
// partition 0..n-1 by their test rows, every row tested exactly once, so
// each row's score comes from a model that never saw it. ctx is checked
// before every fold.
//
// Errors: zonal.ErrParam for folds that do not partition 0..n-1 by their
// test rows, or that train on a row they test, and (with ErrShape) for a score slice of the wrong length;
// fitAndScore's errors and ctx.Err(), wrapped with the fold.
func OutOfFold(ctx context.Context, n int, folds []dataset.Fold, fitAndScore func(train, test []int) ([]float64, error)) ([]float64, error) {
	out := make([]float64, n)
	err := eachFold(ctx, n, folds, func(f dataset.Fold) error {
		s, err := fitAndScore(f.Train, f.Test)
		if err != nil {
			return err
		}
		if len(s) != len(f.Test) {
			return fmt.Errorf("%w: %w: %d scores for %d test rows", zonal.ErrParam, zonal.ErrShape, len(s), len(f.Test))
		}
		for t, i := range f.Test {
			out[i] = s[t]
		}
		return nil
	})
	return out, err
}

// OutOfFoldMatrix is OutOfFold for k scores a row (multiclass):
// fitAndScore returns a len(fold.Test) x k matrix, the same k for every
// fold.
//
// Errors: those of OutOfFold, and ErrParam with ErrShape for a matrix of
// the wrong shape.
func OutOfFoldMatrix(ctx context.Context, n int, folds []dataset.Fold, fitAndScore func(train, test []int) (*mat.Dense, error)) (*mat.Dense, error) {
	var out *mat.Dense
	err := eachFold(ctx, n, folds, func(f dataset.Fold) error {
		s, err := fitAndScore(f.Train, f.Test)
		if err != nil {
			return err
		}
		if s == nil {
			return fmt.Errorf("%w: nil score matrix", zonal.ErrParam)
		}
		r, k := s.Dims()
		if out == nil {
			out = mat.NewDense(n, k, nil)
		}
		if _, want := out.Dims(); r != len(f.Test) || k != want {
			return fmt.Errorf("%w: %w: %dx%d scores for %d test rows of %d columns", zonal.ErrParam, zonal.ErrShape, r, k, len(f.Test), want)
		}
		for t, i := range f.Test {
			out.SetRow(i, s.RawRowView(t))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachFold checks that the folds' test rows partition 0..n-1 and that no
// fold trains on a row it tests, then runs do on every fold, checking ctx
// before each.
func eachFold(ctx context.Context, n int, folds []dataset.Fold, do func(dataset.Fold) error) error {
	if n <= 0 || len(folds) == 0 {
		return fmt.Errorf("%w: %d rows in %d folds", zonal.ErrEmpty, n, len(folds))
	}
	testedIn := make([]int, n) // 1 + the fold testing each row, 0 before
	count := 0
	for f, fold := range folds {
		for _, i := range fold.Test {
			if i < 0 || i >= n || testedIn[i] != 0 {
				return fmt.Errorf("%w: fold %d tests row %d twice or outside 0..%d", zonal.ErrParam, f, i, n-1)
			}
			testedIn[i] = f + 1
			count++
		}
	}
	if count != n {
		return fmt.Errorf("%w: the folds test %d of the %d rows; every row must be tested once", zonal.ErrParam, count, n)
	}
	for f, fold := range folds {
		for _, i := range fold.Train {
			if i < 0 || i >= n || testedIn[i] == f+1 {
				return fmt.Errorf("%w: fold %d trains on row %d, which it tests or which is outside 0..%d", zonal.ErrParam, f, i, n-1)
			}
		}
	}
	for f, fold := range folds {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("calibration fold %d: %w", f, err)
		}
		if err := do(fold); err != nil {
			return fmt.Errorf("calibration fold %d: %w", f, err)
		}
	}
	return nil
}

// FitCV fits a binary calibrator on out-of-fold scores: it builds k
// stratified folds of y (StratifiedFolds with seed), collects the
// out-of-fold scores of fitAndScore (OutOfFold) and fits the calibrator of
// method m to them with weights w, so the calibration never sees a row's
// score from a model trained on that row (in-sample scores are
// overconfident, and a calibrator fitted on them would be too). It also
// returns the out-of-fold scores. The model to deploy is then fitted on
// all rows, its scores passed through the calibrator.
//
// Errors: those of StratifiedFolds, OutOfFold and Fit.
func FitCV(ctx context.Context, m Method, y, w []float64, k int, seed uint64, fitAndScore func(train, test []int) ([]float64, error)) (Calibrator, []float64, error) {
	if err := m.Check(); err != nil {
		return nil, nil, err
	}
	folds, err := StratifiedFolds(y, k, seed)
	if err != nil {
		return nil, nil, err
	}
	s, err := OutOfFold(ctx, len(y), folds, fitAndScore)
	if err != nil {
		return nil, nil, err
	}
	c, err := Fit(m, s, y, w)
	if err != nil {
		return nil, nil, err
	}
	return c, s, nil
}

// FitMulticlassCV is FitCV for k-column scores: the calibrator is
// FitMulticlass on the out-of-fold score matrix (OutOfFoldMatrix), whose
// columns follow classes.
//
// Errors: those of StratifiedFolds, OutOfFoldMatrix and FitMulticlass.
func FitMulticlassCV(ctx context.Context, m Method, classes, y, w []float64, k int, seed uint64, fitAndScore func(train, test []int) (*mat.Dense, error)) (*Multiclass, *mat.Dense, error) {
	if err := m.Check(); err != nil {
		return nil, nil, err
	}
	folds, err := StratifiedFolds(y, k, seed)
	if err != nil {
		return nil, nil, err
	}
	s, err := OutOfFoldMatrix(ctx, len(y), folds, fitAndScore)
	if err != nil {
		return nil, nil, err
	}
	c, err := FitMulticlass(m, s, classes, y, w)
	if err != nil {
		return nil, nil, err
	}
	return c, s, nil
}

package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// ROCAUC is the area under the ROC curve of binary scores: the probability
// that a random positive row scores above a random negative one, ties
// counting one half,
//
//	AUC = sum_{i pos, j neg} w_i w_j ([s_i > s_j] + [s_i = s_j]/2) / (W+ W-),
//
// the Mann-Whitney U statistic divided by W+ W- (with average ranks for
// ties). It is computed in O(n log n) by one sort. Larger scores mean
// "more positive"; only their order matters, so scores may be raw model
// outputs, log-odds (including +-Inf) or probabilities. The positive class
// is the larger of the two label values.
//
// Errors: zonal.ErrParam (with ErrShape) when the lengths differ; ErrEmpty
// for no rows; ErrNonFinite for a NaN score or a NaN/Inf label; ErrParam for
// bad weights, for labels with other than two classes, and when one class
// has zero total weight (the AUC of one class is undefined).
func ROCAUC(score, y, w []float64) (float64, error) {
	if _, err := checkInputs("scores", score, y, w, false); err != nil {
		return math.NaN(), err
	}
	_, pos, wNeg, wPos, err := binaryClasses(y, w)
	if err != nil {
		return math.NaN(), err
	}
	return auc(score, func(i int) bool { return y[i] == pos }, w, wNeg, wPos), nil
}

// auc is the weighted Mann-Whitney AUC of score for the positive rows
// isPos, with class weights wNeg and wPos (both > 0).
func auc(score []float64, isPos func(int) bool, w []float64, wNeg, wPos float64) float64 {
	order := make([]int, len(score))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(score[a], score[b]) })
	below, sum := 0.0, 0.0 // negative weight scoring below the current group
	for lo := 0; lo < len(order); {
		hi := lo
		p, n := 0.0, 0.0
		for hi < len(order) && score[order[hi]] == score[order[lo]] {
			if isPos(order[hi]) {
				p += weight(w, order[hi])
			} else {
				n += weight(w, order[hi])
			}
			hi++
		}
		sum += p * (below + n/2)
		below += n
		lo = hi
	}
	return sum / wNeg / wPos
}

// ROCAUCMulti is the macro one-versus-rest AUC of class probabilities (or
// any per-class scores): the mean over the classes c_j of the binary AUC
// of column j with the rows of class c_j as positives and all others as
// negatives. prob is n x k, its column j belonging to classes[j]. Every
// class weighs the same whatever its size, so a rare class counts as much
// as a common one (scikit-learn's roc_auc_score(multi_class='ovr',
// average='macro')). With two classes it equals ROCAUC of either column
// when rows sum to 1.
//
// Errors: as ROCAUC, and ErrParam for fewer than two or repeated classes, a
// label that is not one of the classes, a matrix whose shape does not match
// (with ErrShape), or a class with zero total weight in y (its AUC is
// undefined, and averaging over the others would not be comparable with
// other evaluations).
func ROCAUCMulti(prob *mat.Dense, classes, y, w []float64) (float64, error) {
	if err := checkLabels(y); err != nil {
		return math.NaN(), err
	}
	if _, err := CheckWeights(w, len(y)); err != nil {
		return math.NaN(), err
	}
	idx, err := classIndex(classes, 2)
	if err != nil {
		return math.NaN(), err
	}
	if prob == nil {
		return math.NaN(), fmt.Errorf("%w: nil probability matrix", zonal.ErrParam)
	}
	if r, c := prob.Dims(); r != len(y) || c != len(classes) {
		return math.NaN(), fmt.Errorf("%w: %w: %dx%d scores for %d labels and %d classes", zonal.ErrParam, zonal.ErrShape, r, c, len(y), len(classes))
	}
	lab, err := labelIndex("label", y, idx)
	if err != nil {
		return math.NaN(), err
	}
	k := len(classes)
	classW := make([]float64, k)
	total := 0.0
	for i, j := range lab {
		classW[j] += weight(w, i)
		total += weight(w, i)
	}
	col := make([]float64, len(y))
	sum := 0.0
	for j := range k {
		if classW[j] == 0 || classW[j] == total {
			return math.NaN(), fmt.Errorf("%w: class %g has zero total weight in the labels; its one-vs-rest AUC is undefined", zonal.ErrParam, classes[j])
		}
		for i := range col {
			col[i] = prob.At(i, j)
			if math.IsNaN(col[i]) {
				return math.NaN(), fmt.Errorf("%w: score (%d, %d) is NaN", zonal.ErrNonFinite, i, j)
			}
		}
		sum += auc(col, func(i int) bool { return lab[i] == j }, w, total-classW[j], classW[j])
	}
	return sum / float64(k), nil
}

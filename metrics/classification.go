package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zonal-ml/zonal"
)

// Accuracy is the weighted fraction of predicted labels equal to the true
// ones, sum_i w_i [pred_i = y_i] / sum_i w_i.
//
// Errors: zonal.ErrParam (with ErrShape) when the lengths differ; ErrEmpty
// for no rows; ErrNonFinite for a NaN prediction or a NaN/Inf label;
// ErrParam for bad weights.
func Accuracy(pred, y, w []float64) (float64, error) {
	total, err := checkInputs("predictions", pred, y, w, true)
	if err != nil {
		return math.NaN(), err
	}
	hit := 0.0
	for i := range y {
		if pred[i] == y[i] {
			hit += weight(w, i)
		}
	}
	return hit / total, nil
}

// BalancedAccuracy is the mean over the classes present in y (those with a
// positive total weight) of the recall of that class: the weighted
// fraction of its rows predicted as it. A classifier that always answers
// the majority class scores 1/C on C classes, whatever their sizes.
//
// Errors: as Accuracy.
func BalancedAccuracy(pred, y, w []float64) (float64, error) {
	s, err := PerClass(pred, y, w, nil)
	if err != nil {
		return math.NaN(), err
	}
	return s.MacroRecall, nil
}

// ConfusionMatrix holds weighted counts of true against predicted labels.
type ConfusionMatrix struct {
	// Classes is the order of the rows and columns.
	Classes []float64
	// Counts[i][j] is the total weight of the rows of true class
	// Classes[i] predicted as Classes[j] (the number of rows without
	// weights).
	Counts [][]float64
}

// NewConfusionMatrix counts pred against y. classes gives the order of the
// rows and columns and must contain every label and prediction; nil means
// the sorted distinct values of y and pred together.
//
// Errors: as Accuracy, and ErrParam for repeated classes or a label or
// prediction outside classes (ErrNonFinite for a NaN or Inf class).
func NewConfusionMatrix(pred, y, w, classes []float64) (*ConfusionMatrix, error) {
	if _, err := checkInputs("predictions", pred, y, w, true); err != nil {
		return nil, err
	}
	if classes == nil {
		classes = unionClasses(y, pred)
	}
	idx, err := classIndex(classes, 1)
	if err != nil {
		return nil, err
	}
	ti, err := labelIndex("label", y, idx)
	if err != nil {
		return nil, err
	}
	pi, err := labelIndex("prediction", pred, idx)
	if err != nil {
		return nil, err
	}
	k := len(classes)
	cm := &ConfusionMatrix{Classes: append([]float64(nil), classes...), Counts: make([][]float64, k)}
	for i := range cm.Counts {
		cm.Counts[i] = make([]float64, k)
	}
	for i := range ti {
		cm.Counts[ti[i]][pi[i]] += weight(w, i)
	}
	return cm, nil
}

// maxPrintedClasses is the largest confusion matrix String prints as a
// table; wider ones do not fit a terminal line.
const maxPrintedClasses = 20

// String formats the matrix as a table, true classes down and predicted
// classes across, for up to 20 classes; for more it returns a one-line
// summary (read Counts).
func (c *ConfusionMatrix) String() string {
	k := len(c.Classes)
	if k > maxPrintedClasses {
		return fmt.Sprintf("confusion matrix of %d classes (String prints up to %d; read Counts)", k, maxPrintedClasses)
	}
	const corner = "true\\pred"
	cells := make([][]string, k+1)
	cells[0] = append(cells[0], corner)
	for _, cl := range c.Classes {
		cells[0] = append(cells[0], strconv.FormatFloat(cl, 'g', -1, 64))
	}
	for i := range k {
		cells[i+1] = append(cells[i+1], cells[0][i+1])
		for j := range k {
			cells[i+1] = append(cells[i+1], strconv.FormatFloat(c.Counts[i][j], 'g', 6, 64))
		}
	}
	width := make([]int, k+1)
	for _, row := range cells {
		for j, s := range row {
			width[j] = max(width[j], len(s))
		}
	}
	var b strings.Builder
	for _, row := range cells {
		for j, s := range row {
			if j > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", width[j]-len(s)))
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ClassScores are per-class precision, recall and F1 of predicted labels
// and their macro averages.
type ClassScores struct {
	Classes []float64
	// Precision[j] is the weighted fraction of rows predicted Classes[j]
	// that are of that class (NaN when none is predicted), Recall[j] the
	// fraction of the rows of Classes[j] predicted as it (NaN when it has
	// no rows), F1[j] their harmonic mean 2 TP / (2 TP + FP + FN) (NaN
	// when the class is neither present nor predicted), Support[j] the
	// total weight of its rows.
	Precision, Recall, F1, Support []float64
	// Macro averages over the classes with positive support (those present
	// in the labels), each class counting once: a class never predicted
	// contributes precision 0. MacroRecall is the balanced accuracy.
	MacroPrecision, MacroRecall, MacroF1 float64
}

// PerClass computes precision, recall and F1 of every class and their
// macro averages from predicted labels. classes is as in
// NewConfusionMatrix (nil: the sorted distinct values of y and pred).
//
// Errors: those of NewConfusionMatrix.
func PerClass(pred, y, w, classes []float64) (ClassScores, error) {
	cm, err := NewConfusionMatrix(pred, y, w, classes)
	if err != nil {
		return ClassScores{}, err
	}
	return cm.scores(), nil
}

// scores derives the per-class scores from the matrix.
func (c *ConfusionMatrix) scores() ClassScores {
	k := len(c.Classes)
	s := ClassScores{Classes: c.Classes, Precision: make([]float64, k), Recall: make([]float64, k), F1: make([]float64, k), Support: make([]float64, k)}
	present := 0
	for j := range k {
		tp, predicted := c.Counts[j][j], 0.0
		for i := range k {
			predicted += c.Counts[i][j]
			s.Support[j] += c.Counts[j][i]
		}
		s.Precision[j], s.Recall[j], s.F1[j] = prf(tp, predicted-tp, s.Support[j]-tp)
		if s.Support[j] > 0 {
			present++
			if !math.IsNaN(s.Precision[j]) {
				s.MacroPrecision += s.Precision[j]
			}
			s.MacroRecall += s.Recall[j]
			s.MacroF1 += s.F1[j]
		}
	}
	s.MacroPrecision /= float64(present)
	s.MacroRecall /= float64(present)
	s.MacroF1 /= float64(present)
	return s
}

// prf is precision, recall and F1 from true positives, false positives and
// false negatives; each is NaN where its denominator is 0.
func prf(tp, fp, fn float64) (precision, recall, f1 float64) {
	return ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(2*tp, 2*tp+fp+fn)
}

// ratio is a/b, NaN for b = 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// PRF is the precision, recall and F1 of the positive class.
type PRF struct {
	// Precision is TP / (TP + FP), NaN when no row is predicted positive;
	// Recall is TP / (TP + FN); F1 is 2 TP / (2 TP + FP + FN), their
	// harmonic mean (0 when no positive is found). TP, FP and FN are
	// weighted counts.
	Precision, Recall, F1 float64
}

// BinaryPRF is precision, recall and F1 of binary scores at a decision
// threshold: a row is predicted positive when score >= threshold. The
// positive class is the larger label value. (solvers' sign decoding
// predicts positive for an output > 0, which is threshold
// math.SmallestNonzeroFloat64 here.)
//
// Errors: as ROCAUC, and ErrParam for a NaN threshold.
func BinaryPRF(score, y, w []float64, threshold float64) (PRF, error) {
	nan := PRF{math.NaN(), math.NaN(), math.NaN()}
	if math.IsNaN(threshold) {
		return nan, fmt.Errorf("%w: NaN threshold", zonal.ErrParam)
	}
	if _, err := checkInputs("scores", score, y, w, false); err != nil {
		return nan, err
	}
	_, pos, _, wPos, err := binaryClasses(y, w)
	if err != nil {
		return nan, err
	}
	tp, fp := 0.0, 0.0
	for i, s := range score {
		if s >= threshold {
			if y[i] == pos {
				tp += weight(w, i)
			} else {
				fp += weight(w, i)
			}
		}
	}
	p, r, f := prf(tp, fp, wPos-tp)
	return PRF{p, r, f}, nil
}

// RecallAtPrecision is the largest recall of binary scores over the
// thresholds whose precision is at least minPrecision, and that threshold
// (a row is predicted positive when score >= threshold). Thresholds are the
// distinct scores; of several reaching the same recall the largest (fewest
// false positives) is returned. When no threshold reaches minPrecision the
// recall is 0 and the threshold +Inf (predict nothing positive); that is an
// answer, not an error. It is the metric of screening problems (fraud,
// diagnosis) where a false alarm has a fixed cost: "how many frauds do we
// catch if 90% of the alerts must be real".
//
// Errors: as ROCAUC, and ErrParam unless 0 < minPrecision <= 1.
func RecallAtPrecision(score, y, w []float64, minPrecision float64) (recall, threshold float64, err error) {
	if !(minPrecision > 0 && minPrecision <= 1) {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: minimum precision %g outside (0, 1]", zonal.ErrParam, minPrecision)
	}
	if _, err := checkInputs("scores", score, y, w, false); err != nil {
		return math.NaN(), math.NaN(), err
	}
	_, pos, _, wPos, err := binaryClasses(y, w)
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	order := make([]int, len(score))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	recall, threshold = 0, math.Inf(1)
	tp, fp := 0.0, 0.0
	for lo := 0; lo < len(order); {
		hi := lo
		for hi < len(order) && score[order[hi]] == score[order[lo]] {
			if y[order[hi]] == pos {
				tp += weight(w, order[hi])
			} else {
				fp += weight(w, order[hi])
			}
			hi++
		}
		if tp+fp > 0 && tp/(tp+fp) >= minPrecision && tp/wPos > recall {
			recall, threshold = tp/wPos, score[order[lo]]
		}
		lo = hi
	}
	return recall, threshold, nil
}

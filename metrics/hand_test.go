package metrics

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// tol is the tolerance of the hand-worked values: each expected value is an
// exact rational or closed form, and the code computes it with a handful of
// float64 operations, so rounding stays within a few ulps; 1e-12 leaves
// ample room.
const tol = 1e-12

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if !(math.Abs(got-want) <= tol*max(1, math.Abs(want))) {
		t.Errorf("%s = %.17g, want %.17g", name, got, want)
	}
}

// must returns a function that fails the test on an error and otherwise
// returns the value.
func must(t *testing.T) func(float64, error) float64 {
	return func(v float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestAccuracyByHand(t *testing.T) {
	pred := []float64{1, 0, 1, 1}
	y := []float64{1, 0, 0, 1}
	// Rows 0, 1 and 3 are right: 3/4.
	near(t, "accuracy", must(t)(Accuracy(pred, y, nil)), 0.75)
	// Weighted: right rows weigh 1 + 2 + 1 = 4 of 7.
	near(t, "weighted accuracy", must(t)(Accuracy(pred, y, []float64{1, 2, 3, 1})), 4.0/7)
}

func TestBalancedAccuracyByHand(t *testing.T) {
	y := []float64{0, 0, 0, 1}
	// Always the majority class: recall 1 for class 0, 0 for class 1, so
	// 0.5, while accuracy is 0.75.
	near(t, "majority", must(t)(BalancedAccuracy([]float64{0, 0, 0, 0}, y, nil)), 0.5)
	near(t, "majority accuracy", must(t)(Accuracy([]float64{0, 0, 0, 0}, y, nil)), 0.75)
	// Recall 2/3 for class 0, 1 for class 1: (2/3 + 1)/2 = 5/6.
	near(t, "mixed", must(t)(BalancedAccuracy([]float64{0, 1, 0, 1}, y, nil)), 5.0/6)
	// A predicted class absent from y (2) only costs recall.
	near(t, "foreign prediction", must(t)(BalancedAccuracy([]float64{0, 2, 0, 1}, y, nil)), 5.0/6)
}

func TestROCAUCByHand(t *testing.T) {
	// Positives score 0.35 and 0.8, negatives 0.1 and 0.4: of the 4
	// pairs 0.35 loses to 0.4, the other 3 are won: 3/4.
	near(t, "auc", must(t)(ROCAUC([]float64{0.1, 0.4, 0.35, 0.8}, []float64{0, 0, 1, 1}, nil)), 0.75)
	// The same with labels -1/+1 (the larger is positive).
	near(t, "auc -1/+1", must(t)(ROCAUC([]float64{0.1, 0.4, 0.35, 0.8}, []float64{-1, -1, 1, 1}, nil)), 0.75)
	// Ties: positives {0.5, 0.9}, negatives {0.5, 0.2}. 0.5 vs 0.5 is a
	// half, the other three pairs are won: 3.5/4.
	s := []float64{0.5, 0.5, 0.2, 0.9}
	y := []float64{1, 0, 0, 1}
	near(t, "auc ties", must(t)(ROCAUC(s, y, nil)), 0.875)
	// Weights 2, 1, 1, 1: W+ = 3, W- = 2. The positive 0.5 (weight 2)
	// gets 2 (1/2 * 1 + 1 * 1) = 3, the positive 0.9 gets 1 (1 + 1) = 2:
	// 5/6.
	near(t, "weighted auc ties", must(t)(ROCAUC(s, y, []float64{2, 1, 1, 1})), 5.0/6)
	// +-Inf scores are only an order.
	near(t, "inf scores", must(t)(ROCAUC([]float64{math.Inf(-1), 0, math.Inf(1)}, []float64{0, 1, 1}, nil)), 1)
}

// probs is a 4 x 3 probability matrix with labels 0, 1, 2, 2.
func probs() (*mat.Dense, []float64, []float64) {
	p := mat.NewDense(4, 3, []float64{
		0.6, 0.3, 0.1,
		0.2, 0.5, 0.3,
		0.1, 0.3, 0.6,
		0.3, 0.4, 0.3,
	})
	return p, []float64{0, 1, 2}, []float64{0, 1, 2, 2}
}

func TestROCAUCMultiByHand(t *testing.T) {
	p, classes, y := probs()
	// Class 0: its row scores 0.6 above 0.2, 0.1, 0.3: AUC 1. Class 1: 0.5
	// above 0.3, 0.3, 0.4: AUC 1. Class 2: positives 0.6 and 0.3 against
	// 0.1 and 0.3: 0.6 wins both, 0.3 wins one and ties one: 3.5/4. Macro
	// mean (1 + 1 + 0.875)/3.
	near(t, "macro auc", must(t)(ROCAUCMulti(p, classes, y, nil)), 2.875/3)
	// Column order follows classes: relabelling the classes with the
	// columns keeps the value.
	near(t, "relabelled", must(t)(ROCAUCMulti(p, []float64{7, 5, 3}, []float64{7, 5, 3, 3}, nil)), 2.875/3)
}

func TestLogLossBrierByHand(t *testing.T) {
	p, classes, y := probs()
	// The true classes' probabilities are 0.6, 0.5, 0.6, 0.3:
	// -(2 ln 0.6 + ln 0.5 + ln 0.3)/4 = 2.9187712/4 = 0.7296928.
	near(t, "logloss", must(t)(LogLoss(p, classes, y, nil)), -(2*math.Log(0.6)+math.Log(0.5)+math.Log(0.3))/4)
	// Squared distances to the one-hot rows: 0.16+0.09+0.01 = 0.26,
	// 0.04+0.25+0.09 = 0.38, 0.01+0.09+0.16 = 0.26, 0.09+0.16+0.49 = 0.74;
	// mean 1.64/4 = 0.41.
	near(t, "brier", must(t)(Brier(p, classes, y, nil)), 0.41)
	// Weights 0, 0, 1, 1 keep rows 2 and 3: (0.26 + 0.74)/2.
	near(t, "weighted brier", must(t)(Brier(p, classes, y, []float64{0, 0, 1, 1})), 0.5)

	pb := []float64{0.9, 0.2, 0.6}
	yb := []float64{1, 0, 0}
	// -(ln 0.9 + ln 0.8 + ln 0.4)/3 = 0.41493159.
	near(t, "binary logloss", must(t)(BinaryLogLoss(pb, yb, nil)), -(math.Log(0.9)+math.Log(0.8)+math.Log(0.4))/3)
	// (0.01 + 0.04 + 0.36)/3.
	near(t, "binary brier", must(t)(BinaryBrier(pb, yb, nil)), 0.41/3)
	// Two classes: the multiclass Brier is twice the binary one.
	two := mat.NewDense(3, 2, []float64{0.1, 0.9, 0.8, 0.2, 0.4, 0.6})
	near(t, "two-class brier", must(t)(Brier(two, []float64{0, 1}, yb, nil)), 2*0.41/3)
	near(t, "two-class logloss", must(t)(LogLoss(two, []float64{0, 1}, yb, nil)), -(math.Log(0.9)+math.Log(0.8)+math.Log(0.4))/3)
	// Clipping: certain and wrong costs -ln(1e-15) = 34.538776 a row,
	// certain and right -ln(1 - 1e-15), about 1e-15.
	near(t, "clipped", must(t)(BinaryLogLoss([]float64{1, 0}, []float64{0, 1}, nil)), -math.Log(LogLossEps))
	clipped := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	near(t, "clipped multiclass", must(t)(LogLoss(clipped, []float64{0, 1}, []float64{0, 1}, nil)), -math.Log(LogLossEps))
	if v := must(t)(BinaryLogLoss([]float64{1, 0}, []float64{1, 0}, nil)); !(v > 0 && v < 2e-15) {
		t.Errorf("certain and right: %g, want about 1e-15", v)
	}
}

func TestPRFByHand(t *testing.T) {
	s := []float64{0.9, 0.8, 0.7, 0.6, 0.2}
	y := []float64{1, 0, 1, 1, 0}
	// At 0.65 the rows 0.9 (pos), 0.8 (neg), 0.7 (pos) are positive:
	// TP 2, FP 1, FN 1, so P = R = F1 = 2/3. Threshold 0.7 is the same
	// (score >= threshold).
	for _, th := range []float64{0.65, 0.7} {
		r, err := BinaryPRF(s, y, nil, th)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "precision", r.Precision, 2.0/3)
		near(t, "recall", r.Recall, 2.0/3)
		near(t, "f1", r.F1, 2.0/3)
	}
	// Above every score nothing is predicted: precision undefined, recall
	// and F1 0.
	r, err := BinaryPRF(s, y, nil, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.Precision) || r.Recall != 0 || r.F1 != 0 {
		t.Errorf("nothing predicted: %+v", r)
	}
	// Weight 3 on the false positive 0.8: P = 2/5, R = 2/3,
	// F1 = 4/(4 + 3 + 1) = 1/2.
	r, err = BinaryPRF(s, y, []float64{1, 3, 1, 1, 1}, 0.65)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "weighted precision", r.Precision, 0.4)
	near(t, "weighted recall", r.Recall, 2.0/3)
	near(t, "weighted f1", r.F1, 0.5)
}

func TestRecallAtPrecisionByHand(t *testing.T) {
	s := []float64{0.9, 0.8, 0.7, 0.6, 0.2}
	y := []float64{1, 0, 1, 1, 0}
	// Thresholds from the top: 0.9 P 1 R 1/3; 0.8 P 1/2; 0.7 P 2/3 R 2/3;
	// 0.6 P 3/4 R 1; 0.2 P 3/5 R 1.
	for _, c := range []struct{ min, recall, th float64 }{
		{0.5, 1, 0.6}, // recall 1 first reached at 0.6
		{0.75, 1, 0.6},
		{0.7, 1, 0.6},
		{0.76, 1.0 / 3, 0.9},
		{1, 1.0 / 3, 0.9},
		{0.6, 1, 0.6},
	} {
		r, th, err := RecallAtPrecision(s, y, nil, c.min)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r-c.recall) > tol || th != c.th {
			t.Errorf("precision >= %g: recall %g at %g, want %g at %g", c.min, r, th, c.recall, c.th)
		}
	}
	// The top score is a negative: precision 1 is never reached.
	r, th, err := RecallAtPrecision([]float64{0.9, 0.5}, []float64{0, 1}, nil, 1)
	if err != nil || r != 0 || !math.IsInf(th, 1) {
		t.Errorf("unreachable precision: recall %g at %g (%v), want 0 at +Inf", r, th, err)
	}
}

func TestConfusionMatrixByHand(t *testing.T) {
	pred := []float64{0, 1, 1, 2, 2, 0}
	y := []float64{0, 1, 2, 2, 0, 0}
	cm, err := NewConfusionMatrix(pred, y, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// (true, pred) pairs: (0,0) twice, (1,1), (2,1), (2,2), (0,2).
	want := [][]float64{{2, 0, 1}, {0, 1, 0}, {0, 1, 1}}
	for i := range want {
		for j := range want[i] {
			if cm.Counts[i][j] != want[i][j] {
				t.Errorf("Counts[%d][%d] = %g, want %g", i, j, cm.Counts[i][j], want[i][j])
			}
		}
	}
	table := "" +
		"true\\pred  0  1  2\n" +
		"        0  2  0  1\n" +
		"        1  0  1  0\n" +
		"        2  0  1  1\n"
	if cm.String() != table {
		t.Errorf("String:\n%s\nwant\n%s", cm, table)
	}

	// Per class: class 0 TP 2 of 2 predicted, 3 present: P 1, R 2/3,
	// F1 4/5; class 1 TP 1 of 2 predicted, 1 present: P 1/2, R 1,
	// F1 2/3; class 2 TP 1 of 2 predicted, 2 present: P 1/2, R 1/2,
	// F1 1/2.
	s, err := PerClass(pred, y, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j, w := range [][3]float64{{1, 2.0 / 3, 0.8}, {0.5, 1, 2.0 / 3}, {0.5, 0.5, 0.5}} {
		near(t, "precision", s.Precision[j], w[0])
		near(t, "recall", s.Recall[j], w[1])
		near(t, "f1", s.F1[j], w[2])
	}
	near(t, "macro precision", s.MacroPrecision, 2.0/3)
	near(t, "macro recall", s.MacroRecall, 13.0/18)
	near(t, "macro f1", s.MacroF1, 59.0/90)
	near(t, "balanced accuracy", must(t)(BalancedAccuracy(pred, y, nil)), 13.0/18)

	// An explicit order, with a class that never occurs (9): its row and
	// column are 0 and it does not enter the macro means.
	cm, err = NewConfusionMatrix(pred, y, nil, []float64{2, 1, 0, 9})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Counts[0][1] != 1 || cm.Counts[2][2] != 2 || cm.Counts[3][3] != 0 {
		t.Errorf("reordered counts %v", cm.Counts)
	}
	if s := cm.scores(); math.Abs(s.MacroRecall-13.0/18) > tol || !math.IsNaN(s.F1[3]) {
		t.Errorf("absent class: macro recall %g, F1 %g", s.MacroRecall, s.F1[3])
	}

	// More than 20 classes print as one line.
	many := make([]float64, 21)
	for i := range many {
		many[i] = float64(i)
	}
	cm, err = NewConfusionMatrix(many, many, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := cm.String(); s != "confusion matrix of 21 classes (String prints up to 20; read Counts)" {
		t.Errorf("21 classes: %q", s)
	}
}

func TestRegressionByHand(t *testing.T) {
	pred := []float64{2, 3, 5}
	y := []float64{1, 3, 7}
	// Errors 1, 0, -2: RMSE sqrt(5/3), MAE 1. ybar = 11/3, SS_tot =
	// (64 + 4 + 100)/9 = 168/9, SS_res = 5: R^2 = 1 - 45/168.
	near(t, "rmse", must(t)(RMSE(pred, y, nil)), math.Sqrt(5.0/3))
	near(t, "mae", must(t)(MAE(pred, y, nil)), 1)
	near(t, "r2", must(t)(R2(pred, y, nil)), 1-45.0/168)
	// Weights 1, 1, 2 are the rows (2,1), (3,3), (5,7), (5,7): ybar 4.5,
	// SS_tot 12.25 + 2.25 + 6.25 + 6.25 = 27, SS_res 1 + 0 + 4 + 4 = 9, so
	// R^2 = 2/3; RMSE sqrt(9/4); MAE 5/4.
	w := []float64{1, 1, 2}
	near(t, "weighted r2", must(t)(R2(pred, y, w)), 2.0/3)
	near(t, "weighted rmse", must(t)(RMSE(pred, y, w)), 1.5)
	near(t, "weighted mae", must(t)(MAE(pred, y, w)), 1.25)
	// Poisson: y 0, 2, 1 with mu 0.5, 1, 2: 2 (0 + 0.5) = 1,
	// 2 (2 ln 2 - 1) = 0.7725887, 2 (ln 0.5 + 1) = 0.6137056; mean
	// 0.7954314.
	near(t, "poisson", must(t)(PoissonDeviance([]float64{0.5, 1, 2}, []float64{0, 2, 1}, nil)), (1+4*math.Log(2)-2+2*(math.Log(0.5)+1))/3)
	near(t, "poisson perfect", must(t)(PoissonDeviance([]float64{3, 1}, []float64{3, 1}, nil)), 0)
}

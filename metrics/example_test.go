package metrics_test

import (
	"fmt"

	"github.com/zonal-ml/zonal/metrics"
)

// On a 6%-positive problem the model that never raises an alarm has 94%
// accuracy; balanced accuracy and AUC show it is useless.
func Example_imbalanced() {
	y := make([]float64, 100)
	for i := range 6 {
		y[i] = 1
	}
	never := make([]float64, 100) // always predicts the majority class
	score := make([]float64, 100) // a constant score: no ranking at all
	acc, _ := metrics.Accuracy(never, y, nil)
	bal, _ := metrics.BalancedAccuracy(never, y, nil)
	auc, _ := metrics.ROCAUC(score, y, nil)
	fmt.Printf("accuracy %.2f, balanced accuracy %.2f, AUC %.2f\n", acc, bal, auc)

	cm, _ := metrics.NewConfusionMatrix(never, y, nil, []float64{0, 1})
	fmt.Print(cm)
	// Output:
	// accuracy 0.94, balanced accuracy 0.50, AUC 0.50
	// true\pred   0  1
	//         0  94  0
	//         1   6  0
}

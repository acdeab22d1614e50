package calibrate

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/metrics"
)

// binaryInput checks scores against binary labels and weights and returns
// the positive class. Scores must be finite: a calibrator evaluates them.
func binaryInput(score, y, w []float64) (pos float64, err error) {
	if len(score) != len(y) {
		return 0, fmt.Errorf("%w: %w: %d scores for %d labels", zonal.ErrParam, zonal.ErrShape, len(score), len(y))
	}
	if _, pos, err = metrics.BinaryLabels(y, w); err != nil {
		return 0, err
	}
	for i, s := range score {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return 0, fmt.Errorf("%w: score %d is %g", zonal.ErrNonFinite, i, s)
		}
	}
	return pos, nil
}

// weight is the weight of row i: 1 when w is nil.
func weight(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

package metrics

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// RMSE is the weighted root mean squared error,
// sqrt(sum_i w_i (pred_i - y_i)^2 / sum_i w_i), in the units of y. Squaring
// makes it sensitive to large errors; it is what least-squares models
// (kernel ridge regression) minimise.
//
// Errors: zonal.ErrParam (with ErrShape) when the lengths differ; ErrEmpty
// for no rows; ErrNonFinite for a NaN or Inf prediction or label; ErrParam
// for bad weights.
func RMSE(pred, y, w []float64) (float64, error) {
	total, err := checkInputs("predictions", pred, y, w, true)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i := range y {
		d := pred[i] - y[i]
		s += weight(w, i) * d * d
	}
	return math.Sqrt(s / total), nil
}

// MAE is the weighted mean absolute error, sum_i w_i |pred_i - y_i| /
// sum_i w_i: less moved by a few outliers than RMSE.
//
// Errors: those of RMSE.
func MAE(pred, y, w []float64) (float64, error) {
	total, err := checkInputs("predictions", pred, y, w, true)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i := range y {
		s += weight(w, i) * math.Abs(pred[i]-y[i])
	}
	return s / total, nil
}

// R2 is the coefficient of determination,
// 1 - sum_i w_i (y_i - pred_i)^2 / sum_i w_i (y_i - ybar)^2 with ybar the
// weighted mean of y: the fraction of the variance of y the predictions
// explain (1 is perfect, 0 is the constant prediction ybar, negative is
// worse than that). It is scale-free, so it compares fits across data
// sets.
//
// Errors: those of RMSE, and ErrParam when y is constant (among the rows
// of positive weight), where R^2 is undefined.
func R2(pred, y, w []float64) (float64, error) {
	total, err := checkInputs("predictions", pred, y, w, true)
	if err != nil {
		return math.NaN(), err
	}
	mean := 0.0
	for i, v := range y {
		mean += weight(w, i) * v
	}
	mean /= total
	res, tot := 0.0, 0.0
	for i, v := range y {
		res += weight(w, i) * (v - pred[i]) * (v - pred[i])
		tot += weight(w, i) * (v - mean) * (v - mean)
	}
	if tot == 0 {
		return math.NaN(), fmt.Errorf("%w: R^2 is undefined for constant labels (all %g)", zonal.ErrParam, mean)
	}
	return 1 - res/tot, nil
}

// PoissonDeviance is the weighted mean Poisson deviance of predicted means
// mu_i > 0 for counts y_i >= 0,
//
//	sum_i w_i 2 (y_i log(y_i / mu_i) - (y_i - mu_i)) / sum_i w_i,
//
// with y log y = 0 at y = 0. It is twice the log-likelihood ratio of the
// prediction against the saturated model, 0 for a perfect fit: the metric
// for counts and rates (claims, visits, events), where the variance grows
// with the mean and squared error would be dominated by the large counts.
//
// Errors: those of RMSE, and ErrParam for a negative label or a
// prediction <= 0.
func PoissonDeviance(pred, y, w []float64) (float64, error) {
	total, err := checkInputs("predictions", pred, y, w, true)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i, v := range y {
		if v < 0 {
			return math.NaN(), fmt.Errorf("%w: Poisson deviance needs labels >= 0, label %d is %g", zonal.ErrParam, i, v)
		}
		mu := pred[i]
		if !(mu > 0) {
			return math.NaN(), fmt.Errorf("%w: Poisson deviance needs predictions > 0, prediction %d is %g", zonal.ErrParam, i, mu)
		}
		d := mu - v
		if v > 0 {
			d += v * math.Log(v/mu)
		}
		s += weight(w, i) * 2 * d
	}
	return s / total, nil
}

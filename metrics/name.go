package metrics

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// Name is a metric used to choose among models. The zero value, NameAuto,
// stands for the task's default (Resolve).
type Name uint8

const (
	// NameAuto is the default of the task: accuracy for classification
	// (the existing behaviour; on imbalanced problems ask for
	// balanced_accuracy or auc), rmse for regression.
	NameAuto Name = iota
	// NameAccuracy is Accuracy (maximised).
	NameAccuracy
	// NameBalancedAccuracy is BalancedAccuracy (maximised).
	NameBalancedAccuracy
	// NameAUC is ROCAUC, or ROCAUCMulti with more than two classes
	// (maximised; needs scores or probabilities).
	NameAUC
	// NameLogLoss is BinaryLogLoss or LogLoss (minimised; needs
	// probabilities).
	NameLogLoss
	// NameF1 is the F1 of the positive class with two classes, the macro
	// F1 with more (maximised).
	NameF1
	// NameRMSE is RMSE (minimised).
	NameRMSE
	// NameMAE is MAE (minimised).
	NameMAE
	// NameR2 is R2 (maximised).
	NameR2
	nameEnd
)

var names = [...]string{"auto", "accuracy", "balanced_accuracy", "auc", "logloss", "f1", "rmse", "mae", "r2"}

// String returns the name ("auto", "accuracy", "balanced_accuracy", "auc",
// "logloss", "f1", "rmse", "mae" or "r2"; "Name(N)" for an invalid value).
func (n Name) String() string {
	if n < nameEnd {
		return names[n]
	}
	return fmt.Sprintf("Name(%d)", uint8(n))
}

// ParseName returns the Name spelled s ("" is NameAuto).
//
// Errors: zonal.ErrParam for an unknown name.
func ParseName(s string) (Name, error) {
	if s == "" {
		return NameAuto, nil
	}
	for i, v := range names {
		if v == s {
			return Name(i), nil
		}
	}
	return NameAuto, fmt.Errorf("%w: unknown metric %q (want one of %v)", zonal.ErrParam, s, names)
}

// Check returns nil for a valid Name and an error wrapping zonal.ErrParam
// otherwise.
func (n Name) Check() error {
	if n < nameEnd {
		return nil
	}
	return fmt.Errorf("%w: unknown metric %d", zonal.ErrParam, uint8(n))
}

// MarshalText encodes n as its name (for JSON and flag.TextVar).
//
// Errors: ErrParam for an invalid value.
func (n Name) MarshalText() ([]byte, error) {
	if err := n.Check(); err != nil {
		return nil, err
	}
	return []byte(n.String()), nil
}

// UnmarshalText decodes a name accepted by ParseName.
//
// Errors: ErrParam for an unknown name (n is then unchanged).
func (n *Name) UnmarshalText(b []byte) error {
	v, err := ParseName(string(b))
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// Resolve returns the metric NameAuto stands for (accuracy for
// classification, rmse for regression) and n itself otherwise.
func (n Name) Resolve(classification bool) Name {
	if n != NameAuto {
		return n
	}
	if classification {
		return NameAccuracy
	}
	return NameRMSE
}

// Classification reports whether n is a classification metric (accuracy,
// balanced_accuracy, auc, logloss, f1).
func (n Name) Classification() bool {
	return n >= NameAccuracy && n <= NameF1
}

// NeedsProbabilities reports whether n is computed from probabilities or
// scores rather than predicted labels (auc, logloss).
func (n Name) NeedsProbabilities() bool { return n == NameAUC || n == NameLogLoss }

// CheckTask returns nil when n (after Resolve) applies to the task and an
// error wrapping zonal.ErrParam otherwise (rmse for classification, auc for
// regression, an invalid value).
func (n Name) CheckTask(classification bool) error {
	if err := n.Check(); err != nil {
		return err
	}
	r := n.Resolve(classification)
	if r.Classification() != classification {
		task := "regression"
		if classification {
			task = "classification"
		}
		return fmt.Errorf("%w: metric %s does not apply to %s", zonal.ErrParam, r, task)
	}
	return nil
}

// Maximize reports whether larger values are better: true for accuracy,
// balanced_accuracy, auc, f1 and r2, false for logloss, rmse and mae (and
// for NameAuto and invalid values, which have no direction: Resolve
// first).
func (n Name) Maximize() bool {
	switch n {
	case NameAccuracy, NameBalancedAccuracy, NameAUC, NameF1, NameR2:
		return true
	}
	return false
}

// Better reports whether value a of metric n is strictly better than b. A
// NaN is never better, and any other value is better than NaN. It is false
// for NameAuto and invalid values (Resolve first).
func (n Name) Better(a, b float64) bool {
	if n == NameAuto || n >= nameEnd || math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	if n.Maximize() {
		return a > b
	}
	return a < b
}

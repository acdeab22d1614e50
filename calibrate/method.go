package calibrate

import (
	"fmt"

	"github.com/zonal-ml/zonal"
)

// Method is a calibration method. The zero value is MethodPlatt, the safer
// choice for small calibration sets.
type Method uint8

const (
	// MethodPlatt fits a sigmoid of the score (Platt).
	MethodPlatt Method = iota
	// MethodIsotonic fits a nondecreasing step-and-ramp function of the
	// score (Isotonic).
	MethodIsotonic
)

// String returns "platt" or "isotonic" ("Method(N)" for an invalid value).
func (m Method) String() string {
	switch m {
	case MethodPlatt:
		return "platt"
	case MethodIsotonic:
		return "isotonic"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod returns the Method named s ("" is MethodPlatt).
//
// Errors: zonal.ErrParam for any other name.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "", "platt":
		return MethodPlatt, nil
	case "isotonic":
		return MethodIsotonic, nil
	}
	return MethodPlatt, fmt.Errorf("%w: unknown calibration method %q (want platt or isotonic)", zonal.ErrParam, s)
}

// Check returns nil for MethodPlatt and MethodIsotonic and an error
// wrapping zonal.ErrParam otherwise.
func (m Method) Check() error {
	if m == MethodPlatt || m == MethodIsotonic {
		return nil
	}
	return fmt.Errorf("%w: unknown calibration method %d", zonal.ErrParam, uint8(m))
}

// MarshalText encodes m as its name.
//
// Errors: ErrParam for an invalid value.
func (m Method) MarshalText() ([]byte, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes a name accepted by ParseMethod.
//
// Errors: ErrParam for an unknown name (m is then unchanged).
func (m *Method) UnmarshalText(b []byte) error {
	v, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Calibrator maps a binary score to a probability of the positive class.
// *Platt and *Isotonic implement it.
type Calibrator interface {
	// Apply returns the calibrated probability of score (NaN for NaN).
	Apply(score float64) float64
	// Validate checks the fields (after decoding them from a file).
	Validate() error
	// Method is the method that fitted the calibrator.
	Method() Method
}

// Fit fits a binary calibrator of the given method to scores and labels
// (FitPlatt or FitIsotonic).
//
// Errors: ErrParam for an invalid method, and those of the fit.
func Fit(m Method, score, y, w []float64) (Calibrator, error) {
	switch m {
	case MethodPlatt:
		return FitPlatt(score, y, w)
	case MethodIsotonic:
		return FitIsotonic(score, y, w)
	}
	return nil, m.Check()
}

package zonal

import "fmt"

// Precision is the floating-point precision in which an algorithm stores and
// multiplies its large kernel blocks (mixed precision). Whatever
// it is, the quantities that decide accuracy (factorisations, solves,
// iteration vectors, dot products, fitted coefficients) stay float64; each
// option that takes a Precision documents where its line is drawn.
//
// The zero value is Float64, so option structs default to double precision.
type Precision uint8

const (
	// Float64 stores and multiplies everything in double precision.
	Float64 Precision = iota
	// Float32 stores kernel blocks in single precision (4 bytes an entry,
	// half the memory of Float64) and computes them by single-precision
	// products, with float64 accumulation across blocks.
	Float32
)

// String returns "float64" or "float32" (or "Precision(N)" for an invalid
// value).
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// Bytes is the size of one stored entry: 8 for Float64, 4 for Float32 (and
// 8 for an invalid value, the conservative choice for memory budgets).
func (p Precision) Bytes() int64 {
	if p == Float32 {
		return 4
	}
	return 8
}

// Check returns nil for Float64 and Float32 and an error wrapping ErrParam
// for any other value.
func (p Precision) Check() error {
	if p == Float64 || p == Float32 {
		return nil
	}
	return fmt.Errorf("%w: unknown precision %d (want float64 or float32)", ErrParam, uint8(p))
}

// ParsePrecision returns the Precision named "float64" or "float32" ("" is
// Float64, the default).
//
// Errors: ErrParam for any other name.
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float64":
		return Float64, nil
	case "float32":
		return Float32, nil
	}
	return Float64, fmt.Errorf("%w: unknown precision %q (want float64 or float32)", ErrParam, s)
}

// MarshalText encodes p as its name (for JSON and flag.TextVar).
//
// Errors: ErrParam for an invalid value.
func (p Precision) MarshalText() ([]byte, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a name accepted by ParsePrecision.
//
// Errors: ErrParam for an unknown name (p is then unchanged).
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

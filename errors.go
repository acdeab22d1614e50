package zonal

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The sentinel errors of the whole module. Every error that zonal returns
// about its input, its parameters or a numerical failure wraps one or more of
// them, with a message that says what was wrong and where; test with
// errors.Is. Each package's documentation names the sentinels its functions
// can return. I/O errors (opening a file, a failing io.Reader) and context
// errors (context.Canceled, context.DeadlineExceeded) are returned wrapped,
// as they are, and match their own sentinels.
var (
	// ErrParam: a parameter or option is outside its domain (lambda <= 0,
	// more centres than rows, a negative size, an unknown task).
	ErrParam = errors.New("zonal: invalid parameter")
	// ErrShape: operands of incompatible sizes (a row of the wrong length,
	// label count != row count, a destination of the wrong size).
	ErrShape = errors.New("zonal: incompatible shapes")
	// ErrRange: an index outside its range (a LIBSVM feature index above
	// the limit, a row index outside [0, n), a CSR column outside its width).
	ErrRange = errors.New("zonal: index out of range")
	// ErrNonFinite: a NaN or an Inf where finite values are required.
	ErrNonFinite = errors.New("zonal: NaN or Inf value")
	// ErrEmpty: input without any data (no rows, no columns).
	ErrEmpty = errors.New("zonal: no data")
	// ErrFormat: malformed input: a bad number or token in a data file, a
	// truncated, corrupted or foreign model file, a malformed sparse matrix.
	ErrFormat = errors.New("zonal: malformed input")
	// ErrVersion: a file written by an unsupported format version.
	ErrVersion = errors.New("zonal: unsupported format version")
	// ErrTooLarge: the work does not fit the memory budget or a fixed size
	// limit; the message names the bytes needed, the budget and the option
	// (or command-line flag) that changes it.
	ErrTooLarge = errors.New("zonal: exceeds the memory budget or a size limit")
	// ErrNotPositiveDefinite: a matrix (a kernel matrix, a preconditioner,
	// the operator CG sees) is not positive definite, even after jitter.
	ErrNotPositiveDefinite = errors.New("zonal: matrix is not positive definite")
	// ErrNoConvergence: an iterative method (eigen solver, secular root
	// finder) did not converge.
	ErrNoConvergence = errors.New("zonal: no convergence")
	// ErrUnknown: an unknown or uncompiled name (backend, kernel, feature
	// map or model kind).
	ErrUnknown = errors.New("zonal: unknown name")
	// ErrState: an operation the object's current state does not allow
	// (removing from an empty incremental model, a model used before Init).
	ErrState = errors.New("zonal: invalid state")
)

// DefaultMemoryBudget is the memory budget, in bytes, that every options
// struct's MemoryBudget field means when it is left zero: 2 GiB. It bounds
// the large working arrays whose size comes from the input (kernel matrices,
// cached kernel blocks, feature matrices, sketch and truncation tables).
const DefaultMemoryBudget int64 = 2 << 30

// TooLargeError is the error of work that does not fit its budget: What
// names the allocation in library terms ("the 5000 x 5000 preconditioner"),
// Setting the option that raises the budget ("MemoryBudget"), Need and
// Budget the bytes. It wraps ErrTooLarge. A command-line tool finds it with
// errors.As and names its own flag for Setting.
type TooLargeError struct {
	What    string
	Setting string
	Need    int64
	Budget  int64
	// Param and Value, when set, are the option whose value asked for the
	// allocation ("Centers", 5000).
	Param string
	Value any
}

func (e *TooLargeError) Error() string {
	setting := e.Setting
	if setting == "" {
		setting = "MemoryBudget"
	}
	return fmt.Sprintf("%v: %s needs %s, the budget is %s (raise %s)", ErrTooLarge, e.What, FormatBytes(e.Need), FormatBytes(e.Budget), setting)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// ParamError is the error of an option outside its domain: Param names it in
// library terms (the options field, e.g. "Centers" or "Lambda"), Value is
// the value given and Reason says what is wrong. It wraps ErrParam (and
// Err, when set, for a cause such as ErrNonFinite). A command-line tool finds
// it with errors.As and names its own flag for Param.
type ParamError struct {
	Param  string
	Value  any
	Reason string
	Err    error
}

func (e *ParamError) Error() string {
	if e.Value == nil {
		return fmt.Sprintf("%v: %s: %s", ErrParam, e.Param, e.Reason)
	}
	return fmt.Sprintf("%v: %s = %v: %s", ErrParam, e.Param, e.Value, e.Reason)
}

func (e *ParamError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrParam, e.Err}
	}
	return []error{ErrParam}
}

// ParseBytes parses a byte count with an optional K, M, G or T suffix
// (powers of 1024, optionally followed by "i" and "B": 512M, 8GiB, 1.5G);
// "" is 0 (the module's default budget). Anything else, or a count below
// one byte, is an error wrapping ErrParam.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	if t == "" {
		return 0, nil
	}
	mult := 1.0
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v*mult >= 1) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: size %q: want a positive size such as 512M or 8G", ErrParam, s)
	}
	return int64(v * mult), nil
}

// FormatBytes renders a byte count as the module's messages do:
// "1.5 GiB (1610612736 bytes)".
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(b)/float64(div), "KMGTPE"[exp], b)
}

package dataset

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error about the data or the arguments wraps one or
// more of them, so callers can test with errors.Is; I/O errors (opening a
// file, a failing plain io.Reader) wrap the underlying error instead. A
// failure inside gzip data counts as malformed input (ErrFormat) and wraps
// the gzip error too.
var (
	// ErrFormat reports malformed input: a bad number, a bad LIBSVM token,
	// an index 0 or a non-increasing index, a ragged CSV row, a bad header,
	// corrupt gzip data. Every *ParseError wraps ErrFormat.
	ErrFormat = errors.New("dataset: malformed input")
	// ErrNonFinite reports a NaN or ±Inf value (in a file, when
	// Options.AllowNonFinite is false, or in a matrix given to a scaler).
	ErrNonFinite = errors.New("dataset: NaN or Inf value")
	// ErrEmpty reports input without any data row (or a zero-size matrix).
	ErrEmpty = errors.New("dataset: no data")
	// ErrTarget reports that the requested CSV target column does not exist.
	ErrTarget = errors.New("dataset: target column not found")
	// ErrRange reports an index out of range: a LIBSVM feature index above
	// Options.MaxCols, a feature count outside [MinCols, MaxCols], a row
	// index outside [0, n) given to Subset, a CSR entry outside its shape.
	ErrRange = errors.New("dataset: index out of range")
	// ErrTooLarge reports input beyond the package's fixed safety limits
	// (MaxIndex, MaxDenseElements, MaxLineBytes), which keep a hostile or
	// broken file from allocating huge amounts of memory.
	ErrTooLarge = errors.New("dataset: input exceeds size limit")
	// ErrParam reports an invalid argument (bad option, k-fold count, sizes).
	ErrParam = errors.New("dataset: invalid parameter")
	// ErrShape reports mismatched dimensions between matrices or vectors.
	ErrShape = errors.New("dataset: dimension mismatch")
)

// ParseError describes a problem at one line of an input file.
// Line is 1-based and counts every line of the (decompressed) input,
// including blank lines, comments and the CSV header.
type ParseError struct {
	Line int    // 1-based line number
	Msg  string // what is wrong, e.g. `index 0 in "0:1.5" (indices are 1-based)`
	Kind error  // an extra sentinel (ErrNonFinite, ErrRange, ErrTooLarge) or nil
	Err  error  // an underlying error (I/O, gzip), or nil
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("dataset: line %d: %s", e.Line, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrFormat, the extra sentinel if any and the underlying error.
func (e *ParseError) Unwrap() []error {
	errs := []error{ErrFormat}
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

func lineErr(line int, kind error, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...), Kind: kind}
}

// quote renders a token for an error message, truncated so a huge token
// cannot blow up the message.
func quote(b []byte) string {
	const max = 40
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

package dataset

import (
	"fmt"

	"github.com/zonal-ml/zonal"
)

// ParseError describes a problem at one line of an input file.
// Line is 1-based and counts every line of the (decompressed) input,
// including blank lines, comments and the CSV header.
type ParseError struct {
	Line int    // 1-based line number
	Msg  string // what is wrong, e.g. `index 0 in "0:1.5" (indices are 1-based)`
	Kind error  // an extra sentinel (zonal.ErrNonFinite, zonal.ErrRange, zonal.ErrTooLarge) or nil
	Err  error  // an underlying error (I/O, gzip), or nil
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("dataset: line %d: %s", e.Line, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns zonal.ErrFormat, the extra sentinel if any and the underlying error.
func (e *ParseError) Unwrap() []error {
	errs := []error{zonal.ErrFormat}
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

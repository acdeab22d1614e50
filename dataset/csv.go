package dataset

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// ReadCSV reads comma-separated values from r (plain or gzip, detected by
// the magic bytes) into a Data with X (dense n x d), Y and Names.
//
// The first non-blank line is the header: one non-empty, distinct name per
// column, without control characters. opts.Header says whether there is
// one: "yes", "no", or "auto" (the default, also ""): a first line whose
// fields all read as numbers is the first data row, any other first line
// is the header. Without a header, columns are named by their 0-based
// index ("0", "1", ...) for Target and messages, and Data.Names and
// Data.TargetName stay empty. The target column is chosen by
// opts.Target (a name, or a 0-based index when no column has that name); by
// default it is the column named "y" if there is one, else the first column.
// The other columns, in header order, are the d features. opts.NoTarget
// makes every column a feature; opts.TargetOptional does so only when the
// target column is absent.
//
// Quoting follows RFC 4180 ("a, b" is one field, "" inside quotes is a
// quote), except that a quoted field must end on its line. A quote inside
// an unquoted field is an error. Spaces and tabs around a field are
// trimmed; blank lines are skipped; "\r\n" line ends and a leading UTF-8
// byte-order mark are accepted. Every field of a data row must be a
// decimal number, parsed strictly as for LIBSVM (empty fields, "NA", hex,
// underscores are errors; NaN/Inf only with opts.AllowNonFinite). Every row must have as many fields as the header.
// Errors name the line (counted from 1, header and blank lines included)
// and, for a bad value, the column.
//
// A CSV cannot be padded: when opts.MinCols or opts.MaxCols is set, a
// feature count outside [MinCols, MaxCols] is an error wrapping zonal.ErrRange.
func ReadCSV(r io.Reader, opts Options) (*Data, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	lr, err := newLineReader(r)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	var sp csvSplitter
	// The first non-blank line: the header, or (headerless input) the first
	// data row.
	var rec [][]byte
	for {
		line, ok := lr.next()
		if !ok {
			if err := lr.error(); err != nil {
				return nil, err
			}
			return nil, errEmpty(lr.line, "CSV input is empty (no header)")
		}
		if isBlank(line) {
			continue
		}
		if rec, err = sp.split(line, lr.line); err != nil {
			return nil, err
		}
		break
	}
	headerLine := lr.line
	hasHeader := opts.Header == "yes" || (opts.Header != "no" && !allNumbers(rec))
	var names []string
	var seen map[string]int
	if hasHeader {
		if names, seen, err = headerNames(rec, headerLine); err != nil {
			return nil, err
		}
	} else {
		// Columns are named by their 0-based index, so Target "3" means
		// the fourth column either way.
		names = make([]string, len(rec))
		seen = make(map[string]int, len(rec))
		for j := range names {
			names[j] = strconv.Itoa(j)
			seen[names[j]] = j
		}
	}
	ncol := len(names)
	target := -1
	if !opts.NoTarget {
		var msg string
		target, msg = findTarget(names, seen, opts.Target)
		if opts.TargetOptional && (target < 0 || (opts.Target == "" && names[target] != "y")) {
			target = -1 // no target column: all features
		} else if target < 0 {
			return nil, fmt.Errorf("dataset: line %d (header): %s: %w", headerLine, msg, zonal.ErrParam)
		}
	}
	feat := make([]string, 0, ncol)
	for j, nm := range names {
		if j != target {
			feat = append(feat, nm)
		}
	}
	d := len(feat)
	if d == 0 {
		return nil, fmt.Errorf("%w: CSV header has no feature column", zonal.ErrEmpty)
	}
	if opts.MinCols > 0 && d < opts.MinCols {
		return nil, fmt.Errorf("%w: CSV has %d feature columns, want at least MinCols = %d", zonal.ErrRange, d, opts.MinCols)
	}
	if opts.MaxCols > 0 && d > opts.MaxCols {
		return nil, fmt.Errorf("%w: CSV has %d feature columns, want at most MaxCols = %d", zonal.ErrRange, d, opts.MaxCols)
	}

	var xs chunked[float64]
	var ys []float64
	n := 0
	pending := !hasHeader // rec holds the first data row, not yet stored
	for opts.MaxRows == 0 || n < opts.MaxRows {
		if !pending {
			line, ok := lr.next()
			if !ok {
				break
			}
			if isBlank(line) {
				continue
			}
			if rec, err = sp.split(line, lr.line); err != nil {
				return nil, err
			}
		}
		pending = false
		if len(rec) != ncol {
			return nil, lineErr(lr.line, nil, "row has %d fields, the header has %d", len(rec), ncol)
		}
		if n+1 > MaxDenseElements/d {
			return nil, lineErr(lr.line, zonal.ErrTooLarge, "more than MaxDenseElements = %d values", MaxDenseElements)
		}
		for j, f := range rec {
			v, st := parseNumber(f)
			if st != numOK && !(st == numNonFinite && opts.AllowNonFinite) {
				return nil, csvValueErr(lr.line, st, f, names[j])
			}
			if j == target {
				ys = append(ys, v)
			} else {
				xs.add(v)
			}
		}
		n++
	}
	if err := lr.error(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errEmpty(lr.line, "CSV input has a header but no data rows")
	}
	data := &Data{X: mat.NewDense(n, d, xs.slice())}
	if hasHeader {
		data.Names = feat
	}
	if target >= 0 {
		data.Y = ys
		if hasHeader {
			data.TargetName = names[target]
		}
	}
	return data, nil
}

// headerNames checks the header fields: one non-empty, distinct name per
// column, without control characters. It returns the names and their index.
func headerNames(rec [][]byte, headerLine int) ([]string, map[string]int, error) {
	names := make([]string, len(rec))
	seen := make(map[string]int, len(rec))
	for j, f := range rec {
		nm := string(f)
		if nm == "" {
			return nil, nil, lineErr(headerLine, nil, "header: column %d has an empty name", j)
		}
		if strings.ContainsFunc(nm, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, nil, lineErr(headerLine, nil, "header: column %d name %q holds a control character", j, nm)
		}
		if k, dup := seen[nm]; dup {
			return nil, nil, lineErr(headerLine, nil, "header: columns %d and %d are both named %q", k, j, nm)
		}
		seen[nm] = j
		names[j] = nm
	}
	return names, seen, nil
}

// allNumbers reports whether every field of rec reads as a number
// (NaN, Inf and out-of-range numbers included): a row of data, not a header.
func allNumbers(rec [][]byte) bool {
	for _, f := range rec {
		if _, st := parseNumber(f); st == numSyntax {
			return false
		}
	}
	return true
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// csvSplitter splits one CSV line into fields, reusing its buffers.
type csvSplitter struct {
	fields [][]byte
	buf    []byte // unescaped quoted fields
}

// split returns the fields of line, trimmed of surrounding spaces and tabs,
// with RFC 4180 quotes removed ("" inside quotes is one quote). A quoted
// field must close on the same line. The result is valid until the next call.
func (s *csvSplitter) split(line []byte, lineNo int) ([][]byte, error) {
	s.fields = s.fields[:0]
	s.buf = s.buf[:0]
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i < len(line) && line[i] == '"' {
			i++
			start := len(s.buf)
			closed := false
			for i < len(line) {
				c := line[i]
				i++
				if c == '"' {
					if i < len(line) && line[i] == '"' {
						s.buf = append(s.buf, '"')
						i++
						continue
					}
					closed = true
					break
				}
				s.buf = append(s.buf, c)
			}
			if !closed {
				return nil, lineErr(lineNo, nil, "field %d: unterminated quoted field (fields spanning lines are not supported)", len(s.fields)+1)
			}
			for i < len(line) && isSpace(line[i]) {
				i++
			}
			if i < len(line) && line[i] != ',' {
				return nil, lineErr(lineNo, nil, "field %d: unexpected %q after closing quote", len(s.fields)+1, line[i])
			}
			// If s.buf grows later, this field keeps the old array, whose
			// bytes are final.
			s.fields = append(s.fields, s.buf[start:len(s.buf):len(s.buf)])
		} else {
			j := i
			for j < len(line) && line[j] != ',' {
				if line[j] == '"' {
					return nil, lineErr(lineNo, nil, "field %d: quote inside an unquoted field", len(s.fields)+1)
				}
				j++
			}
			k := j
			for k > i && isSpace(line[k-1]) {
				k--
			}
			s.fields = append(s.fields, line[i:k:k])
			i = j
		}
		if i >= len(line) {
			return s.fields, nil
		}
		i++ // skip the comma; a trailing comma gives a final empty field
	}
}

func csvValueErr(line int, st numStatus, f []byte, column string) error {
	tok := quote(f)
	switch st {
	case numNonFinite:
		return lineErr(line, zonal.ErrNonFinite, "column %q is %s (NaN/Inf not allowed)", column, tok)
	case numOverflow:
		return lineErr(line, nil, "number %s in column %q is out of float64 range", tok, column)
	}
	if len(f) == 0 {
		return lineErr(line, nil, "empty value in column %q (missing values are not supported)", column)
	}
	return lineErr(line, nil, "bad number %s in column %q", tok, column)
}

// findTarget resolves Options.Target against the header. It returns -1 and
// the reason when there is no such column.
func findTarget(names []string, index map[string]int, target string) (int, string) {
	if target == "" {
		if j, ok := index["y"]; ok {
			return j, ""
		}
		return 0, ""
	}
	if j, ok := index[target]; ok {
		return j, ""
	}
	if !isDigits(target) {
		return -1, fmt.Sprintf("no column named %q (%s)", target, summarize(names))
	}
	if j, ok := parseIndex([]byte(target), len(names)-1); ok {
		return j, ""
	}
	return -1, fmt.Sprintf("target index %s is not below the column count %d", target, len(names))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func summarize(names []string) string {
	const show = 6
	if len(names) <= show {
		return "columns " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("columns %s, ... (%d in all)", strings.Join(names[:show], ", "), len(names))
}

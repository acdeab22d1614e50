package dataset

import (
	"bytes"
	"context"
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
	return readCSV(r, opts, defaultConfig())
}

func readCSV(r io.Reader, opts Options, cfg readConfig) (*Data, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	s, h, err := openCSV(context.Background(), r, opts, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.denseRows = cfg.dense / h.d
	var parts []*parsed
	n := 0
	for {
		p, err := s.take(context.Background())
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		if p.err != nil {
			return nil, p.err
		}
		if p.rows > 0 {
			parts = append(parts, p)
			n += p.rows
		}
	}
	if n == 0 {
		return nil, errEmpty(s.lines, "CSV input has a header but no data rows")
	}
	x := make([]float64, 0, n*h.d)
	var y []float64
	if h.target >= 0 {
		y = make([]float64, 0, n)
	}
	for k, p := range parts {
		x = append(x, p.x...)
		if y != nil {
			y = append(y, p.y...)
		}
		parts[k] = nil // each part is garbage once copied
	}
	return h.data(mat.NewDense(n, h.d, x), y), nil
}

// csvHeader is what the first line of a CSV says about its rows.
type csvHeader struct {
	names     []string // every column's name (the index without a header)
	feat      []string // the feature columns' names
	target    int      // the target column, -1 for none
	hasHeader bool
	ncol, d   int // columns, feature columns
}

// data returns the Data of rows x with targets y, named by the header.
func (h *csvHeader) data(x *mat.Dense, y []float64) *Data {
	data := &Data{X: x}
	if h.hasHeader {
		data.Names = h.feat
	}
	if h.target >= 0 {
		data.Y = y
		if h.hasHeader {
			data.TargetName = h.names[h.target]
		}
	}
	return data
}

// openCSV reads the first non-blank line of a CSV (the header, or the
// first data row of a headerless file), checks it against opts and starts
// the workers on the rows. The caller must close the stream.
func openCSV(ctx context.Context, r io.Reader, opts Options, cfg readConfig) (*stream, *csvHeader, error) {
	s, err := newStream(r, cfg, opts.MaxRows)
	if err != nil {
		return nil, nil, err
	}
	h, err := startCSV(ctx, s, opts)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, h, nil
}

// startCSV reads the header from s and starts the workers on the rows.
func startCSV(ctx context.Context, s *stream, opts Options) (*csvHeader, error) {
	rest, h, err := readCSVHeader(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	s.d = h.d
	s.start(rest, h.parser(s.cfg.limit, opts.AllowNonFinite))
	return h, nil
}

// readCSVHeader takes chunks from s until the first non-blank line and
// returns the chunk of the lines after it (from it, when it is a data row)
// and the header.
func readCSVHeader(ctx context.Context, s *stream, opts Options) (*chunk, *csvHeader, error) {
	var sp csvSplitter
	var rec [][]byte
	for {
		c, err := s.nextChunk(ctx)
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			return nil, nil, errEmpty(s.lines, "CSV input is empty (no header)")
		}
		found := -1
		var splitErr error
		start, lines, err := eachLine(c, s.cfg.limit, func(line []byte, rel int) bool {
			if isBlank(line) {
				return true
			}
			found = rel
			rec, splitErr = sp.split(line, c.line0+rel)
			return false
		})
		if err == nil {
			err = splitErr
		}
		if err != nil {
			return nil, nil, err
		}
		if found < 0 {
			s.lines = c.line0 + lines
			if c.err != nil {
				return nil, nil, c.err
			}
			s.putBuf(c.buf)
			continue
		}
		headerLine := c.line0 + found
		h, err := newCSVHeader(rec, headerLine, opts)
		if err != nil {
			return nil, nil, err
		}
		rest := &chunk{data: c.data[start:], line0: headerLine - 1, err: c.err, buf: c.buf}
		if h.hasHeader {
			end := len(rest.data)
			if i := bytes.IndexByte(rest.data, '\n'); i >= 0 {
				end = i + 1
			}
			rest.data, rest.line0 = rest.data[end:], headerLine
		}
		return rest, h, nil
	}
}

// newCSVHeader reads the first non-blank line rec (at line headerLine):
// the header, or a headerless file's first row, as opts.Header says.
func newCSVHeader(rec [][]byte, headerLine int, opts Options) (*csvHeader, error) {
	h := &csvHeader{hasHeader: opts.Header == "yes" || (opts.Header != "no" && !allNumbers(rec))}
	var seen map[string]int
	if h.hasHeader {
		var err error
		if h.names, seen, err = headerNames(rec, headerLine); err != nil {
			return nil, err
		}
	} else {
		// Columns are named by their 0-based index, so Target "3" means
		// the fourth column either way.
		h.names = make([]string, len(rec))
		seen = make(map[string]int, len(rec))
		for j := range h.names {
			h.names[j] = strconv.Itoa(j)
			seen[h.names[j]] = j
		}
	}
	h.ncol = len(h.names)
	h.target = -1
	if !opts.NoTarget && !(opts.TargetIfExtra && opts.MaxCols > 0 && h.ncol == opts.MaxCols) {
		var msg string
		h.target, msg = findTarget(h.names, seen, opts.Target)
		if opts.TargetOptional && (h.target < 0 || (opts.Target == "" && h.names[h.target] != "y")) {
			h.target = -1 // no target column: all features
		} else if h.target < 0 {
			return nil, fmt.Errorf("dataset: line %d (header): %s: %w", headerLine, msg, zonal.ErrParam)
		}
	}
	h.feat = make([]string, 0, h.ncol)
	for j, nm := range h.names {
		if j != h.target {
			h.feat = append(h.feat, nm)
		}
	}
	d := len(h.feat)
	h.d = d
	if d == 0 {
		return nil, fmt.Errorf("%w: CSV header has no feature column", zonal.ErrEmpty)
	}
	if opts.MinCols > 0 && d < opts.MinCols {
		return nil, fmt.Errorf("%w: CSV has %d feature columns, want at least MinCols = %d", zonal.ErrRange, d, opts.MinCols)
	}
	if opts.MaxCols > 0 && d > opts.MaxCols {
		return nil, fmt.Errorf("%w: CSV has %d feature columns, want at most MaxCols = %d", zonal.ErrRange, d, opts.MaxCols)
	}
	return h, nil
}

// parser returns the workers' parse function: the rows of a chunk, each
// with the header's column count, as d features (row-major) and targets.
func (h *csvHeader) parser(limit int, allowNonFinite bool) func(*chunk) *parsed {
	return func(c *chunk) *parsed {
		var sp csvSplitter
		// At most one row per line: the arrays never grow (no slack, no copy).
		most := bytes.Count(c.data, nl) + 1
		p := &parsed{line0: c.line0, x: make([]float64, 0, most*h.d), rowLine: make([]int32, 0, most)}
		if h.target >= 0 {
			p.y = make([]float64, 0, most)
		}
		_, lines, err := eachLine(c, limit, func(line []byte, rel int) bool {
			if isBlank(line) {
				return true
			}
			lineNo := c.line0 + rel
			// store parses field j, f, into the row; false on a bad value.
			store := func(j int, f []byte) bool {
				v, st := parseNumber(f)
				if st != numOK && !(st == numNonFinite && allowNonFinite) {
					p.err, p.errAtValues = csvValueErr(lineNo, st, f, h.names[j]), true
					p.x = p.x[:p.rows*h.d]
					if p.y != nil {
						p.y = p.y[:p.rows]
					}
					return false
				}
				if j == h.target {
					p.y = append(p.y, v)
				} else {
					p.x = append(p.x, v)
				}
				return true
			}
			if bytes.IndexByte(line, '"') < 0 {
				// No quotes (the usual line): the fields are the runs between
				// commas, trimmed, as split makes them, without copying them
				// into a field list first.
				if n := bytes.Count(line, comma) + 1; n != h.ncol {
					p.err = lineErr(lineNo, nil, "row has %d fields, the header has %d", n, h.ncol)
					return false
				}
				p.rowLine = append(p.rowLine, int32(rel))
				rest := line
				for j := range h.ncol {
					f := rest
					if i := bytes.IndexByte(rest, ','); i >= 0 {
						f, rest = rest[:i], rest[i+1:]
					}
					if !store(j, trimSpace(f)) {
						return false
					}
				}
				p.rows++
				return true
			}
			rec, err := sp.split(line, lineNo)
			if err != nil {
				p.err = err
				return false
			}
			if len(rec) != h.ncol {
				p.err = lineErr(lineNo, nil, "row has %d fields, the header has %d", len(rec), h.ncol)
				return false
			}
			p.rowLine = append(p.rowLine, int32(rel))
			for j, f := range rec {
				if !store(j, f) {
					return false
				}
			}
			p.rows++
			return true
		})
		p.lines = lines
		if p.err == nil {
			p.err = err
		}
		if p.err == nil {
			p.err = c.err
		}
		return p
	}
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

var comma = []byte{','}

// trimSpace removes the spaces and tabs around f.
func trimSpace(f []byte) []byte {
	i, k := 0, len(f)
	for i < k && isSpace(f[i]) {
		i++
	}
	for k > i && isSpace(f[k-1]) {
		k--
	}
	return f[i:k]
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

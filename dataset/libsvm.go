package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// ReadLIBSVM reads LIBSVM / SVMlight text from r (plain or gzip, detected
// by the magic bytes) into a Data with X (dense n x d), Y (labels) and
// Sparse (CSR, the entries as written).
//
// Format, one point per line:
//
//	<label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]
//
// Tokens are separated by spaces or tabs; "\r\n" line ends and a leading
// UTF-8 byte-order mark are accepted.
// The label and values are decimal floating-point numbers, parsed strictly
// (no hex, no underscores); NaN and Inf are errors unless
// opts.AllowNonFinite. Indices are 1-based decimal integers, strictly
// increasing within a line; index i is column i-1 of X. A line may have no
// features (an all-zero row). Blank lines and lines holding only a comment
// ("#" to the end of the line) are skipped but counted in line numbers. An
// SVMrank "qid:<int>" token directly after the label is accepted and ignored.
//
// The number of columns d is the highest index seen, raised to opts.MinCols.
// An index above opts.MaxCols (when set) is an error wrapping zonal.ErrRange, and
// above MaxIndex one wrapping zonal.ErrTooLarge, so a corrupt index such as
// 1000000000000 fails fast instead of allocating.
//
// Every malformed line gives a *ParseError naming the line and the problem
// (wrapping zonal.ErrFormat); input without data lines gives zonal.ErrEmpty.
func ReadLIBSVM(r io.Reader, opts Options) (*Data, error) {
	return readLIBSVM(r, opts, defaultConfig())
}

func readLIBSVM(r io.Reader, opts Options, cfg readConfig) (*Data, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	s, err := openLIBSVM(r, opts, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var parts []*parsed
	n, nnz, maxCol := 0, 0, 0
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
			nnz += len(p.col)
			maxCol = max(maxCol, p.maxCol)
		}
	}
	if n == 0 {
		return nil, errEmpty(s.lines, "LIBSVM input has no data lines")
	}
	d := max(maxCol, opts.MinCols)
	if d == 0 {
		return nil, fmt.Errorf("%w: LIBSVM input has %d rows but no feature (set MinCols)", zonal.ErrEmpty, n)
	}
	if !opts.NoDense && n > MaxDenseElements/d {
		return nil, fmt.Errorf("%w: dense %d x %d matrix exceeds MaxDenseElements = %d (use Options.NoDense)", zonal.ErrTooLarge, n, d, MaxDenseElements)
	}
	data := &Data{Y: make([]float64, 0, n)}
	if opts.NoSparse {
		// Dense only: scatter each part's entries, without first copying
		// them into whole-file CSR arrays.
		data.X = mat.NewDense(n, d, nil)
		i0 := 0
		for k, p := range parts {
			data.Y = append(data.Y, p.y...)
			p.scatter(data.X, i0)
			i0 += p.rows
			parts[k] = nil
		}
		return data, nil
	}
	m := &CSR{Rows: n, Cols: d, RowPtr: make([]int, 1, n+1), Col: make([]int, 0, nnz), Val: make([]float64, 0, nnz)}
	for k, p := range parts {
		data.Y = append(data.Y, p.y...)
		m.appendRows(p)
		parts[k] = nil
	}
	data.Sparse = m
	if !opts.NoDense {
		data.X = m.ToDense()
	}
	return data, nil
}

// openLIBSVM starts reading LIBSVM rows from r. The caller must close the
// stream.
func openLIBSVM(r io.Reader, opts Options, cfg readConfig) (*stream, error) {
	s, err := newStream(r, cfg, opts.MaxRows)
	if err != nil {
		return nil, err
	}
	limit := MaxIndex
	limitKind := zonal.ErrTooLarge
	if opts.MaxCols > 0 && opts.MaxCols < limit {
		limit = opts.MaxCols
		limitKind = zonal.ErrRange
	}
	s.start(nil, func(c *chunk) *parsed {
		lp := libsvmParser{allowNonFinite: opts.AllowNonFinite, limit: limit, limitKind: limitKind}
		// At most one row per line and one entry per colon: the arrays
		// never grow (no slack, no copy).
		most, colons := bytes.Count(c.data, nl)+1, bytes.Count(c.data, colon)
		lp.rowPtr = append(make([]int, 0, most+1), 0)
		lp.y = make([]float64, 0, most)
		lp.col = make([]int, 0, colons)
		lp.val = make([]float64, 0, colons)
		p := &parsed{line0: c.line0, rowLine: make([]int32, 0, most)}
		_, lines, err := eachLine(c, cfg.limit, func(line []byte, rel int) bool {
			rows := len(lp.y)
			if p.err = lp.parseLine(line, c.line0+rel); p.err != nil {
				return false
			}
			if len(lp.y) > rows {
				p.rowLine = append(p.rowLine, int32(rel))
			}
			return true
		})
		p.rows, p.lines = len(lp.y), lines
		nnz := lp.rowPtr[p.rows] // without the entries of a line that failed
		lp.col, lp.val = lp.col[:nnz], lp.val[:nnz]
		p.y, p.rowPtr, p.col, p.val, p.maxCol = lp.y, lp.rowPtr, lp.col, lp.val, lp.maxIdx
		if p.err == nil {
			p.err = err
		}
		if p.err == nil {
			p.err = c.err
		}
		return p
	})
	return s, nil
}

var colon = []byte{':'}

// appendRows appends the rows of p (from a LIBSVM chunk) to m's arrays.
func (m *CSR) appendRows(p *parsed) {
	off := len(m.Col)
	for _, e := range p.rowPtr[1 : p.rows+1] {
		m.RowPtr = append(m.RowPtr, off+e)
	}
	m.Col = append(m.Col, p.col...)
	m.Val = append(m.Val, p.val...)
}

// scatter writes the entries of p's rows into rows i0, i0+1, ... of x.
func (p *parsed) scatter(x *mat.Dense, i0 int) {
	raw := x.RawMatrix()
	for i := range p.rows {
		row := raw.Data[(i0+i)*raw.Stride:]
		for k := p.rowPtr[i]; k < p.rowPtr[i+1]; k++ {
			row[p.col[k]] = p.val[k]
		}
	}
}

// libsvmParser parses LIBSVM lines into CSR arrays (rowPtr starts at 0).
type libsvmParser struct {
	allowNonFinite bool
	limit          int
	limitKind      error
	maxIdx         int
	rowPtr         []int
	col            []int
	val            []float64
	y              []float64
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// nextToken returns the token starting at or after position i and the
// position after it.
func nextToken(line []byte, i int) (tok []byte, next int) {
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	j := i
	for j < len(line) && !isSpace(line[j]) {
		j++
	}
	return line[i:j], j
}

// number parses a label (idx == 0) or the value at feature index idx.
func (p *libsvmParser) number(tok []byte, idx int, lineNo int) (float64, error) {
	v, st := parseNumber(tok)
	if st == numOK {
		return v, nil
	}
	what := "the label"
	if idx > 0 {
		what = fmt.Sprintf("the value at index %d", idx)
	}
	switch st {
	case numSyntax:
		return 0, lineErr(lineNo, nil, "bad number %s for %s", quote(tok), what)
	case numOverflow:
		return 0, lineErr(lineNo, nil, "number %s for %s is out of float64 range", quote(tok), what)
	case numNonFinite:
		if !p.allowNonFinite {
			return 0, lineErr(lineNo, zonal.ErrNonFinite, "%s is %s (NaN/Inf not allowed)", what, quote(tok))
		}
	}
	return v, nil
}

func (p *libsvmParser) parseLine(line []byte, lineNo int) error {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	tok, pos := nextToken(line, 0)
	if len(tok) == 0 {
		return nil // blank or comment line
	}
	label, err := p.number(tok, 0, lineNo)
	if err != nil {
		return err
	}
	prev := 0
	first := true
	for {
		tok, pos = nextToken(line, pos)
		if len(tok) == 0 {
			break
		}
		colon := bytes.IndexByte(tok, ':')
		if colon < 0 {
			return lineErr(lineNo, nil, "token %s is not index:value", quote(tok))
		}
		idxTok, valTok := tok[:colon], tok[colon+1:]
		if first && string(idxTok) == "qid" {
			first = false
			if _, ok := parseIndex(valTok, 1<<62); !ok {
				return lineErr(lineNo, nil, "bad qid %s", quote(tok))
			}
			continue
		}
		first = false
		idx, ok := parseIndex(idxTok, p.limit)
		if !ok {
			if idx < 0 { // digits only, but above the limit
				if p.limitKind == zonal.ErrRange {
					return lineErr(lineNo, zonal.ErrRange, "index %s in %s exceeds MaxCols = %d", quote(idxTok), quote(tok), p.limit)
				}
				return lineErr(lineNo, zonal.ErrTooLarge, "index %s in %s exceeds the limit MaxIndex = %d", quote(idxTok), quote(tok), p.limit)
			}
			return lineErr(lineNo, nil, "bad index %s in %s (want a positive decimal integer)", quote(idxTok), quote(tok))
		}
		if idx == 0 {
			return lineErr(lineNo, nil, "index 0 in %s (indices are 1-based)", quote(tok))
		}
		if idx <= prev {
			return lineErr(lineNo, nil, "index %d in %s does not increase (previous index %d)", idx, quote(tok), prev)
		}
		prev = idx
		v, err := p.number(valTok, idx, lineNo)
		if err != nil {
			return err
		}
		p.col = append(p.col, idx-1)
		p.val = append(p.val, v)
	}
	if prev > p.maxIdx {
		p.maxIdx = prev
	}
	p.y = append(p.y, label)
	p.rowPtr = append(p.rowPtr, len(p.col))
	return nil
}

// parseIndex parses a non-empty run of decimal digits no larger than limit.
// ok is false for a bad token; then idx is -1 if the token is all digits but
// exceeds limit, 0 otherwise.
func parseIndex(b []byte, limit int) (idx int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	for _, c := range b {
		dig := int(c - '0')
		if idx > limit/10 || idx*10 > limit-dig { // idx*10 + dig > limit, without overflow
			return -1, false
		}
		idx = idx*10 + dig
	}
	return idx, true
}

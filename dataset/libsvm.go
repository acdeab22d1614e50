package dataset

import (
	"bytes"
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
	if err := opts.check(); err != nil {
		return nil, err
	}
	lr, err := newLineReader(r)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	limit := MaxIndex
	limitKind := zonal.ErrTooLarge
	if opts.MaxCols > 0 && opts.MaxCols < limit {
		limit = opts.MaxCols
		limitKind = zonal.ErrRange
	}
	p := libsvmParser{allowNonFinite: opts.AllowNonFinite, limit: limit, limitKind: limitKind}
	p.rowPtr = append(p.rowPtr, 0)
	for {
		if opts.MaxRows > 0 && len(p.y) >= opts.MaxRows {
			break
		}
		line, ok := lr.next()
		if !ok {
			break
		}
		if err := p.parseLine(line, lr.line); err != nil {
			return nil, err
		}
	}
	if err := lr.error(); err != nil {
		return nil, err
	}
	n := len(p.y)
	if n == 0 {
		return nil, errEmpty(lr.line, "LIBSVM input has no data lines")
	}
	d := max(p.maxIdx, opts.MinCols)
	if d == 0 {
		return nil, fmt.Errorf("%w: LIBSVM input has %d rows but no feature (set MinCols)", zonal.ErrEmpty, n)
	}
	data := &Data{Y: p.y}
	if !opts.NoDense {
		if n > MaxDenseElements/d {
			return nil, fmt.Errorf("%w: dense %d x %d matrix exceeds MaxDenseElements = %d (use Options.NoDense)", zonal.ErrTooLarge, n, d, MaxDenseElements)
		}
	}
	if !opts.NoSparse {
		data.Sparse = &CSR{Rows: n, Cols: d, RowPtr: p.rowPtr, Col: p.col.slice(), Val: p.val.slice()}
		if !opts.NoDense {
			data.X = data.Sparse.ToDense()
		}
		return data, nil
	}
	// Dense only: scatter the entries block by block, without first
	// copying them into contiguous CSR arrays.
	data.X = mat.NewDense(n, d, nil)
	raw := data.X.RawMatrix()
	cols, vals := p.col.blocks(), p.val.blocks()
	i, pos := 0, 0
	for b, cb := range cols {
		vb := vals[b]
		for t, j := range cb {
			for pos >= p.rowPtr[i+1] {
				i++
			}
			raw.Data[i*raw.Stride+j] = vb[t]
			pos++
		}
	}
	return data, nil
}

type libsvmParser struct {
	allowNonFinite bool
	limit          int
	limitKind      error
	maxIdx         int
	rowPtr         []int
	col            chunked[int]
	val            chunked[float64]
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
		p.col.add(idx - 1)
		p.val.add(v)
	}
	if prev > p.maxIdx {
		p.maxIdx = prev
	}
	p.y = append(p.y, label)
	p.rowPtr = append(p.rowPtr, p.col.len())
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

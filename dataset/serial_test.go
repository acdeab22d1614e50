package dataset

// The serial readers as they were before the parallel ones: one goroutine
// reads lines (lineReader, with gzip decompression ahead in a second one)
// and parses them in order. Tests compare the parallel readers to them.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// lineReader yields the lines of a plain or gzip input, without the line
// terminator ("\n" or "\r\n"), and counts them.
type lineReader struct {
	br    *bufio.Reader
	gz    bool   // input is gzip-compressed
	line  int    // number of the line last returned (1-based)
	long  []byte // buffer for lines longer than br's buffer
	err   error  // sticky error
	atEOF bool
	stop  func() // ends the decompression goroutine, if any
	limit int    // longest line accepted (MaxLineBytes; smaller in tests)
}

// newLineReader starts reading r. The caller must call close when done
// (it stops the decompression goroutine of a gzip input).
func newLineReader(r io.Reader) (*lineReader, error) {
	br := bufio.NewReaderSize(r, readBufSize)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("dataset: reading input: %w", err)
	}
	if !bytes.Equal(head, gzipMagic) {
		return &lineReader{br: br, limit: MaxLineBytes}, nil
	}
	// gzip (multi-member streams, as pigz writes, are read to the end).
	// Decompression runs in its own goroutine, overlapping with parsing.
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, &ParseError{Line: 1, Msg: "bad gzip header", Err: err}
	}
	ra := newReadAhead(zr)
	return &lineReader{br: bufio.NewReaderSize(ra, readBufSize), gz: true, stop: ra.close, limit: MaxLineBytes}, nil
}

// close releases the reader's resources; it returns once no goroutine
// reads the input any more.
func (lr *lineReader) close() {
	if lr.stop != nil {
		lr.stop()
		lr.stop = nil
	}
}

// readAhead reads its source in a separate goroutine into a few buffers,
// so that decompression and parsing run on two cores.
type readAhead struct {
	full chan []byte   // filled buffers, in order; closed at the end
	free chan []byte   // buffers to refill
	done chan struct{} // closed by close
	wait chan struct{} // closed when the goroutine has returned
	err  error         // the source's final error, set before full is closed
	cur  []byte        // unread part of the buffer being consumed
	last []byte        // buffer being consumed, to recycle
}

const (
	readAheadBufs = 4
	readAheadSize = 1 << 18
)

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{
		full: make(chan []byte, readAheadBufs),
		free: make(chan []byte, readAheadBufs),
		done: make(chan struct{}),
		wait: make(chan struct{}),
	}
	for range readAheadBufs {
		ra.free <- make([]byte, readAheadSize)
	}
	go ra.fill(src)
	return ra
}

func (ra *readAhead) fill(src io.Reader) {
	defer close(ra.wait)
	defer close(ra.full)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		buf = buf[:cap(buf)]
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = src.Read(buf[n:])
			n += k
		}
		if n > 0 {
			select {
			case ra.full <- buf[:n]:
			case <-ra.done:
				return
			}
		}
		if err != nil {
			ra.err = err // io.EOF at the end, or the source's error verbatim
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.last != nil {
			ra.free <- ra.last // never blocks: free holds every buffer
			ra.last = nil
		}
		b, ok := <-ra.full
		if !ok {
			return 0, ra.err
		}
		ra.cur, ra.last = b, b
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// close stops the goroutine and waits for it, so the source is not read
// after the reader function returns.
func (ra *readAhead) close() {
	close(ra.done)
	<-ra.wait
}

// next returns the next line, or ok == false at the end of the input or on
// an error (then err() is non-nil). The returned slice is valid only until
// the next call.
func (lr *lineReader) next() (line []byte, ok bool) {
	if lr.err != nil || lr.atEOF {
		return nil, false
	}
	b, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, b...)
			if len(lr.long) > lr.limit {
				lr.err = &ParseError{Line: lr.line + 1, Kind: zonal.ErrTooLarge,
					Msg: fmt.Sprintf("line longer than %d bytes", lr.limit)}
				return nil, false
			}
		}
		b = lr.long
	}
	if err != nil {
		if err != io.EOF {
			pe := &ParseError{Line: lr.line + 1, Msg: "gzip stream is corrupt", Err: err}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				pe.Msg = "gzip stream ends early (truncated file)"
			}
			if !lr.gz {
				// A plain reader's failure is not a format problem: report it
				// as the underlying error with the line for context.
				lr.err = fmt.Errorf("dataset: line %d: read error: %w", lr.line+1, err)
			} else {
				lr.err = pe
			}
			return nil, false
		}
		lr.atEOF = true
		if len(b) == 0 {
			return nil, false
		}
	}
	lr.line++
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM) // as spreadsheet programs write
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, true
}

func (lr *lineReader) error() error { return lr.err }

func readCSVSerial(r io.Reader, opts Options) (*Data, error) {
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

func readLIBSVMSerial(r io.Reader, opts Options) (*Data, error) {
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
	data.Sparse = &CSR{Rows: n, Cols: d, RowPtr: p.rowPtr, Col: p.col, Val: p.val}
	if !opts.NoDense {
		data.X = data.Sparse.ToDense()
	}
	if opts.NoSparse {
		data.Sparse = nil
	}
	return data, nil
}

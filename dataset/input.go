package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/zonal-ml/zonal"
)

// Fixed safety limits. They keep a broken or hostile file from making the
// readers allocate absurd amounts of memory; exceeding one is an error
// wrapping zonal.ErrTooLarge.
const (
	// MaxIndex is the largest LIBSVM feature index accepted (2^24 = 16777216
	// columns), whatever Options.MaxCols says.
	MaxIndex = 1 << 24
	// MaxDenseElements bounds rows*cols of the dense X a reader allocates
	// (2^28 float64 = 2 GiB). Set Options.NoDense to read wider data as CSR only.
	MaxDenseElements = 1 << 28
	// MaxLineBytes bounds the length of one input line (64 MiB).
	MaxLineBytes = 1 << 26
)

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// utf8BOM is the byte-order mark some programs put before UTF-8 text; it
// is skipped at the start of the input.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

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

const readBufSize = 1 << 16

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

// errEmpty builds the error for an input without data rows.
func errEmpty(lines int, what string) error {
	return fmt.Errorf("%w: %s (%d lines read)", zonal.ErrEmpty, what, lines)
}

package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
)

// Fixed safety limits. They keep a broken or hostile file from making the
// readers allocate absurd amounts of memory; exceeding one is an error
// wrapping ErrTooLarge.
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

// lineReader yields the lines of a plain or gzip input, without the line
// terminator ("\n" or "\r\n"), and counts them.
type lineReader struct {
	br    *bufio.Reader
	gz    bool   // input is gzip-compressed
	line  int    // number of the line last returned (1-based)
	long  []byte // buffer for lines longer than br's buffer
	err   error  // sticky error
	atEOF bool
}

const readBufSize = 1 << 16

func newLineReader(r io.Reader) (*lineReader, error) {
	br, gz, err := openInput(r)
	if err != nil {
		return nil, err
	}
	return &lineReader{br: br, gz: gz}, nil
}

// openInput returns a buffered reader of r's content, decompressed when it
// starts with the gzip magic bytes (multi-member streams, as written by
// pigz, are read to the end).
func openInput(r io.Reader) (br *bufio.Reader, gz bool, err error) {
	br = bufio.NewReaderSize(r, readBufSize)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, false, fmt.Errorf("dataset: reading input: %w", err)
	}
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, &ParseError{Line: 1, Msg: "bad gzip header", Err: err}
		}
		return bufio.NewReaderSize(zr, readBufSize), true, nil
	}
	return br, false, nil
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
			if len(lr.long) > MaxLineBytes {
				lr.err = &ParseError{Line: lr.line + 1, Kind: ErrTooLarge,
					Msg: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)}
				return nil, false
			}
		}
		b = lr.long
	}
	if err != nil {
		if err != io.EOF {
			pe := &ParseError{Line: lr.line + 1, Msg: "read error", Err: err}
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
	return fmt.Errorf("%w: %s (%d lines read)", ErrEmpty, what, lines)
}

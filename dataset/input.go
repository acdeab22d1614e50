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

// openInput returns the text of r: r itself, or its decompressed content
// when it starts with the gzip magic bytes (multi-member streams, as pigz
// writes, are read to the end). gz tells which.
func openInput(r io.Reader) (src io.Reader, gz bool, err error) {
	br := bufio.NewReaderSize(r, readBufSize)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, false, fmt.Errorf("dataset: reading input: %w", err)
	}
	if !bytes.Equal(head, gzipMagic) {
		return br, false, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, false, &ParseError{Line: 1, Msg: "bad gzip header", Err: err}
	}
	return zr, true, nil
}

// inputError turns the error of reading the input (other than io.EOF) into
// the reader's error for line lineNo, the line being read when it happened.
func inputError(err error, gz bool, lineNo int) error {
	if !gz {
		// A plain reader's failure is not a format problem: report it as
		// the underlying error with the line for context.
		return fmt.Errorf("dataset: line %d: read error: %w", lineNo, err)
	}
	pe := &ParseError{Line: lineNo, Msg: "gzip stream is corrupt", Err: err}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		pe.Msg = "gzip stream ends early (truncated file)"
	}
	return pe
}

const readBufSize = 1 << 16

// errEmpty builds the error for an input without data rows.
func errEmpty(lines int, what string) error {
	return fmt.Errorf("%w: %s (%d lines read)", zonal.ErrEmpty, what, lines)
}

package dataset

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// DefaultBlockRows is the block size of NewBlockReader when rows <= 0:
// large enough that per-block costs (a prediction call, a matrix
// allocation) are small against the rows' work, small enough that a block
// of a few hundred columns is a few MiB.
const DefaultBlockRows = 4096

// BlockReader reads a CSV or LIBSVM input in blocks of rows, for inputs
// larger than memory: its memory use depends on the block size and the
// row width, not on the input size. It parses as ReadCSV and ReadLIBSVM
// (the same pipeline, the same errors with the same line numbers, the same
// values) and hands the rows out in input order.
//
// Every block has the column count of the first: a CSV's header (or first
// row) fixes it; for LIBSVM it is the highest index in the first block,
// raised to Options.MinCols, and an index above it in a later block is an
// error wrapping zonal.ErrRange naming the line. With MinCols = MaxCols =
// d (input for a model of d features) every block simply has d columns.
//
// Options apply as to the whole-file readers, except that MaxDenseElements
// bounds one block, not the input: the block size is lowered so that a
// block's dense matrix stays below it.
//
// A BlockReader is not safe for concurrent use.
type BlockReader struct {
	r      io.Reader
	rows   int
	opts   Options
	cfg    readConfig
	libsvm bool

	s       *stream
	h       *csvHeader // CSV only
	cols    int        // columns of every block (LIBSVM: set by the first)
	cur     *parsed    // the chunk being handed out
	pos     int        // rows of cur already handed out
	n       int        // rows handed out
	err     error      // sticky: an error, or io.EOF
	started bool
}

// NewBlockReader returns a reader of r in blocks of up to rows rows
// (DefaultBlockRows when rows <= 0). opts.Format ("csv" or "libsvm") says
// the format; gzip is detected from the content. Nothing is read before
// the first call to Next. Call Close when done.
func NewBlockReader(r io.Reader, rows int, opts Options) (*BlockReader, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	b := &BlockReader{r: r, rows: rows, opts: opts, cfg: defaultConfig()}
	if b.rows <= 0 {
		b.rows = DefaultBlockRows
	}
	switch strings.ToLower(opts.Format) {
	case "csv":
	case "libsvm", "svm":
		b.libsvm = true
	default:
		return nil, fmt.Errorf("%w: NewBlockReader: Options.Format %q (want csv or libsvm)", zonal.ErrParam, opts.Format)
	}
	return b, nil
}

// Close stops the reader's goroutines; it returns once none reads r any
// more.
func (b *BlockReader) Close() {
	if b.s != nil {
		b.s.close()
	}
	if b.err == nil {
		b.err = fmt.Errorf("%w: BlockReader is closed", zonal.ErrParam)
	}
}

// Next returns the next block of rows: X (dense; for LIBSVM unless
// Options.NoDense), Sparse (LIBSVM, unless Options.NoSparse), Y (nil for a
// CSV without target) and, for a CSV with a header, Names and TargetName.
// It returns io.EOF after the last block, and the errors of ReadCSV and
// ReadLIBSVM otherwise (the first call: an empty input wraps
// zonal.ErrEmpty); once it has returned an error it returns it again. The
// rows before an erroneous line are handed out in the blocks before the
// error. When ctx is cancelled Next returns ctx's error.
func (b *BlockReader) Next(ctx context.Context) (*Data, error) {
	if b.err != nil {
		return nil, b.err
	}
	if !b.started {
		if err := b.start(ctx); err != nil {
			b.err = err
			return nil, err
		}
	}
	type span struct {
		p        *parsed
		from, to int
	}
	var spans []span
	got := 0
	var after error // the error that follows the rows collected
	for got < b.rows && after == nil {
		if b.cur == nil || b.pos == b.cur.rows {
			if b.cur != nil && b.cur.err != nil {
				after = b.cur.err
				break
			}
			p, err := b.s.take(ctx)
			if err != nil {
				return nil, err
			}
			if p == nil {
				after = io.EOF
				break
			}
			b.cur, b.pos = p, 0
			continue
		}
		k := min(b.rows-got, b.cur.rows-b.pos)
		if b.libsvm && b.cols > 0 {
			if bad, err := b.checkCols(b.cur, b.pos, b.pos+k); err != nil {
				k, after = bad-b.pos, err
			}
		}
		spans = append(spans, span{b.cur, b.pos, b.pos + k})
		b.pos += k
		got += k
	}
	if got == 0 {
		if after == io.EOF && b.n == 0 {
			if b.libsvm {
				after = errEmpty(b.s.lines, "LIBSVM input has no data lines")
			} else {
				after = errEmpty(b.s.lines, "CSV input has a header but no data rows")
			}
		}
		b.err = after
		return nil, after
	}
	if after != nil && after != io.EOF {
		b.err = after // after the rows of this block
	}
	b.n += got
	if !b.libsvm {
		d := b.h.d
		x := make([]float64, 0, got*d)
		var y []float64
		if b.h.target >= 0 {
			y = make([]float64, 0, got)
		}
		for _, sp := range spans {
			x = append(x, sp.p.x[sp.from*d:sp.to*d]...)
			if y != nil {
				y = append(y, sp.p.y[sp.from:sp.to]...)
			}
		}
		return b.h.data(mat.NewDense(got, d, x), y), nil
	}
	if b.cols == 0 {
		for _, sp := range spans {
			for i := sp.from; i < sp.to; i++ {
				if lo, hi := sp.p.rowPtr[i], sp.p.rowPtr[i+1]; hi > lo {
					b.cols = max(b.cols, sp.p.col[hi-1]+1)
				}
			}
		}
		b.cols = max(b.cols, b.opts.MinCols)
		if b.cols == 0 {
			b.err = fmt.Errorf("%w: LIBSVM input has %d rows but no feature (set MinCols)", zonal.ErrEmpty, got)
			return nil, b.err
		}
		if !b.opts.NoDense {
			b.rows = max(1, min(b.rows, MaxDenseElements/b.cols))
		}
	}
	m := &CSR{Rows: got, Cols: b.cols, RowPtr: make([]int, 1, got+1)}
	data := &Data{Y: make([]float64, 0, got)}
	for _, sp := range spans {
		p := sp.p
		lo, hi := p.rowPtr[sp.from], p.rowPtr[sp.to]
		off := len(m.Col) - lo
		for _, e := range p.rowPtr[sp.from+1 : sp.to+1] {
			m.RowPtr = append(m.RowPtr, off+e)
		}
		m.Col = append(m.Col, p.col[lo:hi]...)
		m.Val = append(m.Val, p.val[lo:hi]...)
		data.Y = append(data.Y, p.y[sp.from:sp.to]...)
	}
	if !b.opts.NoDense {
		data.X = m.ToDense()
	}
	if !b.opts.NoSparse {
		data.Sparse = m
	}
	return data, nil
}

// start opens the input: the CSV header, or the LIBSVM pipeline.
func (b *BlockReader) start(ctx context.Context) error {
	b.started = true
	var err error
	if b.libsvm {
		b.s, err = openLIBSVM(b.r, b.opts, b.cfg)
		return err
	}
	if b.s, err = newStream(b.r, b.cfg, b.opts.MaxRows); err != nil {
		return err
	}
	// On an error (a cancelled ctx among them) the stream is left to Close,
	// which waits for a splitter blocked in reading the input.
	if b.h, err = startCSV(ctx, b.s, b.opts); err != nil {
		return err
	}
	b.rows = max(1, min(b.rows, MaxDenseElements/b.h.d))
	return nil
}

// checkCols returns the first of rows [from, to) of p with a column beyond
// b.cols, and its error; to, nil when there is none.
func (b *BlockReader) checkCols(p *parsed, from, to int) (int, error) {
	for i := from; i < to; i++ {
		if lo, hi := p.rowPtr[i], p.rowPtr[i+1]; hi > lo && p.col[hi-1] >= b.cols {
			return i, lineErr(p.line0+int(p.rowLine[i]), zonal.ErrRange, "index %d exceeds the %d columns of the first block", p.col[hi-1]+1, b.cols)
		}
	}
	return to, nil
}

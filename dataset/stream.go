package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/zonal-ml/zonal"
)

// The readers run as a pipeline of goroutines:
//
//   - a splitter reads the input (and decompresses it, for gzip) into large
//     chunks of whole lines, counting the lines before each chunk;
//   - GOMAXPROCS workers parse chunks independently into rows (a chunk's
//     parse needs nothing from the chunks before it: no row spans a line
//     break);
//   - the caller takes the parsed chunks in input order and applies what
//     depends on the rows before: MaxRows, the dense size limit, the first
//     error in line order.
//
// A CSV header is read by the caller from the first chunk before the
// workers start, since parsing the rows needs its column count.
//
// Only a bounded number of chunks is in flight (read, being parsed, or
// parsed and waiting), so memory beyond the rows returned is a few chunks
// per worker whatever the input size.

// readConfig holds the pipeline's sizes; tests shrink them to put chunk
// boundaries everywhere.
type readConfig struct {
	chunk   int // bytes read per chunk (a longer line makes a longer chunk)
	limit   int // longest line accepted (MaxLineBytes)
	workers int // parsing goroutines (GOMAXPROCS)
	dense   int // largest dense matrix in elements (MaxDenseElements)
}

// defaultChunk is large enough that per-chunk overhead (a channel hand-off,
// a goroutine switch, slices of results) is negligible against parsing it,
// and small enough that a few per worker stay in the caches' neighbourhood
// and cost little memory.
const defaultChunk = 1 << 20

func defaultConfig() readConfig {
	return readConfig{chunk: defaultChunk, limit: MaxLineBytes, workers: runtime.GOMAXPROCS(0), dense: MaxDenseElements}
}

// chunk is a run of whole lines of the input: every line of data ends in
// '\n' except, at the end of the input, the last. err, if not nil, is an
// input error (read, gzip, over-long line) that follows the lines of data.
type chunk struct {
	data  []byte
	line0 int // lines of the input before this chunk
	err   error
	buf   []byte // the buffer data lies in, recycled after parsing
}

// parsed is the result of parsing one chunk: rows rows, then possibly an
// error at the line after them.
type parsed struct {
	rows    int
	rowLine []int32 // line of each row, relative to line0 (1 = first line of the chunk)
	line0   int
	lines   int // lines in the chunk

	// CSV: rows*d feature values, row-major, and the targets (nil without
	// a target column).
	x []float64
	y []float64 // also the LIBSVM labels

	// LIBSVM: the rows in CSR form, rowPtr from 0; maxCol is one more than
	// the largest column present (the largest 1-based index).
	rowPtr []int
	col    []int
	val    []float64
	maxCol int

	err         error
	errAtValues bool // err is about a CSV value (the row's fields were counted)
}

// truncate keeps the first k rows (k <= rows).
func (p *parsed) truncate(k, d int) {
	p.rows = k
	p.rowLine = p.rowLine[:k]
	if p.x != nil {
		p.x = p.x[:k*d]
	}
	if p.y != nil {
		p.y = p.y[:k]
	}
	if p.rowPtr != nil {
		p.rowPtr = p.rowPtr[:k+1]
		p.col, p.val = p.col[:p.rowPtr[k]], p.val[:p.rowPtr[k]]
		p.maxCol = 0
		for i := range k {
			if lo, hi := p.rowPtr[i], p.rowPtr[i+1]; hi > lo {
				p.maxCol = max(p.maxCol, p.col[hi-1]+1)
			}
		}
	}
}

// job is one chunk handed to the workers; ready is closed when res is set.
type job struct {
	c     *chunk
	res   *parsed
	ready chan struct{}
}

// stream is the pipeline over one input.
type stream struct {
	cfg    readConfig
	gz     bool
	chunks chan *chunk    // splitter -> dispatcher (or the header reader)
	jobs   chan *job      // dispatcher -> workers
	order  chan *job      // dispatcher -> caller, in input order
	free   chan []byte    // recycled chunk buffers
	done   chan struct{}  // closed by close: every goroutine returns
	wg     sync.WaitGroup // the splitter, dispatcher and workers
	closed bool

	maxRows   int // MaxRows, 0 for no limit
	denseRows int // rows allowed by MaxDenseElements (CSV), -1 for no limit
	d         int // values per row in parsed.x (CSV)

	n        int  // rows taken so far
	lines    int  // lines of the input consumed so far
	finished bool // MaxRows reached: the rest of the input is not read
}

// newStream starts the splitter on r (plain or gzip); start then starts the
// parsing. Nothing is read from r in the caller's goroutine, so that a
// cancelled context ends the wait for a silent input.
func newStream(r io.Reader, cfg readConfig, maxRows int) (*stream, error) {
	inflight := 2*cfg.workers + 2
	s := &stream{
		cfg:       cfg,
		chunks:    make(chan *chunk, 2),
		jobs:      make(chan *job, inflight),
		order:     make(chan *job, inflight),
		free:      make(chan []byte, inflight+4),
		done:      make(chan struct{}),
		maxRows:   maxRows,
		denseRows: -1,
	}
	s.wg.Add(1)
	go s.split(r)
	return s, nil
}

// close stops the pipeline and returns once no goroutine reads the input
// any more (a splitter blocked in the input's Read is waited for).
func (s *stream) close() {
	if s.closed {
		return
	}
	s.closed = true
	close(s.done)
	s.wg.Wait()
}

func (s *stream) getBuf(size int) []byte {
	if size <= s.cfg.chunk {
		select {
		case b := <-s.free:
			return b[:s.cfg.chunk]
		default:
		}
		size = s.cfg.chunk
	}
	return make([]byte, size)
}

func (s *stream) putBuf(b []byte) {
	if cap(b) != s.cfg.chunk {
		return // a grown buffer for a long line: left to the collector
	}
	select {
	case s.free <- b:
	default:
	}
}

// split opens the input, reads it into chunks of whole lines and sends
// them, in order, on s.chunks, which it closes at the end. An error
// opening it is the first chunk's.
func (s *stream) split(r io.Reader) {
	defer s.wg.Done()
	defer close(s.chunks)
	emit := func(c *chunk) bool {
		select {
		case s.chunks <- c:
			return true
		case <-s.done:
			return false
		}
	}
	src, gz, err := openInput(r)
	if err != nil {
		emit(&chunk{err: err})
		return
	}
	s.gz = gz
	buf := s.getBuf(s.cfg.chunk)
	n, line0 := 0, 0
	first := true
	for {
		var err error
		for n < len(buf) && err == nil {
			select {
			case <-s.done: // closed: read no more
				return
			default:
			}
			var k int
			k, err = src.Read(buf[n:])
			n += k
		}
		// The byte-order mark is looked for once the buffer holds more than
		// a prefix of it (a one-byte chunk grows until then).
		if first && (n >= len(utf8BOM) || err != nil || !bytes.HasPrefix(utf8BOM, buf[:n])) {
			first = false
			if bytes.HasPrefix(buf[:n], utf8BOM) { // as spreadsheet programs write
				n = copy(buf, buf[len(utf8BOM):n])
			}
		}
		if err == io.EOF {
			if n > 0 { // the worker checks the length of every line, the last one too
				emit(&chunk{data: buf[:n], line0: line0, buf: buf})
			}
			return
		}
		cut := bytes.LastIndexByte(buf[:n], '\n') + 1
		if err != nil {
			lineNo := line0 + bytes.Count(buf[:cut], nl) + 1
			if n-cut > s.cfg.limit {
				err = errLongLine(lineNo, s.cfg.limit)
			} else {
				err = inputError(err, s.gz, lineNo)
			}
			emit(&chunk{data: buf[:cut], line0: line0, err: err, buf: buf})
			return
		}
		if cut == 0 {
			// One partial line fills the buffer: grow it, up to one byte
			// more than the limit, which tells a line over the limit.
			if len(buf) > s.cfg.limit {
				emit(&chunk{line0: line0, err: errLongLine(line0+1, s.cfg.limit)})
				return
			}
			nb := make([]byte, min(2*len(buf), s.cfg.limit+1))
			copy(nb, buf[:n])
			buf = nb
			continue
		}
		next := s.getBuf(max(s.cfg.chunk, 2*(n-cut)))
		rest := copy(next, buf[cut:n])
		c := &chunk{data: buf[:cut], line0: line0, buf: buf}
		line0 += bytes.Count(buf[:cut], nl)
		if !emit(c) {
			return
		}
		buf, n = next, rest
	}
}

var nl = []byte{'\n'}

func errLongLine(lineNo, limit int) error {
	return &ParseError{Line: lineNo, Kind: zonal.ErrTooLarge, Msg: fmt.Sprintf("line longer than %d bytes", limit)}
}

// eachLine calls f with every line of c.data, without its terminator
// ("\n" or "\r\n"), and its number relative to c.line0 (from 1); it stops
// when f returns false. A line over limit bytes (terminator included)
// stops it with that error, at that line. It returns the offset in c.data
// of the line where it stopped (len(c.data) if none), the number of lines
// seen and the error.
func eachLine(c *chunk, limit int, f func(line []byte, rel int) bool) (stop, lines int, err error) {
	data := c.data
	pos, rel := 0, 0
	for pos < len(data) {
		var line []byte
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
			line = data[pos : pos+i]
		} else {
			line = data[pos:]
		}
		rel++
		if next-pos > limit {
			return pos, rel, errLongLine(c.line0+rel, limit)
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if !f(line, rel) {
			return pos, rel, nil
		}
		pos = next
	}
	return pos, rel, nil
}

// start runs the workers on the chunks: first (if not nil, a chunk the
// caller took from s.chunks, e.g. what follows a CSV header), then the rest.
// parse must be safe for concurrent use.
func (s *stream) start(first *chunk, parse func(*chunk) *parsed) {
	for range s.cfg.workers {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case j, ok := <-s.jobs:
					if !ok {
						return
					}
					j.res = parse(j.c)
					s.putBuf(j.c.buf)
					j.c = nil
					close(j.ready)
				case <-s.done:
					return
				}
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(s.order)
		defer close(s.jobs)
		dispatch := func(c *chunk) bool {
			j := &job{c: c, ready: make(chan struct{})}
			select {
			case s.order <- j:
			case <-s.done:
				return false
			}
			select { // blocks only while the workers are all busy
			case s.jobs <- j:
				return true
			case <-s.done:
				return false
			}
		}
		if first != nil && !dispatch(first) {
			return
		}
		for {
			select {
			case c, ok := <-s.chunks:
				if !ok || !dispatch(c) {
					return
				}
			case <-s.done:
				return
			}
		}
	}()
}

// nextChunk returns the next chunk from the splitter (before start), nil at
// the end of the input.
func (s *stream) nextChunk(ctx context.Context) (*chunk, error) {
	select {
	case c := <-s.chunks:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// take returns the rows of the next parsed chunk that the reader delivers,
// in input order, with p.err the error that follows them (nil if none).
// It returns nil, nil at the end of the input or once MaxRows rows were
// taken, and ctx's error when it is cancelled first.
//
// The rules are the serial reader's: reading stops after MaxRows rows (the
// lines after them are not examined, so their errors do not count); a CSV
// row past MaxDenseElements is an error at its line, after the errors of
// splitting it into fields and before those of its values.
func (s *stream) take(ctx context.Context) (*parsed, error) {
	if s.finished {
		return nil, nil
	}
	var j *job
	select {
	case jj, ok := <-s.order:
		if !ok {
			return nil, nil
		}
		j = jj
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-j.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p := j.res
	s.lines = p.line0 + p.lines
	need := p.rows
	if s.maxRows > 0 && s.maxRows-s.n <= p.rows {
		need = s.maxRows - s.n
		s.finished = true
		p.err = nil // on a line after the last row read
	}
	if s.denseRows >= 0 {
		k := s.denseRows - s.n
		switch {
		case k < need:
			p.err = lineErr(p.line0+int(p.rowLine[k]), zonal.ErrTooLarge, "more than MaxDenseElements = %d values", s.cfg.dense)
			need = k
		case k == need && p.err != nil && p.errAtValues:
			p.err = lineErr(p.line0+int(p.rowLine[k]), zonal.ErrTooLarge, "more than MaxDenseElements = %d values", s.cfg.dense)
		}
	}
	if need < p.rows {
		p.truncate(need, s.d)
	}
	s.n += need
	return p, nil
}

package pipeline

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

// Input describes sharded training or test files.
type Input struct {
	// Glob matches the files (local paths, gs://, ... as Beam's filesystems
	// allow). Each file is read by one worker as a stream, plain or gzip
	// (detected from the content, as dataset.ReadFile does), and parsed in
	// blocks of BlockRows lines.
	Glob string
	// Format is "libsvm" or "csv"; empty means from each file's name after
	// removing ".gz" (.libsvm, .svm, .txt: LIBSVM; .csv: CSV).
	Format string
	// CSV holds the CSV header and target settings (Header, Target,
	// NoTarget); the other fields are ignored.
	CSV dataset.Options
	// SkipErrors sends malformed lines to the dead-letter output (and counts
	// them in the "zonal/lines_skipped" counter) instead of failing the job.
	SkipErrors bool
	// BlockRows is the number of rows per Block; zero means 1024.
	BlockRows int
}

// parseSpec is how the files of an Input are parsed: every pass over them
// (a pipeline reads its training files several times) parses them the same
// way, so that a row has the same global index in every pass.
type parseSpec struct {
	Format, Header, Target string
	NoTarget               bool
	Skip                   bool
	BlockRows              int
}

func (in Input) spec() parseSpec {
	return parseSpec{Format: in.Format, Header: in.CSV.Header, Target: in.CSV.Target, NoTarget: in.CSV.NoTarget,
		Skip: in.SkipErrors, BlockRows: in.BlockRows}
}

// matchFiles matches the glob into a PCollection<fileio.ReadableFile>.
func matchFiles(s beam.Scope, glob string) beam.PCollection {
	return fileio.ReadMatches(s, fileio.MatchFiles(s, glob, fileio.MatchEmptyDisallow()), fileio.ReadUncompressed())
}

// ReadBlocks matches in.Glob and parses every file with zonal's own LIBSVM
// and CSV readers into Blocks (PCollection<Block>), streaming: a file is
// read in blocks of in.BlockRows lines, never whole. It does not use
// textio.Read, whose gzip splitting loses lines in Beam v2.77.0.
//
// A malformed line fails the job with an error naming the file and the line
// (path:line: message), unless in.SkipErrors: then every malformed line goes
// to the second output, a PCollection<string> of "path:line: message"
// entries, and the good lines of the file are kept.
func ReadBlocks(s beam.Scope, in Input) (blocks, deadLetters beam.PCollection) {
	s = s.Scope("zonal.ReadBlocks")
	return parseFiles(s, matchFiles(s, in.Glob), in)
}

func parseFiles(s beam.Scope, files beam.PCollection, in Input) (blocks, deadLetters beam.PCollection) {
	return beam.ParDo2(s, &parseFn{In: in.spec()}, files)
}

// parseFn parses one file into Blocks: the first pass, which counts the
// rows read and sends the bad lines to the dead letter.
type parseFn struct {
	In parseSpec

	rows, skipped beam.Counter
}

func (fn *parseFn) Setup() {
	fn.rows = beam.NewCounter("zonal", "rows_read")
	fn.skipped = beam.NewCounter("zonal", "lines_skipped")
}

func (fn *parseFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, emit func(Block), dead func(string)) error {
	defer addMillis(ctx, "read_ms", time.Now())
	return fn.In.readFile(ctx, f, func(b Block) error {
		fn.rows.Inc(ctx, int64(b.Rows()))
		emit(b)
		return nil
	}, func(msg string) {
		fn.skipped.Inc(ctx, 1)
		dead(msg)
	})
}

// readFile opens f and parses it (see parse).
func (sp parseSpec) readFile(ctx context.Context, f fileio.ReadableFile, emit func(Block) error, dead func(string)) error {
	name := f.Metadata.Path
	r, err := f.Open(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer r.Close()
	return sp.parse(ctx, name, r, emit, dead)
}

// parse reads the file name from r (plain or gzip) line by line, parses
// every BlockRows data lines with zonal's parser and emits them as a
// Block, so a worker holds one block of a file at a time. A malformed line
// is an error naming name:line, or, with Skip, goes to dead (nil: dropped
// silently, for the later passes over a file whose bad lines the first
// pass reported). Blank lines (and LIBSVM comments) are skipped but
// counted in line numbers, as the whole-file readers do.
func (sp parseSpec) parse(ctx context.Context, name string, r io.Reader, emit func(Block) error, dead func(string)) error {
	format, err := fileFormat(sp.Format, name)
	if err != nil {
		return err
	}
	src, err := plainReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	size := sp.BlockRows
	if size <= 0 {
		size = 1024
	}
	c := &chunker{spec: sp, name: name, format: format, dead: dead}
	var emitErr error
	c.bb = newBlockBuilder(name, size, format == "libsvm", func(b Block) {
		if emitErr == nil {
			emitErr = emit(b)
		}
	})
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		trimmed := bytes.TrimSpace(text)
		if len(trimmed) == 0 || (format == "libsvm" && trimmed[0] == '#') {
			continue
		}
		if format == "csv" && !c.headerKnown {
			c.headerKnown = true
			if sp.Header == "yes" || (sp.Header != "no" && !numericCSVLine(text)) {
				c.header = string(text)
				continue
			}
		}
		c.add(line, text)
		if len(c.lines) == size {
			if err := c.flush(); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if emitErr != nil {
			return emitErr
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := c.flush(); err != nil {
		return err
	}
	c.bb.flush()
	return emitErr
}

// chunker collects the data lines of one block of a file and parses them.
type chunker struct {
	spec        parseSpec
	name        string
	format      string
	dead        func(string)
	bb          *blockBuilder
	headerKnown bool
	header      string // the CSV header line ("" for none)
	width       int    // CSV feature columns of the first parsed row (0: none yet)
	text        bytes.Buffer
	lines       []int // file line number of every data line in text
}

func (c *chunker) add(line int, text []byte) {
	c.text.Write(text)
	c.text.WriteByte('\n')
	c.lines = append(c.lines, line)
}

// flush parses the collected lines into the block builder.
func (c *chunker) flush() error {
	defer func() { c.text.Reset(); c.lines = c.lines[:0] }()
	if len(c.lines) == 0 {
		return nil
	}
	data, err := c.parseText(c.text.Bytes())
	if err == nil {
		if err = c.checkWidth(data, c.lines[0]); err == nil {
			addData(c.bb, data)
			return nil
		}
	}
	var pe *dataset.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if !c.spec.Skip || pe.Err != nil { // I/O and gzip errors are not line errors
		at := *pe
		if i := pe.Line - 1; i >= 0 && i < len(c.lines) {
			at.Line = c.lines[i]
		}
		return fmt.Errorf("%s:%d: %w", c.name, at.Line, &at)
	}
	// Some line is bad: parse the block's lines one by one.
	all := bytes.SplitAfter(c.text.Bytes(), []byte("\n"))
	for i, line := range c.lines {
		data, err := c.parseText(all[i])
		if err == nil {
			err = c.checkWidth(data, line)
		}
		if err != nil {
			msg := err.Error()
			if errors.As(err, &pe) {
				msg = pe.Msg
			}
			if c.dead != nil {
				c.dead(fmt.Sprintf("%s:%d: %s", c.name, line, msg))
			}
			continue
		}
		addData(c.bb, data)
	}
	return nil
}

// parseText parses data lines (with the CSV header in front when the file
// has one); a ParseError's line is the index of the data line, 1-based.
func (c *chunker) parseText(text []byte) (*dataset.Data, error) {
	opts := dataset.Options{Header: "no", Target: c.spec.Target, NoTarget: c.spec.NoTarget}
	if c.format == "libsvm" {
		opts.NoDense = true
		return dataset.ReadLIBSVM(bytes.NewReader(text), opts)
	}
	if c.header == "" {
		return dataset.ReadCSV(bytes.NewReader(text), opts)
	}
	opts.Header = "yes"
	d, err := dataset.ReadCSV(io.MultiReader(strings.NewReader(c.header+"\n"), bytes.NewReader(text)), opts)
	var pe *dataset.ParseError
	if err != nil && errors.As(err, &pe) && pe.Line > 1 {
		pe.Line-- // the header is not a data line
	}
	return d, err
}

// checkWidth refuses CSV rows with another feature count than the file's
// first rows (a whole-file read refuses them against the header; blocks
// are parsed apart, so the count is carried over).
func (c *chunker) checkWidth(data *dataset.Data, first int) error {
	if c.format != "csv" || data.X == nil {
		return nil
	}
	_, w := data.X.Dims()
	if c.width == 0 {
		c.width = w
		return nil
	}
	if w != c.width {
		return &dataset.ParseError{Line: 1, Msg: fmt.Sprintf("row has %d feature columns, the file's first rows have %d (line %d on)", w, c.width, first)}
	}
	return nil
}

// numericCSVLine reports whether every field of a CSV line reads as a
// number (then the line is data, not a header, under Header "auto").
func numericCSVLine(line []byte) bool {
	_, err := dataset.ReadCSV(bytes.NewReader(line), dataset.Options{Header: "no", NoTarget: true, AllowNonFinite: true})
	return err == nil
}

// plainReader undoes gzip when r starts with the gzip magic bytes.
func plainReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// addData appends the rows of a parsed block of lines.
func addData(bb *blockBuilder, data *dataset.Data) {
	if data.Sparse != nil {
		c := data.Sparse
		idx := make([]int32, 0, 64)
		for i := 0; i < c.Rows; i++ {
			idx = idx[:0]
			for _, j := range c.Col[c.RowPtr[i]:c.RowPtr[i+1]] {
				idx = append(idx, int32(j))
			}
			bb.add(data.Y[i], idx, c.Val[c.RowPtr[i]:c.RowPtr[i+1]])
		}
		return
	}
	n, _ := data.X.Dims()
	for i := 0; i < n; i++ {
		y := 0.0
		if data.Y != nil {
			y = data.Y[i]
		}
		bb.addDense(y, data.X.RawRowView(i))
	}
}

// fileFormat returns "libsvm" or "csv" for a file.
func fileFormat(format, name string) (string, error) {
	switch format {
	case "libsvm", "csv":
		return format, nil
	case "":
	default:
		return "", &zonal.ParamError{Param: "Format", Value: fmt.Sprintf("%q", format), Reason: "want libsvm or csv"}
	}
	switch path.Ext(strings.TrimSuffix(strings.ToLower(name), ".gz")) {
	case ".libsvm", ".svm", ".txt":
		return "libsvm", nil
	case ".csv":
		return "csv", nil
	}
	return "", fmt.Errorf("%w: %s: cannot tell the format from the name; set the format (libsvm, csv)", zonal.ErrParam, name)
}

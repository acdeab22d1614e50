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
	// allow). Each file is parsed whole by one worker, plain or gzip
	// (detected from the content, as dataset.ReadFile does).
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

// ReadBlocks matches in.Glob and parses every file with zonal's own LIBSVM
// and CSV readers into Blocks (PCollection<Block>). It does not use
// textio.Read, whose gzip splitting loses lines in Beam v2.77.0.
//
// A malformed line fails the job with an error naming the file and the line
// (path:line: message), unless in.SkipErrors: then every malformed line goes
// to the second output, a PCollection<string> of "path:line: message"
// entries, and the good lines of the file are kept.
func ReadBlocks(s beam.Scope, in Input) (blocks, deadLetters beam.PCollection) {
	s = s.Scope("zonal.ReadBlocks")
	matches := fileio.MatchFiles(s, in.Glob, fileio.MatchEmptyDisallow())
	files := fileio.ReadMatches(s, matches, fileio.ReadUncompressed())
	return beam.ParDo2(s, &parseFn{
		Format: in.Format, Header: in.CSV.Header, Target: in.CSV.Target, NoTarget: in.CSV.NoTarget,
		Skip: in.SkipErrors, BlockRows: in.BlockRows,
	}, files)
}

// parseFn parses one file into Blocks.
type parseFn struct {
	Format, Header, Target string
	NoTarget               bool
	Skip                   bool
	BlockRows              int

	rows, skipped beam.Counter
}

func (fn *parseFn) Setup() {
	fn.rows = beam.NewCounter("zonal", "rows_read")
	fn.skipped = beam.NewCounter("zonal", "lines_skipped")
}

func (fn *parseFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, emit func(Block), dead func(string)) error {
	defer addMillis(ctx, "read_ms", time.Now())
	name := f.Metadata.Path
	format, err := fileFormat(fn.Format, name)
	if err != nil {
		return err
	}
	raw, err := f.Read(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	size := fn.BlockRows
	if size <= 0 {
		size = 1024
	}
	bb := newBlockBuilder(name, size, func(b Block) {
		fn.rows.Inc(ctx, int64(b.Rows()))
		emit(b)
	})
	opts := dataset.Options{Header: fn.Header, Target: fn.Target, NoTarget: fn.NoTarget}
	data, err := parseData(format, bytes.NewReader(raw), opts)
	if err == nil {
		addData(bb, data)
		bb.flush()
		return nil
	}
	var pe *dataset.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !fn.Skip || pe.Err != nil { // I/O and gzip errors are not line errors
		return fmt.Errorf("%s:%d: %w", name, pe.Line, err)
	}
	return fn.lineByLine(ctx, bb, name, format, raw, opts, dead)
}

// lineByLine parses a file with bad lines one line at a time, sending the
// bad ones to dead.
func (fn *parseFn) lineByLine(ctx context.Context, bb *blockBuilder, name, format string, raw []byte, opts dataset.Options, dead func(string)) error {
	r, err := plainReader(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	header := ""
	first := true
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || (format == "libsvm" && strings.HasPrefix(strings.TrimSpace(text), "#")) {
			continue
		}
		in := text
		o := opts
		if format == "csv" {
			if first {
				first = false
				_, numErr := dataset.ReadCSV(strings.NewReader(text), dataset.Options{Header: "no", NoTarget: true})
				if opts.Header == "yes" || (opts.Header != "no" && numErr != nil) {
					header = text
					continue
				}
			}
			if header != "" {
				in = header + "\n" + text
				o.Header = "yes"
			} else {
				o.Header = "no"
			}
		}
		data, err := parseData(format, strings.NewReader(in), o)
		if err != nil {
			msg := err.Error()
			var pe *dataset.ParseError
			if errors.As(err, &pe) {
				msg = pe.Msg
			}
			fn.skipped.Inc(ctx, 1)
			dead(fmt.Sprintf("%s:%d: %s", name, line, msg))
			continue
		}
		addData(bb, data)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	bb.flush()
	return nil
}

// plainReader undoes gzip when raw starts with the gzip magic bytes.
func plainReader(raw []byte) (io.Reader, error) {
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		return gzip.NewReader(bytes.NewReader(raw))
	}
	return bytes.NewReader(raw), nil
}

func parseData(format string, r io.Reader, opts dataset.Options) (*dataset.Data, error) {
	if format == "csv" {
		return dataset.ReadCSV(r, opts)
	}
	opts.NoDense = true
	return dataset.ReadLIBSVM(r, opts)
}

// addData appends the rows of a parsed file.
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
		return "", fmt.Errorf("%w: unknown format %q (libsvm, csv)", zonal.ErrParam, format)
	}
	switch path.Ext(strings.TrimSuffix(strings.ToLower(name), ".gz")) {
	case ".libsvm", ".svm", ".txt":
		return "libsvm", nil
	case ".csv":
		return "csv", nil
	}
	return "", fmt.Errorf("%w: %s: cannot tell the format from the name; set the format (libsvm, csv)", zonal.ErrParam, name)
}

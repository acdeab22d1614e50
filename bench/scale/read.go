//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// The readers the read mode times, as the command-line tool uses them.
const (
	readerWhole  = "whole"  // dataset.ReadCSV / ReadLIBSVM, as `zonal fit` reads -train
	readerBlocks = "blocks" // dataset.NewBlockReader, as `zonal predict` reads -data
)

// readRun is one reader on one file: a row of the read table and a line of
// -out.
type readRun struct {
	Mode      string `json:"mode"` // "read"
	Form      string `json:"form"`
	Reader    string `json:"reader"`
	Rows      int    `json:"rows"` // read back
	Cols      int    `json:"cols"`
	TextBytes int64  `json:"text_bytes"` // uncompressed
	FileBytes int64  `json:"file_bytes"`
	BlockRows int    `json:"block_rows,omitempty"` // blocks: rows per block
	Reps      int    `json:"reps"`
	// The best of Reps reads: wall time, text MB (2^20 bytes) and rows per
	// second, and the process's CPU time (user + system) over that read.
	Seconds    float64 `json:"read_seconds"`
	MBPerSec   float64 `json:"text_mb_per_second"`
	RowsPerSec float64 `json:"rows_per_second"`
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUPerWall float64 `json:"cpu_per_wall"`
	// ParseWorkers is the number of goroutines the reader parses with
	// (dataset's pipeline: GOMAXPROCS, in every form), Parallel whether
	// that is more than one.
	ParseWorkers int  `json:"parse_workers"`
	Parallel     bool `json:"parallel"`
	GOMAXPROCS   int  `json:"gomaxprocs"`
	// The same file through wc -l (plain) or zcat | wc -l (gzip): the best
	// of Reps, and the lines it counted.
	Baseline         string  `json:"baseline_command"`
	BaselineSeconds  float64 `json:"baseline_seconds"`
	BaselineMBPerSec float64 `json:"baseline_text_mb_per_second"`
	BaselineLines    int64   `json:"baseline_lines"`
	Error            string  `json:"error,omitempty"`
}

// readColumns are the read table's columns, in order.
var readColumns = []string{"form", "reader", "rows", "text (MB)", "file (MB)", "block rows", "read (s)", "MB/s", "rows/s",
	"CPU/wall", "parallel", "wc (s)", "wc MB/s", "read / wc", "error"}

// runRead is the read mode: the synthetic rows written in the four forms
// to a temporary folder, then each file read by both readers and by the
// baseline.
func runRead(c config, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp(c.tmp, "zonal-scale-read-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out, closeOut, err := openOut(c.out, map[string]any{"mode": "read", "rows": c.readRows, "cols": c.d, "seed": c.seed,
		"reps": c.readReps, "gomaxprocs": runtime.GOMAXPROCS(0), "go": runtime.Version()})
	if err != nil {
		return err
	}
	defer closeOut()
	g := newSynth(c.seed, c.d, c.bumps, c.noise)
	fmt.Fprintf(stderr, "writing %d rows x %d features as csv, csv.gz, libsvm and libsvm.gz to %s\n", c.readRows, c.d, dir)
	files, err := writeSynthFiles(g, trainStream, c.readRows, filepath.Join(dir, "synth"), forms)
	if err != nil {
		return err
	}
	var runs []readRun
	for _, w := range files {
		bl := measureBaseline(w, c.readReps)
		for _, reader := range []string{readerWhole, readerBlocks} {
			r := timeReader(w, reader, c.d, c.readReps)
			r.Baseline, r.BaselineSeconds, r.BaselineLines = bl.cmd, bl.seconds, bl.lines
			if bl.seconds > 0 {
				r.BaselineMBPerSec = mb(w.TextBytes) / bl.seconds
			}
			if bl.err != "" {
				r.Error = strings.TrimPrefix(strings.Join([]string{r.Error, bl.err}, "; "), "; ")
			}
			runs = append(runs, r)
			fmt.Fprintf(stderr, "done: %s %s: %.3g s, %.1f MB/s (baseline %.3g s)\n", r.Form, r.Reader, r.Seconds, r.MBPerSec, r.BaselineSeconds)
			if err := out(r); err != nil {
				return err
			}
		}
		os.Remove(w.Path)
	}
	writeReadTable(stdout, c, runs)
	return nil
}

// openOut opens the -out file (none when path is empty) with first as its
// first line, and returns a function writing one JSON line and flushing
// (a long run keeps what it has), and its closer.
func openOut(path string, first any) (write func(any) error, closeOut func(), err error) {
	if path == "" {
		return func(any) error { return nil }, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := bufio.NewWriter(f)
	write = func(v any) error {
		if err := writeJSONLine(w, v); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := write(first); err != nil {
		f.Close()
		return nil, nil, err
	}
	return write, func() { f.Close() }, nil
}

// baselineResult is the baseline of one file.
type baselineResult struct {
	cmd     string
	seconds float64
	lines   int64
	err     string
}

// measureBaseline times wc -l FILE (plain) or zcat FILE | wc -l (gzip) on
// the file, the best of reps runs, and checks the line count.
func measureBaseline(w written, reps int) baselineResult {
	b := baselineResult{cmd: "wc -l FILE"}
	args := []string{"wc", "-l", w.Path}
	if w.Form.Gzip {
		b.cmd = "zcat FILE | wc -l"
		args = []string{"sh", "-c", `zcat -- "$1" | wc -l`, "sh", w.Path}
	}
	for r := range reps {
		cmd := exec.Command(args[0], args[1:]...)
		start := time.Now()
		outb, err := cmd.Output()
		s := time.Since(start).Seconds()
		if err != nil {
			b.err = fmt.Sprintf("%s: %v", b.cmd, err)
			break
		}
		if r == 0 || s < b.seconds {
			b.seconds = s
		}
		fields := strings.Fields(string(outb))
		if len(fields) > 0 {
			b.lines, _ = strconv.ParseInt(fields[0], 10, 64)
		}
	}
	if b.err == "" && b.lines != w.Lines {
		b.err = fmt.Sprintf("%s counted %d lines, the file has %d", b.cmd, b.lines, w.Lines)
	}
	return b
}

// readWhole reads the file as `zonal fit` reads -train: the whole-file
// reader, LIBSVM as CSR only.
func readWhole(w written) (*dataset.Data, error) {
	f, err := os.Open(w.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts := dataset.Options{Format: w.Form.format(), Header: "auto", NoDense: w.Form.LIBSVM}
	if w.Form.LIBSVM {
		return dataset.ReadLIBSVM(f, opts)
	}
	return dataset.ReadCSV(f, opts)
}

// readBlocks reads the file as `zonal predict` reads -data for a model of
// d features, block by block, and returns the rows it read and the
// columns of the first block.
func readBlocks(w written, d int) (rows, cols int, err error) {
	f, err := os.Open(w.Path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br, err := dataset.NewBlockReader(f, predictBlockRows(w.Form.LIBSVM, d), predictReadOptions(w.Form, d))
	if err != nil {
		return 0, 0, err
	}
	defer br.Close()
	for {
		blk, err := br.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows, cols, nil
		}
		if err != nil {
			return rows, cols, err
		}
		n, c := blk.Dims()
		if rows == 0 {
			cols = c
		}
		rows += n
	}
}

// readOnce reads the file through reader and returns the rows and columns
// read, checked against the file's.
func readOnce(w written, reader string, d int) (rows, cols int, err error) {
	if reader == readerWhole {
		var data *dataset.Data
		if data, err = readWhole(w); err != nil {
			return 0, 0, err
		}
		rows, cols = data.Dims()
	} else if rows, cols, err = readBlocks(w, d); err != nil {
		return rows, cols, err
	}
	if want := w.Lines - csvHeaderLines(w.Form); int64(rows) != want || cols != d {
		return rows, cols, fmt.Errorf("%s reader read %d x %d, the file has %d x %d", reader, rows, cols, want, d)
	}
	return rows, cols, nil
}

// predictReadOptions are the reader's options of `zonal predict` for a
// model of d features (cmd/zonal's openPredictData): d columns, a CSV's
// target column optional, LIBSVM kept as CSR.
func predictReadOptions(f form, d int) dataset.Options {
	return dataset.Options{Format: f.format(), Header: "auto", MinCols: d, MaxCols: d, TargetIfExtra: true, NoDense: f.LIBSVM}
}

// predictBlockRows is the block size `zonal predict` reads a file of d
// features in (cmd/zonal's openPredictData, which this follows):
// dataset.DefaultBlockRows, at least solvers.DirectBatch + 1 for CSV, and
// for LIBSVM rounded up to a whole multiple of the pipeline's CSR blocks.
func predictBlockRows(libsvm bool, d int) int {
	rows := dataset.DefaultBlockRows
	if libsvm {
		u := max(1, min(32*solvers.DirectBatch, solvers.SparseBlockBytes/(8*d)))
		return u * ((rows + u - 1) / u)
	}
	return max(rows, solvers.DirectBatch+1)
}

// timeReader times reps reads of the file through reader and keeps the
// fastest. The collector runs before each read, so that one read's garbage
// does not burden the next.
func timeReader(w written, reader string, d, reps int) readRun {
	workers := runtime.GOMAXPROCS(0)
	r := readRun{Mode: "read", Form: w.Form.Name, Reader: reader, TextBytes: w.TextBytes, FileBytes: w.FileBytes, Reps: reps,
		ParseWorkers: workers, Parallel: workers > 1, GOMAXPROCS: workers}
	if reader == readerBlocks {
		r.BlockRows = predictBlockRows(w.Form.LIBSVM, d)
	}
	for rep := range reps {
		runtime.GC()
		debug.FreeOSMemory()
		cpu0 := cpuSeconds()
		start := time.Now()
		rows, cols, err := readOnce(w, reader, d)
		s := time.Since(start).Seconds()
		cpu := cpuSeconds() - cpu0
		r.Rows, r.Cols = rows, cols
		if err != nil {
			r.Error = err.Error()
			return r
		}
		if rep == 0 || s < r.Seconds {
			r.Seconds, r.CPUSeconds = s, cpu
		}
	}
	r.Seconds = max(r.Seconds, 1e-9)
	r.MBPerSec = mb(w.TextBytes) / r.Seconds
	r.RowsPerSec = float64(r.Rows) / r.Seconds
	r.CPUPerWall = r.CPUSeconds / r.Seconds
	return r
}

// csvHeaderLines is 1 for CSV (its header line) and 0 for LIBSVM.
func csvHeaderLines(f form) int64 {
	if f.LIBSVM {
		return 0
	}
	return 1
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func writeReadTable(w io.Writer, c config, rs []readRun) {
	procs := runtime.GOMAXPROCS(0)
	fmt.Fprintf(w, "Read throughput, GOMAXPROCS %d: %d synthetic rows x %d features (seed %d), every number in the shortest form that reads back exactly; MB = 2^20 bytes of uncompressed text; best of %d reads.\n",
		procs, c.readRows, c.d, c.seed, c.readReps)
	fmt.Fprintf(w, "Readers: whole = dataset.ReadCSV / ReadLIBSVM as `zonal fit` reads -train (LIBSVM as CSR only); blocks = dataset.NewBlockReader as `zonal predict` reads -data.\n")
	fmt.Fprintf(w, "Both parse in parallel in every form: one goroutine reads (and decompresses) the input in 1 MiB chunks, %d goroutines parse them. wc: `wc -l FILE` (plain) or `zcat FILE | wc -l` (gzip) on the same file.\n\n", procs)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(readColumns, " | "), strings.Repeat("---|", len(readColumns)))
	for _, r := range rs {
		ok := r.Error == ""
		par := "no (1 worker)"
		if r.Parallel {
			par = fmt.Sprintf("yes, %d workers", r.ParseWorkers)
		}
		ratio := 0.0
		if r.BaselineSeconds > 0 {
			ratio = r.Seconds / r.BaselineSeconds
		}
		cells := []string{r.Form, r.Reader, fmt.Sprint(r.Rows), fmt.Sprintf("%.1f", mb(r.TextBytes)), fmt.Sprintf("%.1f", mb(r.FileBytes)),
			dash(r.BlockRows > 0, "%.0f", float64(r.BlockRows)), dash(r.Seconds > 0, "%.3g", r.Seconds), dash(r.MBPerSec > 0, "%.1f", r.MBPerSec),
			dash(r.RowsPerSec > 0, "%.3g", r.RowsPerSec), dash(ok && r.Seconds > 0, "%.2f", r.CPUPerWall), par,
			dash(r.BaselineSeconds > 0, "%.3g", r.BaselineSeconds), dash(r.BaselineMBPerSec > 0, "%.1f", r.BaselineMBPerSec),
			dash(ratio > 0 && r.Seconds > 0, "%.2f", ratio), strings.ReplaceAll(r.Error, "|", "/")}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

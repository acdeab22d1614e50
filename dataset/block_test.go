package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// readBlocks reads text with a BlockReader of the given block size and
// pipeline config and joins the blocks into one Data (X, Sparse, Y,
// names), with the error that ended the reading (nil for io.EOF). It
// fails unless every block but the last has rows rows and the same
// columns.
func readBlocks(t *testing.T, text []byte, rows int, opts Options, cfg readConfig) (*Data, error) {
	t.Helper()
	br, err := NewBlockReader(bytes.NewReader(text), rows, opts)
	if err != nil {
		return nil, err
	}
	br.cfg = cfg
	defer br.Close()
	var out *Data
	var xs []float64
	var m *CSR
	n, short := 0, false
	for {
		blk, err := br.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		bn, bd := blk.Dims()
		if short {
			t.Fatalf("a block of %d rows after a short one", bn)
		}
		short = bn < rows
		if out == nil {
			out = &Data{Names: blk.Names, TargetName: blk.TargetName}
			if blk.Sparse != nil {
				m = &CSR{Cols: bd, RowPtr: []int{0}}
			}
		}
		n += bn
		if blk.X != nil {
			xs = append(xs, blk.X.RawMatrix().Data...)
			out.X = mat.NewDense(n, bd, xs)
		}
		if blk.Sparse != nil {
			if blk.Sparse.Cols != m.Cols {
				t.Fatalf("CSR block of %d columns after %d", blk.Sparse.Cols, m.Cols)
			}
			m.Rows += bn
			m.appendRows(&parsed{rows: bn, rowPtr: blk.Sparse.RowPtr, col: blk.Sparse.Col, val: blk.Sparse.Val})
			out.Sparse = m
		}
		if blk.Y != nil {
			out.Y = append(out.Y, blk.Y...)
		}
	}
	return out, nil
}

// TestBlockReaderMatchesWhole: the blocks of random CSV and LIBSVM files,
// joined, equal the whole-file read (values bit for bit, the same error),
// for block sizes from 1 row and tiny chunks.
func TestBlockReaderMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 8 {
		csv := randomCSV(rng, 20+rng.IntN(50), 4, trial%2 == 0)
		lib := randomLIBSVM(rng, 20+rng.IntN(50), 9)
		if trial%3 == 2 {
			csv, lib = corrupt(rng, csv, 'x'), corrupt(rng, lib, ':')
		}
		for _, cfg := range testConfigs() {
			rows := 1 + rng.IntN(10)
			for _, o := range []Options{{Format: "csv"}, {Format: "csv", NoTarget: true}, {Format: "csv", MaxRows: 13}} {
				got, gerr := readBlocks(t, []byte(csv), rows, o, cfg)
				want, werr := ReadCSV(strings.NewReader(csv), o)
				sameResult(t, fmt.Sprintf("CSV trial %d, %d rows, chunk %d, %+v", trial, rows, cfg.chunk, o), got, gerr, want, werr)
			}
			for _, o := range []Options{{Format: "libsvm", MinCols: 9, MaxCols: 9}, {Format: "libsvm", MinCols: 9, NoDense: true}, {Format: "libsvm", MinCols: 9, NoSparse: true, MaxRows: 11}} {
				got, gerr := readBlocks(t, []byte(lib), rows, o, cfg)
				want, werr := ReadLIBSVM(strings.NewReader(lib), o)
				sameResult(t, fmt.Sprintf("LIBSVM trial %d, %d rows, chunk %d, %+v", trial, rows, cfg.chunk, o), got, gerr, want, werr)
			}
		}
	}
}

// TestBlockReaderErrors: the first block fixes the LIBSVM columns; an
// empty input is zonal.ErrEmpty; a bad line comes after the blocks of the
// rows before it; a bad format is zonal.ErrParam.
func TestBlockReaderErrors(t *testing.T) {
	ctx := context.Background()
	br, _ := NewBlockReader(strings.NewReader("1 1:1\n2 2:1\n\n3 3:1\n"), 2, Options{Format: "libsvm"})
	defer br.Close()
	if blk, err := br.Next(ctx); err != nil || blk.Sparse.Cols != 2 || blk.X == nil {
		t.Fatalf("first block: %v", err)
	}
	var pe *ParseError
	if _, err := br.Next(ctx); !errors.Is(err, zonal.ErrRange) || !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("index beyond the first block: %v", err)
	}
	for _, c := range []struct{ text, format string }{{"", "csv"}, {"\n\n", "csv"}, {"y,a\n", "csv"}, {"# c\n", "libsvm"}} {
		br, _ := NewBlockReader(strings.NewReader(c.text), 0, Options{Format: c.format})
		if _, err := br.Next(ctx); !errors.Is(err, zonal.ErrEmpty) {
			t.Fatalf("%q: %v", c.text, err)
		}
		br.Close()
	}
	br, _ = NewBlockReader(strings.NewReader("y,a\n1,2\n3,4\n5,x\n"), 2, Options{Format: "csv"})
	if blk, err := br.Next(ctx); err != nil || blk.X.RawMatrix().Rows != 2 {
		t.Fatalf("rows before the bad line: %v", err)
	}
	if _, err := br.Next(ctx); !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("bad line: %v", err)
	}
	if _, err := br.Next(ctx); !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("the error again: %v", err)
	}
	br.Close()
	if _, err := NewBlockReader(strings.NewReader(""), 0, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("no format: %v", err)
	}
	// Close after the first block stops every goroutine of the reader.
	before := runtime.NumGoroutine()
	big := strings.Repeat("1 1:2 3:4\n", 1<<17)
	br, _ = NewBlockReader(strings.NewReader(big), 10, Options{Format: "libsvm"})
	if _, err := br.Next(ctx); err != nil {
		t.Fatal(err)
	}
	br.Close()
	if after := settledGoroutines(before); after > before {
		t.Fatalf("%d goroutines before, %d after Close", before, after)
	}
	if _, err := br.Next(ctx); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("Next after Close: %v", err)
	}
	// Cancellation ends Next while the input blocks (a pipe never written).
	for _, format := range []string{"csv", "libsvm"} {
		cctx, cancel := context.WithCancel(ctx)
		pr, pw := io.Pipe()
		br, _ = NewBlockReader(pr, 0, Options{Format: format})
		done := make(chan error)
		go func() {
			_, err := br.Next(cctx)
			done <- err
		}()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled Next: %v", format, err)
		}
		pw.Close() // ends the splitter's Read, so that Close returns
		br.Close()
	}
}

// TestTargetIfExtra: d + 1 columns have a target, d columns none.
func TestTargetIfExtra(t *testing.T) {
	o := Options{MinCols: 2, MaxCols: 2, TargetIfExtra: true}
	d, err := ReadCSV(strings.NewReader("a,y,b\n1,2,3\n"), o)
	if err != nil || d.Y[0] != 2 || d.X.At(0, 1) != 3 {
		t.Fatalf("with target: %v", err)
	}
	d, err = ReadCSV(strings.NewReader("a,b\n1,3\n"), o)
	if err != nil || d.Y != nil || d.X.At(0, 1) != 3 {
		t.Fatalf("without target: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("a,b,c,d\n1,2,3,4\n"), o); !errors.Is(err, zonal.ErrRange) {
		t.Fatalf("too many columns: %v", err)
	}
}

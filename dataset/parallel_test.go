package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
)

// randomNumber writes a number in one of the spellings data files use.
func randomNumber(b *strings.Builder, rng *rand.Rand) {
	switch rng.IntN(7) {
	case 0:
		b.WriteString(strconv.Itoa(rng.IntN(2000) - 1000))
	case 1:
		b.WriteString(strconv.FormatFloat(rng.NormFloat64(), 'f', rng.IntN(6), 64))
	case 2:
		b.WriteString(strconv.FormatFloat(rng.NormFloat64()*1e10, 'e', -1, 64))
	case 3:
		b.WriteString(strconv.FormatFloat(rng.Float64(), 'g', -1, 64)) // 17 digits: the strconv path
	case 4:
		b.WriteString("0")
	case 5:
		fmt.Fprintf(b, "+.%d", rng.IntN(100))
	default:
		fmt.Fprintf(b, "%d.", rng.IntN(10))
	}
}

// lineEnd ends a line with "\n" or "\r\n", sometimes after trailing spaces.
func lineEnd(b *strings.Builder, rng *rand.Rand) {
	if rng.IntN(5) == 0 {
		b.WriteString(" \t "[:1+rng.IntN(3)])
	}
	if rng.IntN(3) == 0 {
		b.WriteByte('\r')
	}
	b.WriteByte('\n')
}

// randomCSV returns a CSV of rows rows and cols columns (header when
// header is set), with blank lines, CRLF, spaces around fields, quoted
// fields and a few very long lines (a field padded with zeros).
func randomCSV(rng *rand.Rand, rows, cols int, header bool) string {
	var b strings.Builder
	if header {
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			if j == cols/2 {
				b.WriteString("y")
			} else {
				fmt.Fprintf(&b, "\"c%d\"", j)
			}
		}
		lineEnd(&b, rng)
	}
	for range rows {
		for rng.IntN(8) == 0 {
			b.WriteString("  "[:rng.IntN(3)])
			lineEnd(&b, rng) // blank line
		}
		long := rng.IntN(40) == 0
		for j := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			if rng.IntN(6) == 0 {
				b.WriteString(" \t"[:1+rng.IntN(2)])
			}
			quoted := rng.IntN(10) == 0
			if quoted {
				b.WriteByte('"')
			}
			if long && j == 0 {
				b.WriteString("0." + strings.Repeat("0", 300+rng.IntN(300)) + "1")
			} else {
				randomNumber(&b, rng)
			}
			if quoted {
				b.WriteByte('"')
			}
		}
		if rng.IntN(30) != 0 { // sometimes no line end (at the end of the file)
			lineEnd(&b, rng)
		} else {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// randomLIBSVM returns LIBSVM text with comments, qid tokens, empty rows,
// blank lines, CRLF and a few very long lines.
func randomLIBSVM(rng *rand.Rand, rows, cols int) string {
	var b strings.Builder
	for range rows {
		for rng.IntN(8) == 0 {
			if rng.IntN(2) == 0 {
				b.WriteString("# a comment, 1:2")
			}
			lineEnd(&b, rng)
		}
		randomNumber(&b, rng)
		if rng.IntN(10) == 0 {
			fmt.Fprintf(&b, " qid:%d", rng.IntN(50))
		}
		density := 0.3
		if rng.IntN(40) == 0 {
			density = 1 // a long line
		}
		for j := 1; j <= cols; j++ {
			if rng.Float64() < density {
				b.WriteString(" \t"[:1+rng.IntN(2)])
				fmt.Fprintf(&b, "%d:", j)
				randomNumber(&b, rng)
			}
		}
		if rng.IntN(10) == 0 {
			b.WriteString(" # trailing comment")
		}
		lineEnd(&b, rng)
	}
	return b.String()
}

// sameResult fails unless the parallel result (got, gerr) equals the
// serial one exactly: every float64 bit, the shapes, the names, or the
// same error message.
func sameResult(t *testing.T, what string, got *Data, gerr error, want *Data, werr error) {
	t.Helper()
	if gerr != nil || werr != nil {
		if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
			t.Fatalf("%s: error %v, serial reader %v", what, gerr, werr)
		}
		var gp, wp *ParseError
		if errors.As(werr, &wp) && (!errors.As(gerr, &gp) || gp.Line != wp.Line) {
			t.Fatalf("%s: %v: not the serial reader's ParseError", what, gerr)
		}
		return
	}
	sameBits := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	if (got.X == nil) != (want.X == nil) || (got.Sparse == nil) != (want.Sparse == nil) || (got.Y == nil) != (want.Y == nil) {
		t.Fatalf("%s: different fields set", what)
	}
	if got.X != nil {
		gr, gc := got.X.Dims()
		wr, wc := want.X.Dims()
		if gr != wr || gc != wc || !sameBits(got.X.RawMatrix().Data, want.X.RawMatrix().Data) {
			t.Fatalf("%s: X %d x %d differs from the serial reader's %d x %d", what, gr, gc, wr, wc)
		}
	}
	if got.Sparse != nil {
		g, w := got.Sparse, want.Sparse
		if g.Rows != w.Rows || g.Cols != w.Cols || !slices.Equal(g.RowPtr, w.RowPtr) || !slices.Equal(g.Col, w.Col) || !sameBits(g.Val, w.Val) {
			t.Fatalf("%s: CSR differs from the serial reader's", what)
		}
	}
	if !sameBits(got.Y, want.Y) || !slices.Equal(got.Names, want.Names) || got.TargetName != want.TargetName {
		t.Fatalf("%s: Y or names differ", what)
	}
}

// testConfigs are pipeline sizes that put chunk boundaries at many
// positions of the lines: tiny chunks (lines longer than the chunk grow
// it), odd sizes, one and several workers.
func testConfigs() []readConfig {
	var cs []readConfig
	for _, size := range []int{1, 2, 3, 5, 7, 11, 16, 31, 64, 100, 257, 1000, 4096} {
		cs = append(cs, readConfig{chunk: size, limit: MaxLineBytes, workers: 1 + size%3, dense: MaxDenseElements})
	}
	return cs
}

type readFunc func(io.Reader, Options, readConfig) (*Data, error)

// compareReaders reads text with every test config, plain and gzip, and
// compares with the serial reader.
func compareReaders(t *testing.T, what, text string, opts Options, read readFunc, serial func(io.Reader, Options) (*Data, error)) {
	t.Helper()
	want, werr := serial(strings.NewReader(text), opts)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	for k, cfg := range testConfigs() {
		got, gerr := read(strings.NewReader(text), opts, cfg)
		sameResult(t, fmt.Sprintf("%s, chunk %d, %d workers", what, cfg.chunk, cfg.workers), got, gerr, want, werr)
		if k%4 == 0 {
			got, gerr = read(bytes.NewReader(gz.Bytes()), opts, cfg)
			sameResult(t, fmt.Sprintf("%s, gzip, chunk %d", what, cfg.chunk), got, gerr, want, werr)
		}
	}
}

// corrupt replaces one random byte of text with c.
func corrupt(rng *rand.Rand, text string, c byte) string {
	b := []byte(text)
	b[rng.IntN(len(b))] = c
	return string(b)
}

func TestParallelCSVMatchesSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	optsList := []Options{
		{}, {Header: "no"}, {Header: "yes"}, {NoTarget: true}, {Target: "2"}, {MaxRows: 7},
		{MinCols: 4, MaxCols: 4}, {TargetOptional: true}, {AllowNonFinite: true},
	}
	for trial := range 12 {
		cols := 1 + rng.IntN(6)
		text := randomCSV(rng, 5+rng.IntN(60), cols, trial%3 != 0)
		for _, opts := range optsList {
			compareReaders(t, fmt.Sprintf("trial %d, %+v", trial, opts), text, opts, readCSV, readCSVSerial)
		}
		// Bad input anywhere, chunk boundaries included: a bad byte, a
		// missing field, a quote, a NaN.
		for k, c := range []byte{'x', ',', '"', '\n', ' '} {
			bad := corrupt(rng, text, c)
			compareReaders(t, fmt.Sprintf("trial %d, corrupt %d", trial, k), bad, Options{MaxRows: rng.IntN(3) * 20}, readCSV, readCSVSerial)
		}
		compareReaders(t, fmt.Sprintf("trial %d, NaN", trial), strings.Replace(text, "0", "NaN", 1), Options{}, readCSV, readCSVSerial)
	}
	for _, text := range []string{"", "\n\n  \n", "a,b\n", "a,b\r\n\r\n", "\xef\xbb\xbfy,a\n1,2\n", "1,2", "y,a\n1,2\n3", "y\n1\n"} {
		compareReaders(t, fmt.Sprintf("%q", text), text, Options{}, readCSV, readCSVSerial)
	}
}

func TestParallelLIBSVMMatchesSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	optsList := []Options{{}, {MinCols: 30}, {MaxCols: 8}, {MaxRows: 9}, {NoDense: true}, {NoSparse: true}, {AllowNonFinite: true}}
	for trial := range 12 {
		text := randomLIBSVM(rng, 5+rng.IntN(60), 1+rng.IntN(12))
		for _, opts := range optsList {
			compareReaders(t, fmt.Sprintf("trial %d, %+v", trial, opts), text, opts, readLIBSVM, readLIBSVMSerial)
		}
		for k, c := range []byte{'x', ':', '0', '\n', ' ', '#'} {
			bad := corrupt(rng, text, c)
			compareReaders(t, fmt.Sprintf("trial %d, corrupt %d", trial, k), bad, Options{MaxRows: rng.IntN(3) * 20}, readLIBSVM, readLIBSVMSerial)
		}
	}
	for _, text := range []string{"", "\n# only a comment\n", "1\n", "1 2:3", "\xef\xbb\xbf1 1:2\r\n", "1 1:1\n2 1:1 1:2\n"} {
		compareReaders(t, fmt.Sprintf("%q", text), text, Options{}, readLIBSVM, readLIBSVMSerial)
	}
}

// TestParallelReadError: an input error after a chunk boundary is reported
// at the line being read, as the serial reader does, after the errors of
// the lines before it.
func TestParallelReadError(t *testing.T) {
	boom := errors.New("boom")
	rng := rand.New(rand.NewPCG(5, 6))
	text := randomLIBSVM(rng, 40, 5)
	for cut := 0; cut < len(text); cut += 1 + rng.IntN(7) {
		for _, cfg := range testConfigs()[:8] {
			got, gerr := readLIBSVM(&errReader{[]byte(text[:cut]), boom}, Options{}, cfg)
			want, werr := readLIBSVMSerial(&errReader{[]byte(text[:cut]), boom}, Options{})
			sameResult(t, fmt.Sprintf("cut %d, chunk %d", cut, cfg.chunk), got, gerr, want, werr)
		}
	}
}

// TestParallelLineLimit: a line over the limit (its terminator included)
// is an error at its line, wherever the chunk boundaries fall; a line at
// the limit is read.
func TestParallelLineLimit(t *testing.T) {
	const limit = 40
	ok := "1 1:" + strings.Repeat("5", limit-5) + "\n" // limit bytes
	long := "1 1:" + strings.Repeat("5", limit-4) + "\n"
	for _, chunk := range []int{1, 7, 16, 39, 40, 41, 80, 1000} {
		cfg := readConfig{chunk: chunk, limit: limit, workers: 2, dense: MaxDenseElements}
		if d, err := readLIBSVM(strings.NewReader(ok+ok+"1 2:1\n"), Options{}, cfg); err != nil || d.Sparse.Rows != 3 {
			t.Fatalf("chunk %d: lines at the limit: %v", chunk, err)
		}
		for _, text := range []string{ok + ok + long + ok, ok + "\n\n" + long, strings.TrimSuffix(ok+"\n\n"+long, "\n") + "5"} {
			_, err := readLIBSVM(strings.NewReader(text), Options{}, cfg)
			var pe *ParseError
			if !errors.Is(err, zonal.ErrTooLarge) || !errors.As(err, &pe) || pe.Line != strings.Count(text[:strings.Index(text, long[:limit])], "\n")+1 {
				t.Fatalf("chunk %d, %q: got %v", chunk, text, err)
			}
		}
		// The limit also holds for the CSV header and in a CSV body.
		if _, err := readCSV(strings.NewReader(strings.Repeat("a", limit+1)+"\n1\n"), Options{}, cfg); !errors.Is(err, zonal.ErrTooLarge) {
			t.Fatalf("chunk %d: long header: %v", chunk, err)
		}
		if _, err := readCSV(strings.NewReader("y,a\n1,2\n"+strings.Repeat("1", limit+1)), Options{}, cfg); !errors.Is(err, zonal.ErrTooLarge) || !strings.Contains(err.Error(), "line 3") {
			t.Fatalf("chunk %d: long CSV row: %v", chunk, err)
		}
	}
}

// TestParallelDenseLimitLine: the CSV row beyond the dense limit is an
// error at its own line, wherever the chunks end; the errors of splitting
// that row come first, those of its values after (the serial order).
func TestParallelDenseLimitLine(t *testing.T) {
	head := "y,a,b\n1,2,3\n\n4,5,6\r\n7,8,9\n\n"
	cases := []struct {
		tail string
		line int
		msg  string
	}{
		{"1,2,3\n", 7, "MaxDenseElements"},
		{"1,x,3\n", 7, "MaxDenseElements"},
		{"1,2\n", 7, "fields"},
		{"\n\n1,\"2\n", 9, "unterminated"},
		{"\n\n1,2,3", 9, "MaxDenseElements"},
	}
	for _, c := range cases {
		for _, cfg := range testConfigs() {
			cfg.dense = 6 // three rows of d = 2
			_, err := readCSV(strings.NewReader(head+c.tail), Options{}, cfg)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("%q, chunk %d: got %v, want line %d: %s", c.tail, cfg.chunk, err, c.line, c.msg)
			}
		}
	}
	cfg := defaultConfig()
	cfg.dense = 6
	if d, err := readCSV(strings.NewReader(head), Options{}, cfg); err != nil || d.X.RawMatrix().Rows != 3 {
		t.Fatalf("three rows: %v", err)
	}
	if d, err := readCSV(strings.NewReader(head+"1,2,3\n"), Options{MaxRows: 3}, cfg); err != nil || d.X.RawMatrix().Rows != 3 {
		t.Fatalf("MaxRows 3: %v", err)
	}
}

// TestChunkBoundaryEverywhere reads small files with every chunk size up
// to their length, so that the first chunk boundary falls at every byte
// of every line (a line end, "\r\n" split, inside a number), good files
// and files with a bad line, and compares with the serial reader.
func TestChunkBoundaryEverywhere(t *testing.T) {
	csv := "y,a,b\r\n1,2.5,3\n\n-4, 5e3 ,\"6\"\r\n7,8,9 \n10,11,12"
	lib := "1 1:2.5 3:4\r\n\n# c 1:2\n-1 qid:3 2:1e-3 \n2\t1:7 # t\n3 4:1"
	for _, c := range []struct {
		text   string
		read   readFunc
		serial func(io.Reader, Options) (*Data, error)
	}{
		{csv, readCSV, readCSVSerial},
		{strings.Replace(csv, "8", "x", 1), readCSV, readCSVSerial},
		{strings.Replace(csv, "5e3", "5e", 1), readCSV, readCSVSerial},
		{lib, readLIBSVM, readLIBSVMSerial},
		{strings.Replace(lib, "2:1e-3", "2:1e-", 1), readLIBSVM, readLIBSVMSerial},
		{strings.Replace(lib, "4:1", "0:1", 1), readLIBSVM, readLIBSVMSerial},
	} {
		want, werr := c.serial(strings.NewReader(c.text), Options{})
		for size := 1; size <= len(c.text)+1; size++ {
			for workers := 1; workers <= 2; workers++ {
				got, gerr := c.read(strings.NewReader(c.text), Options{}, readConfig{chunk: size, limit: MaxLineBytes, workers: workers, dense: MaxDenseElements})
				sameResult(t, fmt.Sprintf("%q, chunk %d, %d workers", c.text, size, workers), got, gerr, want, werr)
			}
		}
	}
}

package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// The content of testdata/small.libsvm and testdata/small.csv (the same data).
var (
	smallX = [][]float64{
		{0.5, 0, -2, 0},
		{0, 0.001, 0, 7},
		{1, 0, 0, 2.5},
		{0, 0, 0, 0},
		{0, 0.25, 4, 100},
	}
	smallY = []float64{1, -1, 0.5, 2, 3}
)

func denseOf(rows [][]float64) *mat.Dense {
	m := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		m.SetRow(i, r)
	}
	return m
}

// sameData fails unless a and b hold exactly equal X and Y.
func sameData(t *testing.T, what string, a, b *Data) {
	t.Helper()
	if !mat.Equal(a.X, b.X) {
		ar, ac := a.X.Dims()
		br, bc := b.X.Dims()
		t.Fatalf("%s: X differ (%d x %d vs %d x %d)", what, ar, ac, br, bc)
	}
	if !slices.Equal(a.Y, b.Y) {
		t.Fatalf("%s: Y differ", what)
	}
}

func readTestFile(t *testing.T, name string, opts Options) *Data {
	t.Helper()
	d, err := ReadFile(filepath.Join("testdata", name), opts)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return d
}

func TestReadSmallFiles(t *testing.T) {
	want := &Data{X: denseOf(smallX), Y: smallY}
	lib := readTestFile(t, "small.libsvm", Options{})
	sameData(t, "small.libsvm", lib, want)
	if err := lib.Sparse.Validate(); err != nil {
		t.Fatal(err)
	}
	// The CSR holds exactly the entries written in the file.
	if lib.Sparse.NNZ() != 10 || !mat.Equal(lib.Sparse.ToDense(), want.X) {
		t.Fatalf("CSR: nnz %d (want 10) or content differs", lib.Sparse.NNZ())
	}
	if lib.Names != nil || lib.TargetName != "" {
		t.Errorf("LIBSVM Names/TargetName = %v/%q, want nil/empty", lib.Names, lib.TargetName)
	}
	csv := readTestFile(t, "small.csv", Options{})
	sameData(t, "small.csv", csv, want)
	if !slices.Equal(csv.Names, []string{"a", "b", "c, quoted", "d"}) || csv.TargetName != "y" {
		t.Errorf("CSV Names = %q, TargetName = %q", csv.Names, csv.TargetName)
	}
	if csv.Sparse != nil {
		t.Errorf("CSV Sparse should be nil")
	}
	// gzip and plain give identical results.
	sameData(t, "small.libsvm.gz", readTestFile(t, "small.libsvm.gz", Options{}), want)
	sameData(t, "small.csv.gz", readTestFile(t, "small.csv.gz", Options{}), want)
	// -0 is read as negative zero, bit for bit.
	if v := csv.X.At(4, 0); v != 0 || !math.Signbit(v) {
		t.Errorf("CSV -0 read as %v (signbit %v)", v, math.Signbit(v))
	}
}

func TestGzipDetectedByContent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "small.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	// A second gzip member (as pigz and concatenated files produce) is read too.
	zw = gzip.NewWriter(&buf)
	zw.Write([]byte("7 2:1\n"))
	zw.Close()
	d, err := ReadLIBSVM(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, c := d.Dims(); n != 6 || c != 4 || d.Y[5] != 7 || d.X.At(5, 1) != 1 {
		t.Fatalf("multi-member gzip: got %d x %d, Y %v", n, c, d.Y)
	}
}

func TestReadLIBSVMPaddingAndLimits(t *testing.T) {
	in := "1 2:1\n0 1:3\n"
	d, err := ReadLIBSVM(strings.NewReader(in), Options{MinCols: 5, MaxCols: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := d.Dims(); c != 5 || d.Sparse.Cols != 5 {
		t.Fatalf("MinCols 5: got %d columns", c)
	}
	want := denseOf([][]float64{{0, 1, 0, 0, 0}, {3, 0, 0, 0, 0}})
	if !mat.Equal(d.X, want) {
		t.Fatalf("padded X = %v", mat.Formatted(d.X))
	}
	// MaxRows stops early.
	d, err = ReadLIBSVM(strings.NewReader(in), Options{MaxRows: 1})
	if err != nil || len(d.Y) != 1 {
		t.Fatalf("MaxRows 1: %v, %v", d, err)
	}
	// An index in the thousands of millions is refused before any allocation.
	_, err = ReadLIBSVM(strings.NewReader("1 1:1\n1 1000000000000:1\n"), Options{})
	if !errors.Is(err, zonal.ErrTooLarge) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("huge index: got %v", err)
	}
	// 17 rows of width 2^24 exceed MaxDenseElements = 2^28 as a dense matrix.
	var b strings.Builder
	for range 17 {
		b.WriteString("1 16777216:1\n")
	}
	if _, err = ReadLIBSVM(strings.NewReader(b.String()), Options{}); !errors.Is(err, zonal.ErrTooLarge) {
		t.Fatalf("dense limit: got %v", err)
	}
	// ... but are fine as CSR only.
	d, err = ReadLIBSVM(strings.NewReader(b.String()), Options{NoDense: true})
	if err != nil || d.X != nil || d.Sparse.Cols != MaxIndex || d.Sparse.NNZ() != 17 {
		t.Fatalf("NoDense: %v", err)
	}
	if n, c := d.Dims(); n != 17 || c != MaxIndex {
		t.Fatalf("NoDense Dims = %d, %d", n, c)
	}
	// Bad options.
	for _, o := range []Options{{MinCols: -1}, {MinCols: 3, MaxCols: 2}, {MaxRows: -2}} {
		if _, err := ReadLIBSVM(strings.NewReader(in), o); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("options %+v: got %v, want zonal.ErrParam", o, err)
		}
	}
	// Only empty rows: no feature at all.
	for _, o := range []Options{{}, {NoDense: true}, {NoSparse: true}} {
		if _, err := ReadLIBSVM(strings.NewReader("1\n2\n"), o); !errors.Is(err, zonal.ErrEmpty) {
			t.Errorf("rows without features, %+v: got %v", o, err)
		}
	}
	d, err = ReadLIBSVM(strings.NewReader("1\n2\n"), Options{MinCols: 2})
	if err != nil || !mat.Equal(d.X, mat.NewDense(2, 2, nil)) {
		t.Errorf("rows without features, MinCols 2: %v", err)
	}
}

func TestAllowNonFinite(t *testing.T) {
	d, err := ReadLIBSVM(strings.NewReader("nan 1:inf 2:-Infinity 3:NaN\n"), Options{AllowNonFinite: true})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(d.Y[0]) || !math.IsInf(d.X.At(0, 0), 1) || !math.IsInf(d.X.At(0, 1), -1) || !math.IsNaN(d.X.At(0, 2)) {
		t.Fatalf("got Y %v X %v", d.Y, d.X.RawRowView(0))
	}
	c, err := ReadCSV(strings.NewReader("y,a\nInf,-inf\n"), Options{AllowNonFinite: true})
	if err != nil || !math.IsInf(c.Y[0], 1) || !math.IsInf(c.X.At(0, 0), -1) {
		t.Fatalf("CSV: %v", err)
	}
	// Overflow stays an error even then.
	if _, err := ReadLIBSVM(strings.NewReader("1 1:1e400\n"), Options{AllowNonFinite: true}); !errors.Is(err, zonal.ErrFormat) {
		t.Fatalf("1e400: got %v", err)
	}
}

func TestReadCSVTarget(t *testing.T) {
	in := "a,b,c\n1,2,3\n4,5,6\n"
	cases := []struct {
		opts  Options
		y     []float64
		names []string
	}{
		{Options{}, []float64{1, 4}, []string{"b", "c"}}, // no "y": first column
		{Options{Target: "b"}, []float64{2, 5}, []string{"a", "c"}},
		{Options{Target: "2"}, []float64{3, 6}, []string{"a", "b"}},
		{Options{NoTarget: true}, nil, []string{"a", "b", "c"}},
		{Options{TargetOptional: true}, nil, []string{"a", "b", "c"}},
		{Options{TargetOptional: true, Target: "z"}, nil, []string{"a", "b", "c"}},
		{Options{TargetOptional: true, Target: "c"}, []float64{3, 6}, []string{"a", "b"}},
	}
	for _, c := range cases {
		d, err := ReadCSV(strings.NewReader(in), c.opts)
		if err != nil {
			t.Fatalf("%+v: %v", c.opts, err)
		}
		if !slices.Equal(d.Y, c.y) || !slices.Equal(d.Names, c.names) {
			t.Errorf("%+v: Y %v names %v, want %v %v", c.opts, d.Y, d.Names, c.y, c.names)
		}
	}
	d, err := ReadCSV(strings.NewReader("x,y\n1,2\n"), Options{TargetOptional: true})
	if err != nil || d.Y[0] != 2 || d.TargetName != "y" {
		t.Fatalf("TargetOptional with a y column: %v %v", d, err)
	}
	// A UTF-8 byte-order mark before the header is skipped.
	d, err = ReadCSV(strings.NewReader("\ufeffa,y\n1,2\n"), Options{})
	if err != nil || d.TargetName != "y" || d.Names[0] != "a" {
		t.Fatalf("BOM: %v %v", d, err)
	}
	// A column named like a number wins over the index reading (a header
	// of numbers needs Header "yes": "auto" would read it as data).
	d, err = ReadCSV(strings.NewReader("0,1\n5,6\n"), Options{Target: "1", Header: "yes"})
	if err != nil || d.Y[0] != 6 || d.TargetName != "1" {
		t.Fatalf("numeric names: %v %v", d, err)
	}
	// Feature-count checks for test files of a model with d features.
	if _, err := ReadCSV(strings.NewReader(in), Options{MinCols: 3}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("MinCols 3 on 2 features: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader(in), Options{MaxCols: 1}); !errors.Is(err, zonal.ErrRange) {
		t.Errorf("MaxCols 1 on 2 features: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader(in), Options{MinCols: 2, MaxCols: 2}); err != nil {
		t.Errorf("MinCols = MaxCols = 2: %v", err)
	}
	d, err = ReadCSV(strings.NewReader(in), Options{MaxRows: 1})
	if err != nil || len(d.Y) != 1 {
		t.Errorf("MaxRows: %v", err)
	}
}

func TestReadFileFormat(t *testing.T) {
	// Format overrides the name; an unknown name needs Format.
	dir := t.TempDir()
	p := filepath.Join(dir, "data.txt")
	if err := os.WriteFile(p, []byte("1 1:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p, Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("unknown extension: %v", err)
	}
	if d, err := ReadFile(p, Options{Format: "libsvm"}); err != nil || d.X.At(0, 0) != 2 {
		t.Errorf("Format libsvm: %v", err)
	}
	if _, err := ReadFile("-", Options{}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("stdin without Format: %v", err)
	}
	func() { // "-" reads standard input
		f, err := os.Open(filepath.Join("testdata", "small.csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		saved := os.Stdin
		os.Stdin = f
		defer func() { os.Stdin = saved }()
		d, err := ReadFile("-", Options{Format: "csv"})
		if err != nil {
			t.Fatal(err)
		}
		sameData(t, "stdin", d, &Data{X: denseOf(smallX), Y: smallY})
	}()
	if _, err := ReadFile(p, Options{Format: "parquet"}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("bad format: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.csv"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// Errors from a file carry its path and the line.
	bad := filepath.Join(dir, "bad.svm")
	os.WriteFile(bad, []byte("1 1:2\n1 0:1\n"), 0o644)
	_, err := ReadFile(bad, Options{})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad.svm: %v", err)
	}
}

type errCase struct {
	name string
	in   string
	opts Options
	line int   // 0: no line expected
	is   error // sentinel the error must wrap
	msg  string
}

func checkErrCases(t *testing.T, read func(string, Options) (*Data, error), cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := read(c.in, c.opts)
			if err == nil {
				t.Fatalf("no error; got %d rows", len(d.Y))
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %q does not wrap %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", err, c.msg)
			}
			var pe *ParseError
			if c.line > 0 {
				if !errors.As(err, &pe) || pe.Line != c.line {
					t.Errorf("error %q: want a ParseError at line %d", err, c.line)
				}
			}
		})
	}
}

func TestReadLIBSVMErrors(t *testing.T) {
	cases := []errCase{
		{"empty", "", Options{}, 0, zonal.ErrEmpty, "no data lines"},
		{"comments only", "# nothing\n\n   \n", Options{}, 0, zonal.ErrEmpty, "3 lines"},
		{"bad value", "1 1:2\n1 1:abc\n", Options{}, 2, zonal.ErrFormat, `bad number "abc"`},
		{"bad label", "abc 1:2\n", Options{}, 1, zonal.ErrFormat, "for the label"},
		{"empty value", "1 1:\n", Options{}, 1, zonal.ErrFormat, "bad number"},
		{"hex value", "1 1:0x10\n", Options{}, 1, zonal.ErrFormat, "bad number"},
		{"underscore", "1 1:1_0\n", Options{}, 1, zonal.ErrFormat, "bad number"},
		{"double colon", "1 1:2:3\n", Options{}, 1, zonal.ErrFormat, "bad number"},
		{"index 0", "1 1:2\n\n2 0:1\n", Options{}, 3, zonal.ErrFormat, "index 0"},
		{"decreasing", "1 3:1 2:1\n", Options{}, 1, zonal.ErrFormat, "does not increase"},
		{"repeated", "1 2:1 2:1\n", Options{}, 1, zonal.ErrFormat, "does not increase"},
		{"negative index", "1 -1:2\n", Options{}, 1, zonal.ErrFormat, "bad index"},
		{"signed index", "1 +1:2\n", Options{}, 1, zonal.ErrFormat, "bad index"},
		{"no index", "1 :2\n", Options{}, 1, zonal.ErrFormat, "bad index"},
		{"no colon", "1 1:2 foo\n", Options{}, 1, zonal.ErrFormat, "not index:value"},
		{"NaN value", "1 1:nan\n", Options{}, 1, zonal.ErrNonFinite, "NaN/Inf not allowed"},
		{"Inf label", "1 1:1\n-Inf 1:1\n", Options{}, 2, zonal.ErrNonFinite, "the label"},
		{"overflow", "1 1:1e400\n", Options{}, 1, zonal.ErrFormat, "out of float64 range"},
		{"huge index", "1 99999999999999999999999:1\n", Options{}, 1, zonal.ErrTooLarge, "MaxIndex"},
		{"above MaxCols", "1 4:1\n1 5:1\n", Options{MaxCols: 4}, 2, zonal.ErrRange, "MaxCols = 4"},
		{"bad qid", "1 qid:x 1:2\n", Options{}, 1, zonal.ErrFormat, "bad qid"},
		{"huge qid", "1 qid:99999999999999999999 1:2\n", Options{}, 1, zonal.ErrFormat, "bad qid"},
		{"late qid", "1 1:2 qid:3\n", Options{}, 1, zonal.ErrFormat, "bad index"},
		{"space in token", "1 1 :2\n", Options{}, 1, zonal.ErrFormat, "not index:value"},
	}
	checkErrCases(t, func(s string, o Options) (*Data, error) { return ReadLIBSVM(strings.NewReader(s), o) }, cases)
}

func TestReadCSVErrors(t *testing.T) {
	cases := []errCase{
		{"empty", "", Options{}, 0, zonal.ErrEmpty, "no header"},
		{"header only", "y,a\n", Options{}, 0, zonal.ErrEmpty, "no data rows"},
		{"ragged short", "y,a\n1,2\n3\n", Options{}, 3, zonal.ErrFormat, "row has 1 fields, the header has 2"},
		{"ragged long", "y,a\n1,2,3\n", Options{}, 2, zonal.ErrFormat, "row has 3 fields"},
		{"bad number", "y,a\n\n1,2\n\n1,abc\n", Options{}, 5, zonal.ErrFormat, `bad number "abc" in column "a"`},
		{"empty value", "y,a\n1,\n", Options{}, 2, zonal.ErrFormat, "empty value"},
		{"NA", "y,a\n1,NA\n", Options{}, 2, zonal.ErrFormat, "bad number"},
		{"NaN", "y,a\n1,NaN\n", Options{}, 2, zonal.ErrNonFinite, "NaN/Inf not allowed"},
		{"overflow", "y,a\n1,-1e999\n", Options{}, 2, zonal.ErrFormat, "out of float64 range"},
		{"empty name", "y,,a\n1,2,3\n", Options{}, 1, zonal.ErrFormat, "empty name"},
		{"control character", "y,a\rb\n1,2\n", Options{}, 1, zonal.ErrFormat, "control character"},
		{"duplicate name", "y,a,a\n1,2,3\n", Options{}, 1, zonal.ErrFormat, `both named "a"`},
		{"missing target", "y,a\n1,2\n", Options{Target: "z"}, 0, zonal.ErrParam, `line 1 (header): no column named "z"`},
		{"target index", "y,a\n1,2\n", Options{Target: "2"}, 0, zonal.ErrParam, "not below"},
		{"no features", "y\n1\n", Options{}, 0, zonal.ErrEmpty, "no feature"},
		{"unterminated quote", "y,a\n1,\"2\n", Options{}, 2, zonal.ErrFormat, "unterminated"},
		{"quote in field", "y,a\n1,2\"3\n", Options{}, 2, zonal.ErrFormat, "quote inside"},
		{"text after quote", "y,a\n1,\"2\"x\n", Options{}, 2, zonal.ErrFormat, "after closing quote"},
		{"too few columns", "y,a\n1,2\n", Options{MinCols: 2}, 0, zonal.ErrRange, "MinCols"},
	}
	checkErrCases(t, func(s string, o Options) (*Data, error) { return ReadCSV(strings.NewReader(s), o) }, cases)
}

func TestCorruptGzip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "small.libsvm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	// Truncated stream.
	if _, err := ReadLIBSVM(bytes.NewReader(raw[:len(raw)/2]), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("truncated gzip: got %v", err)
	}
	// Flipped byte in the CRC trailer.
	bad := slices.Clone(raw)
	bad[len(bad)-6] ^= 0xff
	if _, err := ReadLIBSVM(bytes.NewReader(bad), Options{}); !errors.Is(err, zonal.ErrFormat) || !errors.Is(err, gzip.ErrChecksum) {
		t.Errorf("bad checksum: got %v", err)
	}
	// Magic bytes but a broken header.
	if _, err := ReadCSV(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), Options{}); !errors.Is(err, zonal.ErrFormat) {
		t.Errorf("bad gzip header: got %v", err)
	}
}

// errReader fails after its content.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadErrorPropagates(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadLIBSVM(&errReader{[]byte("1 1:2\n"), boom}, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("LIBSVM: got %v", err)
	}
	_, err = ReadCSV(&errReader{[]byte("y,a\n"), boom}, Options{})
	if !errors.Is(err, boom) {
		t.Errorf("CSV: got %v", err)
	}
}

func TestLongLines(t *testing.T) {
	// Lines longer than the 64 KiB read buffer are assembled correctly.
	const d = 20000
	var b strings.Builder
	b.WriteString("1")
	for j := 1; j <= d; j++ {
		b.WriteString(" ")
		b.WriteString(itoa(j) + ":" + itoa(j%7))
	}
	b.WriteString("\n2 3:1\n")
	got, err := ReadLIBSVM(strings.NewReader(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, c := got.Dims(); n != 2 || c != d {
		t.Fatalf("dims %d x %d", n, c)
	}
	for j := 0; j < d; j++ {
		if got.X.At(0, j) != float64((j+1)%7) {
			t.Fatalf("X[0,%d] = %v", j, got.X.At(0, j))
		}
	}
	if got.X.At(1, 2) != 1 || got.Y[1] != 2 {
		t.Fatal("second row wrong")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	k := len(buf)
	for ; i > 0; i /= 10 {
		k--
		buf[k] = byte('0' + i%10)
	}
	return string(buf[k:])
}

func TestParseNumber(t *testing.T) {
	// Accepted numbers agree bit for bit with strconv.ParseFloat, on both
	// the fast path (short integers and decimals) and the slow path.
	good := []string{"0", "-0", "+0", "1", "-17", "255", "0.5", ".5", "5.", "-.25",
		"0.1", "0.3", "123456.789", "9007199254740991", "9007199254740993",
		"12345678901234567890", "0.000000000000000000001", "1e5", "1E-5", "2.5e+3",
		"1.7976931348623157e308", "4.9e-324", "1e-400", "0.1234567890123456789",
		"3.141592653589793", "100000000000000000000000", "1.000000000000000000000000001"}
	for _, s := range good {
		got, st := parseNumber([]byte(s))
		want, err := strconvParse(s)
		if st != numOK || err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseNumber(%q) = %v (status %d), strconv %v (%v)", s, got, st, want, err)
		}
		got2, _ := parseNumber(s)
		if math.Float64bits(got2) != math.Float64bits(got) {
			t.Errorf("string and []byte paths differ for %q", s)
		}
	}
	bad := []string{"", "+", "-", ".", "-.", "e5", "1e", "1e+", "1.2.3", "0x10", "1_000",
		" 1", "1 ", "1,5", "--1", "1-", "in", "nana", "infinit", "1d5", "0x1p-2", "٣"}
	for _, s := range bad {
		if _, st := parseNumber([]byte(s)); st != numSyntax {
			t.Errorf("parseNumber(%q) status %d, want syntax error", s, st)
		}
	}
	for _, s := range []string{"nan", "NaN", "-nan", "inf", "+Inf", "-INF", "Infinity", "-infinity"} {
		if _, st := parseNumber([]byte(s)); st != numNonFinite {
			t.Errorf("parseNumber(%q) status %d, want non-finite", s, st)
		}
	}
	if _, st := parseNumber([]byte("-1e309")); st != numOverflow {
		t.Errorf("-1e309 not reported as overflow")
	}
}

// TestGzipEarlyErrorStopsReader checks that an error early in a long gzip
// stream returns promptly and leaves no decompression goroutine behind.
func TestGzipEarlyErrorStopsReader(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("1 1:1\n1 0:1\n"))
	line := []byte("1 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8\n")
	for range 200000 { // ~7 MB uncompressed: far more than the read-ahead buffers
		zw.Write(line)
	}
	zw.Close()
	var cbuf bytes.Buffer
	zw = gzip.NewWriter(&cbuf)
	zw.Write([]byte("y,a\n1,x\n"))
	for range 500000 {
		zw.Write([]byte("1,2\n"))
	}
	zw.Close()
	before := runtime.NumGoroutine()
	for range 5 {
		_, err := ReadLIBSVM(bytes.NewReader(buf.Bytes()), Options{})
		if !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("got %v", err)
		}
		_, err = ReadCSV(bytes.NewReader(cbuf.Bytes()), Options{})
		if !errors.Is(err, zonal.ErrFormat) {
			t.Fatalf("CSV: got %v", err)
		}
	}
	// The readers join their decompression goroutine before returning, so
	// the count must come back to where it was. Other tests' runtime helpers
	// (timers, finalizers) may come and go meanwhile, so allow them up to 5 s
	// to settle: a leaked reader blocks forever and still fails.
	if after := settledGoroutines(before); after > before {
		t.Fatalf("%d goroutines before, %d after", before, after)
	}
	// MaxRows also stops early and cleans up (with the same allowance: the
	// check right after the call failed whenever a runtime helper was
	// running at that instant).
	d, err := ReadLIBSVM(bytes.NewReader(buf.Bytes()[:]), Options{MaxRows: 1})
	if err != nil || len(d.Y) != 1 {
		t.Fatalf("MaxRows 1: %v", err)
	}
	if after := settledGoroutines(before); after > before {
		t.Fatalf("MaxRows: %d goroutines before, %d after", before, after)
	}
}

// settledGoroutines returns runtime.NumGoroutine() once it is at most
// before, or after 5 s.
func settledGoroutines(before int) int {
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return after
}

func TestLineLengthLimit(t *testing.T) {
	// The limit applies to lines assembled beyond the 64 KiB buffer; a test
	// limit of 100 KiB stands in for MaxLineBytes (64 MiB).
	long := "1 1:" + strings.Repeat("1", 200<<10) + "\n"
	lr, err := newLineReader(strings.NewReader("1 1:1\n" + long))
	if err != nil {
		t.Fatal(err)
	}
	defer lr.close()
	lr.limit = 100 << 10
	if _, ok := lr.next(); !ok {
		t.Fatal("first line")
	}
	if _, ok := lr.next(); ok {
		t.Fatal("over-long line accepted")
	}
	var pe *ParseError
	if err := lr.error(); !errors.Is(err, zonal.ErrTooLarge) || !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("got %v", err)
	}
	// Below the limit the same line is read whole.
	lr2, _ := newLineReader(strings.NewReader(long))
	defer lr2.close()
	if b, ok := lr2.next(); !ok || len(b) != len(long)-1 {
		t.Fatalf("long line: ok %v, %d bytes", ok, len(b))
	}
}

// TestNoSparseMatchesDefault reads a file with several 64Ki-entry blocks
// (and empty rows, including at block boundaries' neighbourhood) both ways.
func TestNoSparseMatchesDefault(t *testing.T) {
	rows := 3000
	if testing.Short() {
		rows = 1000 // still 80k entries: more than one block
	}
	x := randomSparse(rows, 200, 0.4, 11)
	for i := 0; i < rows; i += 7 {
		for j := 0; j < 200; j++ {
			x.Set(i, j, 0) // empty rows
		}
	}
	y := make([]float64, rows)
	for i := range y {
		y[i] = float64(i % 3)
	}
	var buf bytes.Buffer
	if err := WriteLIBSVM(&buf, x, y); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	a, err := ReadLIBSVM(bytes.NewReader(raw), Options{MinCols: 200})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadLIBSVM(bytes.NewReader(raw), Options{MinCols: 200, NoSparse: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Sparse != nil || a.Sparse.NNZ() <= chunkLen {
		t.Fatalf("NoSparse kept the CSR, or too few entries (%d) to cross a block", a.Sparse.NNZ())
	}
	sameData(t, "NoSparse", b, a)
	if !mat.Equal(a.X, x) {
		t.Fatal("read X differs from the written matrix")
	}
	if _, err := ReadLIBSVM(bytes.NewReader(raw), Options{NoSparse: true, NoDense: true}); !errors.Is(err, zonal.ErrParam) {
		t.Fatalf("NoSparse+NoDense: %v", err)
	}
}

// TestReadCSVHeader: Header "auto" takes a first row of numbers as data (no
// row is lost), "yes" forces it to be the header, "no" reads every line as
// data; without a header Target indexes the columns.
func TestReadCSVHeader(t *testing.T) {
	const headerless = "1,2,3\n4,5,6\n"
	for _, c := range []struct {
		in     string
		opts   Options
		rows   int
		y0, x0 float64
		names  int
	}{
		{headerless, Options{}, 2, 1, 2, 0},
		{headerless, Options{Header: "auto"}, 2, 1, 2, 0},
		{headerless, Options{Header: "no"}, 2, 1, 2, 0},
		{headerless, Options{Header: "yes"}, 1, 4, 5, 2},
		{headerless, Options{Target: "2"}, 2, 3, 1, 0},
		{"-1e400,nan,Inf\n4,5,6\n", Options{AllowNonFinite: true, Header: "auto"}, 0, 0, 0, 0}, // all numeric: data (then 1e400 is an error)
		{"y,a,b\n1,2,3\n", Options{}, 1, 1, 2, 2},
		{"a,1,2\n7,8,9\n", Options{}, 1, 7, 8, 2}, // one name is enough for a header
	} {
		d, err := ReadCSV(strings.NewReader(c.in), c.opts)
		if c.rows == 0 {
			if err == nil || !strings.Contains(err.Error(), "line 1") {
				t.Errorf("%q %+v: want an error at line 1, got %v", c.in, c.opts, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q %+v: %v", c.in, c.opts, err)
			continue
		}
		n, _ := d.Dims()
		if n != c.rows || d.Y[0] != c.y0 || d.X.At(0, 0) != c.x0 || len(d.Names) != c.names {
			t.Errorf("%q %+v: %d rows, y0 %g, x00 %g, names %v; want %d, %g, %g, %d names",
				c.in, c.opts, n, d.Y[0], d.X.At(0, 0), d.Names, c.rows, c.y0, c.x0, c.names)
		}
	}
	if _, err := ReadCSV(strings.NewReader(headerless), Options{Header: "maybe"}); !errors.Is(err, zonal.ErrParam) {
		t.Errorf("Header maybe: got %v", err)
	}
	// Headerless prediction input: no "y" column, so TargetOptional makes
	// every column a feature.
	d, err := ReadCSV(strings.NewReader(headerless), Options{TargetOptional: true})
	if err != nil || d.Y != nil {
		t.Fatalf("TargetOptional headerless: %v, Y %v", err, d)
	}
	if _, c := d.Dims(); c != 3 {
		t.Errorf("TargetOptional headerless: %d columns, want 3", c)
	}
}

package dataset

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// benchRead reads a shared .gz file from disk, as the CLI does. Bytes/s
// count the compressed file size.
func benchRead(b *testing.B, name string) { benchReadOpts(b, name, Options{}) }

func benchReadOpts(b *testing.B, name string, opts Options) {
	path := sharedFile(b, name)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadFile(path, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// benchParse reads the decompressed content from memory: the parser alone.
// Bytes/s count the uncompressed text.
func benchParse(b *testing.B, name string, read func(io.Reader, Options) (*Data, error)) {
	f, err := os.Open(sharedFile(b, name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := read(bytes.NewReader(raw), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadLIBSVMMNISTTest(b *testing.B)  { benchRead(b, "mnist_test.libsvm.gz") }
func BenchmarkReadCSVMNISTTest(b *testing.B)     { benchRead(b, "mnist_test.csv.gz") }
func BenchmarkReadLIBSVMMNISTTrain(b *testing.B) { benchRead(b, "mnist_train.libsvm.gz") }
func BenchmarkReadCSVMNISTTrain(b *testing.B)    { benchRead(b, "mnist_train.csv.gz") }
func BenchmarkReadLIBSVMMNISTTrainNoSparse(b *testing.B) {
	benchReadOpts(b, "mnist_train.libsvm.gz", Options{NoSparse: true})
}

func BenchmarkParseLIBSVMMNISTTest(b *testing.B) { benchParse(b, "mnist_test.libsvm.gz", ReadLIBSVM) }
func BenchmarkParseCSVMNISTTest(b *testing.B)    { benchParse(b, "mnist_test.csv.gz", ReadCSV) }
func BenchmarkParseCSVSpam(b *testing.B)         { benchParse(b, "spam.csv.gz", ReadCSV) }

// BenchmarkStandardizerFit measures Fit on MNIST-test-sized data (four
// passes over 10000 x 784).
func BenchmarkStandardizerFit(b *testing.B) {
	d, err := ReadFile(sharedFile(b, "mnist_test.libsvm.gz"), Options{MinCols: 784})
	if err != nil {
		b.Fatal(err)
	}
	var s Standardizer
	for b.Loop() {
		if err := s.Fit(d.X); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMB is the size of the generated benchmark inputs in MB of text:
// ZONAL_BENCH_MB, default 1 (so that -benchtime 1x runs in a moment; the
// speed figures want about 100).
func benchMB(b *testing.B) int {
	s := os.Getenv("ZONAL_BENCH_MB")
	if s == "" {
		return 1
	}
	mb, err := strconv.Atoi(s)
	if err != nil || mb <= 0 {
		b.Fatalf("ZONAL_BENCH_MB=%q: want a positive integer", s)
	}
	return mb
}

// generated returns about mb MB of CSV (30 columns of short decimals,
// header "y,x1,...") or LIBSVM (200 columns, density 0.2) text, seeded.
func generated(format string, mb int) []byte {
	rng := rand.New(rand.NewPCG(uint64(mb), 7))
	var b bytes.Buffer
	b.Grow(mb<<20 + 1<<16)
	num := func() { b.WriteString(strconv.FormatFloat(math.Round(rng.NormFloat64()*1e4)/1e4, 'f', -1, 64)) }
	if format == "csv" {
		b.WriteString("y")
		for j := 1; j < 30; j++ {
			fmt.Fprintf(&b, ",x%d", j)
		}
		b.WriteByte('\n')
	}
	for b.Len() < mb<<20 {
		b.WriteString(strconv.Itoa(rng.IntN(10)))
		if format == "csv" {
			for range 29 {
				b.WriteByte(',')
				num()
			}
		} else {
			for j := 1; j <= 200; j++ {
				if rng.IntN(5) == 0 {
					b.WriteString(" " + strconv.Itoa(j) + ":")
					num()
				}
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func gzipped(raw []byte) []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	zw.Write(raw)
	zw.Close()
	return z.Bytes()
}

// benchGenerated reads generated text from memory, plain and gzip;
// bytes/s count the uncompressed text.
func benchGenerated(b *testing.B, format string, read func(io.Reader, Options) (*Data, error)) {
	raw := generated(format, benchMB(b))
	for _, c := range []struct {
		name string
		in   []byte
	}{{"plain", raw}, {"gzip", gzipped(raw)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := read(bytes.NewReader(c.in), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadCSV(b *testing.B)    { benchGenerated(b, "csv", ReadCSV) }
func BenchmarkReadLIBSVM(b *testing.B) { benchGenerated(b, "libsvm", ReadLIBSVM) }

// BenchmarkReadFileEnv reads the file named by ZONAL_BENCH_FILE (format
// from its name, plain or gzip) from disk, as the CLI does; bytes/s count
// its uncompressed text, for comparison with `zcat FILE | wc -l`.
func BenchmarkReadFileEnv(b *testing.B) {
	path := os.Getenv("ZONAL_BENCH_FILE")
	if path == "" {
		b.Skip("set ZONAL_BENCH_FILE to a .csv, .libsvm or .svm file, optionally .gz")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	src, _, err := openInput(f)
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.Copy(io.Discard, src)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := ReadFile(path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

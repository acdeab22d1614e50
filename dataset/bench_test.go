package dataset

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
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

package dataset

import (
	"os"
	"testing"
)

func benchRead(b *testing.B, name string) {
	path := sharedFile(b, name)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		d, err := ReadFile(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = d
	}
}

// The figures count compressed bytes per second (SetBytes is the .gz size).
func BenchmarkReadLIBSVMMNISTTest(b *testing.B)  { benchRead(b, "mnist_test.libsvm.gz") }
func BenchmarkReadCSVMNISTTest(b *testing.B)     { benchRead(b, "mnist_test.csv.gz") }
func BenchmarkReadLIBSVMMNISTTrain(b *testing.B) { benchRead(b, "mnist_train.libsvm.gz") }
func BenchmarkReadCSVMNISTTrain(b *testing.B)    { benchRead(b, "mnist_train.csv.gz") }

package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/zonal-ml/zonal/internal/shareddata"
	"gonum.org/v1/gonum/mat"
)

func TestDigits(t *testing.T) {
	h := sha256.Sum256(digitsCSV)
	if got := hex.EncodeToString(h[:]); got != DigitsSHA256 {
		t.Fatalf("embedded digits.csv.gz SHA-256 %s, want %s", got, DigitsSHA256)
	}
	d, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	n, c := d.Dims()
	if n != 1797 || c != 64 || len(d.Y) != 1797 || len(d.Names) != 64 {
		t.Fatalf("Digits: %d x %d, %d labels, %d names", n, c, len(d.Y), len(d.Names))
	}
	if d.Names[0] != "pixel_0_0" || d.Names[63] != "pixel_7_7" || d.TargetName != "y" {
		t.Errorf("names %q ... %q, target %q", d.Names[0], d.Names[63], d.TargetName)
	}
	// Class sizes of scikit-learn's digits (load_digits, documented there).
	want := [10]int{178, 182, 177, 183, 181, 182, 181, 179, 174, 180}
	var got [10]int
	for _, y := range d.Y {
		if y != math.Trunc(y) || y < 0 || y > 9 {
			t.Fatalf("label %v not in 0..9", y)
		}
		got[int(y)]++
	}
	if got != want {
		t.Errorf("label counts %v, want %v", got, want)
	}
	// Pixels are counts 0..16 (4x4 blocks of a 32x32 bitmap).
	for _, v := range d.X.RawMatrix().Data {
		if v != math.Trunc(v) || v < 0 || v > 16 {
			t.Fatalf("pixel %v not an integer in 0..16", v)
		}
	}
	// Every call returns an independent copy.
	d.X.Set(0, 0, 99)
	d.Y[0] = 42
	e, err := Digits()
	if err != nil {
		t.Fatal(err)
	}
	if e.X.At(0, 0) == 99 || e.Y[0] == 42 {
		t.Error("Digits shares memory between calls")
	}
	// The embedded copy agrees with the shared LIBSVM version when present.
	if dir := shareddata.Dir(); dir != "" {
		l, err := ReadFile(sharedFile(t, "digits.libsvm.gz"), Options{MinCols: 64, MaxCols: 64})
		if err != nil {
			t.Fatal(err)
		}
		sameData(t, "digits", l, e)
	}
}

func ExampleDigits() {
	d, err := Digits()
	if err != nil {
		panic(err)
	}
	n, c := d.Dims()
	fmt.Println(n, c, d.Y[:10])
	// The first image, as 8 rows of 8 pixel counts.
	fmt.Println(mat.Formatted(mat.NewDense(8, 8, d.X.RawRowView(0))))
	// Output:
	// 1797 64 [0 1 2 3 4 5 6 7 8 9]
	// ⎡ 0   0   5  13   9   1   0   0⎤
	// ⎢ 0   0  13  15  10  15   5   0⎥
	// ⎢ 0   3  15   2   0  11   8   0⎥
	// ⎢ 0   4  12   0   0   8   8   0⎥
	// ⎢ 0   5   8   0   0   9   8   0⎥
	// ⎢ 0   4  11   0   1  12   7   0⎥
	// ⎢ 0   2  14   5  10  12   0   0⎥
	// ⎣ 0   0   6  13  10   0   0   0⎦
}

// TestDigitsConcurrent runs Digits from several goroutines (the first call
// parses; run under -race this checks the lazy initialisation).
func TestDigitsConcurrent(t *testing.T) {
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			d, err := Digits()
			if err == nil && len(d.Y) != 1797 {
				err = fmt.Errorf("%d rows", len(d.Y))
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

package dataset

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSharedLIBSVMMatchesCSV reads each shared data set in both formats and
// requires exactly equal X and Y (the README promises identical numbers:
// integers as integers, other values in shortest round-trip form), with the
// LIBSVM file padded to the CSV's width and checked against it as MaxCols.
func TestSharedLIBSVMMatchesCSV(t *testing.T) {
	sets := []struct {
		name string
		n, d int
	}{
		{"digits", 1797, 64},
		{"diabetes", 442, 10},
		{"breast_cancer", 569, 30},
		{"BostonHousing", 506, 13},
		{"Ozone", 330, 11},
		{"spam", 4601, 57},
		{"mnist_test", 10000, 784},
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			csvPath := sharedFile(t, s.name+".csv.gz")
			libPath := sharedFile(t, s.name+".libsvm.gz")
			opts := Options{}
			n := s.n
			if testing.Short() && s.n > 2000 {
				// Under -race -short read a prefix only: same checks, fewer rows.
				n = 2000
				opts.MaxRows = n
			}
			c, err := ReadFile(csvPath, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r, d := c.Dims(); r != n || d != s.d || len(c.Names) != s.d || c.TargetName != "y" {
				t.Fatalf("CSV: %d x %d (%d names, target %q), want %d x %d, y", r, d, len(c.Names), c.TargetName, n, s.d)
			}
			opts.MinCols, opts.MaxCols = s.d, s.d
			l, err := ReadFile(libPath, opts)
			if err != nil {
				t.Fatal(err)
			}
			sameData(t, s.name, l, c)
			if err := l.Sparse.Validate(); err != nil {
				t.Fatal(err)
			}
			// The files omit zeros, so the CSR equals NewCSRFromDense of the CSV.
			f := NewCSRFromDense(c.X)
			if f.NNZ() != l.Sparse.NNZ() {
				t.Fatalf("nnz: LIBSVM %d, NewCSRFromDense(CSV) %d", l.Sparse.NNZ(), f.NNZ())
			}
			if !mat.Equal(l.Sparse.ToDense(), c.X) {
				t.Fatal("CSR content differs from the CSV")
			}
		})
	}
}

// TestSharedChecksums verifies the shared files against SHA256SUMS, so a
// damaged copy is reported as such rather than as a reader bug.
func TestSharedChecksums(t *testing.T) {
	sums := sharedFile(t, "SHA256SUMS")
	f, err := os.Open(sums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	checked := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		if testing.Short() && strings.HasPrefix(fields[1], "mnist_train") {
			continue
		}
		// Entries name files of this folder, some written from its parent
		// ("data/NAME"): read the file by its base name.
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(sums), filepath.Base(fields[1])))
		if errors.Is(err, fs.ErrNotExist) {
			// A partial copy of the folder (a machine that fetched only
			// some sets): an absent file is skipped, as shareddata.File
			// skips the tests that need it; a present one must match.
			t.Logf("%s: listed in SHA256SUMS but absent; not checked", fields[1])
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(raw)
		if hex.EncodeToString(h[:]) != fields[0] {
			t.Errorf("%s: SHA-256 mismatch", fields[1])
		}
		if fields[1] == "digits.csv.gz" && fields[0] != DigitsSHA256 {
			t.Errorf("DigitsSHA256 %s differs from SHA256SUMS %s", DigitsSHA256, fields[0])
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no checksum lines")
	}
}

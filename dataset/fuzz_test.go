package dataset

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fuzzMaxCols keeps fuzzed inputs from allocating wide dense matrices; the
// index limit logic itself is exercised (an index above it is an error).
const fuzzMaxCols = 4096

func addSeedFiles(f *testing.F, names ...string) {
	for _, nm := range names {
		raw, err := os.ReadFile(filepath.Join("testdata", nm))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
}

// checkData verifies the invariants every successful read must satisfy.
func checkData(t *testing.T, d *Data, allowNonFinite bool) {
	n, c := d.Dims()
	if n < 1 || c < 1 || (d.Y != nil && len(d.Y) != n) {
		t.Fatalf("bad shape %d x %d, %d targets", n, c, len(d.Y))
	}
	if d.Names != nil && len(d.Names) != c {
		t.Fatalf("%d names for %d columns", len(d.Names), c)
	}
	if !allowNonFinite {
		for _, v := range append(d.X.RawMatrix().Data, d.Y...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite value %v accepted", v)
			}
		}
	}
	if d.Sparse != nil {
		if err := d.Sparse.Validate(); err != nil {
			t.Fatal(err)
		}
		// NaN != NaN, so compare bit patterns through the CSR view.
		back := d.Sparse.ToDense()
		a, b := back.RawMatrix().Data, d.X.RawMatrix().Data
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatal("Sparse and X differ")
			}
		}
	}
}

func FuzzReadLIBSVM(f *testing.F) {
	addSeedFiles(f, "small.libsvm", "small.libsvm.gz")
	for _, s := range []string{
		"1 1:2\n", "-1 3:0.5 10:1e-3\n+1\n", "1 qid:2 1:1 # c\n\n# only\n", "1 0:1\n", "1 2:1 1:1\n",
		"nan 1:inf\n", "1 1:1e400\n", "1 99999999999999:1\n", "1\t1:1\r\n2 2:2", "1 1:0x1p3\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, allow := range []bool{false, true} {
			d, err := ReadLIBSVM(bytes.NewReader(in), Options{MaxCols: fuzzMaxCols, AllowNonFinite: allow})
			if err != nil {
				continue
			}
			checkData(t, d, allow)
			if _, c := d.Dims(); c > fuzzMaxCols {
				t.Fatalf("%d columns above MaxCols", c)
			}
			roundTrip(t, d, allow)
			// The dense-only path builds the same X.
			_, c := d.Dims()
			dn, err := ReadLIBSVM(bytes.NewReader(in), Options{MaxCols: fuzzMaxCols, AllowNonFinite: allow, NoSparse: true})
			if err != nil || dn.Sparse != nil {
				t.Fatalf("NoSparse read: %v", err)
			}
			if _, c2 := dn.Dims(); c2 != c || !sameValues(dn.X.RawMatrix().Data, d.X.RawMatrix().Data) {
				t.Fatal("NoSparse X differs")
			}
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	addSeedFiles(f, "small.csv", "small.csv.gz")
	for _, s := range []string{
		"y,a\n1,2\n", "a,b,c\n1,2,3\n4,5\n", `"y","a ""q"""` + "\n1, 2 \n", "y,a\n1,\"2\n", "y\n1\n",
		"y,a\nNaN,inf\n", "y,a,a\n1,2,3\n", "\n\ny,a\r\n1,2\r\n", "y,a\n1,1_0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, o := range []Options{{}, {AllowNonFinite: true, Target: "1"}, {NoTarget: true}} {
			d, err := ReadCSV(bytes.NewReader(in), o)
			if err != nil {
				continue
			}
			checkData(t, d, o.AllowNonFinite)
			if o.NoTarget != (d.Y == nil) {
				t.Fatal("NoTarget and Y disagree")
			}
			roundTrip(t, d, o.AllowNonFinite)
		}
	})
}

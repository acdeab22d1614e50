package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/dataset"
)

// parseAll parses text as the file name in blocks of size rows.
func parseAll(t *testing.T, sp parseSpec, name string, text []byte) ([]Block, []string, error) {
	t.Helper()
	var blocks []Block
	var dead []string
	err := sp.parse(context.Background(), name, bytes.NewReader(text), func(b Block) error {
		blocks = append(blocks, b)
		return nil
	}, func(s string) { dead = append(dead, s) })
	return blocks, dead, err
}

// sameRows reports where two block lists hold different rows (labels,
// entries, file row indices), or "".
func sameRows(a, b []Block) string {
	type row struct {
		file int
		y    float64
		e    string
	}
	flat := func(bs []Block) []row {
		var out []row
		for _, b := range bs {
			for i := 0; i < b.Rows(); i++ {
				out = append(out, row{b.First + i, b.Y[i], fmt.Sprint(b.Idx[b.Ptr[i]:b.Ptr[i+1]], b.Val[b.Ptr[i]:b.Ptr[i+1]])})
			}
		}
		return out
	}
	ra, rb := flat(a), flat(b)
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d rows, want %d", len(ra), len(rb))
	}
	for i := range ra {
		if ra[i] != rb[i] {
			return fmt.Sprintf("row %d: %+v, want %+v", i, ra[i], rb[i])
		}
	}
	return ""
}

// wholeBlocks is the previous reading: the file parsed whole by the
// dataset readers, then cut into blocks.
func wholeBlocks(t *testing.T, format, name string, text []byte, opts dataset.Options, size int) []Block {
	t.Helper()
	var d *dataset.Data
	var err error
	if format == "csv" {
		d, err = dataset.ReadCSV(bytes.NewReader(text), opts)
	} else {
		opts.NoDense = true
		d, err = dataset.ReadLIBSVM(bytes.NewReader(text), opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Block
	bb := newBlockBuilder(name, size, format == "libsvm", func(b Block) { out = append(out, b) })
	addData(bb, d)
	bb.flush()
	return out
}

func gz(b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// TestBlockParsingEqualsWhole: a file streamed in blocks of 1, 7, 59, 60
// or 1024 lines gives the rows the whole-file readers give (LIBSVM with
// comments and blank lines, plain and gzip; CSV with and without a
// header), and a bad line's error names the line the whole-file reader
// names.
func TestBlockParsingEqualsWhole(t *testing.T) {
	var lib, csvH, csvN strings.Builder
	csvH.WriteString("a,y,b\n")
	for i := 0; i < 60; i++ {
		if i%11 == 3 {
			lib.WriteString("# comment\n\n")
			csvH.WriteString("\n")
		}
		fmt.Fprintf(&lib, "%d %d:%g %d:0.5\n", i%3, 1+i%5, float64(i)/7, 6+i%9)
		fmt.Fprintf(&csvH, "%g,%d,%d\n", float64(i)/3, i%4, i%2)
		fmt.Fprintf(&csvN, "%d,%g,%d\n", i%4, float64(i)/3, i%2)
	}
	for _, c := range []struct {
		name, format string
		text         []byte
		opts         dataset.Options
	}{
		{"a.libsvm", "libsvm", []byte(lib.String()), dataset.Options{}},
		{"a.libsvm.gz", "libsvm", gz([]byte(lib.String())), dataset.Options{}},
		{"h.csv", "csv", []byte(csvH.String()), dataset.Options{}},
		{"n.csv.gz", "csv", gz([]byte(csvN.String())), dataset.Options{}},
	} {
		plain := c.text
		if strings.HasSuffix(c.name, ".gz") {
			r, _ := gzip.NewReader(bytes.NewReader(c.text))
			var b bytes.Buffer
			b.ReadFrom(r)
			plain = b.Bytes()
		}
		for _, size := range []int{1, 7, 59, 60, 1024} {
			got, dead, err := parseAll(t, parseSpec{BlockRows: size}, c.name, c.text)
			if err != nil || len(dead) > 0 {
				t.Fatalf("%s: %v %v", c.name, err, dead)
			}
			if want := (60 + size - 1) / size; len(got) != want { // 60 rows
				t.Errorf("%s: %d blocks of %d rows, want %d", c.name, len(got), size, want)
			}
			if diff := sameRows(got, wholeBlocks(t, c.format, c.name, plain, c.opts, size)); diff != "" {
				t.Errorf("%s in blocks of %d: %s", c.name, size, diff)
			}
		}
	}
	// A bad line in the fourth block: the same line number as the whole
	// file's reader; with Skip it alone goes to the dead letter.
	bad := strings.Split(lib.String(), "\n")
	keep := 60 // rows left when line 31 is skipped
	if l := strings.TrimSpace(bad[30]); l != "" && !strings.HasPrefix(l, "#") {
		keep-- // it replaces a row
	}
	bad[30] = "1 3:x"
	text := []byte(strings.Join(bad, "\n"))
	_, wholeErr := dataset.ReadLIBSVM(bytes.NewReader(text), dataset.Options{})
	_, _, err := parseAll(t, parseSpec{BlockRows: 7}, "b.libsvm", text)
	if err == nil || !strings.Contains(err.Error(), "b.libsvm:31: ") || !strings.Contains(wholeErr.Error(), "line 31:") {
		t.Errorf("error %v, want b.libsvm:31 (whole file: %v)", err, wholeErr)
	}
	got, dead, err := parseAll(t, parseSpec{BlockRows: 7, Skip: true}, "b.libsvm", text)
	if err != nil || len(dead) != 1 || !strings.HasPrefix(dead[0], "b.libsvm:31: ") {
		t.Fatalf("skip: %v, dead %q, want one entry for line 31", err, dead)
	}
	n := 0
	for _, b := range got {
		n += b.Rows()
	}
	if n != keep {
		t.Errorf("skip: %d rows, want %d", n, keep)
	}
	// A CSV row with another column count in a later block is refused,
	// as the whole-file reader refuses it.
	rows := strings.Split(csvN.String(), "\n")
	rows[40] = "1,2"
	if _, _, err := parseAll(t, parseSpec{BlockRows: 7}, "w.csv", []byte(strings.Join(rows, "\n"))); err == nil {
		t.Error("a short CSV row in a later block was accepted")
	}
}

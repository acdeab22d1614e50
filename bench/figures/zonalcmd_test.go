package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRawFileRoundTrip: a raw file is the command header and the output;
// splitRaw gives both back, and a file without the header is refused.
func TestRawFileRoundTrip(t *testing.T) {
	args := []string{"kpca", "-data", "/some/where/digits.csv.gz", "-json"}
	out := []byte("{\"points\":20}\n{\"points\":120}\n")
	hdr, body, err := splitRaw(rawFile(args, out))
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Command != "zonal kpca -data /some/where/digits.csv.gz -json" || !sameArgs(hdr.Args, args) || !bytes.Equal(body, out) {
		t.Fatalf("header %+v, body %q", hdr, body)
	}
	rows, err := decodeLines(bytes.NewReader(body), args)
	if err != nil || len(rows) != 2 || rows[1]["points"].(float64) != 120 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	if _, _, err := splitRaw(out); err == nil {
		t.Fatal("a file without a command header was accepted")
	}
	if !sameArgs(args, []string{"kpca", "-data", "../shared/data/digits.csv.gz", "-json"}) {
		t.Fatal("another data folder counts as another command")
	}
	if sameArgs(args, []string{"kpca", "-data", "/some/where/digits.csv.gz", "-mean-adjust"}) || sameArgs(args, args[:3]) {
		t.Fatal("other arguments count as the same command")
	}
}

// TestKeptRawFiles: every kept raw file has a short name (figure, data set,
// method: lower case, digits, '-', '_') and a command header, and figures 1
// and 3 redrawn from them with -replot are byte-identical to the PNG files
// kept next to them (they come from the same run, and the PNG encoder is
// deterministic).
func TestKeptRawFiles(t *testing.T) {
	dir := filepath.Join("img", "raw")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9.-]+)*\.jsonl$`)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if !short.MatchString(e.Name()) || len(e.Name()) > 64 {
			t.Errorf("raw file name %q is not short and stable", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if hdr, _, err := splitRaw(b); err != nil || !strings.HasPrefix(hdr.Command, "zonal "+hdr.Args[0]) {
			t.Errorf("%s: header %+v, %v", e.Name(), hdr, err)
		}
	}

	oldDir, oldReplot := rawDir, replot
	defer func() { rawDir, replot = oldDir, oldReplot }()
	rawDir, replot = dir, true
	out := t.TempDir()
	if err := figApprox("", "../shared/data", out, false); err != nil {
		t.Fatal(err)
	}
	if err := figKPCA("", "../shared/data", out, false); err != nil {
		t.Fatal(err)
	}
	pngs, _ := filepath.Glob(filepath.Join(out, "*.png"))
	if len(pngs) != 15 { // 4 data sets x 3 approx charts, 3 kpca charts
		t.Fatalf("%d PNG files redrawn", len(pngs))
	}
	for _, f := range pngs {
		got, _ := os.ReadFile(f)
		want, err := os.ReadFile(filepath.Join("img", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s redrawn from raw differs from the kept one (%v)", filepath.Base(f), err)
		}
	}
}

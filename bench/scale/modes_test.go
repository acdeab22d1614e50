//go:build linux

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal/dataset"
)

// The table headers the README's read and predict tables copy.
var (
	wantReadColumns = []string{"form", "reader", "rows", "text (MB)", "file (MB)", "block rows", "read (s)", "MB/s", "rows/s",
		"CPU/wall", "parallel", "wc (s)", "wc MB/s", "read / wc", "error"}
	wantPredictColumns = []string{"rows", "form", "text (MB)", "file (MB)", "block rows", "predict (s)", "rows/s", "CPU (s)",
		"peak RSS (MB)", "output rows", "RMSE", "error"}
)

// tableOf returns the header and rows of the first markdown table in s.
func tableOf(s string) (header []string, rows [][]string) {
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		if header == nil {
			header = cellsOf(line)
			continue
		}
		rows = append(rows, cellsOf(line))
	}
	return header, rows
}

// jsonLines decodes the first line of path into first and every other line
// into a new T.
func jsonLines[T any](t *testing.T, path string, first any) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatal("empty JSON output")
	}
	if err := json.Unmarshal(sc.Bytes(), first); err != nil {
		t.Fatalf("first line %s: %v", sc.Bytes(), err)
	}
	var out []T
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// runMode runs the program with args and -tmp, -out in fresh folders, and
// returns its stdout, its table's rows (the header checked to be
// wantHeader) and the -out file. The temporary folder must be empty
// afterwards: the modes remove their files.
func runMode(t *testing.T, wantHeader []string, args ...string) (stdout string, table [][]string, out string) {
	t.Helper()
	tmp, out := t.TempDir(), filepath.Join(t.TempDir(), "out.jsonl")
	var buf bytes.Buffer
	if err := run(append(args, "-tmp", tmp, "-out", out), &buf, io.Discard); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		t.Errorf("left behind in the temporary folder: %s", e.Name())
	}
	header, table := tableOf(buf.String())
	if !slices.Equal(header, wantHeader) {
		t.Fatalf("table header %q, want %q", header, wantHeader)
	}
	return buf.String(), table, out
}

// TestSynthFiles checks that the four forms read back through the library's
// readers to the generator's rows exactly, that the gzip files hold the
// plain files' text, and the counts writeSynthFiles returns.
func TestSynthFiles(t *testing.T) {
	const d, n = 5, blockRows + 37 // two blocks, the second short
	g := newSynth(7, d, 4, 0.3)
	x, y := make([]float64, n*d), make([]float64, n)
	g.rows(x, y, testStream, n, false)
	dir := t.TempDir()
	files, err := writeSynthFiles(g, testStream, n, filepath.Join(dir, "s"), forms)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(forms) {
		t.Fatalf("%d files, want %d", len(files), len(forms))
	}
	plain := map[bool][]byte{}
	for _, w := range files {
		if w.Path != filepath.Join(dir, "s."+w.Form.Name) {
			t.Errorf("%s written to %s", w.Form.Name, w.Path)
		}
		data, err := dataset.ReadFile(w.Path, dataset.Options{MinCols: d})
		if err != nil {
			t.Fatalf("%s: %v", w.Form.Name, err)
		}
		if r, c := data.X.Dims(); r != n || c != d {
			t.Fatalf("%s: read %d x %d, want %d x %d", w.Form.Name, r, c, n, d)
		}
		if !slices.Equal(data.X.RawMatrix().Data, x) || !slices.Equal(data.Y, y) {
			t.Errorf("%s: the rows read back differ from the generator's", w.Form.Name)
		}
		if want := int64(n) + csvHeaderLines(w.Form); w.Lines != want {
			t.Errorf("%s: %d lines, want %d", w.Form.Name, w.Lines, want)
		}
		raw, err := os.ReadFile(w.Path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(raw)) != w.FileBytes {
			t.Errorf("%s: file of %d bytes, reported %d", w.Form.Name, len(raw), w.FileBytes)
		}
		if w.Form.Gzip {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if raw, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if int64(len(raw)) != w.TextBytes || int64(bytes.Count(raw, nl)) != w.Lines {
			t.Errorf("%s: %d bytes and %d lines of text, reported %d and %d", w.Form.Name, len(raw), bytes.Count(raw, nl), w.TextBytes, w.Lines)
		}
		if p, ok := plain[w.Form.LIBSVM]; !ok {
			plain[w.Form.LIBSVM] = raw
		} else if !bytes.Equal(p, raw) {
			t.Errorf("%s: the text differs from the plain file's", w.Form.Name)
		}
	}
	if got := string(appendRow(nil, true, -1, []float64{0, 2.5, 0})); got != "-1 2:2.5\n" {
		t.Errorf("LIBSVM row %q, want the nonzero values only", got)
	}
	if got := string(appendRow(nil, false, 0.5, []float64{0, -3})); got != "0.5,0,-3\n" {
		t.Errorf("CSV row %q", got)
	}
}

// TestReadMode runs the read mode at a tiny size: every form, both
// readers, every field of the report.
func TestReadMode(t *testing.T) {
	for _, tool := range []string{"sh", "wc", "zcat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s for the baseline: %v", tool, err)
		}
	}
	const rows = 3000 // the quick size: about 1.6 MB of CSV, two reader chunks
	stdout, table, out := runMode(t, wantReadColumns, "-mode", "read", "-quick")
	if len(table) != 2*len(forms) {
		t.Fatalf("%d read table rows, want %d:\n%s", len(table), 2*len(forms), stdout)
	}
	blockCol := slices.Index(wantReadColumns, "block rows")
	for _, r := range table {
		if len(r) != len(wantReadColumns) || r[len(r)-1] != "" {
			t.Fatalf("read table row %q: want %d cells and no error", r, len(wantReadColumns))
		}
		for j, v := range r[:len(r)-1] {
			if v == "" || v == "-" && !(j == blockCol && r[1] == readerWhole) {
				t.Errorf("read table row %q: no %s", r, wantReadColumns[j])
			}
		}
	}
	var first struct {
		Mode       string
		Rows       int
		GOMAXPROCS int
	}
	runs := jsonLines[readRun](t, out, &first)
	if first.Mode != modeRead || first.Rows != rows || first.GOMAXPROCS != runtime.GOMAXPROCS(0) {
		t.Errorf("first JSON line %+v", first)
	}
	if len(runs) != 2*len(forms) {
		t.Fatalf("%d JSON runs, want %d", len(runs), 2*len(forms))
	}
	text := map[bool]int64{}
	for i, r := range runs {
		name := r.Form + " " + r.Reader
		f := forms[i/2]
		if r.Form != f.Name || r.Reader != []string{readerWhole, readerBlocks}[i%2] || r.Mode != modeRead {
			t.Errorf("run %d is %s (%s), want %s in table order", i, name, r.Mode, f.Name)
		}
		if r.Error != "" {
			t.Errorf("%s: %s", name, r.Error)
			continue
		}
		if r.Rows != rows || r.Cols != 28 || r.Reps != 1 {
			t.Errorf("%s: %d x %d rows read in %d reps, want %d x 28 in 1", name, r.Rows, r.Cols, r.Reps, rows)
		}
		if !(r.Seconds > 0 && r.MBPerSec > 0 && r.RowsPerSec > 0 && r.CPUSeconds >= 0 && r.CPUPerWall >= 0) {
			t.Errorf("%s: read %g s, %g MB/s, %g rows/s, CPU %g s: want positive times and rates", name, r.Seconds, r.MBPerSec, r.RowsPerSec, r.CPUSeconds)
		}
		if r.GOMAXPROCS != runtime.GOMAXPROCS(0) || r.ParseWorkers != r.GOMAXPROCS || r.Parallel != (r.GOMAXPROCS > 1) {
			t.Errorf("%s: GOMAXPROCS %d, %d parse workers, parallel %v", name, r.GOMAXPROCS, r.ParseWorkers, r.Parallel)
		}
		if (r.BlockRows > 0) != (r.Reader == readerBlocks) {
			t.Errorf("%s: block rows %d", name, r.BlockRows)
		}
		wantCmd, wantLines := "wc -l FILE", int64(rows)+csvHeaderLines(f)
		if f.Gzip {
			wantCmd = "zcat FILE | wc -l"
		}
		if r.Baseline != wantCmd || r.BaselineLines != wantLines || !(r.BaselineSeconds > 0 && r.BaselineMBPerSec > 0) {
			t.Errorf("%s: baseline %q counted %d lines (want %q, %d) in %g s", name, r.Baseline, r.BaselineLines, wantCmd, wantLines, r.BaselineSeconds)
		}
		// The gzip file is smaller than its text, which equals the plain
		// file's.
		if f.Gzip != (r.FileBytes < r.TextBytes) || !f.Gzip && r.FileBytes != r.TextBytes {
			t.Errorf("%s: file %d bytes, text %d", name, r.FileBytes, r.TextBytes)
		}
		if v, ok := text[f.LIBSVM]; ok && v != r.TextBytes {
			t.Errorf("%s: text of %d bytes, the other %s files %d", name, r.TextBytes, f.format(), v)
		}
		text[f.LIBSVM] = r.TextBytes
	}
}

// TestPredictMode runs the predict mode at tiny sizes: cmd/zonal built,
// the model fitted, two files predicted in a child process with as many
// prediction lines out as rows in, and the child's peak RSS.
func TestPredictMode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to build cmd/zonal: %v", err)
	}
	stdout, table, out := runMode(t, wantPredictColumns, "-mode", "predict", "-quick")
	if len(table) != 2 {
		t.Fatalf("%d predict table rows, want 2:\n%s", len(table), stdout)
	}
	for _, r := range table {
		if len(r) != len(wantPredictColumns) || r[len(r)-1] != "" || slices.Contains(r[:len(r)-1], "-") {
			t.Errorf("predict table row %q: want every cell filled and no error", r)
		}
	}
	if !strings.Contains(stdout, "Peak RSS ") {
		t.Errorf("no peak RSS comparison under the table:\n%s", stdout)
	}
	var m predictModel
	runs := jsonLines[predictRun](t, out, &m)
	if m.Mode != modePredict || m.Loaded || m.TrainRows != 1000 || m.Centers != 100 || m.Cols != 28 || !(m.FitSeconds > 0) || m.ModelBytes <= 0 || m.Kind == "" || m.Zonal == "" {
		t.Errorf("model line %+v", m)
	}
	if len(runs) != 2 {
		t.Fatalf("%d JSON runs, want 2", len(runs))
	}
	for i, r := range runs {
		name := "predict " + strconv.Itoa(r.Rows) + " rows"
		if r.Rows != []int{1000, 9000}[i] || r.Form != "csv.gz" || r.Mode != modePredict {
			t.Errorf("run %d: %d rows of %s (%s), want the quick sizes as csv.gz", i, r.Rows, r.Form, r.Mode)
		}
		if r.Error != "" {
			t.Errorf("%s: %s", name, r.Error)
			continue
		}
		if r.OutputRows != int64(r.Rows) || r.MetricRows != r.Rows {
			t.Errorf("%s: %d prediction lines out, the metric on %d rows", name, r.OutputRows, r.MetricRows)
		}
		if r.BlockRows != predictBlockRows(false, 28) || r.GOMAXPROCS != runtime.GOMAXPROCS(0) {
			t.Errorf("%s: block rows %d, GOMAXPROCS %d", name, r.BlockRows, r.GOMAXPROCS)
		}
		if !(r.Seconds > 0 && r.RowsPerSec > 0 && r.CPUSeconds > 0 && r.WriteSeconds > 0) || r.PeakRSS <= 0 {
			t.Errorf("%s: %g s, %g rows/s, CPU %g s, written in %g s, peak RSS %d: want all positive", name, r.Seconds, r.RowsPerSec, r.CPUSeconds, r.WriteSeconds, r.PeakRSS)
		}
		if !(r.FileBytes > 0 && r.FileBytes < r.TextBytes) || r.OutputBytes < 2*r.OutputRows {
			t.Errorf("%s: file %d bytes, text %d, output %d bytes", name, r.FileBytes, r.TextBytes, r.OutputBytes)
		}
		// Better than predicting 0 for labels of deviation sqrt(1 + 0.3^2).
		if !(r.RMSE > 0 && r.RMSE < 0.95) {
			t.Errorf("%s: RMSE %g, want in (0, 0.95)", name, r.RMSE)
		}
	}
}

// TestPredictModelCache checks that -predict-model saves the fitted model
// and a later run loads it, and that a model of other width is refused.
func TestPredictModelCache(t *testing.T) {
	c, err := parseFlags([]string{"-quick", "-predict-train", "300", "-predict-centers", "20", "-iterations", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c.predictModel = filepath.Join(t.TempDir(), "m.zonal")
	fitted, err := predictModelFile(c, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if fitted.Loaded || fitted.Path != c.predictModel || fitted.ModelBytes <= 0 || fitted.Centers != 20 {
		t.Errorf("fitted %+v", fitted)
	}
	loaded, err := predictModelFile(c, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Loaded || loaded.Kind != fitted.Kind || loaded.ModelBytes != fitted.ModelBytes || loaded.Cols != c.d {
		t.Errorf("loaded %+v, fitted %+v", loaded, fitted)
	}
	c.d++
	if _, err := predictModelFile(c, t.TempDir(), io.Discard); err == nil {
		t.Error("a model of 28 features accepted for 29-feature rows")
	}
}

func TestParseMetricLine(t *testing.T) {
	rmse, n, err := parseMetricLine("note\nRMSE 0.412  MAE 0.33  R^2 0.8123 on 1000 rows\n")
	if err != nil || rmse != 0.412 || n != 1000 {
		t.Errorf("got %g, %d, %v", rmse, n, err)
	}
	for _, s := range []string{"", "accuracy 0.9 on 10 rows", "RMSE x  MAE 1 R^2 1 on 10 rows"} {
		if _, _, err := parseMetricLine(s); err == nil {
			t.Errorf("parseMetricLine(%q) accepted", s)
		}
	}
}

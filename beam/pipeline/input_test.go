package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

func writeGzip(t *testing.T, path, text string) {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text))
	zw.Close()
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// labelSum is a summing combiner over the blocks' labels and rows.
func labelSum(s beam.Scope, blocks beam.PCollection) beam.PCollection {
	sum := beam.Combine(s, &summaryFn{}, blocks)
	return beam.ParDo(s, summaryText, sum)
}

func summaryText(x Summary) string { return fmt.Sprintf("%d rows", x.N) }

func blockLabelSum(b Block) float64 {
	t := 0.0
	for _, v := range b.Y {
		t += v
	}
	return t
}

func addFloats(a, b float64) float64 { return a + b }

// deadWhere keeps "base:line" of a dead-letter entry "path:line: message".
func deadWhere(line string) string {
	file, rest, _ := strings.Cut(line, ":")
	no, _, _ := strings.Cut(rest, ":")
	return filepath.Base(file) + ":" + no
}

func init() {
	register.Function1x1(summaryText)
	register.Function1x1(blockLabelSum)
	register.Function2x1(addFloats)
	register.Function1x1(deadWhere)
}

// TestGzipRowCount: 2 gzip files of 500 lines each (labels 1..1000) are
// read whole: 1000 rows, labels summing to 500500 (textio.Read in Beam
// v2.77.0 got 163713).
func TestGzipRowCount(t *testing.T) {
	dir := t.TempDir()
	for f := 0; f < 2; f++ {
		var sb strings.Builder
		for i := 1; i <= 500; i++ {
			fmt.Fprintf(&sb, "%d 1:%d 3:0.5\n", f*500+i, i)
		}
		writeGzip(t, filepath.Join(dir, fmt.Sprintf("g%d.libsvm.gz", f)), sb.String())
	}
	p, s := beam.NewPipelineWithRoot()
	blocks, dead := ReadBlocks(s, Input{Glob: filepath.Join(dir, "*.gz"), BlockRows: 64})
	sums := beam.ParDo(s, blockLabelSum, blocks)
	passert.Equals(s, beam.Combine(s, addFloats, sums), 500500.0)
	passert.Equals(s, labelSum(s, blocks), "1000 rows")
	passert.Empty(s, dead)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestParseErrorNamesFileAndLine: a malformed line fails the job with
// path:line.
func TestParseErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.libsvm")
	os.WriteFile(bad, []byte("1 1:0.5\n2 2:1\n3 0:1\n4 1:2\n"), 0o644)
	p, s := beam.NewPipelineWithRoot()
	blocks, _ := ReadBlocks(s, Input{Glob: bad})
	labelSum(s, blocks)
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Fatalf("got %v, want an error naming %s:3", err, bad)
	}
}

// TestDeadLetter: with SkipErrors the bad lines of a gzip LIBSVM file and
// a CSV go to the dead-letter output and the good rows are kept.
func TestDeadLetter(t *testing.T) {
	dir := t.TempDir()
	writeGzip(t, filepath.Join(dir, "a.libsvm.gz"), "1 1:0.5\n2 2:x\n\n3 1:1\n4 3:1 2:1\n")
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte("y,a,b\n1,2,3\n2,NA,3\n3,4,5\n"), 0o644)
	p, s := beam.NewPipelineWithRoot()
	blocks, dead := ReadBlocks(s, Input{Glob: filepath.Join(dir, "*"), SkipErrors: true})
	passert.Equals(s, labelSum(s, blocks), "4 rows")
	where := beam.ParDo(s, deadWhere, dead)
	passert.Equals(s, where, "a.libsvm.gz:2", "a.libsvm.gz:5", "b.csv:3")
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	if c := counter(res, "lines_skipped"); c != 3 {
		t.Errorf("lines_skipped = %d, want 3", c)
	}
}

func counter(res beam.PipelineResult, name string) int64 {
	var total int64
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Name == name {
			total += c.Committed
		}
	}
	return total
}

// TestPredictPipeline: batch prediction with the model file as a side
// input writes one .pred file per input shard, in row order, equal to the
// model's own predictions, and the metrics.
func TestPredictPipeline(t *testing.T) {
	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 3)
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 100, Seed: 1, Scale: 1.0 / 16},
		Model: filepath.Join(dir, "m.zonal")}
	model := runFit(t, c, Input{Glob: glob})
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	p, s := beam.NewPipelineWithRoot()
	Predict(s, c.Model, Input{Glob: glob}, out)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	n, _ := data.X.Dims()
	want := make([]float64, n)
	if err := model.PredictLabels(want, data.X); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, name := range []string{"part-00.libsvm", "part-01.libsvm", "part-02.libsvm"} {
		b, err := os.ReadFile(filepath.Join(out, name+".pred"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Fields(string(b))...)
	}
	if len(got) != n {
		t.Fatalf("%d predictions for %d rows", len(got), n)
	}
	correct := 0
	for i, g := range got {
		if g != fmt.Sprint(want[i]) {
			t.Fatalf("row %d: predicted %s, model says %g", i, g, want[i])
		}
		if want[i] == data.Y[i] {
			correct++
		}
	}
	m, err := os.ReadFile(filepath.Join(out, "metrics.json"))
	if err != nil || !strings.Contains(string(m), fmt.Sprintf(`"Correct":%d`, correct)) {
		t.Errorf("metrics.json = %s (%v), want Correct %d", m, err, correct)
	}
	_ = solvers.KindFalkon
}

// TestJobServerLoopback submits a fit to a standalone prism job server
// over 127.0.0.1 with the LOOPBACK environment (this process is the SDK
// worker), the path a Flink or Spark job server takes.
func TestJobServerLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a job server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := startJobServer(t, ctx)
	oldEnd, oldEnv := *jobopts.Endpoint, *jobopts.EnvironmentType
	*jobopts.Endpoint, *jobopts.EnvironmentType = fmt.Sprintf("127.0.0.1:%d", port), "LOOPBACK"
	defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = oldEnd, oldEnv }()

	data := digits(t)
	dir := t.TempDir()
	glob := shards(t, dir, data, 2)
	c := Config{Options: estimator.Options{Sigma: 5, Lambda: 1e-4, Centers: 50, Seed: 1, Scale: 1.0 / 16},
		Model: filepath.Join(dir, "m.zonal")}
	p, s := beam.NewPipelineWithRoot()
	Fit(s, c, Input{Glob: glob})
	res, err := beam.Run(ctx, "universal", p)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := data.X.Dims()
	if got := counter(res, "rows_trained"); got != int64(n) {
		t.Errorf("rows_trained = %d, want %d", got, n)
	}
	if _, err := os.Stat(c.Model); err != nil {
		t.Error(err)
	}
}

// startJobServer starts a prism job server on a free port of 127.0.0.1 and
// returns the port. The port is found by listening on port 0 and closing
// it; another process (a busy CI machine) may take it before prism listens,
// and prism then panics, so that is retried on a fresh port, five times.
func startJobServer(t *testing.T, ctx context.Context) int {
	t.Helper()
	var last any
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skip("no loopback: ", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		var cerr error
		func() {
			defer func() { last = recover() }()
			_, cerr = prism.CreateJobServer(ctx, prism.Options{Port: port})
		}()
		if last == nil {
			if cerr != nil {
				t.Fatal(cerr)
			}
			return port
		}
		t.Logf("job server on port %d: %v; again on another port", port, last)
	}
	t.Fatalf("no job server after five ports: %v", last)
	return 0
}

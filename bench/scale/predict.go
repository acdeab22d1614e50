//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/bench/internal/zonalcmd"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// predictModel is the model the predict mode predicts with: the first line
// of -out.
type predictModel struct {
	Mode       string  `json:"mode"` // "predict"
	Path       string  `json:"model_file"`
	Loaded     bool    `json:"loaded"` // read from -predict-model, not fitted by this run
	Kind       string  `json:"kind"`
	Cols       int     `json:"cols"`
	TrainRows  int     `json:"train_rows,omitempty"` // fitted here: the rows and settings of the fit
	Centers    int     `json:"centers,omitempty"`
	Sigma      float64 `json:"sigma,omitempty"`
	Lambda     float64 `json:"lambda,omitempty"`
	Iterations int     `json:"iterations,omitempty"`
	FitSeconds float64 `json:"fit_seconds,omitempty"`
	ModelBytes int64   `json:"model_bytes"`
	Zonal      string  `json:"zonal_binary"`
	GOMAXPROCS int     `json:"gomaxprocs"`
}

// predictRun is one `zonal predict` of one file: a row of the predict
// table and a line of -out.
type predictRun struct {
	Mode         string  `json:"mode"` // "predict"
	Form         string  `json:"form"`
	Rows         int     `json:"rows"` // in the file
	TextBytes    int64   `json:"text_bytes"`
	FileBytes    int64   `json:"file_bytes"`
	WriteSeconds float64 `json:"write_seconds"` // making the file, outside the measurement
	BlockRows    int     `json:"block_rows"`
	// The zonal predict process, as the launcher saw it: its wall time from
	// start to exit (loading the model included), rows per second of it,
	// its user + system CPU time and its peak RSS (ru_maxrss from wait4).
	Seconds    float64 `json:"predict_seconds"`
	RowsPerSec float64 `json:"rows_per_second"`
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
	// What it printed: the prediction lines on stdout, counted here, and
	// the RMSE and row count of its stderr line.
	OutputRows  int64   `json:"output_rows"`
	OutputBytes int64   `json:"output_bytes"`
	RMSE        float64 `json:"rmse"`
	MetricRows  int     `json:"metric_rows"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	Error       string  `json:"error,omitempty"`
}

// predictColumns are the predict table's columns, in order.
var predictColumns = []string{"rows", "form", "text (MB)", "file (MB)", "block rows", "predict (s)", "rows/s", "CPU (s)",
	"peak RSS (MB)", "output rows", "RMSE", "error"}

// runPredictMode is the predict mode: a model, then for each size a file
// of that many test rows, written, predicted by `zonal predict` in a child
// process and removed.
func runPredictMode(c config, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp(c.tmp, "zonal-scale-predict-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := c.zonal
	if bin == "" {
		bin = filepath.Join(dir, "zonal")
		fmt.Fprintf(stderr, "building cmd/zonal to %s\n", bin)
		if err := zonalcmd.Build(bin, netlibBuilt, stderr); err != nil {
			return err
		}
	}
	model, err := predictModelFile(c, dir, stderr)
	if err != nil {
		return err
	}
	model.Zonal = bin
	out, closeOut, err := openOut(c.out, model)
	if err != nil {
		return err
	}
	defer closeOut()
	g := newSynth(c.seed, c.d, c.bumps, c.noise)
	var runs []predictRun
	for _, n := range c.predictRows {
		r := predictOne(c, g, bin, model.Path, dir, n, stderr)
		runs = append(runs, r)
		fmt.Fprintf(stderr, "done: predict %d rows: %.3g s, peak RSS %.0f MB %s\n", n, r.Seconds, mb(r.PeakRSS), r.Error)
		if err := out(r); err != nil {
			return err
		}
	}
	writePredictTable(stdout, c, model, runs)
	return nil
}

// predictModelFile returns the model: loaded from -predict-model when that
// file exists, else fitted (FALKON, float64) on the synthetic training rows
// in a child process and saved to -predict-model, or to dir without it.
func predictModelFile(c config, dir string, stderr io.Writer) (predictModel, error) {
	m := predictModel{Mode: "predict", Path: c.predictModel, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if m.Path == "" {
		m.Path = filepath.Join(dir, "model.zonal")
	} else if f, err := os.Open(m.Path); err == nil {
		pipe, err := solvers.Load(f, solvers.Options{})
		f.Close()
		if err != nil {
			return m, fmt.Errorf("-predict-model %s: %w", m.Path, err)
		}
		if pipe.InputDim() != c.d {
			return m, fmt.Errorf("-predict-model %s has %d features, the synthetic rows %d (-d)", m.Path, pipe.InputDim(), c.d)
		}
		m.Loaded, m.Kind, m.Cols = true, pipe.Model.Kind(), pipe.InputDim()
		fmt.Fprintf(stderr, "loaded the model %s\n", m.Path)
		err = m.stat()
		return m, err
	}
	// The fit runs in a child process (this program re-executed with
	// predictFitFlag), so that this process never holds the training rows
	// or K_nM and stays small for the launcher it starts later.
	spec := predictFitSpec{Path: m.Path, Train: c.predictTrain, D: c.d, Bumps: c.bumps, Noise: c.noise, Seed: c.seed,
		Sigma: c.sigma, Lambda: c.lambda, Centers: c.predictCenters, Iterations: c.iterations, Memory: c.memory}
	arg, err := json.Marshal(spec)
	if err != nil {
		return m, err
	}
	self, err := os.Executable()
	if err != nil {
		return m, err
	}
	cmd := exec.Command(self, predictFitFlag, string(arg))
	var errBuf bytes.Buffer
	cmd.Stderr = io.MultiWriter(stderr, &errBuf)
	outb, err := cmd.Output()
	if err != nil {
		return m, fmt.Errorf("fitting the model in a child process: %v: %s", err, strings.TrimSpace(errBuf.String()))
	}
	var fitted predictModel
	if err := json.Unmarshal(outb, &fitted); err != nil {
		return m, fmt.Errorf("the model fit's child printed %q: %w", outb, err)
	}
	fitted.GOMAXPROCS = m.GOMAXPROCS
	return fitted, nil
}

// predictFitFlag starts the hidden mode that fits the predict mode's model:
// `-predict-fit SPEC`, SPEC a predictFitSpec as JSON; it prints the
// predictModel as JSON.
const predictFitFlag = "-predict-fit"

// predictFitSpec is the predict mode's model fit, handed to its child.
type predictFitSpec struct {
	Path       string  `json:"path"`
	Train      int     `json:"train_rows"`
	D          int     `json:"d"`
	Bumps      int     `json:"bumps"`
	Noise      float64 `json:"noise"`
	Seed       uint64  `json:"seed"`
	Sigma      float64 `json:"sigma"` // 0: sqrt(d)
	Lambda     float64 `json:"lambda"`
	Centers    int     `json:"centers"` // capped at Train
	Iterations int     `json:"iterations"`
	Memory     int64   `json:"memory_budget_bytes"`
}

// fitPredictModel fits FALKON (float64) on the synthetic training rows of
// s and saves it to s.Path; it runs in the child process.
func fitPredictModel(s predictFitSpec, stderr io.Writer) (predictModel, error) {
	m := predictModel{Mode: "predict", Path: s.Path, GOMAXPROCS: runtime.GOMAXPROCS(0)}
	n, d := s.Train, s.D
	g := newSynth(s.Seed, d, s.Bumps, s.Noise)
	x, y := mat.NewDense(n, d, nil), make([]float64, n)
	g.rows(x.RawMatrix().Data, y, trainStream, n, false)
	enc, err := solvers.NewEncoding(y, solvers.TaskRegression)
	if err != nil {
		return m, err
	}
	t, err := enc.Targets(y)
	if err != nil {
		return m, err
	}
	m.Sigma = s.Sigma
	if m.Sigma == 0 {
		m.Sigma = math.Sqrt(float64(d))
	}
	k, err := kernels.NewGaussian(m.Sigma)
	if err != nil {
		return m, err
	}
	m.TrainRows, m.Cols, m.Centers, m.Lambda, m.Iterations = n, d, min(s.Centers, n), s.Lambda, s.Iterations
	fmt.Fprintf(stderr, "fitting FALKON (float64, M = %d) on %d rows\n", m.Centers, n)
	start := time.Now()
	f, err := solvers.FitFalkon(context.Background(), k, x, t, s.Lambda, solvers.FalkonOptions{
		Options: solvers.Options{Backend: backend.Default(), MemoryBudget: s.Memory},
		Centers: m.Centers, Precision: zonal.Float64, Iterations: s.Iterations, Seed: s.Seed})
	if err != nil {
		return m, err
	}
	m.FitSeconds = time.Since(start).Seconds()
	pipe, err := solvers.NewPipeline(nil, enc, f)
	if err != nil {
		return m, err
	}
	m.Kind = pipe.Model.Kind()
	mf, err := os.Create(m.Path)
	if err != nil {
		return m, err
	}
	if err := errors.Join(solvers.Save(mf, pipe), mf.Close()); err != nil {
		return m, fmt.Errorf("saving the model to %s: %w", m.Path, err)
	}
	err = m.stat()
	return m, err
}

func (m *predictModel) stat() error {
	st, err := os.Stat(m.Path)
	if err != nil {
		return err
	}
	m.ModelBytes = st.Size()
	return nil
}

// predictOne writes n test rows (the test stream, labelled) in
// -predict-form, runs `zonal predict -model model -data FILE` on it with
// its stdout read and its lines counted here, and removes the file.
func predictOne(c config, g *synth, bin, model, dir string, n int, stderr io.Writer) predictRun {
	r := predictRun{Mode: "predict", Form: c.predictForm.Name, Rows: n, BlockRows: predictBlockRows(c.predictForm.LIBSVM, c.d),
		GOMAXPROCS: runtime.GOMAXPROCS(0)}
	fmt.Fprintf(stderr, "writing %d test rows as %s\n", n, c.predictForm.Name)
	start := time.Now()
	files, err := writeSynthFiles(g, testStream, n, filepath.Join(dir, "test-"+strconv.Itoa(n)), []form{c.predictForm})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	w := files[0]
	defer os.Remove(w.Path)
	r.WriteSeconds = time.Since(start).Seconds()
	r.TextBytes, r.FileBytes = w.TextBytes, w.FileBytes

	// zonal predict runs under the launcher (see launchFlag), so that its
	// ru_maxrss is its own peak and not this process's high-water mark.
	self, err := os.Executable()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	report := w.Path + ".rusage.json"
	defer os.Remove(report)
	cmd := launchCommand(self, report, bin, "predict", "-model", model, "-data", w.Path)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if err := cmd.Start(); err != nil {
		r.Error = err.Error()
		return r
	}
	r.OutputRows, r.OutputBytes, err = countLines(pipe)
	werr := cmd.Wait()
	rep, rerr := readLaunchReport(report)
	if rerr == nil {
		r.Seconds, r.PeakRSS, r.CPUSeconds = rep.Seconds, rep.MaxRSS, rep.CPUSeconds
	} else if werr == nil {
		werr = rerr
	}
	switch {
	case werr != nil:
		r.Error = fmt.Sprintf("zonal predict: %v: %s", werr, strings.TrimSpace(errBuf.String()))
		return r
	case err != nil:
		r.Error = "reading the predictions: " + err.Error()
		return r
	}
	r.RowsPerSec = float64(n) / max(r.Seconds, 1e-9)
	r.RMSE, r.MetricRows, err = parseMetricLine(errBuf.String())
	switch {
	case err != nil:
		r.Error = err.Error()
	case r.OutputRows != int64(n) || r.MetricRows != n:
		r.Error = fmt.Sprintf("%d rows in, %d prediction lines out, the metric on %d rows", n, r.OutputRows, r.MetricRows)
	}
	return r
}

// countLines reads r to its end and counts its lines and bytes.
func countLines(r io.Reader) (lines, size int64, err error) {
	buf := make([]byte, 1<<16)
	for {
		k, err := r.Read(buf)
		lines += int64(bytes.Count(buf[:k], nl))
		size += int64(k)
		if err == io.EOF {
			return lines, size, nil
		}
		if err != nil {
			return lines, size, err
		}
	}
}

var nl = []byte{'\n'}

// parseMetricLine finds `zonal predict`'s stderr line for labelled
// regression rows, "RMSE r  MAE m  R^2 q on n rows", and returns r and n.
func parseMetricLine(s string) (rmse float64, rows int, err error) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "RMSE" || f[len(f)-1] != "rows" || f[len(f)-3] != "on" {
			continue
		}
		rmse, err1 := strconv.ParseFloat(f[1], 64)
		n, err2 := strconv.Atoi(f[len(f)-2])
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("zonal predict's metric line %q: %w", line, err)
		}
		return rmse, n, nil
	}
	return 0, 0, fmt.Errorf("zonal predict printed no RMSE line on stderr: %q", strings.TrimSpace(s))
}

func writePredictTable(w io.Writer, c config, m predictModel, rs []predictRun) {
	if m.Loaded {
		fmt.Fprintf(w, "Prediction of files larger than memory, GOMAXPROCS %d: the %s model %s (%d features), loaded.\n", m.GOMAXPROCS, m.Kind, m.Path, m.Cols)
	} else {
		fmt.Fprintf(w, "Prediction of files larger than memory, GOMAXPROCS %d: FALKON float64, M = %d, sigma %.3g, lambda %.3g, %d CG iterations, fitted on %d synthetic rows x %d features in %.2f s (model file %.3g MB).\n",
			m.GOMAXPROCS, m.Centers, m.Sigma, m.Lambda, m.Iterations, m.TrainRows, m.Cols, m.FitSeconds, mb(m.ModelBytes))
	}
	fmt.Fprintf(w, "Each row: `zonal predict -model MODEL -data FILE` in its own process on that many labelled test rows (%s), its stdout read and counted by this program; started by a small launcher process (this program re-executed), which reports its wall time, CPU time and ru_maxrss: time and rows/s of the whole process, peak RSS its own (not inherited from this program).\n\n", c.predictForm.Name)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(predictColumns, " | "), strings.Repeat("---|", len(predictColumns)))
	for _, r := range rs {
		ok := r.Error == ""
		cells := []string{fmt.Sprint(r.Rows), r.Form, dash(r.TextBytes > 0, "%.1f", mb(r.TextBytes)), dash(r.FileBytes > 0, "%.1f", mb(r.FileBytes)),
			fmt.Sprint(r.BlockRows), dash(r.Seconds > 0, "%.3g", r.Seconds), dash(ok, "%.3g", r.RowsPerSec), dash(r.CPUSeconds > 0, "%.3g", r.CPUSeconds),
			dash(r.PeakRSS > 0, "%.0f", mb(r.PeakRSS)), dash(r.Seconds > 0, "%.0f", float64(r.OutputRows)), dash(ok, "%.4f", r.RMSE),
			strings.ReplaceAll(r.Error, "|", "/")}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	// Peak RSS of the largest file over that of the smallest: the figure
	// is that it does not grow with the file.
	lo, hi := -1, -1
	for i, r := range rs {
		if r.Error != "" || r.PeakRSS <= 0 {
			continue
		}
		if lo < 0 || r.Rows < rs[lo].Rows {
			lo = i
		}
		if hi < 0 || r.Rows > rs[hi].Rows {
			hi = i
		}
	}
	if lo >= 0 && rs[hi].Rows > rs[lo].Rows {
		fmt.Fprintf(w, "\nPeak RSS %.0f MB at %d rows, %.0f MB at %d rows: x%.2f for x%.0f the rows.\n",
			mb(rs[lo].PeakRSS), rs[lo].Rows, mb(rs[hi].PeakRSS), rs[hi].Rows, float64(rs[hi].PeakRSS)/float64(rs[lo].PeakRSS),
			float64(rs[hi].Rows)/float64(rs[lo].Rows))
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

const predictSynopsis = "-model FILE -data FILE|- [-format csv|libsvm] [-scores | -proba] [-threshold P] [-json]"

func init() {
	addCommand(command{name: "predict", summary: "predict with a model written by `zonal fit -model` or `zonal tune -model`", run: predictCommand})
}

// predictConfig is a validated `zonal predict` command line.
type predictConfig struct {
	data   dataFlags
	model  string
	path   string
	scores bool
	proba  bool
	json   bool

	threshold thresholdFlag

	blockRows int // rows per block (predictBlockRows when 0; tests set it)
}

// predictResult is the -json object of `zonal predict`.
type predictResult struct {
	Model          string       `json:"model"`
	Task           string       `json:"task"`
	N              int          `json:"n"`
	D              int          `json:"d"`
	Predictions    []float64    `json:"predictions"`
	Scores         [][]float64  `json:"scores,omitempty"`
	Classes        []float64    `json:"classes,omitempty"`       // -proba: the columns of probabilities
	Probabilities  [][]float64  `json:"probabilities,omitempty"` // -proba
	Threshold      *float64     `json:"threshold,omitempty"`     // calibrated binary classifiers
	Weights        *weightsJSON `json:"weights"`                 // the model file's record of its training weights; null when unweighted
	RMSE           *float64     `json:"rmse"`
	MAE            *float64     `json:"mae"`
	R2             *float64     `json:"r2"`
	Accuracy       *float64     `json:"accuracy"`
	PredictSeconds float64      `json:"predict_seconds"`
}

func predictCommand(ctx context.Context, e *env, args []string) error {
	cfg, err := parsePredict(e.stderr, args)
	if err != nil {
		return err
	}
	return runPredict(ctx, e, cfg)
}

// parsePredict parses and validates the flags of `zonal predict`.
func parsePredict(stderr io.Writer, args []string) (predictConfig, error) {
	var c predictConfig
	fs := newFlagSet("predict", predictSynopsis, stderr)
	fs.StringVar(&c.model, "model", "", `model file, as written by "zonal fit -model"`)
	fs.StringVar(&c.path, "data", "", "rows to predict (LIBSVM or CSV, - for standard input; a CSV with one column more than the model's d has labels: y, or the first column)")
	c.data.register(fs)
	fs.BoolVar(&c.scores, "scores", false, "print the model's raw outputs instead of labels: one score per class (one vs all), or the one raw value (regression, two classes: > 0 is the larger label unless the model is calibrated, which decides by -proba's probability)")
	fs.BoolVar(&c.proba, "proba", false, "print class probabilities instead of labels, as CSV: a header of the class labels, then one probability per class a row (rows sum to 1); needs a calibrated classifier")
	fs.Float64Var(&c.threshold.value, "threshold", solvers.DefaultThreshold, "calibrated binary classifiers: predict the larger label when its probability exceeds P")
	fs.BoolVar(&c.json, "json", false, "print one JSON object (predictions, scores with -scores, classes and probabilities with -proba, and metrics) instead of lines")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	fs.Visit(func(f *flag.Flag) { c.threshold.set = c.threshold.set || f.Name == "threshold" })
	if c.model == "" || c.path == "" {
		return c, usagef("-model and -data are required")
	}
	if c.scores && c.proba {
		return c, usagef("-scores and -proba exclude each other")
	}
	if err := c.threshold.check(); err != nil {
		return c, err
	}
	return c, c.data.checkInputs([2]string{"data", c.path})
}

// runPredict loads the model, then reads, predicts and prints the rows
// block by block (predictBlockRows rows, or c.blockRows): memory does not
// grow with the input, except for -json, whose one object holds every
// prediction (but not the rows). The output is byte-identical to
// predicting the whole file at once: a row's prediction depends on that
// row alone, and the blocks are cut so that every row takes the arithmetic
// path it takes in the whole file (see predictSmallBatch). On an error
// after some blocks, the lines of the blocks before are already printed;
// the error names the input line.
func runPredict(ctx context.Context, e *env, c predictConfig) error {
	if st, err := os.Stat(c.model); err == nil && st.IsDir() {
		return fmt.Errorf("-model %s is a directory, not a model file", c.model)
	}
	mf, err := os.Open(c.model)
	if err != nil {
		return err
	}
	pipe, err := solvers.Load(mf, solvers.Options{})
	mf.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", c.model, err)
	}
	if c.proba && !pipe.HasProbabilities() {
		return fmt.Errorf("%s: -proba: %w", c.model, pipe.PredictProba(nil, nil))
	}
	if c.threshold.set && (!pipe.HasProbabilities() || pipe.Classes() != 2) {
		what := "a regression model"
		switch {
		case pipe.Encoding.Task != solvers.TaskClassification:
		case pipe.Classes() != 2:
			what = fmt.Sprintf("a classifier of %d classes (decisions are the most probable class)", pipe.Classes())
		default:
			what = "a binary classifier without probabilities (fitted with -calibration none, or a class too small to calibrate)"
		}
		return fmt.Errorf("%s: -threshold applies to a calibrated binary classifier; this is %s", c.model, what)
	}
	d := pipe.InputDim()
	br, name, closeInput, err := openPredictData(e, c, d)
	if err != nil {
		return err
	}
	defer closeInput()
	defer func() {
		// Close waits for the reader's goroutine to leave the input's Read;
		// after an interrupt that may be a silent standard input, so the
		// goroutine is left to the process exit instead.
		if ctx.Err() == nil {
			br.Close()
		}
	}()
	res := &predictResult{Model: pipe.Model.Kind(), Task: pipe.Encoding.Task.String(), D: d, Weights: recordedWeights(pipe)}
	if pipe.HasProbabilities() && pipe.Classes() == 2 {
		res.Threshold = ptr(c.threshold.value)
	}
	var allScores [][]float64 // -json -scores, or -proba's probabilities
	var allY []float64        // -json: labels for Evaluate
	var acc metricSums        // lines: the metric, summed block by block
	labelled := false
	out := bufio.NewWriterSize(e.stdout, 1<<16)
	sep := byte(' ')
	if c.proba {
		res.Classes, sep = pipe.Encoding.Classes, ','
		if !c.json {
			if err := writeRow(out, pipe.Encoding.Classes, sep); err != nil {
				return err
			}
		}
	}
	var pred []float64
	var scores *mat.Dense
	var predictTime time.Duration
	blocks := predictBlocks{br: br}
	for {
		blk, err := blocks.next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Flush()
			return fmt.Errorf("data for a model of %d features: %s: %w", d, name, err)
		}
		n, _ := blk.Dims()
		pred = slices.Grow(pred[:0], n)[:n]
		start := time.Now()
		var x mat.Matrix = blk.X
		if blk.X == nil {
			x = blk.Sparse // LIBSVM rows stay sparse: the pipeline reads their nonzeros
		}
		// The outputs, then the labels, as PredictLabels computes them.
		outs := mat.NewDense(n, pipe.Outputs(), nil)
		err = pipe.PredictOutputs(outs, x)
		if err == nil {
			err = c.threshold.decode(pipe, pred, outs)
		}
		scores = nil
		switch {
		case c.scores:
			scores = outs
		case c.proba && err == nil:
			scores = mat.NewDense(n, pipe.Classes(), nil)
			err = pipe.Probabilities(scores, outs)
		}
		predictTime += time.Since(start)
		if err != nil {
			out.Flush()
			if res.N > 0 {
				return fmt.Errorf("the block of rows from row %d: %w", res.N, err)
			}
			return err
		}
		res.N += n
		labelled = blk.Y != nil
		if c.json {
			res.Predictions = append(res.Predictions, pred...)
			allY = append(allY, blk.Y...)
			for i := 0; scores != nil && i < n; i++ {
				allScores = append(allScores, mat.Row(nil, i, scores))
			}
		} else {
			if blk.Y != nil {
				acc.add(pipe.Encoding.Task == solvers.TaskClassification, pred, blk.Y)
			}
			if err := writePredictLines(out, pred, scores, sep); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	res.PredictSeconds = predictTime.Seconds()
	if c.json {
		if labelled {
			m := pipe.Encoding.Evaluate(res.Predictions, allY)
			res.RMSE, res.MAE, res.R2, res.Accuracy = finite(m.RMSE), finite(m.MAE), finite(m.R2), finite(m.Accuracy)
		}
		if c.proba {
			res.Probabilities = allScores
		} else {
			res.Scores = allScores
		}
		return json.NewEncoder(e.stdout).Encode(res)
	}
	if err := out.Flush(); err != nil {
		return err
	}
	// The metric goes to stderr so stdout stays one prediction per line.
	if labelled {
		m := acc.metrics(pipe.Encoding.Task == solvers.TaskClassification)
		switch {
		case m.Accuracy != nil:
			fmt.Fprintf(e.stderr, "accuracy %.4f on %d rows\n", *m.Accuracy, res.N)
		case m.RMSE != nil:
			fmt.Fprintf(e.stderr, "RMSE %.6g  MAE %.6g  R^2 %.4f on %d rows\n", *m.RMSE, *m.MAE, derefOr(m.R2), res.N)
		}
	}
	return nil
}

// writePredictLines prints one line per row: the label, or with scores
// the row of scores (raw outputs, or probabilities) separated by sep,
// in the shortest round-trip form.
func writePredictLines(w io.Writer, pred []float64, scores *mat.Dense, sep byte) error {
	buf := make([]byte, 0, 64)
	for i := range pred {
		row := pred[i : i+1]
		if scores != nil {
			row = scores.RawRowView(i)
		}
		buf = appendRow(buf[:0], row, sep)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// writeRow prints the values separated by sep on one line.
func writeRow(w io.Writer, row []float64, sep byte) error {
	_, err := w.Write(appendRow(nil, row, sep))
	return err
}

// appendRow appends the values separated by sep and a newline to buf.
func appendRow(buf []byte, row []float64, sep byte) []byte {
	for j, s := range row {
		if j > 0 {
			buf = append(buf, sep)
		}
		buf = strconv.AppendFloat(buf, s, 'g', -1, 64)
	}
	return append(buf, '\n')
}

func derefOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// openPredictData opens the rows for a model of d features as a block
// reader, and names them for errors. LIBSVM rows are padded to d (omitted
// trailing zeros), kept as CSR (no dense matrix), and an index beyond d
// is an error. A CSV must have d feature columns plus a target column (y,
// or the first column), or exactly d columns and no target. Standard input
// is read as it comes, not held in memory.
func openPredictData(e *env, c predictConfig, d int) (br *dataset.BlockReader, name string, closeInput func(), err error) {
	format, err := c.data.formatOf("data", c.path)
	if err != nil {
		return nil, "", nil, err
	}
	var r io.Reader = e.stdin
	name, closeInput = "standard input", func() {}
	if c.path != "-" {
		name = c.path
		if st, err := os.Stat(c.path); err == nil && st.IsDir() {
			return nil, "", nil, fmt.Errorf("data for a model of %d features: -data %s is a directory, not a data file", d, c.path)
		}
		f, err := os.Open(c.path)
		if err != nil {
			return nil, "", nil, fmt.Errorf("data for a model of %d features: %w", d, err)
		}
		r, closeInput = f, func() { f.Close() }
	}
	opts := dataset.Options{Format: format, Header: c.data.header, MinCols: d, MaxCols: d, TargetIfExtra: true, NoDense: format == "libsvm"}
	rows := c.blockRows
	if rows <= 0 {
		rows = predictBlockRows
	}
	if format == "libsvm" {
		// Whole multiples of the pipeline's own CSR blocks, which it then
		// cuts exactly where it cuts the whole file.
		u := max(1, min(32*predictSmallBatch, predictCSRBlockBytes/(8*d)))
		rows = u * ((rows + u - 1) / u)
	} else {
		rows = max(rows, predictSmallBatch+1)
	}
	br, err = dataset.NewBlockReader(r, rows, opts)
	if err != nil {
		closeInput()
		return nil, "", nil, err
	}
	return br, name, closeInput, nil
}

// predictBlockRows is the block size of `zonal predict`: dataset's default.
const predictBlockRows = dataset.DefaultBlockRows

// The models predict a batch of at most predictSmallBatch rows row by row
// (direct kernel evaluations), a larger one through kernel blocks and Gemm;
// the two sum in different orders, so a row's prediction can differ in
// the last bits between them. PredictOutputs of a CSR hands the model dense
// blocks of min(n, 32*predictSmallBatch, predictCSRBlockBytes/(8d)) rows.
// Both are solvers' (DirectBatch, SparseBlockBytes); predict follows them so
// that every row goes the way it goes when the whole file is predicted at
// once: dense blocks of more than predictSmallBatch rows (a short last
// block joins the one before), CSR blocks in whole multiples of the
// pipeline's.
const (
	predictSmallBatch    = solvers.DirectBatch
	predictCSRBlockBytes = solvers.SparseBlockBytes
)

// predictBlocks hands out the blocks of a BlockReader, joining a dense
// block of at most predictSmallBatch rows (the last) to the one before.
type predictBlocks struct {
	br      *dataset.BlockReader
	ahead   *dataset.Data
	err     error
	started bool
}

func (p *predictBlocks) next(ctx context.Context) (*dataset.Data, error) {
	if !p.started {
		p.started = true
		p.ahead, p.err = p.br.Next(ctx)
	}
	cur, err := p.ahead, p.err
	if err != nil {
		return nil, err
	}
	p.ahead, p.err = p.br.Next(ctx)
	if p.err == nil && p.ahead.X != nil {
		if n, _ := p.ahead.Dims(); n <= predictSmallBatch {
			cur = stackRows(cur, p.ahead)
			p.ahead, p.err = p.br.Next(ctx)
		}
	}
	return cur, nil
}

// stackRows returns the dense rows of a followed by those of b.
func stackRows(a, b *dataset.Data) *dataset.Data {
	na, d := a.X.Dims()
	nb, _ := b.X.Dims()
	x := mat.NewDense(na+nb, d, nil)
	x.Slice(0, na, 0, d).(*mat.Dense).Copy(a.X)
	x.Slice(na, na+nb, 0, d).(*mat.Dense).Copy(b.X)
	out := &dataset.Data{X: x, Names: a.Names, TargetName: a.TargetName}
	if a.Y != nil {
		out.Y = append(slices.Clip(a.Y), b.Y...)
	}
	return out
}

// metricSums accumulates the metrics of solvers.Encoding.Evaluate over
// blocks of rows. The sums run in row order, so RMSE, MAE and accuracy
// equal Evaluate's on the whole arrays bit for bit; R^2's total sum of
// squares about the mean is accumulated by Welford's update (Evaluate
// takes the mean first, in a second pass over y), which agrees to about
// 1e-15 relative: far below the four printed decimals.
type metricSums struct {
	n        int
	correct  int
	sq, abs  float64 // sum (pred - y)^2, sum |pred - y|
	mean, m2 float64 // Welford: running mean of y, sum (y - mean)^2
}

func (m *metricSums) add(classification bool, pred, y []float64) {
	for i, v := range y {
		m.n++
		if classification {
			if pred[i] == v {
				m.correct++
			}
			continue
		}
		d := pred[i] - v
		m.sq += d * d
		m.abs += math.Abs(d)
		delta := v - m.mean
		m.mean += delta / float64(m.n)
		m.m2 += delta * (v - m.mean)
	}
}

// metrics returns the accumulated metrics, with NaN and Inf as nil.
func (m *metricSums) metrics(classification bool) solvers.Metrics {
	if m.n == 0 {
		return solvers.Metrics{}
	}
	n := float64(m.n)
	if classification {
		a := float64(m.correct) / n
		return solvers.Metrics{Accuracy: finite(&a)}
	}
	rmse, mae, r2 := math.Sqrt(m.sq/n), m.abs/n, math.NaN()
	if m.m2 != 0 {
		r2 = 1 - m.sq/m.m2
	}
	return solvers.Metrics{RMSE: finite(&rmse), MAE: finite(&mae), R2: finite(&r2)}
}

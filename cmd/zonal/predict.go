package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

const predictSynopsis = "-model FILE -data FILE|- [-format csv|libsvm] [-scores] [-json]"

func init() {
	addCommand(command{name: "predict", summary: "predict with a model written by `zonal fit -model` or `zonal tune -model`", run: predictCommand})
}

// predictConfig is a validated `zonal predict` command line.
type predictConfig struct {
	data   dataFlags
	model  string
	path   string
	scores bool
	json   bool
}

// predictResult is the -json object of `zonal predict`.
type predictResult struct {
	Model          string      `json:"model"`
	Task           string      `json:"task"`
	N              int         `json:"n"`
	D              int         `json:"d"`
	Predictions    []float64   `json:"predictions"`
	Scores         [][]float64 `json:"scores,omitempty"`
	RMSE           *float64    `json:"rmse"`
	MAE            *float64    `json:"mae"`
	R2             *float64    `json:"r2"`
	Accuracy       *float64    `json:"accuracy"`
	PredictSeconds float64     `json:"predict_seconds"`
}

func predictCommand(ctx context.Context, e *env, args []string) error {
	cfg, err := parsePredict(e.stderr, args)
	if err != nil {
		return err
	}
	res, scores, err := runPredict(ctx, e, cfg)
	if err != nil {
		return err
	}
	return reportPredict(e.stdout, e.stderr, cfg, res, scores)
}

// parsePredict parses and validates the flags of `zonal predict`.
func parsePredict(stderr io.Writer, args []string) (predictConfig, error) {
	var c predictConfig
	fs := newFlagSet("predict", predictSynopsis, stderr)
	fs.StringVar(&c.model, "model", "", `model file, as written by "zonal fit -model"`)
	fs.StringVar(&c.path, "data", "", "rows to predict (LIBSVM or CSV, - for standard input; a CSV with one column more than the model's d has labels: y, or the first column)")
	c.data.register(fs)
	fs.BoolVar(&c.scores, "scores", false, "print the model's raw outputs instead of labels: one score per class (one vs all), or the one raw value (regression, two classes: > 0 is the larger label)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object (predictions, scores with -scores, and metrics) instead of lines")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if c.model == "" || c.path == "" {
		return c, usagef("-model and -data are required")
	}
	return c, c.data.checkInputs([2]string{"data", c.path})
}

// runPredict loads the model, reads the rows and predicts them; scores
// holds the raw outputs when c.scores is set.
func runPredict(ctx context.Context, e *env, c predictConfig) (*predictResult, *mat.Dense, error) {
	if st, err := os.Stat(c.model); err == nil && st.IsDir() {
		return nil, nil, fmt.Errorf("-model %s is a directory, not a model file", c.model)
	}
	mf, err := os.Open(c.model)
	if err != nil {
		return nil, nil, err
	}
	pipe, err := solvers.Load(mf, solvers.Options{})
	mf.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.model, err)
	}
	d := pipe.InputDim()
	data, err := readPredictData(e, c, d)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	n, _ := data.Dims()
	start := time.Now()
	pred := make([]float64, n)
	var scores *mat.Dense
	if c.scores {
		scores = mat.NewDense(n, pipe.Outputs(), nil)
	}
	if data.X != nil {
		err = pipe.PredictLabels(pred, data.X)
		if err == nil && scores != nil {
			err = pipe.PredictOutputs(scores, data.X)
		}
	} else { // LIBSVM rows stay sparse: the pipeline reads their nonzeros
		err = pipe.PredictLabels(pred, data.Sparse)
		if err == nil && scores != nil {
			err = pipe.PredictOutputs(scores, data.Sparse)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	res := &predictResult{Model: pipe.Model.Kind(), Task: pipe.Encoding.Task.String(), N: n, D: d, Predictions: pred,
		PredictSeconds: time.Since(start).Seconds()}
	if data.Y != nil {
		m := pipe.Encoding.Evaluate(pred, data.Y)
		res.RMSE, res.MAE, res.R2, res.Accuracy = finite(m.RMSE), finite(m.MAE), finite(m.R2), finite(m.Accuracy)
	}
	return res, scores, nil
}

// reportPredict prints one line per row (the label, or with -scores the
// raw outputs separated by spaces) and the metric on stderr, or one JSON
// object.
func reportPredict(stdout, stderr io.Writer, c predictConfig, res *predictResult, scores *mat.Dense) error {
	if c.json {
		if scores != nil {
			n, _ := scores.Dims()
			res.Scores = make([][]float64, n)
			for i := range res.Scores {
				res.Scores[i] = mat.Row(nil, i, scores)
			}
		}
		return json.NewEncoder(stdout).Encode(res)
	}
	buf := make([]byte, 0, 64)
	for i, v := range res.Predictions {
		buf = buf[:0]
		if scores != nil {
			for j, s := range scores.RawRowView(i) {
				if j > 0 {
					buf = append(buf, ' ')
				}
				buf = strconv.AppendFloat(buf, s, 'g', -1, 64)
			}
		} else {
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := stdout.Write(buf); err != nil {
			return err
		}
	}
	// The metric goes to stderr so stdout stays one prediction per line.
	switch {
	case res.Accuracy != nil:
		fmt.Fprintf(stderr, "accuracy %.4f on %d rows\n", *res.Accuracy, res.N)
	case res.RMSE != nil:
		fmt.Fprintf(stderr, "RMSE %.6g  MAE %.6g  R^2 %.4f on %d rows\n", *res.RMSE, *res.MAE, derefOr(res.R2), res.N)
	}
	return nil
}

func derefOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// readPredictData reads rows for a model of d features. LIBSVM rows are
// padded to d (omitted trailing zeros), kept as CSR (Data.X nil), and an
// index beyond d is an error.
// A CSV must have d feature columns plus a target column, or exactly d
// columns and no target. Standard input is read once, into memory, so that
// both readings can be tried.
func readPredictData(e *env, c predictConfig, d int) (*dataset.Data, error) {
	if c.path == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, zonal.DefaultMemoryBudget+1))
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		if int64(len(b)) > zonal.DefaultMemoryBudget {
			return nil, fmt.Errorf("%w: standard input holds more than %d bytes: give the rows as a file", zonal.ErrTooLarge, zonal.DefaultMemoryBudget)
		}
		e = &env{stdin: bytes.NewReader(b), stdout: e.stdout, stderr: e.stderr}
	}
	// LIBSVM rows are read as CSR only (no dense n x d matrix).
	format, err := c.data.formatOf("data", c.path)
	if err != nil {
		return nil, err
	}
	data, err := readData(e, c.data, "data", c.path, dataset.Options{MinCols: d, MaxCols: d, NoDense: format == "libsvm"})
	if err != nil && errors.Is(err, zonal.ErrRange) {
		if r, ok := e.stdin.(*bytes.Reader); ok {
			r.Seek(0, io.SeekStart)
		}
		// A CSV of exactly d columns: no labels.
		if alt, err2 := readData(e, c.data, "data", c.path, dataset.Options{NoTarget: true, MinCols: d, MaxCols: d}); err2 == nil && alt.Sparse == nil {
			return alt, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("data for a model of %d features: %w", d, err)
	}
	return data, nil
}

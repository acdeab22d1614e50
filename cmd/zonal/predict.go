package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

const predictSynopsis = "-model FILE -data FILE [-json]"

func init() {
	addCommand(command{name: "predict", summary: "predict with a model written by `zonal fit -model`", run: runPredict})
}

// predictResult is the -json object of `zonal predict`.
type predictResult struct {
	Model          string    `json:"model"`
	Task           string    `json:"task"`
	N              int       `json:"n"`
	D              int       `json:"d"`
	Predictions    []float64 `json:"predictions"`
	RMSE           *float64  `json:"rmse"`
	MAE            *float64  `json:"mae"`
	R2             *float64  `json:"r2"`
	Accuracy       *float64  `json:"accuracy"`
	PredictSeconds float64   `json:"predict_seconds"`
}

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", predictSynopsis, stderr)
	modelPath := fs.String("model", "", "model file written by `zonal fit -model`")
	dataPath := fs.String("data", "", "rows to predict (LIBSVM or CSV; a CSV with one column more than the model's d has labels: y, or the first column)")
	asJSON := fs.Bool("json", false, "print one JSON object (predictions and metrics) instead of lines")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" || *dataPath == "" {
		return usageError{errors.New("-model and -data are required")}
	}
	mf, err := os.Open(*modelPath)
	if err != nil {
		return err
	}
	pipe, err := solvers.Load(mf, solvers.Options{})
	mf.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *modelPath, err)
	}
	d := pipe.InputDim()
	data, err := readPredictData(*dataPath, d)
	if err != nil {
		return err
	}
	n, _ := data.X.Dims()
	start := time.Now()
	pred := make([]float64, n)
	if err := pipe.PredictLabels(pred, data.X); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	res := predictResult{Model: pipe.Model.Kind(), Task: pipe.Encoding.Task.String(), N: n, D: d, Predictions: pred, PredictSeconds: secs}
	if data.Y != nil {
		m := pipe.Encoding.Evaluate(pred, data.Y)
		res.RMSE, res.MAE, res.R2, res.Accuracy = finite(m.RMSE), finite(m.MAE), finite(m.R2), finite(m.Accuracy)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	buf := make([]byte, 0, 32)
	for _, v := range pred {
		buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
		buf = append(buf, '\n')
		if _, err := stdout.Write(buf); err != nil {
			return err
		}
	}
	// The metric goes to stderr so stdout stays one prediction per line.
	switch {
	case res.Accuracy != nil:
		fmt.Fprintf(stderr, "accuracy %.4f on %d rows\n", *res.Accuracy, n)
	case res.RMSE != nil:
		fmt.Fprintf(stderr, "RMSE %.6g  MAE %.6g  R^2 %.4f on %d rows\n", *res.RMSE, *res.MAE, derefOr(res.R2), n)
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
// padded to d (omitted trailing zeros) and an index beyond d is an error.
// A CSV must have d feature columns plus a target column, or exactly d
// columns and no target.
func readPredictData(path string, d int) (*dataset.Data, error) {
	data, err := dataset.ReadFile(path, dataset.Options{MinCols: d, MaxCols: d})
	if err != nil && data == nil && errors.Is(err, zonal.ErrRange) {
		// A CSV of exactly d columns: no labels.
		if alt, err2 := dataset.ReadFile(path, dataset.Options{NoTarget: true, MinCols: d, MaxCols: d}); err2 == nil && isCSV(alt) {
			return alt, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("data for a model of %d features: %w", d, err)
	}
	if data.X == nil {
		return nil, fmt.Errorf("%s: no dense features", path)
	}
	return data, nil
}

func isCSV(d *dataset.Data) bool { return d.Sparse == nil }

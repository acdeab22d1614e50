package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// weightFlags are the row-weight flags of `zonal fit` and `zonal tune`:
// -weights FILE (one weight a line, one line per row of -train),
// -weight-column NAME (a CSV header column of -train, dropped from the
// features) and -class-weight (none, balanced or LABEL:W,...).
type weightFlags struct {
	file, column, class string
	cw                  estimator.ClassWeight
}

func (w *weightFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.file, "weights", "", "per-row sample weights: a text file of one weight (>= 0) per line, one line per row of -train (the -split and -subsample rows follow their rows)")
	fs.StringVar(&w.column, "weight-column", "", "per-row sample weights from this CSV header column of -train (dropped from the features; dropped from -test too when it has it)")
	fs.StringVar(&w.class, "class-weight", "none", "classifiers: multiply each row's weight by its class's: none, balanced (n / (k n_c)) or LABEL:W,LABEL:W,... (unlisted classes 1)")
}

// check validates the flags on their own (no data yet).
func (w *weightFlags) check() error {
	if w.file != "" && w.column != "" {
		return usagef("give -weights or -weight-column, not both")
	}
	var err error
	w.cw, err = estimator.ParseClassWeight(w.class)
	return flagError(err)
}

// given reports whether sample weights are read with the data.
func (w weightFlags) given() bool { return w.file != "" || w.column != "" }

// fromTrain returns the sample weights of the rows of all, the -train data
// just read (nil when neither -weights nor -weight-column is given): read
// from the -weights file, or taken out of the -weight-column column,
// which is dropped from all's features. They are validated here, with the
// flag's name in the message (solvers.CheckWeights: finite, >= 0, not all
// zero, one per row).
func (w weightFlags) fromTrain(all *dataset.Data, trainName string) ([]float64, error) {
	n, _ := all.Dims()
	var weights []float64
	var err error
	flagName := "weights"
	switch {
	case w.file != "":
		if weights, err = readWeightsFile(w.file); err != nil {
			return nil, err
		}
		if len(weights) != n {
			return nil, fmt.Errorf("-weights %s has %d weights, -train %s has %d rows (one weight per line, one line per row)", w.file, len(weights), trainName, n)
		}
	case w.column != "":
		flagName = "weight-column"
		if weights, err = takeColumn(all, w.column, trainName); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	if _, err := solvers.CheckWeights(weights, n); err != nil {
		var pe *zonal.ParamError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("-%s %s: %s", flagName, cmpOr(w.file, w.column), pe.Reason)
		}
		return nil, err
	}
	return weights, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readWeightsFile reads one number a line (surrounding spaces allowed);
// an empty line, a word that is not a number, or a weight that is
// negative, NaN or infinite is an error naming the line.
func readWeightsFile(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-weights: %w", err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			return nil, fmt.Errorf("-weights %s: line %d is empty (one weight per line, one line per row of -train)", path, line)
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("-weights %s: line %d: %q is not a number", path, line, t)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("-weights %s: line %d: weight %s (weights must be finite and >= 0)", path, line, t)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-weights %s: %w", path, err)
	}
	return out, nil
}

// takeColumn removes the feature column named name from d (CSV data with
// a header) and returns its values.
func takeColumn(d *dataset.Data, name, file string) ([]float64, error) {
	if d.X == nil || d.Names == nil {
		return nil, usagef("-weight-column %s: %s has no CSV header naming its columns (use -weights FILE)", name, file)
	}
	j := slices.Index(d.Names, name)
	if j < 0 {
		if name == d.TargetName {
			return nil, usagef("-weight-column %s is the target column of %s", name, file)
		}
		return nil, usagef("-weight-column %s: %s has no such column (its feature columns: %s)", name, file, strings.Join(d.Names, ", "))
	}
	if _, c := d.X.Dims(); c == 1 {
		return nil, usagef("-weight-column %s is the only feature column of %s", name, file)
	}
	w := mat.Col(nil, j, d.X)
	dropColumn(d, j)
	return w, nil
}

// dropColumn removes feature column j from the dense data d.
func dropColumn(d *dataset.Data, j int) {
	n, c := d.X.Dims()
	x := mat.NewDense(n, c-1, nil)
	for i := 0; i < n; i++ {
		src, dst := d.X.RawRowView(i), x.RawRowView(i)
		copy(dst, src[:j])
		copy(dst[j:], src[j+1:])
	}
	d.X = x
	d.Names = slices.Delete(slices.Clone(d.Names), j, j+1)
}

// fromTest drops the weight column from the -test data when it has it;
// a -test file with one column more than the training features but no
// such column is an error.
func (w weightFlags) fromTest(test *dataset.Data, d int, testName string) error {
	if w.column == "" || test.X == nil {
		return nil
	}
	if j := slices.Index(test.Names, w.column); j >= 0 {
		dropColumn(test, j)
		return nil
	}
	if _, c := test.X.Dims(); c != d {
		return fmt.Errorf("%s has %d feature columns and no column %s (-weight-column): the model has %d features", testName, c, w.column, d)
	}
	return nil
}

// classWeightNote is ", class weights L:W, ..." ("" without class weights).
func classWeightNote(cw []estimator.LabelWeight) string {
	if len(cw) == 0 {
		return ""
	}
	parts := make([]string, len(cw))
	for i, lw := range cw {
		parts[i] = fmt.Sprintf("%g:%.4g", lw.Label, lw.Weight)
	}
	return ", class weights " + strings.Join(parts, ", ")
}

// recordedWeights is the "weights" object of the training weights a
// loaded model's file records (nil when it records none: an unweighted fit,
// or a file of an earlier build).
func recordedWeights(p *solvers.Pipeline) *weightsJSON {
	tw := p.Weights
	if tw == nil {
		return nil
	}
	w := &weightsJSON{Sum: tw.Sum, Rows: tw.Rows}
	for c, f := range tw.ClassFactors {
		w.ClassWeights = append(w.ClassWeights, estimator.LabelWeight{Label: p.Encoding.Classes[c], Weight: f})
	}
	return w
}

// recordedWeightsNote describes the training weights a loaded model's file
// records, "" when it records none.
func recordedWeightsNote(p *solvers.Pipeline) string {
	w := recordedWeights(p)
	if w == nil {
		return ""
	}
	return fmt.Sprintf("weighted fit: row weights sum to %.6g over %d rows of positive weight%s", w.Sum, w.Rows, classWeightNote(w.ClassWeights))
}

package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/solvers"
)

// Predictions are the labels predicted for a Block's rows.
type Predictions struct {
	File  string
	First int
	Pred  []float64
	Y     []float64
	Task  string // "regression" or "classification"
}

// Metrics are the test metrics of a prediction run (labels required).
type Metrics struct {
	Task     string
	N        int
	Correct  int     // classification
	SSE, SAE float64 // regression: sums of squared and absolute errors
	Ysum     float64
	Y2sum    float64
}

// Accuracy is Correct / N (classification).
func (m Metrics) Accuracy() float64 { return float64(m.Correct) / float64(m.N) }

// RMSE is sqrt(SSE / N) (regression).
func (m Metrics) RMSE() float64 { return math.Sqrt(m.SSE / float64(m.N)) }

// Predict adds a batch-prediction pipeline: the model file (read once, a
// side input; each worker decodes it once) predicts every row of in, and
// the labels go to outDir as one text file per input file
// (<base>.pred, one label per line, in row order). With labelled input
// the metrics go to outDir/metrics.json. It returns the dead-letter lines
// of the input.
func Predict(s beam.Scope, modelPath string, in Input, outDir string) beam.PCollection {
	s = s.Scope("zonal.Predict")
	mf := fileio.ReadMatches(s, fileio.MatchFiles(s, modelPath, fileio.MatchEmptyDisallow()), fileio.ReadUncompressed())
	model := beam.ParDo(s.Scope("model"), readBytesFn, mf)
	blocks, dead := ReadBlocks(s, in)
	preds := beam.ParDo(s.Scope("predict"), &predictFn{}, blocks, beam.SideInput{Input: model})
	byFile := beam.GroupByKey(s.Scope("byfile"), beam.ParDo(s, keyByFile, preds))
	beam.ParDo0(s.Scope("write"), &writePredFn{Dir: outDir}, byFile)
	m := beam.Combine(s.Scope("metrics"), &metricsFn{}, preds)
	beam.ParDo0(s.Scope("writemetrics"), &writeMetricsFn{Path: joinPath(outDir, "metrics.json")}, m)
	return dead
}

func readBytesFn(ctx context.Context, f fileio.ReadableFile) ([]byte, error) { return f.Read(ctx) }

func keyByFile(p Predictions) (string, Predictions) { return p.File, p }

// models caches decoded model files by their SHA-256: a worker process
// decodes each model once, whatever the number of DoFn instances.
var models sync.Map // [32]byte -> *solvers.Pipeline

func loadModel(b []byte) (*solvers.Pipeline, error) {
	key := sha256.Sum256(b)
	if p, ok := models.Load(key); ok {
		return p.(*solvers.Pipeline), nil
	}
	p, err := solvers.Load(bytes.NewReader(b), solvers.Options{})
	if err != nil {
		return nil, err
	}
	models.Store(key, p)
	return p, nil
}

type predictFn struct{}

func (*predictFn) ProcessElement(b Block, model []byte, emit func(Predictions)) error {
	p, err := loadModel(model)
	if err != nil {
		return err
	}
	pr, err := predictBlock(p, b)
	if err != nil {
		return err
	}
	emit(pr)
	return nil
}

// predictBlock predicts the labels of a block's rows.
func predictBlock(p *solvers.Pipeline, b Block) (Predictions, error) {
	d := p.InputDim()
	if b.Cols > d {
		return Predictions{}, fmt.Errorf("%w: %s rows %d..%d have %d feature columns, the model takes %d",
			zonal.ErrRange, b.File, b.First+1, b.First+b.Rows(), b.Cols, d)
	}
	x, err := b.dense(d, nil)
	if err != nil {
		return Predictions{}, err
	}
	pred := make([]float64, b.Rows())
	if err := p.PredictLabels(pred, x); err != nil {
		return Predictions{}, fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
	}
	return Predictions{File: b.File, First: b.First, Pred: pred, Y: b.Y, Task: p.Encoding.Task.String()}, nil
}

// heldOut adds the evaluation of a fit with a split: the held-out rows of
// the training files are predicted by the model file the report names and
// their Metrics written to HeldOutPath.
func heldOut(s beam.Scope, sp parseSpec, files, plan, report beam.PCollection) {
	preds := beam.ParDo(s.Scope("predict"), &heldOutFn{In: sp}, files, beam.SideInput{Input: plan}, beam.SideInput{Input: report})
	m := beam.Combine(s.Scope("metrics"), &metricsFn{}, preds)
	beam.ParDo0(s.Scope("write"), &writeHeldOutFn{}, m, beam.SideInput{Input: plan})
}

// heldOutFn reads a training file again and predicts its held-out rows.
type heldOutFn struct{ In parseSpec }

func (fn *heldOutFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, p Plan, r FitReport, emit func(Predictions)) error {
	b, err := readFile(ctx, r.Model)
	if err != nil {
		return err
	}
	model, err := loadModel(b)
	if err != nil {
		return err
	}
	return readRows(ctx, fn.In, f, p.Layout, func(b Block, off int) error {
		t := b.keep(func(i int) bool { return !p.Layout.isTrain(off + b.First + i) })
		if t.Rows() == 0 {
			return nil
		}
		pr, err := predictBlock(model, t)
		if err != nil {
			return err
		}
		emit(pr)
		return nil
	})
}

// writeHeldOutFn writes the held-out metrics next to the model.
type writeHeldOutFn struct{}

func (writeHeldOutFn) ProcessElement(ctx context.Context, m Metrics, p Plan) error {
	return writeMetrics(ctx, HeldOutPath(p.Model), m)
}

// writePredFn writes one file's predictions in row order.
type writePredFn struct{ Dir string }

func (fn *writePredFn) ProcessElement(ctx context.Context, file string, parts func(*Predictions) bool) error {
	var all []Predictions
	var p Predictions
	for parts(&p) {
		all = append(all, p)
		p = Predictions{}
	}
	slices.SortFunc(all, func(a, b Predictions) int { return a.First - b.First })
	var sb strings.Builder
	for _, p := range all {
		for _, v := range p.Pred {
			sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			sb.WriteByte('\n')
		}
	}
	base := strings.TrimSuffix(path.Base(file), ".gz")
	return writeFile(ctx, joinPath(fn.Dir, base+".pred"), []byte(sb.String()))
}

// joinPath joins a directory (local or a URL such as gs://b/d) and a name.
func joinPath(dir, name string) string { return strings.TrimSuffix(dir, "/") + "/" + name }

// metricsFn combines Predictions into Metrics.
type metricsFn struct{}

func (metricsFn) CreateAccumulator() Metrics { return Metrics{} }

func (metricsFn) AddInput(m Metrics, p Predictions) Metrics {
	m.Task = p.Task
	for i, v := range p.Pred {
		y := p.Y[i]
		m.N++
		if v == y {
			m.Correct++
		}
		m.SSE += (v - y) * (v - y)
		m.SAE += math.Abs(v - y)
		m.Ysum += y
		m.Y2sum += y * y
	}
	return m
}

func (metricsFn) MergeAccumulators(a, b Metrics) Metrics {
	task := a.Task
	if task == "" {
		task = b.Task
	}
	return Metrics{Task: task, N: a.N + b.N, Correct: a.Correct + b.Correct, SSE: a.SSE + b.SSE, SAE: a.SAE + b.SAE,
		Ysum: a.Ysum + b.Ysum, Y2sum: a.Y2sum + b.Y2sum}
}

func (metricsFn) ExtractOutput(m Metrics) Metrics { return m }

type writeMetricsFn struct{ Path string }

func (fn *writeMetricsFn) ProcessElement(ctx context.Context, m Metrics) error {
	return writeMetrics(ctx, fn.Path, m)
}

// writeMetrics writes m as JSON to path (nothing when m has no rows).
func writeMetrics(ctx context.Context, path string, m Metrics) error {
	if m.N == 0 {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeFile(ctx, path, b)
}

package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// Config is what a training pipeline is asked to do.
//
// The settings are an estimator.Options, as `zonal fit` and estimator.Fit
// take them: estimator.NewPlan, on the training rows' shape (rows, columns,
// density) as the first passes measure it, makes every decision the
// options leave open — the method's defaults, the centre count, whether to
// standardize, the kernel, the memory check — so that the same options
// give the same model as `zonal fit` on the same rows. What the pipelines
// cannot do distributed is refused by Check (a *zonal.ParamError naming the
// option) instead of being silently replaced:
//
//   - Method: MethodFalkon (fitted by one pass of sums and a direct solve
//     of the system FALKON's CG iterates on: a FALKON-kind model),
//     MethodRidge (with Map fourier or fourier-orth, the maps that need no
//     pass over the data), MethodParK (Partition greedy, the paper's
//     farthest-point rule; "" means greedy here, since kernel k-means, the
//     library's default, is not distributed). MethodExact is refused.
//   - Lambda must be given: choosing it scores a path of lambdas on a few
//     thousand rows on one machine (estimator's TuneLambda).
//   - Sigma must be given, or SigmaRule SigmaScale, which is computed from
//     the distributed column moments; the median heuristic and the
//     golden-section search need the rows on one machine.
//   - Precision float64, uniform centre Sampling, no text transform, and
//     ParK's CellCap, CellBudget (other than size), CellOverlap and
//     CellValidation at zero: those are not distributed.
//
// Options.Backend and Options.Progress stay on the driver: the workers use
// the default backend and report progress through Beam's counters.
type Config struct {
	Options estimator.Options
	// GivenCenters, when not empty, are the Nystrom centres of MethodFalkon
	// in the input space (before standardization or scaling), GivenCols
	// columns each; they replace the drawn centres.
	GivenCenters []float64
	GivenCols    int
	// Sample bounds the rows ParK's centroids are chosen from (a uniform
	// sample; 0 means every training row, which reproduces solvers.FitParK
	// with the greedy partition exactly).
	Sample int
	// Split, when in (0, 1), trains on that fraction of the rows and holds
	// out the rest: the rows of dataset.Split(n, Split, Options.Seed) over
	// the global row order, as `zonal fit -split` splits the rows it reads.
	// The held-out metrics are written to HeldOutPath(Model). 0 trains on
	// every row.
	Split float64
	// Workers is the number of partial sums of the falkon and ridge pass:
	// the files are dealt into Workers groups of about equal row counts and
	// each group is summed, file after file, into one M x M sum by one
	// worker (0: GOMAXPROCS of the process building the pipeline, right for
	// the in-process runner). Memory and shuffle grow with it, not with the
	// number of bundles.
	Workers int
	// MinCols raises the dimension d (LIBSVM files omit trailing zeros).
	MinCols int
	// Model is the path of the model file to write (any Beam filesystem).
	Model string
}

// HeldOutPath is where a fit with Config.Split writes the metrics of its
// held-out rows (JSON of Metrics).
func HeldOutPath(model string) string { return model + ".heldout.json" }

// The ParK partition the pipelines distribute.
const parkPartition = solvers.PartitionGreedy

// Check validates c without data: the options (estimator.Options.Validate)
// and what the pipelines support (see Config). Errors are
// *zonal.ParamError naming the option (a Config field for the pipeline's
// own settings).
func (c Config) Check() error {
	o := c.Options
	if err := o.Validate(); err != nil {
		return err
	}
	unsupported := func(param string, value any, reason string) error {
		return &zonal.ParamError{Param: param, Value: value, Reason: reason}
	}
	switch o.Method {
	case estimator.MethodExact:
		return unsupported("Method", o.Method, "exact KRR factors the n x n kernel matrix on one machine; the pipelines fit falkon, ridge and park")
	case estimator.MethodRidge:
		if m := o.Map.String(); m != "fourier" && m != "fourier-orth" {
			return unsupported("Map", m, "needs a pass over the data to build; the pipelines take fourier, fourier-orth")
		}
	case estimator.MethodParK:
		if o.Partition != "" && o.Partition != parkPartition {
			return unsupported("Partition", o.Partition, "the pipelines distribute the greedy partition only")
		}
		if o.CellCap != 0 || o.CellOverlap != 0 || o.CellValidation != 0 {
			return unsupported("CellCap", o.CellCap, "cell caps, overlaps and validation are not distributed")
		}
		if o.CellBudget != "" && o.CellBudget != solvers.BudgetSize {
			return unsupported("CellBudget", o.CellBudget, "the pipelines share the centres by cell size only")
		}
	}
	if o.Loss != estimator.LossSquared {
		return unsupported("Loss", o.Loss, "the pipelines fit the squared loss (logistic needs Newton steps over all rows)")
	}
	if o.Intercept == estimator.InterceptFitted {
		return unsupported("Intercept", o.Intercept, "the pipelines centre the targets by their mean (a fitted intercept needs K_nM's column means in every CG pass)")
	}
	if o.Weights != nil || o.ClassWeight.String() != "none" {
		return unsupported("Weights", "set", "the pipelines fit unweighted sums (per-row weights are not distributed)")
	}
	if o.Lambda == 0 {
		return unsupported("Lambda", "auto", "choosing lambda scores a lambda path on one machine; give lambda")
	}
	if o.Kernel.HasBandwidth() && o.Sigma == 0 && o.SigmaRule != estimator.SigmaScale {
		return unsupported("Sigma", "auto", "the median heuristic needs the rows on one machine; give sigma, or the scale rule (computed from the distributed moments)")
	}
	if o.Precision != zonal.Float64 {
		return unsupported("Precision", o.Precision, "the pipelines compute in float64")
	}
	if o.Sampling != "" && o.Sampling != "uniform" {
		return unsupported("Sampling", o.Sampling, "the pipelines draw uniform centres")
	}
	if o.Text.TFIDF || o.Text.Normalize {
		return unsupported("Text", "tf-idf", "the text transform is not distributed")
	}
	// Beam models are not calibrated: auto (the default) means none here.
	if o.Calibration != estimator.CalibrationAuto && o.Calibration != estimator.CalibrationNone {
		return unsupported("Calibration", o.Calibration, "calibrating on held-out folds is not distributed; beam models give raw scores")
	}
	if len(c.GivenCenters) > 0 {
		if o.Method != estimator.MethodFalkon {
			return unsupported("GivenCenters", len(c.GivenCenters), "given centres are for the falkon method")
		}
		if c.GivenCols < 1 || len(c.GivenCenters)%c.GivenCols != 0 {
			return unsupported("GivenCols", c.GivenCols, fmt.Sprintf("must divide the %d given values", len(c.GivenCenters)))
		}
	}
	if !(c.Split >= 0 && c.Split < 1) {
		return unsupported("Split", c.Split, "must be in (0, 1), or 0 to train on every row")
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"Sample", c.Sample}, {"Workers", c.Workers}, {"MinCols", c.MinCols}} {
		if v.v < 0 {
			return unsupported(v.name, v.v, "must be >= 0")
		}
	}
	if c.Model == "" {
		return unsupported("Model", `""`, "the model file to write is required")
	}
	return nil
}

// MarshalJSON encodes c for the workers: Options.Backend and
// Options.Progress are left out.
func (c Config) MarshalJSON() ([]byte, error) {
	type fields Config // the same fields, without these methods
	return json.Marshal(struct {
		fields
		Options wireOptions
	}{fields(c), wireOptions{c.Options}})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (c *Config) UnmarshalJSON(b []byte) error {
	type fields Config
	var w struct {
		fields
		Options wireOptions
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Config(w.fields)
	c.Options = w.Options.Options
	return nil
}

// wireOptions is estimator.Options as JSON without its function and
// interface fields (Backend, Progress), which cannot travel to a worker.
type wireOptions struct{ estimator.Options }

func (w wireOptions) MarshalJSON() ([]byte, error) {
	v := reflect.ValueOf(w.Options)
	m := make(map[string]any, v.NumField())
	for i := 0; i < v.NumField(); i++ {
		if k := v.Field(i).Kind(); k == reflect.Func || k == reflect.Interface {
			continue
		}
		m[v.Type().Field(i).Name] = v.Field(i).Interface()
	}
	return json.Marshal(m)
}

func (w *wireOptions) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &w.Options) }

// Layout is what the first pass learns of the files: their rows, which fix
// the global row order (files sorted by path, rows in file order), and
// which rows are trained on.
type Layout struct {
	Total   int      // rows in all files
	Cols    int      // feature columns of all rows (the dimension before MinCols)
	Files   []string // sorted
	Offsets []int    // global index of each file's first row
	Counts  []int    // rows of each file
	// Train lists the training rows' global indices, ascending (nil: every
	// row).
	Train []int
	// Groups[i] is the group of file i in the sum pass.
	Groups []int
}

// layoutFn turns the first pass's Summary into the Layout.
type layoutFn struct {
	Split   float64
	Seed    uint64
	Workers int
}

func (fn *layoutFn) ProcessElement(s Summary, emit func(Layout)) error {
	if s.N == 0 {
		return fmt.Errorf("%w: no training rows", zonal.ErrEmpty)
	}
	l := Layout{Total: s.N, Cols: s.Cols, Files: s.Files, Counts: s.Counts}
	o := 0
	for _, n := range s.Counts {
		l.Offsets = append(l.Offsets, o)
		o += n
	}
	if fn.Split > 0 {
		tr, te := dataset.Split(s.N, fn.Split, fn.Seed)
		if len(tr) == 0 || len(te) == 0 {
			return fmt.Errorf("%w: %d rows are too few to split", zonal.ErrEmpty, s.N)
		}
		l.Train = tr
	}
	l.Groups = groupFiles(s.Counts, max(1, fn.Workers))
	emit(l)
	return nil
}

// groupFiles deals files of the given row counts into at most w groups of
// about equal rows: the largest file first, each to the lightest group so
// far (ties to the lowest group).
func groupFiles(counts []int, w int) []int {
	order := make([]int, len(counts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] > counts[order[b]] })
	load := make([]int, min(w, max(1, len(counts))))
	groups := make([]int, len(counts))
	for _, f := range order {
		g := 0
		for j := range load {
			if load[j] < load[g] {
				g = j
			}
		}
		groups[f] = g
		load[g] += counts[f]
	}
	return groups
}

// index returns the position of file f in the layout.
func (l Layout) index(f string) (int, error) {
	i := sort.SearchStrings(l.Files, f)
	if i == len(l.Files) || l.Files[i] != f {
		return 0, fmt.Errorf("%w: file %s was not in the first pass", zonal.ErrState, f)
	}
	return i, nil
}

// offset returns the global index of the first row of file f.
func (l Layout) offset(f string) (int, error) {
	i, err := l.index(f)
	if err != nil {
		return 0, err
	}
	return l.Offsets[i], nil
}

// isTrain reports whether global row g is a training row.
func (l Layout) isTrain(g int) bool {
	if l.Train == nil {
		return true
	}
	_, ok := slices.BinarySearch(l.Train, g)
	return ok
}

// trainRows is the number of training rows.
func (l Layout) trainRows() int {
	if l.Train == nil {
		return l.Total
	}
	return len(l.Train)
}

// global maps positions among the training rows (ascending) to global
// row indices.
func (l Layout) global(pos []int) []int {
	if l.Train == nil {
		return pos
	}
	g := make([]int, len(pos))
	for i, p := range pos {
		g[i] = l.Train[p]
	}
	return g
}

// Plan is the Layout plus every setting of the fit, decided by
// estimator.NewPlan on the training rows' Summary; every later stage gets
// it as a side input.
type Plan struct {
	Layout      Layout
	N, D        int // training rows, dimension
	Task        int
	Classes     []float64
	Mean, Scale []float64 // the input transform (nil: none)
	Method      int       // an estimator.Method
	KernelKind  string
	KernelBytes []byte
	Lambda      float64
	Centers     int // M (falkon, park)
	Cells       int // Q (park)
	Iterations  int
	Seed        uint64
	CenterIdx   []int // sorted global row indices (falkon, drawn centres)
	SampleIdx   []int // sorted global row indices (park centroid sample; nil = every training row)
	MapKind     string
	MapBytes    []byte
	// GivenCenters (GivenCols columns) are Config.GivenCenters.
	GivenCenters []float64
	GivenCols    int
	Model        string
	// Decisions is estimator.Plan.String() of the plan made.
	Decisions string
}

func (p Plan) method() estimator.Method { return estimator.Method(p.Method) }

// planFn turns the training rows' Summary into the Plan. It holds the
// Config as JSON (Config.MarshalJSON): Beam gives DoFn fields a schema,
// which the options' Backend and Progress cannot have.
type planFn struct {
	Config []byte
	Err    string // the encoding's error, reported by the worker
}

func newPlanFn(c Config) *planFn {
	b, err := json.Marshal(c)
	if err != nil {
		return &planFn{Err: err.Error()}
	}
	return &planFn{Config: b}
}

func (fn *planFn) ProcessElement(ctx context.Context, s Summary, l Layout, emit func(Plan)) error {
	if fn.Err != "" {
		return fmt.Errorf("%w: the config cannot be sent to the workers: %s", zonal.ErrState, fn.Err)
	}
	var c Config
	if err := json.Unmarshal(fn.Config, &c); err != nil {
		return fmt.Errorf("%w: decoding the config: %v", zonal.ErrState, err)
	}
	p, err := makePlan(ctx, c, s, l)
	if err != nil {
		return err
	}
	emit(p)
	return nil
}

// shape is the estimator's view of the training rows: LIBSVM rows are
// sparse (as `zonal fit` reads them, CSR), of density nnz / (n d).
func (s Summary) shape(d int) estimator.Shape {
	sh := estimator.Shape{Rows: s.N, Cols: d}
	if s.Sparse && s.N > 0 && d > 0 {
		sh.Sparse, sh.Density = true, float64(s.NNZ)/(float64(s.N)*float64(d))
	}
	return sh
}

func makePlan(ctx context.Context, c Config, s Summary, l Layout) (Plan, error) {
	if err := c.Check(); err != nil {
		return Plan{}, err
	}
	if s.N == 0 {
		return Plan{}, fmt.Errorf("%w: no training rows", zonal.ErrEmpty)
	}
	if s.N != l.trainRows() {
		return Plan{}, fmt.Errorf("%w: %d training rows summed, the layout has %d (did the files change between passes?)", zonal.ErrState, s.N, l.trainRows())
	}
	o := c.Options
	p := Plan{Layout: l, N: s.N, D: max(l.Cols, s.Cols, c.MinCols, c.GivenCols), Method: int(o.Method), Lambda: o.Lambda,
		Seed: o.Seed, GivenCenters: c.GivenCenters, GivenCols: c.GivenCols, Model: c.Model}
	if p.D == 0 {
		return Plan{}, fmt.Errorf("%w: the training rows have no features", zonal.ErrEmpty)
	}
	ep, err := estimator.NewPlan(s.shape(p.D), o)
	if err != nil {
		return Plan{}, err
	}
	p.Decisions = ep.String()
	p.Centers, p.Cells, p.Iterations = ep.Centers, ep.Cells, ep.Iterations
	if err := p.encode(s, o.Task); err != nil {
		return Plan{}, err
	}
	// Input transform: the plan's one candidate (lambda is given, so there
	// is no raw-versus-standardized contest).
	mean, m2 := pad(s.Mean, p.D), pad(s.M2, p.D)
	switch {
	case ep.Standardize[0]:
		p.Mean, p.Scale = mean, make([]float64, p.D)
		for j := range p.Scale {
			sd := math.Sqrt(m2[j] / float64(s.N))
			if !(sd > 0) {
				sd = 1 // constant column, as dataset.Standardizer
			}
			p.Scale[j] = sd
		}
	case ep.Scale != 1:
		p.Mean, p.Scale = make([]float64, p.D), make([]float64, p.D)
		for j := range p.Scale {
			p.Scale[j] = 1 / ep.Scale
		}
	}
	spec := ep.Kernel
	if ep.Sigma == estimator.SigmaScaled {
		if spec.Sigma, err = p.scaleSigma(s.N, mean, m2); err != nil {
			return Plan{}, &zonal.ParamError{Param: "SigmaRule", Value: estimator.SigmaScale, Reason: "the scale rule cannot choose sigma: " + err.Error(), Err: err}
		}
	}
	k, err := spec.New()
	if err != nil {
		return Plan{}, err
	}
	p.KernelKind = k.Kind()
	if p.KernelBytes, err = k.MarshalBinary(); err != nil {
		return Plan{}, err
	}
	switch ep.Method {
	case estimator.MethodFalkon:
		if len(c.GivenCenters) == 0 {
			if p.Centers < 1 || p.Centers > s.N {
				return Plan{}, &zonal.ParamError{Param: "Centers", Value: p.Centers, Reason: fmt.Sprintf("need 1 <= centres <= n = %d", s.N)}
			}
			p.CenterIdx = l.global(solvers.UniformCenters(s.N, p.Centers, o.Seed))
		}
	case estimator.MethodRidge:
		fm, err := kernels.NewFourierMap(k, p.D, kernels.FourierOptions{Features: ep.Features, Orthogonal: ep.Map == "fourier-orth", Seed: o.Seed})
		if err != nil {
			return Plan{}, err
		}
		p.MapKind = fm.Kind()
		if p.MapBytes, err = fm.MarshalBinary(); err != nil {
			return Plan{}, err
		}
	case estimator.MethodParK:
		if p.Cells > s.N || p.Centers < p.Cells || p.Centers > s.N {
			return Plan{}, &zonal.ParamError{Param: "Cells", Value: p.Cells, Reason: fmt.Sprintf("ParK needs 1 <= cells (%d) <= centres (%d) <= n = %d", p.Cells, p.Centers, s.N)}
		}
		if c.Sample > 0 && c.Sample < s.N {
			p.SampleIdx = l.global(solvers.UniformCenters(s.N, c.Sample, o.Seed))
		}
	}
	return p, ctx.Err()
}

// encode sets the label encoding from the distinct labels and their row
// counts, as estimator.Encoding reads it off the labels.
func (p *Plan) encode(s Summary, task solvers.Task) error {
	if s.ManyLabels {
		if task == solvers.TaskClassification {
			return &zonal.ParamError{Param: "Task", Value: task, Reason: fmt.Sprintf("more than %d distinct labels: not a classification target", maxLabels)}
		}
		enc, err := solvers.NewEncoding([]float64{0}, solvers.TaskRegression)
		p.Task, p.Classes = int(enc.Task), enc.Classes
		return err
	}
	enc, err := estimator.Encoding(labelSample(s.Labels, s.LabelRows), task)
	if err != nil {
		return err
	}
	p.Task, p.Classes = int(enc.Task), enc.Classes
	return nil
}

// scaleSigma is tune.ScaleSigma of the transformed training rows, from the
// column means and sums of squared deviations of the raw ones: the rule
// sqrt(d var(X) / 2) with var over every entry, the column moments merged
// into the one of all n d entries.
func (p Plan) scaleSigma(n int, mean, m2 []float64) (float64, error) {
	d := len(mean)
	tm, tm2 := make([]float64, d), make([]float64, d)
	for j := range mean {
		tm[j], tm2[j] = mean[j], m2[j]
		if p.Mean != nil {
			tm[j] = (mean[j] - p.Mean[j]) / p.Scale[j]
			tm2[j] = m2[j] / (p.Scale[j] * p.Scale[j])
		}
	}
	mu := 0.0
	for _, v := range tm {
		mu += v
	}
	mu /= float64(d)
	v := 0.0
	for j := range tm {
		v += tm2[j] + float64(n)*(tm[j]-mu)*(tm[j]-mu)
	}
	v /= float64(n) * float64(d)
	if !(v > 0) {
		return 0, fmt.Errorf("%w: every entry of the data is %g (variance 0): set sigma explicitly", zonal.ErrParam, mu)
	}
	return math.Sqrt(float64(d) * v / 2), nil
}

func (p Plan) kernel() (kernels.Kernel, error) {
	return kernels.UnmarshalKernel(p.KernelKind, p.KernelBytes)
}

func (p Plan) encoding() solvers.Encoding {
	return solvers.Encoding{Task: solvers.Task(p.Task), Classes: p.Classes}
}

func (p Plan) scaler() *scaler { return newScaler(p.Mean, p.Scale) }

// offset returns the global index of the first row of file f.
func (p Plan) offset(f string) (int, error) { return p.Layout.offset(f) }

// targets returns the encoded training targets of a block (n x k).
func (p Plan) targets(b Block) (*mat.Dense, error) {
	t, err := p.encoding().Targets(b.Y)
	if err != nil {
		return nil, fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
	}
	return t, nil
}

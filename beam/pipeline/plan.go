package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// Methods of Config.Method.
const (
	MethodNystrom = "nystrom" // one-pass Nystrom KRR, a FALKON-kind model
	MethodRidge   = "ridge"   // ridge on a data-independent feature map
	MethodParK    = "park"    // ParK: one FALKON per Voronoi cell
)

// Config is what a training pipeline is asked to do. Its fields mirror
// `zonal fit`'s flags.
type Config struct {
	Method string
	// Kernel is "gaussian" or "laplacian", with bandwidth Sigma.
	Kernel string
	Sigma  float64
	// Lambda: objective (1/n)|f(X) - y|^2 + Lambda |f|^2.
	Lambda float64
	// Centers is M: the Nystrom centres (nystrom), or their total over the
	// cells (park). Ignored when GivenCenters is set.
	Centers int
	// GivenCenters, when not empty, are the Nystrom centres in the input
	// space (before Standardize/Scale), GivenCols columns each.
	GivenCenters []float64
	GivenCols    int
	// Cells is Q for park; Sample bounds the rows the centroids are chosen
	// from (a uniform sample; 0 means every row, which reproduces
	// solvers.FitParK exactly). Iterations and Tol are each cell's CG
	// settings (0: the solvers' defaults).
	Cells, Sample, Iterations int
	Tol                       float64
	// Map is the feature map of ridge: "fourier" or "fourier-orth" (random
	// Fourier features, which need no pass over the data), with Features D.
	Map      string
	Features int
	// Standardize fits a distributed standardizer and stores it in the
	// model; otherwise Scale (when not 0 or 1) multiplies every feature, as
	// `zonal fit -scale` does.
	Standardize bool
	Scale       float64
	// Task is "auto" (default), "regression" or "classification".
	Task string
	Seed uint64
	// MinCols raises the dimension d (LIBSVM files omit trailing zeros).
	MinCols int
	// Model is the path of the model file to write (any Beam filesystem).
	Model string
}

// Plan is Config plus what the first pass learnt; every later stage gets it
// as a side input.
type Plan struct {
	Config      Config
	N, D        int
	Files       []string
	Offsets     []int
	Task        int
	Classes     []float64
	Mean, Scale []float64
	KernelKind  string
	KernelBytes []byte
	CenterIdx   []int // sorted global row indices (nystrom, sampled centres)
	SampleIdx   []int // sorted global row indices (park centroid sample; nil = all)
	MapKind     string
	MapBytes    []byte
}

// planFn turns the Summary into the Plan.
type planFn struct{ Config Config }

func (fn *planFn) ProcessElement(ctx context.Context, s Summary, emit func(Plan)) error {
	p, err := makePlan(ctx, fn.Config, s)
	if err != nil {
		return err
	}
	emit(p)
	return nil
}

// newKernel builds the kernel of c.
func newKernel(c Config) (kernels.Kernel, error) {
	switch c.Kernel {
	case "", "gaussian":
		return kernels.NewGaussian(c.Sigma)
	case "laplacian":
		return kernels.NewLaplacian(c.Sigma)
	}
	return nil, fmt.Errorf("%w: unknown kernel %q (gaussian, laplacian)", zonal.ErrParam, c.Kernel)
}

func makePlan(ctx context.Context, c Config, s Summary) (Plan, error) {
	if s.N == 0 {
		return Plan{}, fmt.Errorf("%w: no training rows", zonal.ErrEmpty)
	}
	if !(c.Lambda > 0) || math.IsInf(c.Lambda, 0) {
		return Plan{}, fmt.Errorf("%w: lambda must be positive and finite, got %g", zonal.ErrParam, c.Lambda)
	}
	p := Plan{Config: c, N: s.N, D: max(s.Cols, c.MinCols, c.GivenCols), Files: s.Files}
	if p.D == 0 {
		return Plan{}, fmt.Errorf("%w: the training rows have no features", zonal.ErrEmpty)
	}
	o := 0
	for _, n := range s.Counts {
		p.Offsets = append(p.Offsets, o)
		o += n
	}
	// Encoding from the distinct labels and their row counts.
	task, err := solvers.ParseTask(c.Task)
	if c.Task == "" {
		task, err = solvers.TaskAuto, nil
	}
	if err != nil {
		return Plan{}, err
	}
	labels := s.Labels
	if s.ManyLabels {
		if task == solvers.TaskClassification {
			return Plan{}, fmt.Errorf("%w: more than %d distinct labels: not a classification target", zonal.ErrParam, maxLabels)
		}
		task = solvers.TaskRegression
		labels = []float64{0}
	}
	if task == solvers.TaskAuto && !s.ManyLabels {
		// zonal fit's rule: classes when every label is an integer held
		// by enough rows (solvers.DetectTask), read off the label counts.
		task = solvers.DetectTask(labelSample(s.Labels, s.LabelRows))
	}
	enc, err := solvers.NewEncoding(labels, task)
	if err != nil {
		return Plan{}, err
	}
	p.Task, p.Classes = int(enc.Task), enc.Classes
	// Input transform.
	switch {
	case c.Standardize:
		p.Mean, p.Scale = pad(s.Mean, p.D), make([]float64, p.D)
		m2 := pad(s.M2, p.D)
		for j := range p.Scale {
			sd := math.Sqrt(m2[j] / float64(s.N))
			if !(sd > 0) {
				sd = 1 // constant column, as dataset.Standardizer
			}
			p.Scale[j] = sd
		}
	case c.Scale != 0 && c.Scale != 1:
		p.Mean, p.Scale = make([]float64, p.D), make([]float64, p.D)
		for j := range p.Scale {
			p.Scale[j] = 1 / c.Scale
		}
	}
	k, err := newKernel(c)
	if err != nil {
		return Plan{}, err
	}
	p.KernelKind = k.Kind()
	if p.KernelBytes, err = k.MarshalBinary(); err != nil {
		return Plan{}, err
	}
	switch c.Method {
	case MethodNystrom:
		if len(c.GivenCenters) == 0 {
			if c.Centers < 1 || c.Centers > s.N {
				return Plan{}, fmt.Errorf("%w: need 1 <= centres <= n = %d, got %d", zonal.ErrParam, s.N, c.Centers)
			}
			p.CenterIdx = uniformIndices(s.N, c.Centers, c.Seed)
		}
	case MethodRidge:
		var fm *kernels.FourierMap
		switch c.Map {
		case "", "fourier", "fourier-orth":
			fm, err = kernels.NewFourierMap(k, p.D, kernels.FourierOptions{Features: c.Features, Orthogonal: c.Map == "fourier-orth", Seed: c.Seed})
		default:
			err = fmt.Errorf("%w: map %q needs a pass over the data to build; the beam pipelines take fourier, fourier-orth", zonal.ErrParam, c.Map)
		}
		if err != nil {
			return Plan{}, err
		}
		p.MapKind = fm.Kind()
		if p.MapBytes, err = fm.MarshalBinary(); err != nil {
			return Plan{}, err
		}
	case MethodParK:
		if c.Cells < 1 || c.Cells > s.N || c.Centers < c.Cells || c.Centers > s.N {
			return Plan{}, fmt.Errorf("%w: ParK needs 1 <= cells (%d) <= centres (%d) <= n = %d", zonal.ErrParam, c.Cells, c.Centers, s.N)
		}
		if c.Sample > 0 && c.Sample < s.N {
			p.SampleIdx = uniformIndices(s.N, c.Sample, c.Seed)
		}
	default:
		return Plan{}, fmt.Errorf("%w: unknown method %q (nystrom, ridge, park)", zonal.ErrParam, c.Method)
	}
	return p, ctx.Err()
}

// uniformIndices draws m distinct indices of 0..n-1, sorted: the same draw
// as solvers.FitFalkon's uniform centres for the same seed, so that a
// pipeline over the same rows in the same order picks the same centres.
func uniformIndices(n, m int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	return idx
}

func (p Plan) kernel() (kernels.Kernel, error) {
	return kernels.UnmarshalKernel(p.KernelKind, p.KernelBytes)
}

func (p Plan) encoding() solvers.Encoding {
	return solvers.Encoding{Task: solvers.Task(p.Task), Classes: p.Classes}
}

func (p Plan) scaler() *scaler { return newScaler(p.Mean, p.Scale) }

// offset returns the global index of the first row of file f.
func (p Plan) offset(f string) (int, error) {
	i := sort.SearchStrings(p.Files, f)
	if i == len(p.Files) || p.Files[i] != f {
		return 0, fmt.Errorf("%w: file %s was not in the first pass", zonal.ErrState, f)
	}
	return p.Offsets[i], nil
}

// targets returns the encoded training targets of a block (n x k).
func (p Plan) targets(b Block) (*mat.Dense, error) {
	t, err := p.encoding().Targets(b.Y)
	if err != nil {
		return nil, fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
	}
	return t, nil
}

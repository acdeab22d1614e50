package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// Sums holds the sufficient statistics of a least-squares problem on
// features A (the kernel block K_nM, or the feature block Z): with m
// features and k outputs,
//
//	G = A^T A (m x m), B = A^T Y (m x k), S = A^T 1 (m), Ysum = 1^T Y (k), N rows.
//
// They add over row blocks, so workers compute them per block and a
// combiner sums them; the centred right-hand side is
// A^T (Y - 1 mean^T) = B - S mean^T with mean = Ysum / N.
type Sums struct {
	M, K int
	N    int
	G    []float64
	B    []float64
	S    []float64
	Ysum []float64
}

// sumAllocs counts the M x M accumulators allocated in this process (the
// first block added to an empty Sums allocates its arrays): a test hook
// that bounds the partial sums a worker holds.
var sumAllocs atomic.Int64

// addBlock adds the block a (n x m) with targets y (n x k) into s's arrays;
// only the first block of an empty Sums allocates them.
func (s *Sums) addBlock(be backend.Backend, a, y *mat.Dense) {
	n, m := a.Dims()
	_, k := y.Dims()
	if s.G == nil {
		s.M, s.K = m, k
		s.G, s.B, s.S, s.Ysum = make([]float64, m*m), make([]float64, m*k), make([]float64, m), make([]float64, k)
		sumAllocs.Add(1)
	}
	ar := a.RawMatrix()
	be.Syrk(blas.Trans, 1, ar, 1, blas64.General{Rows: m, Cols: m, Stride: m, Data: s.G})
	be.Gemm(blas.Trans, blas.NoTrans, 1, ar, y.RawMatrix(), 1, blas64.General{Rows: m, Cols: k, Stride: k, Data: s.B})
	for i := 0; i < n; i++ {
		for j, v := range ar.Data[i*ar.Stride : i*ar.Stride+m] {
			s.S[j] += v
		}
		for t, v := range y.RawRowView(i) {
			s.Ysum[t] += v
		}
	}
	s.N += n
}

// sumsFn is the combiner that adds Sums. Its accumulator is the first
// non-empty Sums it is given, and every later one is added into that
// one's arrays: a merge allocates nothing, so a combine over any number
// of partial sums holds one accumulator plus the input being added.
// (The inputs are the groups' sums, each emitted once by knmSumsFn or
// featureSumsFn and read by this combiner only, so taking one over is
// safe; a PCollection of Sums with a second consumer must not be combined
// by it.)
type sumsFn struct{}

func (sumsFn) CreateAccumulator() Sums { return Sums{} }

func (fn sumsFn) AddInput(a, b Sums) (Sums, error) { return fn.MergeAccumulators(a, b) }

// MergeAccumulators adds b into a's arrays and returns a (b when a is
// empty). Sums of other shapes are an error (zonal.ErrShape).
func (sumsFn) MergeAccumulators(a, b Sums) (Sums, error) {
	if b.N == 0 {
		return a, nil
	}
	if a.N == 0 {
		return b, nil
	}
	if a.M != b.M || a.K != b.K || len(a.G) != len(b.G) || len(a.B) != len(b.B) || len(a.S) != len(b.S) || len(a.Ysum) != len(b.Ysum) {
		return Sums{}, fmt.Errorf("%w: partial sums of %d x %d features and %d outputs, and of %d x %d and %d",
			zonal.ErrShape, a.M, a.M, a.K, b.M, b.M, b.K)
	}
	addInto(a.G, b.G)
	addInto(a.B, b.B)
	addInto(a.S, b.S)
	addInto(a.Ysum, b.Ysum)
	a.N += b.N
	return a, nil
}

func addInto(dst, src []float64) {
	for i, v := range src {
		dst[i] += v
	}
}

func (sumsFn) ExtractOutput(a Sums) Sums { return a }

// keyByGroupFn keys every file by its group in the sum pass.
type keyByGroupFn struct{}

func (keyByGroupFn) ProcessElement(f fileio.ReadableFile, p Plan, emit func(int, fileio.ReadableFile)) error {
	i, err := p.Layout.index(f.Metadata.Path)
	if err != nil {
		return err
	}
	emit(p.Layout.Groups[i], f)
	return nil
}

// groupFilesByWorker groups the files by the plan's groups
// (PCollection<KV<int, Iter<fileio.ReadableFile>>>).
func groupFilesByWorker(s beam.Scope, files, plan beam.PCollection) beam.PCollection {
	return beam.GroupByKey(s, beam.ParDo(s, &keyByGroupFn{}, files, beam.SideInput{Input: plan}))
}

// knmSumsFn sums K_nM^T K_nM, K_nM^T Y, K_nM^T 1 and 1^T Y over the
// training rows of one group of files against the centres, one file after
// the other and one block at a time, and emits one Sums: a worker holds one
// M x M sum and one block of K_nM, whatever the bundles.
type knmSumsFn struct {
	In   parseSpec
	rows rowCounter
}

func (fn *knmSumsFn) ProcessElement(ctx context.Context, _ int, files func(*fileio.ReadableFile) bool, p Plan, c Rows, emit func(Sums)) error {
	k, err := p.kernel()
	if err != nil {
		return err
	}
	cm := mat.NewDense(c.n(), c.D, c.X) // read only: no copy
	return sumGroup(ctx, fn.In, files, p, fn.rows, emit, func(x *mat.Dense) (*mat.Dense, error) {
		return kernels.Matrix(ctx, k, x, cm, kernels.Options{})
	})
}

// featureSumsFn does the same for the features Z of the plan's feature map.
type featureSumsFn struct {
	In   parseSpec
	rows rowCounter
}

func (fn *featureSumsFn) ProcessElement(ctx context.Context, _ int, files func(*fileio.ReadableFile) bool, p Plan, emit func(Sums)) error {
	fm, err := kernels.UnmarshalMap(p.MapKind, p.MapBytes)
	if err != nil {
		return err
	}
	return sumGroup(ctx, fn.In, files, p, fn.rows, emit, func(x *mat.Dense) (*mat.Dense, error) {
		n, _ := x.Dims()
		z := mat.NewDense(n, fm.Dim(), nil)
		return z, fm.Transform(z, x)
	})
}

// sumGroup adds the Sums of features(x) over the training rows of every
// file of a group and emits them once.
//
// The accumulator lives in this call, not in the process or the DoFn: a
// group is one element (the GroupByKey of its files), so its sum is built
// and emitted by one ProcessElement call. When a bundle fails and the
// runner retries it, the retry starts from an empty Sums and the failed
// attempt's output is discarded by the runner, so no row is counted twice.
// A process-level sum shared by bundles and emitted in FinishBundle would
// keep the rows of a failed bundle (its retry, here or on another worker,
// adds them again) and would tie the result to which bundle finishes last;
// the group key gives the same bound, one M x M sum per group, without
// that state.
func sumGroup(ctx context.Context, sp parseSpec, files func(*fileio.ReadableFile) bool, p Plan, rows rowCounter,
	emit func(Sums), features func(x *mat.Dense) (*mat.Dense, error)) error {
	var acc Sums
	var f fileio.ReadableFile
	for files(&f) {
		err := readTrainRows(ctx, sp, f, p.Layout, func(b Block) error {
			x, y, err := blockInputs(b, p)
			if err != nil {
				return err
			}
			start := time.Now()
			a, err := features(x)
			if err != nil {
				return fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
			}
			addMillis(ctx, "kernel_ms", start)
			start = time.Now()
			acc.addBlock(backend.Default(), a, y)
			addMillis(ctx, "gram_ms", start)
			rows.inc(ctx, b.Rows())
			return nil
		})
		if err != nil {
			return err
		}
	}
	if acc.N > 0 {
		emit(acc)
	}
	return nil
}

// blockInputs returns the scaled dense rows and the encoded targets.
func blockInputs(b Block, p Plan) (x, y *mat.Dense, err error) {
	if x, err = b.dense(p.D, p.scaler()); err != nil {
		return nil, nil, err
	}
	if y, err = p.targets(b); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

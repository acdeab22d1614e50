package pipeline

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

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

// addBlock adds the block a (n x m) with targets y (n x k).
func (s *Sums) addBlock(be backend.Backend, a, y *mat.Dense) {
	n, m := a.Dims()
	_, k := y.Dims()
	if s.G == nil {
		s.M, s.K = m, k
		s.G, s.B, s.S, s.Ysum = make([]float64, m*m), make([]float64, m*k), make([]float64, m), make([]float64, k)
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

// sumsFn is the combiner that adds Sums.
type sumsFn struct{}

func (sumsFn) CreateAccumulator() Sums { return Sums{} }

func (fn sumsFn) AddInput(a, b Sums) Sums { return fn.MergeAccumulators(a, b) }

func (sumsFn) MergeAccumulators(a, b Sums) Sums {
	if a.N == 0 {
		return b
	}
	if b.N == 0 {
		return a
	}
	for i, v := range b.G {
		a.G[i] += v
	}
	for i, v := range b.B {
		a.B[i] += v
	}
	for i, v := range b.S {
		a.S[i] += v
	}
	for i, v := range b.Ysum {
		a.Ysum[i] += v
	}
	a.N += b.N
	return a
}

func (sumsFn) ExtractOutput(a Sums) Sums { return a }

// knmFn adds the Sums of every block's K_nM against the centres over a
// bundle and emits them once, at the end of the bundle: a worker holds one
// M x M sum per bundle, not one per block.
type knmFn struct {
	rows rowCounter
	acc  Sums
}

// featureFn does the same for the features Z of a feature map.
type featureFn struct {
	rows rowCounter
	fm   kernels.FeatureMap
	key  string
	acc  Sums
}

// StartBundle and FinishBundle take the side inputs too, as Beam requires.
func (fn *knmFn) StartBundle(context.Context, Plan, Rows, func(Sums)) { fn.acc = Sums{} }

func (fn *knmFn) FinishBundle(_ context.Context, _ Plan, _ Rows, emit func(Sums)) {
	if fn.acc.N > 0 {
		emit(fn.acc)
	}
	fn.acc = Sums{}
}

func (fn *featureFn) StartBundle(context.Context, Plan, func(Sums)) { fn.acc = Sums{} }

func (fn *featureFn) FinishBundle(_ context.Context, _ Plan, emit func(Sums)) {
	if fn.acc.N > 0 {
		emit(fn.acc)
	}
	fn.acc = Sums{}
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

func (fn *knmFn) ProcessElement(ctx context.Context, b Block, p Plan, c Rows, _ func(Sums)) error {
	x, y, err := blockInputs(b, p)
	if err != nil {
		return err
	}
	k, err := p.kernel()
	if err != nil {
		return err
	}
	start := time.Now()
	knm, err := kernels.Matrix(ctx, k, x, mat.NewDense(c.n(), c.D, c.X), kernels.Options{}) // read only: no copy
	if err != nil {
		return fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
	}
	addMillis(ctx, "kernel_ms", start)
	start = time.Now()
	fn.acc.addBlock(backend.Default(), knm, y)
	addMillis(ctx, "gram_ms", start)
	fn.rows.inc(ctx, b.Rows())
	return nil
}

func (fn *featureFn) ProcessElement(ctx context.Context, b Block, p Plan, _ func(Sums)) error {
	x, y, err := blockInputs(b, p)
	if err != nil {
		return err
	}
	if fn.fm == nil || fn.key != string(p.MapBytes) {
		if fn.fm, err = kernels.UnmarshalMap(p.MapKind, p.MapBytes); err != nil {
			return err
		}
		fn.key = string(p.MapBytes)
	}
	start := time.Now()
	n, _ := x.Dims()
	z := mat.NewDense(n, fn.fm.Dim(), nil)
	if err := fn.fm.Transform(z, x); err != nil {
		return fmt.Errorf("%s rows %d..%d: %w", b.File, b.First+1, b.First+b.Rows(), err)
	}
	addMillis(ctx, "kernel_ms", start)
	start = time.Now()
	fn.acc.addBlock(backend.Default(), z, y)
	addMillis(ctx, "gram_ms", start)
	fn.rows.inc(ctx, b.Rows())
	return nil
}

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// FitReport is what a training pipeline emits once its model file is
// written.
type FitReport struct {
	Model   string // the model file
	Kind    string // solvers kind: falkon, ridge, park
	Rows    int    // rows trained on
	Cols    int    // d
	Centers int    // M (nystrom, park), D (ridge)
	Cells   int    // Q (park)
}

// centred returns the centred right-hand side B - S mean^T (m x k) and mean.
func (s Sums) centred() (*mat.Dense, []float64) {
	mean := make([]float64, s.K)
	for t := range mean {
		mean[t] = s.Ysum[t] / float64(s.N)
	}
	b := mat.NewDense(s.M, s.K, nil)
	for i := 0; i < s.M; i++ {
		for t := 0; t < s.K; t++ {
			b.Set(i, t, s.B[i*s.K+t]-s.S[i]*mean[t])
		}
	}
	return b, mean
}

// cholJitter factors fill's matrix plus shift I, raising shift tenfold (at
// most 8 times, from at least 1e-14 times the mean diagonal) when the
// factorisation fails.
func cholJitter(be backend.Backend, a *mat.Dense, shift float64, fill func(*mat.Dense)) error {
	m, _ := a.Dims()
	var err error
	for try := 0; try < 9; try++ {
		fill(a)
		tr := 0.0
		for i := 0; i < m; i++ {
			tr += a.At(i, i)
		}
		if try > 0 {
			shift = max(shift*10, 1e-14*tr/float64(m))
		}
		for i := 0; i < m; i++ {
			a.Set(i, i, a.At(i, i)+shift)
		}
		if err = be.Cholesky(a.RawMatrix()); err == nil {
			return nil
		}
	}
	return err
}

// solveNystrom solves (G + lambda N K_MM) alpha = B - S mean^T through
// T^T T = K_MM + eps M I (eps = 1e-14, raised when K_MM is singular), as
//
//	(T^-T G T^-1 + lambda N I) beta = T^-T (B - S mean^T),  alpha = T^-1 beta,
//
// whose matrix has its eigenvalues in [lambda N, ||G|| / lambda_min(K_MM)]
// instead of down to lambda N lambda_min(K_MM): this is the system FALKON's
// preconditioned CG solves, solved directly once.
//
// It works in s.G's array, which it overwrites (the sums are the
// combiner's output, read by this solve only), and holds three M x M
// matrices at most: T, H (in s.G) and H's copy for a second try of its
// factorisation. K_MM is computed into T's array (again on a retry, rather
// than kept), and the two triangular solves of L^-1 G L^-T transpose H in
// place instead of copying it.
func solveNystrom(ctx context.Context, k kernels.Kernel, c *mat.Dense, s Sums, lambda float64) (alpha *mat.Dense, mean []float64, err error) {
	be := backend.Default()
	m, _ := c.Dims()
	if s.M != m || len(s.G) != m*m {
		return nil, nil, fmt.Errorf("%w: sums for %d centres, %d centres", zonal.ErrState, s.M, m)
	}
	t := mat.NewDense(m, m, nil)
	var kerr error
	if err := cholJitter(be, t, 1e-14*float64(m), func(a *mat.Dense) {
		if kerr == nil {
			kerr = kernels.MatrixInto(ctx, a, k, c, c, kernels.Options{})
		}
	}); kerr != nil {
		return nil, nil, kerr
	} else if err != nil {
		return nil, nil, fmt.Errorf("K_MM: %w", err)
	}
	l := t.RawMatrix() // L = T^T, lower
	// H = L^-1 G L^-T + lambda N I, in G's array.
	h := mat.NewDense(m, m, s.G)
	hr := h.RawMatrix()
	be.TriSolve(blas.NoTrans, l, hr) // L^-1 G
	transposeSquare(hr)              // (L^-1 G)^T = G L^-T
	be.TriSolve(blas.NoTrans, l, hr) // L^-1 G L^-T, transposed
	for i := 0; i < m; i++ {         // symmetrise the rounding (which also undoes the transpose)
		for j := 0; j < i; j++ {
			v := (hr.Data[i*hr.Stride+j] + hr.Data[j*hr.Stride+i]) / 2
			hr.Data[i*hr.Stride+j] = v
			hr.Data[j*hr.Stride+i] = v
		}
	}
	saved := mat.DenseCopyOf(h)
	if err := cholJitter(be, h, lambda*float64(s.N), func(a *mat.Dense) { a.Copy(saved) }); err != nil {
		return nil, nil, fmt.Errorf("T^-T G T^-1 + lambda n I: %w", err)
	}
	b, mean := s.centred()
	br := b.RawMatrix()
	be.TriSolve(blas.NoTrans, l, br) // T^-T b
	be.CholSolve(hr, br)             // beta
	be.TriSolve(blas.Trans, l, br)   // alpha = T^-1 beta
	return b, mean, nil
}

// transposeSquare transposes the square matrix a in place.
func transposeSquare(a blas64.General) {
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < i; j++ {
			a.Data[i*a.Stride+j], a.Data[j*a.Stride+i] = a.Data[j*a.Stride+i], a.Data[i*a.Stride+j]
		}
	}
}

// solveRidge solves (G + lambda N I) W = B - S mean^T.
func solveRidge(s Sums, lambda float64) (w *mat.Dense, mean []float64, err error) {
	be := backend.Default()
	g := mat.NewDense(s.M, s.M, nil)
	if err := cholJitter(be, g, lambda*float64(s.N), func(a *mat.Dense) {
		copy(a.RawMatrix().Data, s.G)
	}); err != nil {
		return nil, nil, fmt.Errorf("Z^T Z + lambda n I: %w", err)
	}
	b, mean := s.centred()
	be.CholSolve(g.RawMatrix(), b.RawMatrix())
	return b, mean, nil
}

// writeModel saves the model with the plan's scaler and encoding to path.
func writeModel(ctx context.Context, path string, p Plan, m solvers.Model) error {
	var sc *solvers.Scaler
	if len(p.Mean) > 0 {
		var err error
		if sc, err = solvers.NewScaler(p.Mean, p.Scale); err != nil {
			return err
		}
	}
	pipe, err := solvers.NewPipeline(sc, p.encoding(), m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := solvers.Save(&buf, pipe); err != nil {
		return err
	}
	return writeFile(ctx, path, buf.Bytes())
}

// writeFile writes b to path on a Beam filesystem.
func writeFile(ctx context.Context, path string, b []byte) error {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readFile reads the file at path on a Beam filesystem.
func readFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// solveNystromFn solves the one-pass system and writes a FALKON-kind model.
type solveNystromFn struct{}

func (solveNystromFn) ProcessElement(ctx context.Context, s Sums, p Plan, c Rows, emit func(FitReport)) error {
	defer addMillis(ctx, "solve_ms", time.Now())
	k, err := p.kernel()
	if err != nil {
		return err
	}
	cm := c.dense()
	alpha, mean, err := solveNystrom(ctx, k, cm, s, p.Lambda)
	if err != nil {
		return err
	}
	f, err := solvers.NewFalkonModel(k, cm, alpha, mean, p.Lambda, solvers.Options{})
	if err != nil {
		return err
	}
	if err := writeModel(ctx, p.Model, p, f); err != nil {
		return err
	}
	emit(FitReport{Model: p.Model, Kind: f.Kind(), Rows: s.N, Cols: p.D, Centers: c.n()})
	return nil
}

// solveRidgeFn solves the ridge system and writes a ridge-kind model.
type solveRidgeFn struct{}

func (solveRidgeFn) ProcessElement(ctx context.Context, s Sums, p Plan, emit func(FitReport)) error {
	defer addMillis(ctx, "solve_ms", time.Now())
	fm, err := kernels.UnmarshalMap(p.MapKind, p.MapBytes)
	if err != nil {
		return err
	}
	w, mean, err := solveRidge(s, p.Lambda)
	if err != nil {
		return err
	}
	r, err := solvers.NewRidgeModel(fm, w, mean, p.Lambda, solvers.Options{})
	if err != nil {
		return err
	}
	if err := writeModel(ctx, p.Model, p, r); err != nil {
		return err
	}
	emit(FitReport{Model: p.Model, Kind: r.Kind(), Rows: s.N, Cols: p.D, Centers: s.M})
	return nil
}

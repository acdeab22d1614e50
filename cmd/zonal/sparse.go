package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// sparseDensity is the density nnz/(n d) below which `zonal fit -sparse
// auto` keeps LIBSVM rows as CSR. At 10% a CSR (16 bytes per entry: value
// and column index) is 5x smaller than the dense matrix (8 bytes per
// entry), and the sparse products cost about as much as the dense BLAS
// ones around there; below it, sparse wins on both counts.
const sparseDensity = 0.10

// keepSparse decides whether the training rows stay CSR (train.X is nil
// when this is asked), and says so on stderr when they do.
func keepSparse(e *env, c fitConfig, train *dataset.Data, density float64) bool {
	keep := c.sparse == "yes" || c.sparse == "auto" && density < sparseDensity
	if keep {
		fmt.Fprintf(e.stderr, "input is sparse (density %.2f%%): kept as CSR\n", 100*density)
	}
	return keep
}

// denseOf returns the dense form of s, refusing (zonal.ErrTooLarge) one of
// more than dataset.MaxDenseElements entries as the LIBSVM reader does.
func denseOf(s *dataset.CSR) (*mat.Dense, error) {
	if s.Rows > 0 && s.Cols > dataset.MaxDenseElements/s.Rows {
		return nil, fmt.Errorf("%w: dense %d x %d matrix exceeds %d entries (the input is sparse enough to keep as CSR: -sparse yes)",
			zonal.ErrTooLarge, s.Rows, s.Cols, dataset.MaxDenseElements)
	}
	return s.ToDense(), nil
}

// fitText fits the -tfidf / -normalize transform on the training rows x
// and applies it to them in place (x must be the training copy); nil when
// neither flag is set. A *dataset.CSR x is replaced by reference: use
// fitTextCSR for it.
func fitText(c fitConfig, x *mat.Dense) (*dataset.TextTransform, error) {
	if !c.text.TFIDF && !c.text.Normalize {
		return nil, nil
	}
	t, err := dataset.FitTextTransform(x, c.text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.train, err)
	}
	if err := t.Apply(x); err != nil {
		return nil, fmt.Errorf("%s: %w", c.train, err)
	}
	return t, nil
}

// fitTextCSR is fitText for sparse rows: it returns the transformed rows
// (x itself when no transform is asked for).
func fitTextCSR(c fitConfig, x *dataset.CSR) (*dataset.TextTransform, *dataset.CSR, error) {
	if !c.text.TFIDF && !c.text.Normalize {
		return nil, x, nil
	}
	t, err := dataset.FitTextTransform(x, c.text)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.train, err)
	}
	xt, err := t.ApplyCSR(x)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", c.train, err)
	}
	return t, xt, nil
}

// textDesc names the text transforms of o, e.g. "tf-idf, then L2 rows".
func textDesc(o dataset.TextOptions) string {
	var parts []string
	if o.TFIDF {
		parts = append(parts, "tf-idf (smoothed idf of the training rows)")
	}
	if o.Normalize {
		parts = append(parts, "L2-normalized rows")
	}
	return strings.Join(parts, ", then ")
}

// runSparseFit is runFit for CSR rows (train.X == nil): no standardizing
// (centering would make every row dense), the text transform on the
// nonzeros, the solvers given x as a mat.Matrix, and the test rows
// predicted from their CSR.
func runSparseFit(ctx context.Context, e *env, c fitConfig, train, test *dataset.Data, density float64, be backend.Backend) (*fitOutcome, error) {
	if c.standardize && !c.standardizeAuto {
		fmt.Fprintln(e.stderr, "-standardize is ignored for sparse input: centering would make every row dense")
	} else if c.standardize {
		fmt.Fprintln(e.stderr, "standardize off for sparse input (centering would make every row dense)")
	}
	c.standardize = false
	if c.scale != 1 {
		return nil, usagef("-scale is not supported for sparse input (use -normalize, or -sparse no)")
	}
	ntr, d := train.Sparse.Dims()
	nte, _ := test.Sparse.Dims()
	enc, err := fitEncoding(c, train.Y)
	if err != nil {
		return nil, err
	}
	bar := newProgressBar(e.stderr)
	defer bar.done()
	opts := solvers.Options{Backend: be, MemoryBudget: c.memory, Progress: bar.report}
	start := time.Now()
	text, xtr, err := fitTextCSR(c, train.Sparse)
	if err != nil {
		return nil, err
	}
	var chosen fitChoices
	c, err = chooseWithinMemory(c, ntr, func() (fitConfig, error) {
		cc, ch, err := autoFit(ctx, c, xtr, train.Y, enc.Task, be, bar.report)
		chosen = ch
		return cc, err
	})
	if err != nil {
		return nil, err
	}
	k, err := newKernel(c.kernel)
	if err != nil {
		return nil, err
	}
	res := newFitResult(c, enc, ntr, nte, d, chosen, be)
	res.Sparse, res.Density = true, density
	y, err := enc.Targets(train.Y)
	if err != nil {
		return nil, err
	}
	build := func() (kernels.FeatureMap, error) { return buildMap(ctx, newMapSpec(c, k, be), xtr) }
	model, err := fitMethod(ctx, c, k, xtr, y, opts, &res, build)
	if err != nil {
		return nil, err
	}
	pipe, err := solvers.NewPipeline(nil, enc, model)
	if err == nil {
		pipe, err = pipe.WithText(text)
	}
	if err != nil {
		return nil, err
	}
	res.FitSeconds = time.Since(start).Seconds()
	bar.done()
	return evaluateFit(e, c, res, k, model, pipe, test.Y, func(pred []float64) error { return pipe.PredictLabelsCSR(pred, test.Sparse) })
}

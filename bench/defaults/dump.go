package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/tune"
)

// dumpFile is what sklearn_defaults.py reads for one set: the files, the
// rows of every split (0-based rows of the first file; with OwnTest the
// test rows are rows of the second), and tune's default grid for that
// split, so both programs fit and score exactly the same rows over the
// same grid.
type dumpFile struct {
	Set   string   `json:"set"`
	Task  string   `json:"task"`
	Files []string `json:"files"`
	// Format is "csv" (target column y) or "libsvm".
	Format string `json:"format"`
	// Standardize is false for sparse sets (kept raw, as zonal keeps them).
	Standardize bool      `json:"standardize"`
	Folds       int       `json:"folds"`
	Lambdas     []float64 `json:"lambdas"`
	// MaxTrainRows: scikit-learn tunes and refits on a seeded subsample of
	// this many rows of a larger training set.
	MaxTrainRows int         `json:"max_train_rows"`
	Splits       []dumpSplit `json:"splits"`
}

type dumpSplit struct {
	Seed    uint64 `json:"seed"`
	Train   []int  `json:"train"`
	Test    []int  `json:"test"`
	OwnTest bool   `json:"own_test"`
	// Sigmas is tune's default sigma grid on this split's (standardized)
	// training rows: the median heuristic times 2^-2..2^2, computed on the
	// rows the tune run tunes on (SigmaRows of them).
	Sigmas    []float64 `json:"sigmas"`
	SigmaRows int       `json:"sigma_rows"`
}

// sklearnMaxRows is the training subsample of sklearn_defaults.py on the
// large sets (a 4096-component Nystroem map of 200000 rows would not fit).
const sklearnMaxRows = 50000

// dumpSplits writes cfg.DumpDir/NAME.json for ds.
func dumpSplits(cfg config, ds dataSet, rows, test *dataset.Data, splits []split) error {
	if ds.generated {
		return fmt.Errorf("%w: %s is generated, not read from a file: sklearn_defaults.py cannot read it", zonal.ErrParam, ds.Name)
	}
	f := dumpFile{Set: ds.Name, Task: ds.Task.String(), Format: "csv", Standardize: !ds.Sparse, Folds: 5,
		Lambdas: defaultLambdas(), MaxTrainRows: sklearnMaxRows}
	for _, p := range ds.files {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		f.Files = append(f.Files, abs)
	}
	if len(ds.files) > 0 && strings.Contains(filepath.Base(ds.files[0]), ".libsvm") {
		f.Format = "libsvm"
	}
	for _, sp := range splits {
		tr, te, err := partition(rows, test, sp)
		if err != nil {
			return err
		}
		x, _, err := prepared(tr, te, f.Standardize)
		if err != nil {
			return err
		}
		o := tuneOptions(cfg, ds, sp.Seed, len(tr.Y))
		sig, m, err := defaultSigmas(x, o.Rows, sp.Seed)
		if err != nil {
			return err
		}
		f.Splits = append(f.Splits, dumpSplit{Seed: sp.Seed, Train: sp.Train, Test: sp.Test, OwnTest: sp.Own, Sigmas: sig, SigmaRows: m})
	}
	if err := os.MkdirAll(cfg.DumpDir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cfg.DumpDir, ds.Name+".json"), b, 0o644)
}

// defaultLambdas is tune.Search's default lambda grid, 1e-10 ... 1e-1
// (TestDefaultGrid checks it against a search's table).
func defaultLambdas() []float64 {
	var l []float64
	for e := -10; e <= -1; e++ {
		l = append(l, math.Pow(10, float64(e)))
	}
	return l
}

// defaultSigmas is tune.Search's default sigma grid on x tuned with Rows
// = rows and Seed = seed: the median heuristic of the seeded subsample of
// rows rows (all rows when rows is 0 or at least n) times 2^-2..2^2, and
// the number of rows it was computed on (TestDefaultGrid checks it
// against a search's table).
func defaultSigmas(x mat.Matrix, rows int, seed uint64) ([]float64, int, error) {
	n, _ := x.Dims()
	if rows > 0 && rows < n {
		idx, err := dataset.Subsample(n, rows, seed)
		if err != nil {
			return nil, 0, err
		}
		if x, err = selectRows(x, idx); err != nil {
			return nil, 0, err
		}
		n = rows
	}
	med, err := tune.MedianSigma(x, 0, seed)
	if err != nil {
		return nil, 0, err
	}
	return []float64{med / 4, med / 2, med, 2 * med, 4 * med}, n, nil
}

// selectRows returns the rows idx of a *mat.Dense or *dataset.CSR.
func selectRows(x mat.Matrix, idx []int) (mat.Matrix, error) {
	if c, ok := x.(*dataset.CSR); ok {
		return c.Subset(idx)
	}
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for k, i := range idx {
		for j := 0; j < d; j++ {
			out.Set(k, j, x.At(i, j))
		}
	}
	return out, nil
}

package main

import (
	"fmt"
	"runtime"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// dataSpec says which labelled data a fitting command reads: -train, and
// -test or a seeded -split of -train, then a -subsample of the training part.
type dataSpec struct {
	data        dataFlags
	train, test string
	split       float64
	seed        uint64
	subsample   int
	weights     weightFlags
}

// loadTrainTest reads the training and test data of s. LIBSVM files are
// read as CSR only (X nil): whether the rows stay sparse is the
// estimator's decision. CSV files give X only. w are the sample weights of
// the training rows (nil without -weights or -weight-column), read for the
// rows of -train and subset with them by -split and -subsample.
func loadTrainTest(e *env, s dataSpec) (train, test *dataset.Data, w []float64, err error) {
	format, err := s.data.formatOf("train", s.train)
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := readData(e, s.data, "train", s.train, dataset.Options{NoDense: format == "libsvm"})
	if err != nil {
		return nil, nil, nil, err
	}
	if all.Y == nil {
		return nil, nil, nil, fmt.Errorf("%s: no labelled dense data", s.train)
	}
	w, err = s.weights.fromTrain(all, s.train)
	if err != nil {
		return nil, nil, nil, err
	}
	n, d := all.Dims()
	if s.test != "" {
		train = all
		// A LIBSVM test file may stop below column d (zeros are omitted):
		// pad it; an index beyond d, or a CSV with another column count,
		// is an error.
		topts := dataset.Options{MinCols: d, MaxCols: d}
		if s.weights.column != "" {
			topts.MaxCols = d + 1 // the test rows may carry the weight column too
		}
		if tf, err := s.data.formatOf("test", s.test); err == nil && tf == "libsvm" && all.X == nil {
			topts.NoDense = true
		}
		test, err = readData(e, s.data, "test", s.test, topts)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("test data for a model of %d features: %w", d, err)
		}
		if test.Y == nil {
			return nil, nil, nil, fmt.Errorf("%s: test data has no labels", s.test)
		}
		if (test.X == nil) != (all.X == nil) {
			return nil, nil, nil, fmt.Errorf("%s and %s: give both in LIBSVM or both in CSV", s.train, s.test)
		}
		if err := s.weights.fromTest(test, d, s.test); err != nil {
			return nil, nil, nil, err
		}
	} else {
		tr, te := dataset.Split(n, s.split, s.seed)
		if len(tr) == 0 || len(te) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: %d rows are too few to split", s.train, n)
		}
		if train, err = all.Subset(tr); err != nil {
			return nil, nil, nil, err
		}
		if test, err = all.Subset(te); err != nil {
			return nil, nil, nil, err
		}
		w = solvers.SubsetWeights(w, tr)
	}
	if ntr, _ := train.Dims(); s.subsample > 0 && s.subsample < ntr {
		rows, err := dataset.Subsample(ntr, s.subsample, s.seed)
		if err != nil {
			return nil, nil, nil, err
		}
		if train, err = train.Subset(rows); err != nil {
			return nil, nil, nil, err
		}
		w = solvers.SubsetWeights(w, rows)
	}
	runtime.GC()
	return train, test, w, nil
}

// keepOrDensify applies the estimator's sparse rule (estimator.KeepSparse)
// to LIBSVM rows read as CSR: they stay CSR (X nil), or both parts are
// densified and their CSR dropped.
func keepOrDensify(e *env, mode string, train, test *dataset.Data) error {
	if train.X != nil {
		return nil
	}
	m, err := estimator.ParseSparse(mode)
	if err != nil {
		return flagError(err)
	}
	n, d := train.Dims()
	density := float64(train.Sparse.NNZ()) / (float64(n) * float64(d))
	if estimator.KeepSparse(m, density) {
		fmt.Fprintf(e.stderr, "input is sparse (density %.2f%%): kept as CSR\n", 100*density)
		return nil
	}
	for _, p := range []*dataset.Data{train, test} {
		if p.X, err = estimator.DenseOf(p.Sparse); err != nil {
			return err
		}
		p.Sparse = nil
	}
	return nil
}

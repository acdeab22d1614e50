package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zonal-ml/zonal"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// dataSet is one set of the suite: where its rows come from and what its
// target means. The task is the one the data README states; the defaults
// run does not receive it (estimator.Fit reads the task from the labels),
// the tune run and the test metric use it.
type dataSet struct {
	Name string
	Task solvers.Task
	// Sparse sets are read from LIBSVM as CSR only (no dense copy).
	Sparse bool
	// load returns the rows and, for a set with its own test file, the
	// test rows (nil otherwise: the suite splits the rows).
	load func() (all, test *dataset.Data, err error)
	// files are the paths read (for the split dump), test file second.
	files []string
	// generated sets (synth.go) come from a generator, not files, and
	// cannot be dumped for sklearn_defaults.py.
	generated bool
}

// fileSet is a data set read from files in dir: CSV (target column y)
// for the dense sets, LIBSVM for the sparse one.
func fileSet(dir, name string, task solvers.Task, trainFile, testFile string, sparse bool) dataSet {
	opts := dataset.Options{}
	if sparse {
		opts.NoDense = true
	}
	ds := dataSet{Name: name, Task: task, Sparse: sparse, files: []string{filepath.Join(dir, trainFile)}}
	if testFile != "" {
		ds.files = append(ds.files, filepath.Join(dir, testFile))
	}
	ds.load = func() (*dataset.Data, *dataset.Data, error) {
		all, err := dataset.ReadFile(ds.files[0], opts)
		if err != nil || len(ds.files) == 1 {
			return all, nil, err
		}
		_, d := all.Dims()
		o := opts
		o.MinCols, o.MaxCols = d, d
		test, err := dataset.ReadFile(ds.files[1], o)
		return all, test, err
	}
	return ds
}

// catalogue is every set of the suite in /work/shared/data's README, in
// its order, with the task stated there.
func catalogue(dir string) []dataSet {
	c, r := solvers.TaskClassification, solvers.TaskRegression
	csv := func(name string, task solvers.Task) dataSet {
		return fileSet(dir, name, task, name+".csv.gz", "", false)
	}
	return []dataSet{
		csv("digits", c),
		csv("diabetes", r),
		csv("breast_cancer", c),
		csv("BostonHousing", r),
		csv("Ozone", r),
		csv("spam", c),
		fileSet(dir, "MNIST", c, "mnist_train.csv.gz", "mnist_test.csv.gz", false),
		fileSet(dir, "debian_text", c, "debian_text.libsvm.gz", "", true),
		csv("CPS1988", r),
		csv("Fertility", c),
		csv("PSID7682", r),
		csv("HousePrices", r),
		csv("NMES1988", r),
		csv("Vehicle", c),
		csv("Vowel", c),
		csv("Glass", c),
		csv("Sonar", c),
		csv("Ionosphere", c),
		csv("PimaIndiansDiabetes", c),
		csv("DNA", c),
		csv("musk", c),
	}
}

// selectSets returns the sets of cat named in names (all for none), in
// the order of names, refusing an unknown name.
func selectSets(cat []dataSet, names []string) ([]dataSet, error) {
	if len(names) == 0 {
		return cat, nil
	}
	var out []dataSet
	for _, n := range names {
		found := false
		for _, s := range cat {
			if s.Name == n {
				out, found = append(out, s), true
				break
			}
		}
		if !found {
			known := make([]string, len(cat))
			for i, s := range cat {
				known[i] = s.Name
			}
			return nil, fmt.Errorf("%w: -sets: unknown set %q (known: %s)", zonal.ErrParam, n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

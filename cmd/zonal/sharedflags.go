package main

import (
	"flag"
	"strings"

	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// sharedFlags are the flags `zonal fit` and `zonal tune` share, with one
// name, default and help text each: the data (-train, -test, -split and the
// format flags), the input transform (-standardize, -scale, -sparse), the
// task, the loss, the kernel, the method and its map or cells, the seed, the memory
// budget, the workers and the outputs. Each command adds its own flags
// (fit: one value of sigma, lambda, centres; tune: the grids).
type sharedFlags struct {
	data                  dataFlags
	train, test           string
	split                 float64
	method, kernel        string
	loss                  string
	mapName, task, sparse string
	memory                string
	standardize           bool
	scale                 float64
	cells                 int
	partition             string
	seed                  uint64
	workers               int
	model                 string
	json                  bool
	weights               weightFlags
	set                   map[string]bool
}

func (s *sharedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.train, "train", "", "training data (LIBSVM or CSV, gzip allowed; - for standard input)")
	fs.StringVar(&s.test, "test", "", "test data in the same format; without it -split holds out part of -train")
	s.data.register(fs)
	fs.Float64Var(&s.split, "split", 0.8, "fraction of -train used for training when there is no -test, in (0, 1)")
	fs.StringVar(&s.method, "method", "falkon", "estimator: exact, ridge (on -map features), falkon or park (-cells Q)")
	fs.StringVar(&s.loss, "loss", estimator.LossSquared.String(), "training loss: squared (every method) or logistic (classification, -method falkon; probabilities without calibration)")
	fs.StringVar(&s.kernel, "kernel", "gaussian", "kernel: "+strings.Join(estimator.KernelKinds(), ", "))
	fs.StringVar(&s.mapName, "map", "nystrom", "feature map of -method ridge: "+strings.Join(estimator.Maps(), ", "))
	fs.IntVar(&s.cells, "cells", estimator.DefaultCells, "Voronoi cells Q of -method park")
	fs.StringVar(&s.partition, "partition", solvers.DefaultPartition.String(), "ParK centroid strategy: "+strings.Join(solvers.PartitionStrategies, ", "))
	fs.StringVar(&s.task, "task", "auto", "auto, regression or classification")
	fs.BoolVar(&s.standardize, "standardize", true, "standardize each feature (see `zonal help fit` for the automatic choice)")
	fs.Float64Var(&s.scale, "scale", 1, "multiply every feature by this factor instead of standardizing")
	fs.StringVar(&s.sparse, "sparse", "auto", "keep LIBSVM rows sparse: auto, yes or no")
	fs.Uint64Var(&s.seed, "seed", 1, "random seed (split, folds, centres, features)")
	fs.StringVar(&s.memory, "memory", "", "memory budget for kernel matrices, e.g. 8G (default 2G)")
	fs.IntVar(&s.workers, "workers", 0, "ParK cells (fit) or folds (tune) worked on at once (0 = GOMAXPROCS)")
	fs.StringVar(&s.model, "model", "", "write the fitted model (with its scaler and classes) to this file")
	fs.BoolVar(&s.json, "json", false, "print one JSON object instead of text")
	s.weights.register(fs)
}

// parse runs parseFlags and checks the shared flags; set records the flags
// given.
func (s *sharedFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if s.train == "" {
		return usagef("-train is required")
	}
	s.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	if !(s.split > 0 && s.split < 1) {
		return usagef("-split must be in (0, 1), got %g", s.split)
	}
	return firstError(
		s.weights.check(),
		s.data.checkInputs([2]string{"train", s.train}, [2]string{"test", s.test}),
		positiveFloat("scale", s.scale),
		countAtLeast("cells", s.cells, 1),
		countAtLeast("workers", s.workers, 0),
	)
}

// standardizeMode is -standardize and -scale as the estimator's setting:
// given -standardize decides; -scale alone turns standardizing off.
func (s *sharedFlags) standardizeMode() estimator.Standardize {
	switch {
	case s.set["standardize"] && s.standardize:
		return estimator.StandardizeOn
	case s.set["standardize"] || s.set["scale"]:
		return estimator.StandardizeOff
	}
	return estimator.StandardizeAuto
}

// dataSpec is the data the shared flags name.
func (s *sharedFlags) dataSpec(subsample int) dataSpec {
	return dataSpec{data: s.data, train: s.train, test: s.test, split: s.split, seed: s.seed, subsample: subsample, weights: s.weights}
}

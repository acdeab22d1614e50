package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zonal-ml/zonal/estimator"
)

// sklearnMaxRows is the training subsample of sklearn_probs.py above this
// many training rows (Fertility), as in bench/defaults: a Nystroem map of
// zonal's centre count on 200000 rows would not fit.
const sklearnMaxRows = 50000

// dumpFile is what sklearn_probs.py reads for one shared set: the file
// (read as bench/defaults' script reads it), the split rows (0-based rows
// of the file) and the settings zonal chose for each model, so that
// scikit-learn fits the same rows with the same kernel and centre count.
type dumpFile struct {
	Set   string   `json:"set"`
	Task  string   `json:"task"`
	Files []string `json:"files"`
	// Format is "csv" (target column y).
	Format       string               `json:"format"`
	Seed         uint64               `json:"seed"`
	MaxTrainRows int                  `json:"max_train_rows"`
	Train        []int                `json:"train"`
	Test         []int                `json:"test"`
	Models       map[string]dumpModel `json:"models"`
}

// dumpModel is what zonal chose for one model: sigma (in the units of
// the standardized features when Standardize), lambda of its objective,
// the centres, and its fit time for reference.
type dumpModel struct {
	Sigma       float64 `json:"sigma"`
	Lambda      float64 `json:"lambda"`
	Centers     int     `json:"centers"`
	Standardize bool    `json:"standardize"`
	Seconds     float64 `json:"seconds"`
}

// newDump makes the dump of a set from its file, split and the reports of
// its successful fits: the logistic and calibrated ones that were fitted
// (-models may leave one out), at least one of them.
func newDump(set, path string, seed uint64, train, test []int, reps map[string]*estimator.Report) (dumpFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return dumpFile{}, err
	}
	d := dumpFile{Set: set, Task: "classification", Files: []string{abs}, Format: "csv", Seed: seed,
		MaxTrainRows: sklearnMaxRows, Train: train, Test: test, Models: map[string]dumpModel{}}
	for _, name := range []string{modelLogistic, modelCalibrated} {
		rep := reps[name]
		if rep == nil {
			continue
		}
		d.Models[name] = dumpModel{Sigma: rep.Kernel.Sigma, Lambda: rep.Lambda, Centers: rep.Centers,
			Standardize: rep.Standardize, Seconds: rep.Seconds}
	}
	if len(d.Models) == 0 {
		return d, fmt.Errorf("%s: no %s or %s fit to dump for scikit-learn (see its records)", set, modelLogistic, modelCalibrated)
	}
	return d, nil
}

// probaFile is the test probabilities of one tool on one set, written by
// this program (NAME.zonal_proba.json) and by sklearn_probs.py
// (NAME.sklearn_proba.json): the test labels and, per model, the
// probability of the positive (larger) label of each test row.
type probaFile struct {
	Tool  string               `json:"tool"`
	Set   string               `json:"set"`
	Y     []float64            `json:"y"`
	Proba map[string][]float64 `json:"proba"`
}

// writeJSON writes v as JSON to path.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readProba reads a probaFile, checking that every model has one
// probability per label.
func readProba(path string) (probaFile, error) {
	var p probaFile
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Y) == 0 {
		return p, fmt.Errorf("%s: no test labels", path)
	}
	for name, v := range p.Proba {
		if len(v) != len(p.Y) {
			return p, fmt.Errorf("%s: model %s has %d probabilities for %d labels", path, name, len(v), len(p.Y))
		}
	}
	return p, nil
}

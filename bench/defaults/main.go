// Command defaults is the defaults suite: on every shared data set it
// measures what zonal's one-call fit (estimator.Fit with nothing but a
// seed, i.e. `zonal fit` without flags) reaches, against the best setting
// of a full 5-fold cross-validated grid search over tune's default FALKON
// grid, and writes the split rows and grid for sklearn_defaults.py, which
// runs scikit-learn's grid search on the same rows.
//
//	cd bench   # its own Go module
//	go run -tags netlib ./defaults -sets digits,diabetes,Glass -out /tmp/defaults.jsonl
//	go run -tags netlib ./defaults -runs none -dump-splits /tmp/splits
//	/usr/bin/python3 defaults/sklearn_defaults.py /tmp/splits -go /tmp/defaults.jsonl
//
// Splits: a set with its own test file (MNIST) is scored on it; any
// other set is split 80/20 (stratified by class for classification),
// seeds 1..-splits when it has fewer than 5000 rows (results are means
// over the splits), seed 1 otherwise. The tune run tunes on a seeded
// 10000-row subsample of a training set above 50000 rows and refits on
// all rows (tune.SearchOptions.Rows).
//
// Output: a markdown summary and a per-split table on stdout, one JSON
// line per run and split in -out (written as each run ends), progress on
// stderr. README.md says what is measured and the margins.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/bench/internal/benchdata"
)

func main() {
	var (
		data      = flag.String("data", benchdata.Dir(), "folder of the shared data sets")
		sets      = flag.String("sets", "", "comma-separated sets (empty: all; see the README for names)")
		runs      = flag.String("runs", "defaults,tune", "comma-separated runs: defaults, tune, variants (every defaults-* run: the defaults with one rule fixed; see the README), partitions (park-kmeans and park-greedy: ParK with each partition); or none (with -dump-splits)")
		splits    = flag.Int("splits", defaultSplits, "seeded splits (seeds 1..N) of a set with fewer than 5000 rows")
		tuneAbove = flag.Int("tune-above", defaultTuneAbove, "the tune run tunes on a subsample of a training set above this many rows")
		tuneRows  = flag.Int("tune-rows", defaultTuneRows, "rows of that subsample")
		inputs    = flag.String("tune-inputs", "std,raw", "input transforms the tune run searches on dense sets (std, raw), the best CV score kept")
		out       = flag.String("out", "defaults.jsonl", "JSON lines output file")
		dump      = flag.String("dump-splits", "", "write NAME.json (split rows and grid) for sklearn_defaults.py into this folder")
	)
	flag.Parse()
	cfg, err := newConfig(*data, *sets, *runs, *splits, *tuneAbove, *tuneRows, *inputs, *dump)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err = run(ctx, cfg, *out, os.Stdout)
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "defaults:", err)
		os.Exit(1)
	}
}

// newConfig checks the flags and makes the suite's configuration.
func newConfig(data, sets, runs string, splits, tuneAbove, tuneRows int, inputs, dump string) (config, error) {
	cfg := config{Runs: map[string]bool{}, Splits: splits, SmallRows: defaultSmallRows, TuneAbove: tuneAbove,
		TuneRows: tuneRows, DumpDir: dump, Log: os.Stderr}
	var err error
	cat := catalogue(data)
	if len(list(sets)) > 0 {
		cat = append(cat, synthSets()...) // named only: not part of the default suite
	}
	if cfg.Sets, err = selectSets(cat, list(sets)); err != nil {
		return cfg, err
	}
	for _, r := range list(runs) {
		switch r {
		case runDefaults, runTune:
			cfg.Runs[r] = true
		case "variants":
			for _, v := range variantRuns() {
				cfg.Runs[v] = true
			}
		case "partitions":
			for _, v := range partitionRuns() {
				cfg.Runs[v] = true
			}
		case "none":
		default:
			if !slices.Contains(variantRuns(), r) && !slices.Contains(partitionRuns(), r) {
				return cfg, fmt.Errorf("%w: -runs: unknown run %q (defaults, tune, variants, %s, partitions, %s, none)", zonal.ErrParam, r,
					strings.Join(variantRuns(), ", "), strings.Join(partitionRuns(), ", "))
			}
			cfg.Runs[r] = true
		}
	}
	if len(cfg.Runs) == 0 && dump == "" {
		return cfg, fmt.Errorf("%w: nothing to do: -runs none without -dump-splits", zonal.ErrParam)
	}
	for _, in := range list(inputs) {
		if in != "std" && in != "raw" {
			return cfg, fmt.Errorf("%w: -tune-inputs: unknown input %q (std, raw)", zonal.ErrParam, in)
		}
		cfg.TuneInputs = append(cfg.TuneInputs, in)
	}
	switch {
	case splits < 1:
		return cfg, fmt.Errorf("%w: -splits must be at least 1, got %d", zonal.ErrParam, splits)
	case len(cfg.TuneInputs) == 0:
		return cfg, fmt.Errorf("%w: -tune-inputs is empty", zonal.ErrParam)
	case tuneAbove < 1 || tuneRows < 3:
		return cfg, fmt.Errorf("%w: -tune-above must be >= 1 and -tune-rows >= 3", zonal.ErrParam)
	}
	return cfg, nil
}

// run runs the suite into the JSON lines file out and writes the tables
// to w.
func run(ctx context.Context, cfg config, out string, w io.Writer) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	recs, err := runSuite(ctx, cfg, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if len(cfg.Runs) > 0 {
		if werr := writeTables(w, recs); err == nil {
			err = werr
		}
	}
	return err
}

// list splits a comma-separated flag, dropping empty items.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

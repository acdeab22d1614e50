// Command probs measures zonal's class probabilities (issue 26): on the
// shared binary sets Fertility, spam, PimaIndiansDiabetes and
// breast_cancer and on a seeded synthetic 2%-positive problem, one seeded
// stratified 80/20 split per set, it fits
//
//   - logistic: logistic FALKON (estimator.Options{Loss: LossLogistic}),
//   - calibrated: the default squared-loss classifier with its calibrated
//     probabilities (calibrated on held-out folds),
//   - on the synthetic set also both with ClassWeight balanced
//     (logistic_balanced, calibrated_balanced),
//
// and reports per fit the test ROC AUC, log-loss, Brier score, accuracy,
// recall at 90% precision, fit time (wall, choosing included) and the
// centres used. With -dump it writes, per shared set, the split rows and
// each model's chosen sigma, lambda, centres and input transform for
// sklearn_probs.py, and every set's test probabilities; -reliability then
// draws the reliability diagrams from the dumped zonal and scikit-learn
// probabilities.
//
//	cd bench   # its own Go module
//	go run -tags netlib ./probs -dump /tmp/probs -out /tmp/probs.jsonl
//	/usr/bin/python3 probs/sklearn_probs.py /tmp/probs --go /tmp/probs.jsonl
//	go run ./probs -reliability /tmp/probs
//
// -sets also takes the suite's other binary sets (Ionosphere, Sonar,
// musk); -positive-rate R keeps every negative row of a shared set and a
// seeded share of its positives (an imbalanced problem on real features);
// -lambda-curves N, instead of the tables, scores rules of choosing the
// logistic lambda on N splits of each set (curves.go); splits.py pairs
// the records of runs of several seeds.
//
// Output: a markdown table on stdout, one JSON line per fit in -out
// (written as each fit ends), progress on stderr. README.md says what is
// measured.
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
	"github.com/zonal-ml/zonal/estimator"
)

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "probs:", err)
		os.Exit(1)
	}
}

// mainErr parses the flags and runs the fits, or draws the diagrams.
func mainErr() error {
	sets := flag.String("sets", strings.Join(defaultSets, ","), "comma-separated sets: "+strings.Join(defaultSets, ", ")+"; also "+strings.Join(otherSets, ", "))
	seed := flag.Uint64("seed", 1, "seed of the splits, the synthetic rows and every fit")
	out := flag.String("out", "probs.jsonl", "JSON lines output file")
	dump := flag.String("dump", "", "write NAME.json (split rows and zonal's settings) and NAME.zonal_proba.json into this folder")
	var sy synthSpec
	flag.IntVar(&sy.Rows, "synth-rows", synthRows, "rows of the synthetic set")
	flag.Float64Var(&sy.Rate, "synth-rate", synthRate, "positive rate of the synthetic set")
	flag.Float64Var(&sy.Noise, "synth-noise", synthNoise, "noise of the synthetic set's score, in standard deviations of the score")
	relDir := flag.String("reliability", "", "draw the reliability diagrams from the probabilities dumped in this folder (no fitting)")
	plotSets := flag.String("plot-sets", "Fertility", "sets whose reliability diagram -reliability draws")
	img := flag.String("img", "probs/img", "folder of the reliability diagrams")
	bins := flag.Int("bins", defaultBins, "equal-width probability bins of the reliability diagrams")
	data := flag.String("data", benchdata.Dir(), "folder of the shared data sets")
	icName := flag.String("logistic-intercept", estimator.InterceptAuto.String(), "the logistic models' intercept: "+strings.Join(estimator.Intercepts(), ", ")+" (mean: none)")
	posRate := flag.Float64("positive-rate", 0, "keep every negative row of the shared sets and only so many positive rows that they are this share of the rows (0: all rows)")
	curves := flag.Int("lambda-curves", 0, "instead of the fits: the logistic lambda's test and cross-validated curves on this many splits (seeds from -seed) of each set, and the test log-loss of cross-validation rules picking from them")
	models := flag.String("models", "", "comma-separated models to fit (empty: all): "+strings.Join([]string{modelLogistic, modelCalibrated, modelLogisticBalanced, modelCalibratedBalanced}, ", "))
	flag.Parse()
	if *relDir != "" {
		return drawReliability(*relDir, list(*plotSets), *img, *bins, os.Stdout)
	}
	cfg, err := newConfig(*data, *sets, *seed, *dump, sy)
	if err != nil {
		return err
	}
	if cfg.Intercept, err = estimator.ParseIntercept(*icName); err != nil {
		return fmt.Errorf("-logistic-intercept: %w", err)
	}
	if !(*posRate >= 0 && *posRate < 1) {
		return fmt.Errorf("%w: -positive-rate %g, want 0 (off) or a share in (0, 1)", zonal.ErrParam, *posRate)
	}
	if *posRate > 0 && *curves > 0 {
		return fmt.Errorf("%w: -lambda-curves fits the sets as they are; drop -positive-rate", zonal.ErrParam)
	}
	cfg.PositiveRate = *posRate
	if ms := list(*models); len(ms) > 0 {
		cfg.Models = ms
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *curves < 0 {
		return fmt.Errorf("%w: -lambda-curves %d, want at least 1 (0: off)", zonal.ErrParam, *curves)
	}
	if *curves > 0 {
		return runCurves(ctx, cfg, *curves, *out, os.Stdout)
	}
	return run(ctx, cfg, *out, os.Stdout)
}

// defaultSets are the sets of the measurement, in the order they run.
var defaultSets = []string{"breast_cancer", "PimaIndiansDiabetes", "spam", "Fertility", synthName}

// otherSets are the shared suite's other binary sets, fitted when -sets
// names them: the same models on more data than the issue's four sets.
var otherSets = []string{"Ionosphere", "Sonar", "musk"}

// config is one invocation of the measurement.
type config struct {
	Data  string
	Sets  []string
	Seed  uint64
	Dump  string
	Synth synthSpec
	// Intercept is the logistic models' (-logistic-intercept); Models the
	// models to fit (-models; nil: all).
	Intercept estimator.Intercept
	Models    []string
	// PositiveRate, when positive, keeps every negative row of a shared
	// set and only so many positive rows that they are this share of the
	// rows (-positive-rate): an imbalanced problem on real features. The
	// set is then named NAME_posRATE.
	PositiveRate float64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// newConfig checks the flags and makes the configuration.
func newConfig(data, sets string, seed uint64, dump string, sy synthSpec) (config, error) {
	cfg := config{Data: data, Seed: seed, Dump: dump, Synth: sy, Log: os.Stderr}
	for _, s := range list(sets) {
		if !slices.Contains(defaultSets, s) && !slices.Contains(otherSets, s) {
			return cfg, fmt.Errorf("%w: -sets: unknown set %q (known: %s, %s)", zonal.ErrParam, s, strings.Join(defaultSets, ", "), strings.Join(otherSets, ", "))
		}
		cfg.Sets = append(cfg.Sets, s)
	}
	if len(cfg.Sets) == 0 {
		return cfg, fmt.Errorf("%w: -sets is empty", zonal.ErrParam)
	}
	return cfg, sy.check()
}

// list splits a comma-separated flag, dropping empty items and spaces.
func list(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

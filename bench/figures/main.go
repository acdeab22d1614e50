// Command figures reproduces the kinds of figures of the papers behind zonal on
// the shared data sets and draws them with gonum.org/v1/plot as PNG files:
//
//  1. approx: relative spectral error and eps_lambda against the number of
//     features for every Gaussian-kernel feature map (Gegenbauer paper);
//  2. tradeoff: test error against fit time for exact KRR, ridge on each map,
//     FALKON and ParK (ParK and adaptive-sampling papers);
//  3. kpca: incremental KPCA drift against points and incremental Nystrom
//     error against landmarks (incremental KPCA paper);
//  4. backend: GFLOP/s of Gemm, X^T X and Cholesky against n for every
//     compiled backend and CPU path (OpenBLAS when built with -tags netlib).
//
// Usage:
//
//	cd bench   # its own Go module
//	go run -tags netlib ./figures -data ../../shared/data -out figures/img
//
// Figures 1-3 run the zonal command (built once into a temporary folder) with
// -json and plot what it prints, so the figures show exactly what users get.
// Each run's output is kept in OUT/raw/FIGURE_DATASET_METHOD.jsonl after a
// first line holding the command, and -replot redraws from those files.
// Every number is from one run on the machine it ran on; the machine is
// named in bench/README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	data := flag.String("data", "../../shared/data", "folder with the shared data sets (digits, diabetes, BostonHousing, spam, MNIST, ...)")
	out := flag.String("out", "figures/img", "output folder for the PNG files")
	figs := flag.String("figs", "approx,tradeoff,kpca,backend", "comma-separated figures to draw")
	quick := flag.Bool("quick", false, "smaller sizes (a few minutes instead of tens)")
	flag.BoolVar(&replot, "replot", false, "redraw figures 1-3 from the JSON kept in OUT/raw by an earlier run, without running zonal")
	flag.Parse()
	rawDir = filepath.Join(*out, "raw")
	if err := run(*data, *out, *figs, *quick); err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
}

func run(data, out, figs string, quick bool) error {
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return fmt.Errorf("data folder %q not found (pass -data)", data)
	}
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return err
	}
	need := map[string]bool{}
	for _, f := range strings.Split(figs, ",") {
		need[strings.TrimSpace(f)] = true
	}
	var zonal string
	if !replot && (need["approx"] || need["tradeoff"] || need["kpca"]) {
		tmp, err := os.MkdirTemp("", "zonal-figures")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		zonal = filepath.Join(tmp, "zonal")
		if err := buildZonal(zonal); err != nil {
			return err
		}
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"approx", func() error { return figApprox(zonal, data, out, quick) }},
		{"tradeoff", func() error { return figTradeoff(zonal, data, out, quick) }},
		{"kpca", func() error { return figKPCA(zonal, data, out, quick) }},
		{"backend", func() error { return figBackend(out, quick) }},
	}
	for _, s := range steps {
		if !need[s.name] {
			continue
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "figure %s ...\n", s.name)
		if err := s.fn(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, "figure %s done in %.0f s\n", s.name, time.Since(start).Seconds())
	}
	return nil
}

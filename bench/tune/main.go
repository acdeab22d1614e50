// Command tune runs zonal's tuner (package tune) on one data set with a
// fixed grid and folds, and can write the grid, the rows and the folds as a
// plan for gridsearch.py, which runs scikit-learn's GridSearchCV on exactly
// the same rows, folds and grid, so the two best CV scores and times can be
// put side by side.
//
//	cd bench   # its own Go module
//	go run -tags netlib ./tune -data ../../shared/data/spam.csv.gz -method ridge -map nystrom -components 1000 -plan /tmp/spam.plan.json
//	/usr/bin/python3 tune/gridsearch.py /tmp/spam.plan.json
//
// Each prints a table and ends with one JSON line (tool, method, best
// setting, best mean CV score, seconds).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tune"
)

// plan is what gridsearch.py reads.
type plan struct {
	Data        string    `json:"data"`
	Rows        []int     `json:"rows"`      // 0-based rows of the file used, in order
	TestFold    []int     `json:"test_fold"` // fold of each used row (PredefinedSplit)
	Task        string    `json:"task"`      // "classification" or "regression"
	Method      string    `json:"method"`    // "krr" (KernelRidge) or "nystroem" (Nystroem + Ridge)
	Components  int       `json:"components"`
	Standardize bool      `json:"standardize"`
	Sigmas      []float64 `json:"sigmas"`
	Gammas      []float64 `json:"gammas"` // 1 / (2 sigma^2)
	Lambdas     []float64 `json:"lambdas"`
	Alphas      []float64 `json:"alphas"` // lambda * mean training-fold rows (scikit-learn's absolute alpha)
	Seed        uint64    `json:"seed"`
}

func main() {
	var (
		data        = flag.String("data", "", "data file (CSV with target y, or LIBSVM; gzip ok)")
		rows        = flag.Int("rows", 0, "use a seeded subsample of this many rows (0: all)")
		method      = flag.String("method", "ridge", "exact, ridge or falkon")
		mapKind     = flag.String("map", "nystrom", "feature map of -method ridge: nystrom or fourier")
		components  = flag.Int("components", 1000, "centres or features (ridge, falkon)")
		sigmas      = flag.String("sigmas", "", "comma-separated sigmas (empty: median heuristic times 2^-2..2^2)")
		lambdas     = flag.String("lambdas", "1e-8,1e-7,1e-6,1e-5,1e-4,1e-3,1e-2", "comma-separated lambdas (zonal's, multiplying the training rows)")
		folds       = flag.Int("folds", 5, "k of k-fold CV")
		seed        = flag.Uint64("seed", 1, "seed of the subsample, folds, centres and features")
		standardize = flag.Bool("standardize", true, "standardize the columns (on the used rows)")
		golden      = flag.Int("golden", 0, "if > 0: golden-section search on log sigma with this many evaluations instead of the sigma grid")
		planOut     = flag.String("plan", "", "write the plan for gridsearch.py to this file")
		workers     = flag.Int("workers", 0, "folds in parallel (0: GOMAXPROCS)")
	)
	flag.Parse()
	if err := run(*data, *rows, *method, *mapKind, *components, *sigmas, *lambdas, *folds, *seed, *standardize, *golden, *planOut, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "tune:", err)
		os.Exit(1)
	}
}

func run(path string, nrows int, method, mapKind string, comps int, sigmaList, lambdaList string, k int, seed uint64, standardize bool, golden int, planOut string, workers int) error {
	if path == "" {
		return fmt.Errorf("%w: -data is required", zonal.ErrParam)
	}
	d, err := dataset.ReadFile(path, dataset.Options{})
	if err != nil {
		return err
	}
	n, _ := d.Dims()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if nrows > 0 && nrows < n {
		if idx, err = dataset.Subsample(n, nrows, seed); err != nil {
			return err
		}
		if d, err = d.Subset(idx); err != nil {
			return err
		}
		n = nrows
	}
	x := d.X
	if standardize {
		s, err := dataset.FitStandardizer(x)
		if err != nil {
			return err
		}
		if err := s.Apply(x); err != nil {
			return err
		}
	}
	y := mat.NewDense(n, 1, d.Y)
	lams, err := floats(lambdaList)
	if err != nil {
		return err
	}
	var sig []float64
	if sigmaList != "" {
		if sig, err = floats(sigmaList); err != nil {
			return err
		}
	} else {
		med, err := tune.MedianSigma(x, 0, seed)
		if err != nil {
			return err
		}
		sig = []float64{med / 4, med / 2, med, 2 * med, 4 * med}
	}
	opts := tune.SearchOptions{
		Options: tune.Options{Progress: progress()},
		Method:  tune.Method(method), Map: tune.Map(mapKind), Sigmas: sig, Lambdas: lams, Folds: k, Seed: seed, Workers: workers,
	}
	if method != tune.MethodExact.String() {
		opts.Sizes = []int{comps}
	}
	if planOut != "" {
		if err := writePlan(planOut, path, idx, d.Y, k, seed, method, comps, standardize, sig, lams); err != nil {
			return err
		}
	}
	start := time.Now()
	var res *tune.Result
	if golden > 0 {
		res, err = tune.Golden(context.Background(), x, y, tune.GoldenOptions{SearchOptions: opts, Lo: sig[0], Hi: sig[len(sig)-1], Evaluations: golden})
	} else {
		res, err = tune.Search(context.Background(), x, y, opts)
	}
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintln(os.Stderr)
	if err := res.WriteTable(os.Stdout); err != nil {
		return err
	}
	out := map[string]any{
		"tool": "zonal", "backend": backend.Default().Name(), "gomaxprocs": runtime.GOMAXPROCS(0),
		"data": path, "rows": n, "method": method, "map": res.Map, "folds": k, "golden": golden,
		"metric": res.Metric, "best_sigma": res.Best.Sigma, "best_lambda": res.Best.Lambda, "best_size": res.Best.Size,
		"best_score": res.Best.Mean, "best_std": res.Best.Std, "settings": len(res.Rows), "groups": res.Groups, "seconds": secs,
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}

func writePlan(path, data string, idx []int, labels []float64, k int, seed uint64, method string, comps int, standardize bool, sig, lams []float64) error {
	n := len(idx)
	folds, err := dataset.KFold(n, k, seed) // the folds tune.Search draws
	if err != nil {
		return err
	}
	p := plan{Data: data, Rows: idx, TestFold: make([]int, n), Components: comps, Standardize: standardize,
		Sigmas: sig, Lambdas: lams, Seed: seed, Method: "nystroem", Task: solvers.DetectTask(labels).String()}
	if method == tune.MethodExact.String() {
		p.Method = "krr"
	}
	for f, fold := range folds {
		for _, i := range fold.Test {
			p.TestFold[i] = f
		}
	}
	ntr := float64(n) - float64(n)/float64(k)
	for _, s := range sig {
		p.Gammas = append(p.Gammas, 1/(2*s*s))
	}
	for _, l := range lams {
		p.Alphas = append(p.Alphas, l*ntr)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("%w: bad number %q in a list", zonal.ErrParam, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// progress prints "tune: done/total settings" on stderr.
func progress() zonal.ProgressFunc {
	return func(p zonal.Progress) {
		fmt.Fprintf(os.Stderr, "\r%s: %d/%d settings", p.Stage, p.Done, p.Total)
	}
}

package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/purego"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

const demoSynopsis = "[-features D] [-centers M] [-cells Q] [-lambda L] [-seed N]"

func init() {
	addCommand(command{name: "demo", summary: "every method on the embedded digits set (what `zonal` with no arguments runs)", run: runDemo})
}

// demoRow is one line of the demo table.
type demoRow struct {
	method, size      string
	accuracy          float64
	fitSecs, predSecs float64
}

// runDemo fits every method on the embedded digits set (standardized, an 80/20
// split by seed) with the Gaussian kernel at sklearn's gamma='scale'
// (sigma = sqrt(d/2) on standardized data) and prints one table.
func runDemo(ctx context.Context, e *env, args []string) error {
	stdout, stderr := e.stdout, e.stderr
	fs := newFlagSet("demo", demoSynopsis, stderr)
	features := fs.Int("features", 1024, "features D of the Gegenbauer, Fourier and Nystrom maps")
	centers := fs.Int("centers", 600, "Nystrom centres M of FALKON (and in all over ParK's cells)")
	cells := fs.Int("cells", 4, "Voronoi cells Q of ParK")
	lambda := fs.Float64("lambda", 1e-5, "ridge parameter of every method: (1/n)|f(X)-y|^2 + lambda |f|^2")
	seed := fs.Uint64("seed", 1, "seed of the split, the features and the centres")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := firstError(countAtLeast("features", *features, 1), countAtLeast("centers", *centers, 1),
		countAtLeast("cells", *cells, 1), positiveFloat("lambda", *lambda)); err != nil {
		return err
	}
	be, err := backend.FromEnv()
	if err != nil {
		return err
	}

	data, err := dataset.Digits()
	if err != nil {
		return err
	}
	n, d := data.X.Dims()
	trIdx, teIdx := dataset.Split(n, 0.8, *seed)
	train, err := data.Subset(trIdx)
	if err != nil {
		return err
	}
	test, err := data.Subset(teIdx)
	if err != nil {
		return err
	}
	xtr, ytr, xte, yte := train.X, train.Y, test.X, test.Y
	std, err := estimator.InputScaler(xtr, 1, true)
	if err != nil {
		return err
	}
	if xtr, err = estimator.Scaled(std, xtr); err != nil {
		return err
	}
	if xte, err = estimator.Scaled(std, xte); err != nil {
		return err
	}
	sigma := math.Sqrt(float64(d) / 2)
	k, err := newKernel(kernelParams{Name: "gaussian", Sigma: sigma})
	if err != nil {
		return err
	}
	enc, err := solvers.NewEncoding(ytr, solvers.TaskClassification)
	if err != nil {
		return err
	}
	y, err := enc.Targets(ytr)
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "zonal on the embedded digits set: %d training and %d test rows, %d features, %d classes (one vs all)\n",
		len(trIdx), len(teIdx), d, len(enc.Classes))
	fmt.Fprintf(stdout, "Gaussian kernel sigma = sqrt(d/2) = %.3g on standardized data, lambda = %g\n", sigma, *lambda)
	fmt.Fprintf(stdout, "backend %s, CPU path %s, %d cores\n\n", be.Name(), purego.CPUPath(), runtime.GOMAXPROCS(0))

	bar := newProgressBar(stderr)
	opts := solvers.Options{Backend: be, Progress: bar.report}
	type job struct {
		method, size string
		fit          func() (solvers.Model, error)
	}
	ridge := func(name string) job {
		return job{"ridge on " + name + " features", fmt.Sprintf("D = %d", *features), func() (solvers.Model, error) {
			fm, err := estimator.BuildMap(ctx, estimator.MapSpec{Map: estimator.Map(name), Kernel: k, Features: *features, Lambda: *lambda, Seed: *seed, Backend: be}, xtr)
			if err != nil {
				return nil, err
			}
			return solvers.FitRidge(ctx, fm, xtr, y, *lambda, solvers.RidgeOptions{Options: opts})
		}}
	}
	jobs := []job{
		{"exact KRR", fmt.Sprintf("n = %d", len(trIdx)), func() (solvers.Model, error) {
			return solvers.FitKRR(ctx, k, xtr, y, *lambda, opts)
		}},
		ridge("gegenbauer"),
		ridge("fourier"),
		ridge("nystrom"),
		{"FALKON", fmt.Sprintf("M = %d", *centers), func() (solvers.Model, error) {
			return solvers.FitFalkon(ctx, k, xtr, y, *lambda, solvers.FalkonOptions{Options: opts, Centers: *centers, Seed: *seed})
		}},
		{"ParK", fmt.Sprintf("Q = %d, M = %d", *cells, *centers), func() (solvers.Model, error) {
			return solvers.FitParK(ctx, k, xtr, y, *lambda, solvers.ParKOptions{Options: opts, Cells: *cells, Centers: *centers, Seed: *seed})
		}},
	}
	var rows []demoRow
	pred := make([]float64, len(teIdx))
	for _, j := range jobs {
		start := time.Now()
		m, err := j.fit()
		bar.done()
		if err != nil {
			return fmt.Errorf("%s: %w", j.method, err)
		}
		fitSecs := time.Since(start).Seconds()
		pipe, err := solvers.NewPipeline(nil, enc, m)
		if err != nil {
			return err
		}
		start = time.Now()
		if err := pipe.PredictLabels(pred, xte); err != nil {
			return fmt.Errorf("%s: %w", j.method, err)
		}
		predSecs := time.Since(start).Seconds()
		acc := solvers.Accuracy(pred, yte)
		rows = append(rows, demoRow{j.method, j.size, acc, fitSecs, predSecs})
	}

	fmt.Fprintf(stdout, "%-30s %18s %14s %9s %12s\n", "method", "features/centres", "test accuracy", "fit (s)", "predict (s)")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-30s %18s %14.4f %9.3f %12.3f\n", r.method, r.size, r.accuracy, r.fitSecs, r.predSecs)
	}
	fmt.Fprint(stdout, `
Try next:
  zonal approx -data FILE -standardize -kernel gaussian -methods gegenbauer,fourier,nystrom,rls-nystrom -features 256,1024
  zonal fit -train FILE -test FILE -model out.zonal   (sigma, lambda and centres chosen from the data)
  zonal tune -train FILE -test FILE -model out.zonal  (5-fold CV over sigma x lambda, the best refitted)
  zonal predict -model out.zonal -data FILE
  zonal kpca -data FILE -standardize -points 500 -mean-adjust
  zonal help
`)
	return nil
}

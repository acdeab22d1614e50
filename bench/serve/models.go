//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// Model names of -models.
const (
	modelFalkon = "falkon"
	modelRidge  = "ridge-fourier"
)

// trainSet is the data a model is fitted on and the rows clients send.
type trainSet struct {
	train, test *mat.Dense // raw values (MNIST: pixels 0..255)
	trainY      []float64
	testY       []float64
	scale       float64 // the pipeline's scaler divides every column by it
	tag         string  // part of the model file name
}

// loadData reads MNIST (-data), or makes the synthetic set of -synthetic:
// 600 rows of d = 16 uniform values in [0, 255), labelled 0, 1, 2 by the
// largest of three fixed linear scores, so that a model fits in
// milliseconds and the quick test needs no data files.
func loadData(c config) (*trainSet, error) {
	if c.synthetic {
		r := rand.New(rand.NewPCG(1, 2))
		const n, d, k = 600, 16, 3
		w := make([]float64, k*d)
		for i := range w {
			w[i] = r.NormFloat64()
		}
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := range n {
			best, arg := 0.0, 0
			for j := range d {
				x.Set(i, j, 255*r.Float64())
			}
			for l := range k {
				s := mat.Dot(x.RowView(i), mat.NewVecDense(d, w[l*d:(l+1)*d]))
				if l == 0 || s > best {
					best, arg = s, l
				}
			}
			y[i] = float64(arg)
		}
		return &trainSet{train: x.Slice(0, 400, 0, d).(*mat.Dense), trainY: y[:400], test: x.Slice(400, n, 0, d).(*mat.Dense), testY: y[400:], scale: 255, tag: "synthetic"}, nil
	}
	if c.data == "" {
		return nil, fmt.Errorf("no data folder: pass -data DIR (with mnist_train.csv.gz and mnist_test.csv.gz), set ZONAL_DATA, or use -synthetic")
	}
	test, err := dataset.ReadFile(filepath.Join(c.data, "mnist_test.csv.gz"), dataset.Options{})
	if err != nil {
		return nil, err
	}
	return &trainSet{test: test.X, testY: test.Y, scale: 255, tag: fmt.Sprintf("mnist-n%d", c.trainRows)}, nil
}

// readTrain reads the MNIST training rows (a seeded subsample of
// -train-rows) the first time a model has to be fitted.
func (ts *trainSet) readTrain(c config) error {
	if ts.train != nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "reading %d MNIST training rows...\n", c.trainRows)
	all, err := dataset.ReadFile(filepath.Join(c.data, "mnist_train.csv.gz"), dataset.Options{})
	if err != nil {
		return err
	}
	if n, _ := all.Dims(); c.trainRows < n {
		rows, err := dataset.Subsample(n, c.trainRows, 1)
		if err != nil {
			return err
		}
		if all, err = all.Subset(rows); err != nil {
			return err
		}
	}
	ts.train, ts.trainY = all.X, all.Y
	return nil
}

// modelFile is where model name's fit is kept: the name carries every
// setting that changes the fit, so a cached file is reused only for the
// same settings.
func modelFile(c config, ts *trainSet, name string) string {
	var base string
	switch name {
	case modelFalkon:
		base = fmt.Sprintf("falkon-M%d-it%d", c.centers, c.iterations)
	case modelRidge:
		base = fmt.Sprintf("ridge-fourier-D%d", c.features)
	default:
		base = name
	}
	return filepath.Join(c.modelDir, fmt.Sprintf("%s-%s-s%g-l%g.zonal", base, ts.tag, c.sigma, c.lambda))
}

// model loads model name from its cached file, or fits and caches it.
func model(c config, ts *trainSet, name string) (*solvers.Pipeline, string, error) {
	file := modelFile(c, ts, name)
	if !c.refit {
		if p, err := loadModel(file); err == nil {
			return p, file, nil
		}
	}
	if !c.synthetic {
		if err := ts.readTrain(c); err != nil {
			return nil, "", err
		}
	}
	p, err := fitModel(c, ts, name)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if err := os.MkdirAll(c.modelDir, 0o755); err != nil {
		return nil, "", err
	}
	b, err := solvers.MarshalPipeline(p)
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(file+".tmp", b, 0o644); err != nil {
		return nil, "", err
	}
	return p, file, os.Rename(file+".tmp", file)
}

// accuracy is p's accuracy on the first 2000 test rows (at most): a check
// that the served model is the one meant.
func accuracy(p *solvers.Pipeline, ts *trainSet) (float64, error) {
	n, d := ts.test.Dims()
	n = min(n, 2000)
	pred := make([]float64, n)
	if err := p.PredictLabels(pred, ts.test.Slice(0, n, 0, d).(*mat.Dense)); err != nil {
		return 0, err
	}
	return solvers.Accuracy(pred, ts.testY[:n]), nil
}

func loadModel(path string) (*solvers.Pipeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return solvers.Load(f, solvers.Options{})
}

// fitModel fits FALKON with -centers centres or ridge on -features random
// Fourier features, Gaussian kernel of bandwidth -sigma, on the rows
// divided by ts.scale; the scaler is part of the pipeline, so clients send
// raw values.
func fitModel(c config, ts *trainSet, name string) (*solvers.Pipeline, error) {
	ctx := context.Background()
	be := backend.Default()
	n, d := ts.train.Dims()
	mean, scale := make([]float64, d), make([]float64, d)
	for j := range scale {
		scale[j] = ts.scale
	}
	sc, err := solvers.NewScaler(mean, scale)
	if err != nil {
		return nil, err
	}
	x := mat.NewDense(n, d, nil)
	x.Scale(1/ts.scale, ts.train)
	enc, err := solvers.NewEncoding(ts.trainY, solvers.TaskClassification)
	if err != nil {
		return nil, err
	}
	y, err := enc.Targets(ts.trainY)
	if err != nil {
		return nil, err
	}
	k, err := kernels.NewGaussian(c.sigma)
	if err != nil {
		return nil, err
	}
	opts := solvers.Options{Backend: be, MemoryBudget: 8 << 30}
	var m solvers.Model
	switch name {
	case modelFalkon:
		m, err = solvers.FitFalkon(ctx, k, x, y, c.lambda, solvers.FalkonOptions{Options: opts, Centers: min(c.centers, n), Iterations: c.iterations, Seed: 1})
	case modelRidge:
		var fm *kernels.FourierMap
		if fm, err = kernels.NewFourierMap(k, d, kernels.FourierOptions{Options: kernels.Options{Backend: be}, Features: c.features, Seed: 1}); err == nil {
			m, err = solvers.FitRidge(ctx, fm, x, y, c.lambda, solvers.RidgeOptions{Options: opts})
		}
	default:
		return nil, fmt.Errorf("unknown model %q (%s, %s)", name, modelFalkon, modelRidge)
	}
	if err != nil {
		return nil, err
	}
	return solvers.NewPipeline(sc, enc, m)
}

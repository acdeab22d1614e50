// Command sparse measures zonal's methods on sparse, high-dimensional text:
// the Debian package descriptions of debian_text (bag-of-words
// counts, 20 classes), on raw counts and on tf-idf rows with L2
// normalization, with a seeded stratified train/test split that it also
// writes to a file so that sklearn_debian.py scores scikit-learn on the
// same rows. It also runs a density sweep: the same rows thinned or padded
// with synthetic nonzeros from 0.1% to 10% density, to show whose fit time
// follows nnz. See bench/sparse/README.md for the commands.
//
//	cd bench   # its own Go module
//	go run -tags netlib ./sparse -data ../../shared/data/debian_text.libsvm.gz -split-out /tmp/debian_split.json
//	go run ./sparse -rows 2000 -features 256 -centers 200 -sweep-rows 500   # a quick check
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
	"github.com/zonal-ml/zonal/tensorsketch"
)

// config is the command line.
type config struct {
	data, splitOut, jsonOut string
	rows, sweepRows         int
	testFrac                float64
	seed                    uint64
	alpha, kernelAlpha      float64
	features, centers       []int
	methods, transforms     []string
	densities               []float64
	sweepFeatures           int
	sweepCenters            int
	cgTol                   float64
	cgIter                  int
	memory                  int64
}

// allMethods are the -methods names, in table order.
var allMethods = []string{
	"linear",
	"tensorsketch-2", "tensorsketch-3", "polysketch-2", "polysketch-3", "adaptive-2", "adaptive-3",
	"nystrom-poly2", "nystrom-gauss", "falkon-poly2", "falkon-gauss",
}

// sweepMethods are the methods of the density sweep.
var sweepMethods = []string{"linear", "tensorsketch-2", "polysketch-2", "adaptive-2", "nystrom-poly2", "falkon-gauss"}

// result is one row of the tables (and one JSON object of -json).
type result struct {
	Part       string  `json:"part"` // "table" or "sweep"
	Transform  string  `json:"transform"`
	Method     string  `json:"method"`
	Size       int     `json:"size"` // D for feature maps, M for Nystrom/FALKON, d for linear
	NTrain     int     `json:"n_train"`
	NTest      int     `json:"n_test"`
	NNZ        int     `json:"nnz_train"`
	Density    float64 `json:"density"`
	Accuracy   float64 `json:"accuracy"`
	FitSec     float64 `json:"fit_seconds"`
	PredictSec float64 `json:"predict_seconds"`
	FitNsNNZ   float64 `json:"fit_ns_per_nnz"`
	Note       string  `json:"note,omitempty"`
}

func main() {
	var c config
	var features, centers, methods, transforms, densities string
	flag.StringVar(&c.data, "data", "../../shared/data/debian_text.libsvm.gz", "LIBSVM file of counts (debian_text)")
	flag.IntVar(&c.rows, "rows", 0, "use only the first N rows of the file (0 = all; the file is in a seeded random order)")
	flag.Float64Var(&c.testFrac, "test", 0.2, "test fraction of every class (stratified split)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the split, the sketches, the centres and the sweep")
	flag.StringVar(&c.splitOut, "split-out", "", "write the split (row indices) as JSON here, for sklearn_debian.py")
	flag.StringVar(&c.jsonOut, "json", "", "also write every result as one JSON object per line here")
	flag.Float64Var(&c.alpha, "alpha", 1, "ridge of the linear model in scikit-learn's units: |Xw - y|^2 + alpha |w|^2 (lambda = alpha / n)")
	flag.Float64Var(&c.kernelAlpha, "kernel-alpha", 1, "the same for the kernel methods (lambda = kernel-alpha / n)")
	flag.StringVar(&features, "features", "1024,4096", "feature counts D of the sketches")
	flag.StringVar(&centers, "centers", "1000,4000", "centre counts M of Nystrom and FALKON")
	flag.StringVar(&methods, "methods", strings.Join(allMethods, ","), "methods to run: "+strings.Join(allMethods, ", "))
	flag.StringVar(&transforms, "transforms", "counts,tfidf", "counts (raw counts) and/or tfidf (tf-idf, then L2 rows)")
	flag.StringVar(&densities, "densities", "0.001,0.003,0.01,0.03,0.1", "densities of the sweep (empty: no sweep)")
	flag.IntVar(&c.sweepRows, "sweep-rows", 4000, "training rows of the density sweep (the test rows are the table's)")
	flag.IntVar(&c.sweepFeatures, "sweep-features", 1024, "D of the sketches in the sweep")
	flag.IntVar(&c.sweepCenters, "sweep-centers", 1000, "M of Nystrom and FALKON in the sweep")
	flag.Float64Var(&c.cgTol, "cg-tol", 1e-6, "relative residual at which the linear model's CG stops")
	flag.IntVar(&c.cgIter, "cg-iterations", 1000, "most CG iterations of the linear model")
	flag.Int64Var(&c.memory, "memory", 0, "memory budget in bytes of every fit (0: zonal's default, 2 GiB)")
	flag.Parse()
	var err error
	if c.features, err = parseInts(features); err == nil {
		if c.centers, err = parseInts(centers); err == nil {
			c.densities, err = parseFloats(densities)
		}
	}
	if err == nil {
		c.methods, c.transforms = splitList(methods), splitList(transforms)
		err = checkNames(c.methods, allMethods, "method")
		if err == nil {
			err = checkNames(c.transforms, []string{"counts", "tfidf"}, "transform")
		}
	}
	if err == nil {
		err = run(context.Background(), c, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sparse:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, w io.Writer) error {
	data, err := dataset.ReadFile(c.data, dataset.Options{NoDense: true, MaxRows: c.rows})
	if err != nil {
		return err
	}
	x := data.Sparse
	n, d := x.Dims()
	train, test := stratifiedSplit(data.Y, c.testFrac, c.seed)
	fmt.Fprintf(w, "# %s: %d rows (%d train, %d test), %d columns, %d nonzeros (density %.3f%%), backend %s\n\n",
		filepath.Base(c.data), n, len(train), len(test), d, x.NNZ(), 100*float64(x.NNZ())/float64(n)/float64(d), backend.Default().Name())
	if c.splitOut != "" {
		if err := writeSplit(c, n, d, train, test); err != nil {
			return err
		}
	}
	var out []result
	var jw *json.Encoder
	if c.jsonOut != "" {
		f, err := os.Create(c.jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		jw = json.NewEncoder(f)
	}
	emit := func(r result) {
		out = append(out, r)
		if jw != nil {
			jw.Encode(r)
		}
	}
	xtr, _ := x.Subset(train)
	xte, _ := x.Subset(test)
	ytr, yte := pick(data.Y, train), pick(data.Y, test)
	fmt.Fprintln(w, "| input | method | D or M | accuracy | fit s | predict s | fit ns / nnz | note |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, tf := range c.transforms {
		a, b, err := transform(tf, xtr, xte)
		if err != nil {
			return err
		}
		for _, m := range c.methods {
			sizes := c.features
			switch {
			case m == "linear":
				sizes = []int{d}
			case strings.HasPrefix(m, "nystrom") || strings.HasPrefix(m, "falkon"):
				sizes = c.centers
			}
			for _, s := range sizes {
				r := runMethod(ctx, c, m, s, a, b, ytr, yte)
				r.Part, r.Transform = "table", tf
				emit(r)
				printRow(w, r)
			}
		}
	}
	if len(c.densities) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n## density sweep: %d training rows and the test rows, tf-idf rows; below the file's density each row keeps a random part of its nonzeros, above it gains random extra words (count 1)\n\n", min(c.sweepRows, len(train)))
	fmt.Fprintln(w, "| density | method | D or M | accuracy | fit s | fit ns / nnz | note |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---|")
	sub := train[:min(c.sweepRows, len(train))]
	base, _ := x.Subset(sub)
	ysub := pick(data.Y, sub)
	for _, dens := range c.densities {
		xs := withDensity(base, dens, c.seed)
		a, b, err := transform("tfidf", xs, withDensity(xte, dens, c.seed+1))
		if err != nil {
			return err
		}
		for _, m := range sweepMethods {
			if !slices.Contains(c.methods, m) {
				continue
			}
			s := c.sweepFeatures
			switch {
			case m == "linear":
				s = d
			case strings.HasPrefix(m, "nystrom") || strings.HasPrefix(m, "falkon"):
				s = c.sweepCenters
			}
			r := runMethod(ctx, c, m, s, a, b, ysub, yte)
			r.Part, r.Transform, r.Density = "sweep", "tfidf", float64(xs.NNZ())/float64(xs.Rows)/float64(xs.Cols)
			emit(r)
			fmt.Fprintf(w, "| %.3f%% | %s | %d | %s | %s | %s | %s |\n", 100*r.Density, r.Method, r.Size, num(r.Accuracy, 4), num(r.FitSec, 3), num(r.FitNsNNZ, 0), r.Note)
		}
	}
	return nil
}

func printRow(w io.Writer, r result) {
	fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.Transform, r.Method, r.Size, num(r.Accuracy, 4),
		num(r.FitSec, 3), num(r.PredictSec, 3), num(r.FitNsNNZ, 0), r.Note)
}

// num formats v with prec decimals, "-" for NaN (a skipped method).
func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// transform returns the rows of train and test as the table uses them:
// the raw counts, or tf-idf (idf fitted on train) then L2 rows.
func transform(name string, train, test *dataset.CSR) (*dataset.CSR, *dataset.CSR, error) {
	if name == "counts" {
		return train, test, nil
	}
	t, err := dataset.FitTextTransform(train, dataset.TextOptions{TFIDF: true, Normalize: true})
	if err != nil {
		return nil, nil, err
	}
	a, err := t.ApplyCSR(train)
	if err != nil {
		return nil, nil, err
	}
	b, err := t.ApplyCSR(test)
	return a, b, err
}

// runMethod fits method m of size s (D or M) on (xtr, ytr) and scores it
// on (xte, yte). A method that fails reports NaN and the error as its note.
func runMethod(ctx context.Context, c config, m string, s int, xtr, xte *dataset.CSR, ytr, yte []float64) result {
	r := result{Method: m, Size: s, NTrain: xtr.Rows, NTest: xte.Rows, NNZ: xtr.NNZ(),
		Accuracy: math.NaN(), FitSec: math.NaN(), PredictSec: math.NaN(), FitNsNNZ: math.NaN()}
	enc, err := solvers.NewEncoding(ytr, solvers.TaskClassification)
	if err != nil {
		r.Note = err.Error()
		return r
	}
	y, err := enc.Targets(ytr)
	if err != nil {
		r.Note = err.Error()
		return r
	}
	runtime.GC()
	start := time.Now()
	pred, fitSec, err := fitPredict(ctx, c, m, s, xtr, xte, y, enc)
	if err != nil {
		r.Note = err.Error()
		return r
	}
	labels := make([]float64, xte.Rows)
	if err := enc.Decode(labels, pred); err != nil {
		r.Note = err.Error()
		return r
	}
	r.FitSec = fitSec
	r.PredictSec = time.Since(start).Seconds() - fitSec
	r.FitNsNNZ = 1e9 * fitSec / float64(max(1, xtr.NNZ()))
	r.Accuracy = solvers.Accuracy(labels, yte)
	return r
}

// fitPredict fits and returns the raw test outputs (n_test x k) and the
// fit time in seconds.
func fitPredict(ctx context.Context, c config, m string, s int, xtr, xte *dataset.CSR, y *mat.Dense, enc solvers.Encoding) (*mat.Dense, float64, error) {
	n := xtr.Rows
	lambda := c.kernelAlpha / float64(n)
	opts := solvers.Options{MemoryBudget: c.memory}
	poly := func(deg int) kernels.Polynomial {
		return kernels.Polynomial{Degree: deg, Gamma: 1 / meanSqNorm(xtr), Coef0: 1}
	}
	start := time.Now()
	switch m {
	case "linear":
		lr, err := fitLinear(ctx, xtr, y, c.alpha, c.cgTol, c.cgIter)
		if err != nil {
			return nil, 0, err
		}
		fit := time.Since(start).Seconds()
		return lr.predict(xte), fit, nil
	case "tensorsketch-2", "tensorsketch-3", "polysketch-2", "polysketch-3", "adaptive-2", "adaptive-3":
		deg := int(m[len(m)-1] - '0')
		k := poly(deg)
		var fm kernels.FeatureMap
		var err error
		switch m[:len(m)-2] {
		case "tensorsketch":
			fm, err = tensorsketch.NewTensorSketch(k, xtr.Cols, tensorsketch.SketchOptions{Features: s, Seed: c.seed})
		case "polysketch":
			fm, err = tensorsketch.NewPolySketch(k, xtr.Cols, tensorsketch.SketchOptions{Features: s, Seed: c.seed})
		default:
			fm, err = tensorsketch.FitAdaptive(ctx, xtr, k, tensorsketch.AdaptiveOptions{Options: tensorsketch.Options{MemoryBudget: c.memory}, Samples: s, Lambda: lambda, Seed: c.seed})
		}
		if err != nil {
			return nil, 0, err
		}
		rm, err := fitRidgeOnMap(ctx, fm, xtr, y, lambda, opts)
		if err != nil {
			return nil, 0, err
		}
		fit := time.Since(start).Seconds()
		out, err := rm.predict(xte)
		return out, fit, err
	case "nystrom-poly2", "nystrom-gauss", "falkon-poly2", "falkon-gauss":
		var k kernels.Kernel = poly(2)
		if strings.HasSuffix(m, "gauss") {
			g, err := kernels.NewGaussian(medianDistance(xtr, 2000, c.seed))
			if err != nil {
				return nil, 0, err
			}
			k = g
		}
		if s > n {
			return nil, 0, fmt.Errorf("M = %d > n = %d", s, n)
		}
		var model solvers.Model
		var err error
		if strings.HasPrefix(m, "nystrom") {
			model, err = fitNystromCSR(ctx, k, xtr, y, lambda, s, c.seed, opts)
		} else {
			model, err = fitFalkonCSR(ctx, k, xtr, y, lambda, solvers.FalkonOptions{Options: opts, Centers: s, Iterations: 20, Seed: c.seed})
		}
		if err != nil {
			return nil, 0, err
		}
		fit := time.Since(start).Seconds()
		p, err := solvers.NewPipeline(nil, enc, model)
		if err != nil {
			return nil, 0, err
		}
		out := mat.NewDense(xte.Rows, enc.Outputs(), nil)
		return out, fit, p.PredictOutputs(out, xte)
	}
	return nil, 0, fmt.Errorf("unknown method %q", m)
}

// fitNystromCSR is ridge regression on the Nystrom features of m uniform
// landmarks, on CSR rows.
func fitNystromCSR(ctx context.Context, k kernels.Kernel, x *dataset.CSR, y *mat.Dense, lambda float64, m int, seed uint64, opts solvers.Options) (solvers.Model, error) {
	fm, err := kernels.NewNystrom(ctx, k, x, kernels.NystromOptions{Landmarks: m, Seed: seed})
	if err != nil {
		return nil, err
	}
	return solvers.FitRidge(ctx, fm, x, y, lambda, solvers.RidgeOptions{Options: opts})
}

// fitFalkonCSR is FALKON on CSR rows.
func fitFalkonCSR(ctx context.Context, k kernels.Kernel, x *dataset.CSR, y *mat.Dense, lambda float64, o solvers.FalkonOptions) (solvers.Model, error) {
	return solvers.FitFalkon(ctx, k, x, y, lambda, o)
}

// ridgeOnMap is ridge regression on the features of a map that reads CSR.
type ridgeOnMap struct {
	fm kernels.FeatureMap
	r  *solvers.Ridge
}

// fitRidgeOnMap fits ridge regression on fm(x). solvers.FitRidge takes
// dense x in this build, so the n x D features Z = fm(x) are formed here
// (fm reads x's nonzeros) and the ridge fitted on Z through the identity
// map. The same numbers as FitRidge(fm, x) once that takes a CSR (which
// would stream Z in row blocks instead of holding n x D floats); the fit
// time includes computing Z.
func fitRidgeOnMap(ctx context.Context, fm kernels.FeatureMap, x *dataset.CSR, y *mat.Dense, lambda float64, opts solvers.Options) (*ridgeOnMap, error) {
	z := mat.NewDense(x.Rows, fm.Dim(), nil)
	if err := fm.Transform(z, x); err != nil {
		return nil, err
	}
	r, err := solvers.FitRidge(ctx, identity(fm.Dim()), z, y, lambda, solvers.RidgeOptions{Options: opts})
	if err != nil {
		return nil, err
	}
	return &ridgeOnMap{fm: fm, r: r}, nil
}

func (m *ridgeOnMap) predict(x *dataset.CSR) (*mat.Dense, error) {
	z := mat.NewDense(x.Rows, m.fm.Dim(), nil)
	if err := m.fm.Transform(z, x); err != nil {
		return nil, err
	}
	out := mat.NewDense(x.Rows, m.r.Outputs(), nil)
	return out, m.r.Predict(out, z)
}

// identity is the feature map z -> z on D columns.
type identity int

func (d identity) InputDim() int { return int(d) }
func (d identity) Dim() int      { return int(d) }
func (d identity) Transform(dst *mat.Dense, x mat.Matrix) error {
	dst.Copy(x)
	return nil
}

// meanSqNorm is the mean of |x_i|^2 over the rows (1 when all are zero):
// the polynomial kernels use gamma = 1/meanSqNorm, so gamma <x, x> is
// about 1 on raw counts and exactly 1 on L2-normalized rows.
func meanSqNorm(x *dataset.CSR) float64 {
	var s float64
	for i := 0; i < x.Rows; i++ {
		s += x.RowNorm2(i)
	}
	if s == 0 {
		return 1
	}
	return s / float64(x.Rows)
}

// medianDistance is the median of |x_i - x_j| over pairs of random
// distinct rows, from the row norms and sparse dot products (the median
// heuristic for the Gaussian bandwidth).
func medianDistance(x *dataset.CSR, pairs int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0x6d656469616e))
	ds := make([]float64, 0, pairs)
	for len(ds) < pairs && x.Rows > 1 {
		i, j := rng.IntN(x.Rows), rng.IntN(x.Rows)
		if i == j {
			continue
		}
		d2 := x.RowNorm2(i) + x.RowNorm2(j) - 2*rowDot(x, i, j)
		ds = append(ds, math.Sqrt(max(d2, 0)))
	}
	sort.Float64s(ds)
	if len(ds) == 0 || ds[len(ds)/2] == 0 {
		return 1
	}
	return ds[len(ds)/2]
}

// stratifiedSplit puts round((1-testFrac) n_c) rows of every class c in
// train (at least one when the class has two rows or more) and the rest in
// test, drawn by a seeded permutation per class; both lists ascending.
func stratifiedSplit(y []float64, testFrac float64, seed uint64) (train, test []int) {
	byClass := map[float64][]int{}
	for i, v := range y {
		byClass[v] = append(byClass[v], i)
	}
	classes := make([]float64, 0, len(byClass))
	for v := range byClass {
		classes = append(classes, v)
	}
	sort.Float64s(classes)
	rng := rand.New(rand.NewPCG(seed, 0x7370616c6974))
	for _, v := range classes {
		rows := byClass[v]
		rng.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		ntr := int(math.Round((1 - testFrac) * float64(len(rows))))
		if len(rows) >= 2 {
			ntr = min(max(ntr, 1), len(rows)-1)
		}
		train = append(train, rows[:ntr]...)
		test = append(test, rows[ntr:]...)
	}
	sort.Ints(train)
	sort.Ints(test)
	return train, test
}

// splitFile is what -split-out writes: row indices (0-based, into the
// first Rows rows of Data) of the training and test parts.
type splitFile struct {
	Data      string  `json:"data"`
	Rows      int     `json:"rows"`
	NFeatures int     `json:"n_features"`
	Seed      uint64  `json:"seed"`
	TestFrac  float64 `json:"test_fraction"`
	Alpha     float64 `json:"alpha"`
	Features  []int   `json:"features"`
	Train     []int   `json:"train"`
	Test      []int   `json:"test"`
}

func writeSplit(c config, n, d int, train, test []int) error {
	abs, err := filepath.Abs(c.data)
	if err != nil {
		return err
	}
	b, err := json.Marshal(splitFile{Data: abs, Rows: n, NFeatures: d, Seed: c.seed, TestFrac: c.testFrac,
		Alpha: c.alpha, Features: c.features, Train: train, Test: test})
	if err != nil {
		return err
	}
	return os.WriteFile(c.splitOut, b, 0o644)
}

// withDensity returns x with each row's nonzero count scaled to density
// dens of the columns: below x's density every row keeps a random subset
// of its entries (at least one), above it gains random new columns with
// value 1. Labels stay those of the original rows.
func withDensity(x *dataset.CSR, dens float64, seed uint64) *dataset.CSR {
	rng := rand.New(rand.NewPCG(seed, 0x64656e73))
	cur := float64(x.NNZ()) / float64(x.Rows) / float64(x.Cols)
	out := &dataset.CSR{Rows: x.Rows, Cols: x.Cols, RowPtr: make([]int, x.Rows+1)}
	target := max(1, int(math.Round(dens*float64(x.Cols))))
	for i := 0; i < x.Rows; i++ {
		cols, vals := x.Row(i)
		entries := map[int]float64{}
		if dens < cur {
			keep := max(1, int(math.Round(float64(len(cols))*dens/cur)))
			for _, k := range rng.Perm(len(cols))[:min(keep, len(cols))] {
				entries[cols[k]] = vals[k]
			}
		} else {
			for k, j := range cols {
				entries[j] = vals[k]
			}
			for len(entries) < min(target, x.Cols) {
				j := rng.IntN(x.Cols)
				if _, ok := entries[j]; !ok {
					entries[j] = 1
				}
			}
		}
		js := make([]int, 0, len(entries))
		for j := range entries {
			js = append(js, j)
		}
		sort.Ints(js)
		for _, j := range js {
			out.Col = append(out.Col, j)
			out.Val = append(out.Val, entries[j])
		}
		out.RowPtr[i+1] = len(out.Col)
	}
	return out
}

func pick(y []float64, rows []int) []float64 {
	out := make([]float64, len(rows))
	for k, r := range rows {
		out[k] = y[r]
	}
	return out
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("bad size %q (want a positive integer)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0 && v <= 1) {
			return nil, fmt.Errorf("bad density %q (want a number in (0, 1])", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func checkNames(got, known []string, what string) error {
	for _, g := range got {
		if !slices.Contains(known, g) {
			return fmt.Errorf("unknown %s %q (known: %s)", what, g, strings.Join(known, ", "))
		}
	}
	return nil
}

// rowDot is <x_i, x_j> of two rows of x.
func rowDot(x *dataset.CSR, i, j int) float64 {
	ci, vi := x.Row(i)
	cj, vj := x.Row(j)
	return dataset.SparseDot(ci, vi, cj, vj)
}

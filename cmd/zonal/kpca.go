package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/kpca"
)

const kpcaSynopsis = "-data FILE|- [-format csv|libsvm] [-standardize] -kernel gaussian [-sigma S] [-components k] -points m [-start m0] [-mean-adjust] [-incremental] [-out scores.csv] [-model FILE] [-seed N] [-json]\n       zonal kpca transform -model FILE -data FILE|- [-format csv|libsvm] [-out scores.csv]"

// `zonal kpca` without -incremental fits batch kernel PCA of the first
// -points rows and prints the leading eigenvalues and explained variance
// ratios; with -incremental it starts from a batch decomposition of the
// first -start rows and adds the others one at a time (incremental KPCA,
// package kpca), printing at checkpoints the exact drift against the matrix
// being decomposed (relative Frobenius reconstruction error, orthogonality),
// the largest eigenvalue difference from a batch eigendecomposition of the
// same matrix, the mean time per added point (wall and CPU), the total time
// and the batch time. Without -sigma the Gaussian bandwidth is the median
// Euclidean distance between the points used (after -scale and
// -standardize). With -nystrom L it reports instead the errors of an
// incremental Nystrom approximation as landmarks grow from -start to L.
//
// -out FILE writes the scores of every point on the top -components
// components (all held ones when -components is 0) as CSV, one row per
// point; -model FILE saves the fitted (or grown) kernel PCA with its input
// scaling, and `zonal kpca transform -model FILE -data FILE` projects new
// points with it (kpcaout.go).
func init() {
	addCommand(command{name: "kpca", summary: "kernel PCA (batch, or grown one point at a time with drift reports); -out scores, -model and kpca transform", run: kpcaCommand})
}

// kpcaConfig is a validated `zonal kpca` command line.
type kpcaConfig struct {
	format      dataFlags
	data        string
	standardize bool
	scale       float64
	kernel      kernelParams // Sigma 0: the median distance
	memory      int64
	components  int
	points      int
	start       int
	meanAdjust  bool
	incremental bool
	seed        uint64
	json        bool
	every       int
	checkpoints string
	reorth      float64
	nystrom     int
	noBatch     bool
	out         string
	model       string
}

func kpcaCommand(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "transform" {
		return kpcaTransformCommand(ctx, e, args[1:])
	}
	cfg, err := parseKPCA(e.stderr, args)
	if err != nil {
		return err
	}
	return runKPCA(ctx, e, cfg)
}

// parseKPCA parses and validates the flags of `zonal kpca`.
func parseKPCA(stderr io.Writer, args []string) (kpcaConfig, error) {
	var f kpcaConfig
	var memory string
	fs := newFlagSet("kpca", kpcaSynopsis, stderr)
	fs.StringVar(&f.data, "data", "", "data file (LIBSVM or CSV, gzip allowed, - for standard input); empty or \"digits\": the embedded digits set")
	f.format.register(fs)
	fs.StringVar(&memory, "memory", "", "memory budget, e.g. 8G (default 2G): the -points x -points kernel matrix and its eigendecomposition must fit")
	fs.BoolVar(&f.standardize, "standardize", false, "standardize each feature (mean 0, variance 1) over the points used")
	fs.Float64Var(&f.scale, "scale", 1, "multiply every feature by this factor first (e.g. 0.00392156862745098 = 1/255 for MNIST pixels)")
	fs.StringVar(&f.kernel.Name, "kernel", "gaussian", kernelHelp())
	fs.Float64Var(&f.kernel.Sigma, "sigma", 0, "gaussian/laplacian bandwidth; 0: the median Euclidean distance over all pairs of the points used (over a seeded sample of 2000 points when -points > 2000)")
	fs.Float64Var(&f.kernel.Gamma, "gamma", 1, "polynomial kernel scale")
	fs.Float64Var(&f.kernel.Coef0, "coef0", 1, "polynomial kernel offset")
	fs.IntVar(&f.kernel.Degree, "degree", 2, "polynomial kernel degree")
	fs.IntVar(&f.components, "components", 0, "keep the top k components (0: keep all)")
	fs.IntVar(&f.points, "points", 0, "grow to this many points (the first m rows; 0: all rows)")
	fs.IntVar(&f.start, "start", 20, "start from a batch decomposition of the first m0 points")
	fs.BoolVar(&f.meanAdjust, "mean-adjust", false, "centre the data in feature space (K' = HKH; still one bordered update per point, in a Helmert basis of 1^perp)")
	fs.BoolVar(&f.incremental, "incremental", false, "grow incrementally from -start to -points with checkpoints; without it, one batch kernel PCA of -points points")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the sigma sample and the drift probes")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per checkpoint")
	fs.IntVar(&f.every, "every", 0, "checkpoint every N points (0: at -start, 250, 500, 1000, 2000, 4000, ... and -points)")
	fs.StringVar(&f.checkpoints, "checkpoints", "", "comma-separated checkpoint sizes (overrides -every)")
	fs.Float64Var(&f.reorth, "reorth", 0, "re-orthogonalise when the estimated drift exceeds this (0: never)")
	fs.IntVar(&f.nystrom, "nystrom", 0, "instead of KPCA: grow an incremental Nystrom approximation of the -points x -points kernel matrix with landmarks -start..L (the first rows) and report its relative Frobenius, spectral and trace-norm errors")
	fs.StringVar(&f.out, "out", "", "write the scores of every point on the top -components components (all when 0) to this CSV file")
	fs.StringVar(&f.model, "model", "", "save the kernel PCA (top -components components, with the input scaling) to this file, for zonal kpca transform")
	fs.BoolVar(&f.noBatch, "no-batch", false, "skip the batch eigendecomposition at checkpoints (batch_rel_diff_eigs and batch_seconds are then null)")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	var err error
	if f.memory, err = parseBytes(memory); err != nil {
		return f, usageError{err}
	}
	if _, err := checkKernel(f.kernel, true); err != nil {
		return f, err
	}
	if f.checkpoints != "" {
		for _, s := range strings.Split(f.checkpoints, ",") {
			if v, err := strconv.Atoi(strings.TrimSpace(s)); err != nil || v < 1 || v > maxCount {
				return f, usagef("-checkpoints: %q is not a size", s)
			}
		}
	}
	if f.nystrom > 0 && (f.out != "" || f.model != "") {
		return f, usagef("-out and -model apply to kernel PCA, not to -nystrom")
	}
	var data [][2]string
	if f.data != "" && f.data != "digits" {
		data = append(data, [2]string{"data", f.data})
	}
	return f, firstError(
		f.format.checkInputs(data...),
		positiveFloat("scale", f.scale),
		nonNegativeFloat("reorth", f.reorth),
		countAtLeast("points", f.points, 0),
		countAtLeast("start", f.start, 1),
		countAtLeast("components", f.components, 0),
		countAtLeast("every", f.every, 0),
		countAtLeast("nystrom", f.nystrom, 0),
	)
}

// runKPCA reads the points, then fits batch kernel PCA, grows it
// incrementally with checkpoints, or measures incremental Nystrom errors,
// printing the results as they come.
func runKPCA(ctx context.Context, e *env, f kpcaConfig) error {
	stdout, stderr := e.stdout, e.stderr
	if err := firstError(checkOutputPath("out", f.out), checkOutputPath("model", f.model)); err != nil {
		return err
	}
	b, err := backend.FromEnv()
	if err != nil {
		return err
	}
	x, name, err := loadKPCAData(e, f)
	if err != nil {
		return err
	}
	n, d := x.Dims()
	if f.points == 0 {
		f.points = n
	}
	if f.points > n {
		return fmt.Errorf("-points %d: the data have %d rows", f.points, n)
	}
	if f.start > f.points {
		return fmt.Errorf("-start %d > -points %d", f.start, f.points)
	}
	if err := checkMemory(fmt.Sprintf("-points %d (the %d x %d kernel matrix and its eigendecomposition)", f.points, f.points, f.points),
		budget.Floats(3, f.points, f.points), f.memory); err != nil {
		return err
	}
	x = mat.DenseCopyOf(x.Slice(0, f.points, 0, d))
	st, err := estimator.InputScaler(x, f.scale, f.standardize)
	if err != nil {
		return err
	}
	if x, err = estimator.Scaled(st, x); err != nil {
		return err
	}
	if err := checkMagnitude(name, x); err != nil {
		return err
	}
	sigmaNote := ""
	kk, _ := lookupKernel(f.kernel.Name)
	if kk.bandwidth {
		sigmaNote = " (sigma: given)"
	}
	if kk.bandwidth && f.kernel.Sigma == 0 {
		f.kernel.Sigma = medianDistance(x, 2000, f.seed)
		sigmaNote = " (sigma: median pairwise distance)"
		if _, err := checkKernel(f.kernel, false); err != nil {
			return fmt.Errorf("cannot choose sigma: the median distance between points is %g; give -sigma", f.kernel.Sigma)
		}
	}
	k, err := newKernel(f.kernel)
	if err != nil {
		return err
	}
	if !f.json {
		fmt.Fprintf(stdout, "data %s: %d points x %d features; kernel %s%s; backend %s; mean adjustment %v\n",
			name, f.points, d, k, sigmaNote, b.Name(), f.meanAdjust)
	}
	bar := newProgressBar(stderr)
	defer bar.done()
	if f.nystrom > 0 {
		return runNystromErrors(ctx, f, kpca.Options{Backend: b, Progress: bar.report}, k, x, stdout)
	}
	opts := kpca.Options{Backend: b, Progress: bar.report, MeanAdjust: f.meanAdjust, Components: f.components, ReorthThreshold: f.reorth, Seed: f.seed}
	if !f.incremental {
		t0 := time.Now()
		m, err := kpca.Fit(ctx, k, x, opts)
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds()
		if err := writeKPCAOutputs(e, f, st, x, m); err != nil {
			return err
		}
		ratio := m.ExplainedVarianceRatio()
		if f.json {
			return json.NewEncoder(stdout).Encode(map[string]any{"points": f.points, "mean_adjust": f.meanAdjust,
				"batch_seconds": secs, "eigenvalues": m.Eigenvalues(), "explained_variance_ratio": ratio})
		}
		fmt.Fprintf(stdout, "batch kernel PCA of %d points: %.3f s; %d components\n", f.points, secs, m.Dim())
		cum := 0.0
		for j := 0; j < min(10, len(ratio)); j++ {
			cum += ratio[j]
			fmt.Fprintf(stdout, "  component %2d: eigenvalue %.6g, explained variance ratio %.4f (cumulative %.4f)\n", j+1, m.Eigenvalues()[j], ratio[j], cum)
		}
		return nil
	}
	cfg := growConfig{kernel: k, x: x, opts: opts, start: f.start, points: f.points, every: f.every, batch: !f.noBatch}
	if f.out != "" || f.model != "" {
		cfg.done = func(inc *kpca.Incremental) error {
			m, err := inc.Model(f.components)
			if err != nil {
				return err
			}
			return writeKPCAOutputs(e, f, st, x, m)
		}
	}
	if f.checkpoints != "" {
		for _, s := range strings.Split(f.checkpoints, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || v < f.start || v > f.points {
				return usageError{fmt.Errorf("-checkpoints: %q is not a size in [%d, %d]", s, f.start, f.points)}
			}
			cfg.checkpoints = append(cfg.checkpoints, v)
		}
	} else if f.every == 0 {
		cfg.checkpoints = []int{f.start}
		for c := 250; c < f.points; c *= 2 {
			if c > f.start {
				cfg.checkpoints = append(cfg.checkpoints, c)
			}
		}
	}
	if !f.json {
		fmt.Fprintf(stdout, "%7s %11s %11s %11s %12s %12s %10s %10s %10s %7s\n", "points", "rel_recon", "orth", "eig_diff", "update_s", "update_cpu", "total_s", "batch_s", "batch_cpu", "reorths")
	}
	enc := json.NewEncoder(stdout)
	return grow(ctx, cfg, func(c checkpoint) error {
		bar.done() // clear the progress line before a result line
		if f.json {
			obj := map[string]any{"points": c.points, "mean_adjust": c.meanAdjust, "rel_recon": c.relRecon, "orth": c.orth,
				"batch_rel_diff_eigs": nanNull(c.batchRelDiffEigs), "update_seconds": c.updateSeconds,
				"total_seconds": c.totalSeconds, "batch_seconds": nanNull(c.batchSeconds),
				"update_cpu_seconds": c.updateCPUSeconds, "batch_cpu_seconds": nanNull(c.batchCPUSeconds), "reorths": c.reorths,
				"truncation_bound": c.truncBound}
			return enc.Encode(obj)
		}
		_, err := fmt.Fprintf(stdout, "%7d %11.3g %11.3g %11.3g %12.6f %12.6f %10.3f %10.4f %10.4f %7d\n", c.points, c.relRecon, c.orth,
			c.batchRelDiffEigs, c.updateSeconds, c.updateCPUSeconds, c.totalSeconds, c.batchSeconds, c.batchCPUSeconds, c.reorths)
		return err
	})
}

func nanNull(v float64) any {
	if math.IsNaN(v) {
		return nil
	}
	return v
}

func runNystromErrors(ctx context.Context, f kpcaConfig, opts kpca.Options, k kernels.Kernel, x *mat.Dense, stdout io.Writer) error {
	n, _ := x.Dims()
	if f.nystrom > n {
		return fmt.Errorf("-nystrom %d > -points %d", f.nystrom, n)
	}
	every := f.every
	if every == 0 {
		every = 10
	}
	if !f.json {
		fmt.Fprintf(stdout, "%9s %9s %13s %13s %13s\n", "landmarks", "features", "rel_frob", "rel_spectral", "rel_trace")
	}
	errs, err := nystromErrors(ctx, k, x, f.start, f.nystrom, every, opts)
	enc := json.NewEncoder(stdout)
	for _, e := range errs {
		if f.json {
			if err := enc.Encode(e); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%9d %9d %13.4g %13.4g %13.4g\n", e.Landmarks, e.Features, e.Frobenius, e.Spectral, e.Trace)
	}
	return err
}

func loadKPCAData(e *env, f kpcaConfig) (*mat.Dense, string, error) {
	if f.data == "" || f.data == "digits" {
		d, err := dataset.Digits()
		if err != nil {
			return nil, "", err
		}
		return d.X, "digits (embedded)", nil
	}
	opts := dataset.Options{}
	if f.points > 0 {
		opts.MaxRows = f.points
	}
	d, err := readData(e, f.format, "data", f.data, opts)
	if err != nil {
		return nil, "", err
	}
	return d.X, f.data, nil
}

// medianDistance returns the median Euclidean distance over all pairs of
// rows of x, or over all pairs of a seeded sample of maxRows rows when x has
// more.
func medianDistance(x *mat.Dense, maxRows int, seed uint64) float64 {
	n, d := x.Dims()
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	if n > maxRows {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		rng.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		rows = rows[:maxRows]
	}
	dist := make([]float64, 0, len(rows)*(len(rows)-1)/2)
	for a := 0; a < len(rows); a++ {
		xa := x.RawRowView(rows[a])
		for bb := a + 1; bb < len(rows); bb++ {
			xb := x.RawRowView(rows[bb])
			s := 0.0
			for j := 0; j < d; j++ {
				t := xa[j] - xb[j]
				s += t * t
			}
			dist = append(dist, s)
		}
	}
	if len(dist) == 0 {
		return 0
	}
	sort.Float64s(dist)
	h := len(dist) / 2
	if len(dist)%2 == 0 {
		return 0.5 * (math.Sqrt(dist[h-1]) + math.Sqrt(dist[h]))
	}
	return math.Sqrt(dist[h])
}

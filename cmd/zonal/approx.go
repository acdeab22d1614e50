package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

const approxSynopsis = "-data FILE|- [-format csv|libsvm] [-standardize] [-kernel gaussian|laplacian|polynomial] [-sigma S | -gamma G] [-methods m1,m2,...] [-features D1,D2,...] [-n 2000] [-lambda l1,l2,...] [-seed 1] [-memory 2G] [-json]"

func init() {
	addCommand(command{name: "approx", summary: "compare kernel approximations (Gegenbauer, Fourier, Nystrom, sketches) on a data sample", run: approxCommand})
}

// approxConfig is a validated `zonal approx` command line.
type approxConfig struct {
	data        dataFlags
	path        string
	standardize bool
	json        bool
	kernel      kernelParams // Sigma, Gamma 0: chosen from the data
	methods     []string
	dims        []int
	lambdas     []float64
	n           int
	seed        uint64
	trunc       estimator.GegenbauerTruncation
	memory      int64
}

// approxResult is one line of `zonal approx -json`.
type approxResult struct {
	Method    string  `json:"method"`
	Kernel    string  `json:"kernel"`
	Features  int     `json:"features"`
	N         int     `json:"n"`
	D         int     `json:"d"`
	RelFro    float64 `json:"rel_fro"`
	RelSpec   float64 `json:"rel_spec"`
	EpsLambda float64 `json:"eps_lambda"`
	Lambda    float64 `json:"lambda"`
	Seconds   float64 `json:"seconds"`
}

// approxRow is one (method, features) measurement: every lambda's eps.
type approxRow struct {
	method       string
	features     int
	relFro, rel2 float64
	eps          []float64
	seconds      float64
	note         string // the Gegenbauer map's truncation, "" for others
	kernel       string
	n, d         int
	lambdas      []float64
}

// approxReport prints rows as runApprox measures them (a run takes minutes).
type approxReport struct {
	w    io.Writer
	json bool
}

func approxCommand(ctx context.Context, e *env, args []string) error {
	cfg, err := parseApprox(e.stderr, args)
	if err != nil {
		return err
	}
	return runApprox(ctx, e, cfg, &approxReport{w: e.stdout, json: cfg.json})
}

// parseApprox parses and validates the flags of `zonal approx`.
func parseApprox(stderr io.Writer, args []string) (approxConfig, error) {
	var c approxConfig
	var methods, features, lambdas, memory string
	fs := newFlagSet("approx", approxSynopsis, stderr)
	fs.StringVar(&c.path, "data", "", "data file: LIBSVM or CSV, gzip allowed (detected from the content); - for standard input")
	c.data.register(fs)
	fs.BoolVar(&c.standardize, "standardize", false, "standardize each feature (mean 0, variance 1; fitted on the whole file)")
	fs.StringVar(&c.kernel.Name, "kernel", "gaussian", kernelHelp())
	fs.Float64Var(&c.kernel.Sigma, "sigma", 0, "Gaussian/Laplacian bandwidth sigma (0 with -gamma 0: gamma = 1/(d var(X)), scikit-learn's 'scale')")
	fs.Float64Var(&c.kernel.Gamma, "gamma", 0, "Gaussian: gamma = 1/(2 sigma^2); polynomial: the scale of <x,y> (0: 1/d)")
	fs.IntVar(&c.kernel.Degree, "degree", 3, "polynomial degree")
	fs.Float64Var(&c.kernel.Coef0, "coef0", 1, "polynomial offset (>= 0)")
	fs.StringVar(&methods, "methods", "gegenbauer,fourier,nystrom,rls-nystrom", "comma-separated feature maps; available: "+strings.Join(estimator.Maps(), ", "))
	fs.StringVar(&features, "features", "256,1024,4096", "comma-separated feature counts D")
	fs.IntVar(&c.n, "n", 2000, "number of rows sampled (uniformly, by -seed); 0 or more than the file: all rows")
	fs.StringVar(&lambdas, "lambda", "1e-3", "comma-separated ridge parameters for eps_lambda (the first one is also rls-nystrom's lambda)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (sample and maps)")
	fs.StringVar(&memory, "memory", "", "memory budget, e.g. 8G (default 2G): the n x n kernel matrix and each n x D feature matrix must fit")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per (method, features, lambda)")
	fs.IntVar(&c.trunc.Q, "q", 0, "gegenbauer: GZK degree q (0: automatic, see -tol)")
	fs.IntVar(&c.trunc.S, "s", 0, "gegenbauer: GZK order s (0: automatic, see -tol)")
	fs.Float64Var(&c.trunc.Tol, "tol", 0, "gegenbauer: > 0 chooses (q, s) by the paper's rule, the smallest truncation whose error bound at the data radius is below tol; 0 (default): the (q, s) of smallest predicted error for each D (bias and variance on a 200-row pilot)")
	fs.Float64Var(&c.trunc.Radius, "radius", 0, "gegenbauer: data radius for the truncation (0: the largest row norm of the sample)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if c.path == "" {
		return c, usagef("-data is required")
	}
	var err error
	if c.memory, err = parseBytes(memory); err != nil {
		return c, usageError{err}
	}
	if c.methods = splitList(methods); len(c.methods) == 0 {
		return c, usagef("-methods is empty")
	}
	for _, m := range c.methods {
		if _, err := estimator.ParseMap(m); err != nil {
			return c, usagef("unknown method %q; available: %s", m, strings.Join(estimator.Maps(), ", "))
		}
	}
	for _, f := range splitList(features) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > maxCount {
			return c, usagef("bad -features entry %q: want integers in [1, %d]", f, maxCount)
		}
		c.dims = append(c.dims, v)
	}
	if len(c.dims) == 0 {
		return c, usagef("-features is empty")
	}
	for _, l := range splitList(lambdas) {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return c, usagef("bad -lambda entry %q: want positive numbers", l)
		}
		c.lambdas = append(c.lambdas, v)
	}
	if len(c.lambdas) == 0 {
		return c, usagef("-lambda is empty")
	}
	kk, err := checkKernel(c.kernel, true)
	if err != nil {
		return c, err
	}
	if kk.bandwidth && c.kernel.Sigma > 0 && c.kernel.Gamma != 0 {
		return c, usagef("give -sigma or -gamma, not both")
	}
	return c, firstError(
		c.data.checkInputs([2]string{"data", c.path}),
		nonNegativeFloat("gamma", c.kernel.Gamma),
		countAtLeast("n", c.n, 0),
		countAtLeast("q", c.trunc.Q, 0),
		countAtLeast("s", c.trunc.S, 0),
		nonNegativeFloat("tol", c.trunc.Tol),
		nonNegativeFloat("radius", c.trunc.Radius),
	)
}

// runApprox samples the rows, builds every (method, D) map and measures
// its kernel approximation against the exact kernel matrix, handing each
// row to rep.
func runApprox(ctx context.Context, e *env, c approxConfig, rep *approxReport) error {
	ds, err := readData(e, c.data, "data", c.path, dataset.Options{})
	if err != nil {
		return err
	}
	x := ds.X
	rows, d := x.Dims()
	n := c.n
	if n == 0 || n > rows {
		n = rows
	}
	if err := checkMemory(fmt.Sprintf("-n %d (the %d x %d kernel matrix and its eigendecomposition)", n, n, n), budget.Floats(3, n, n), c.memory); err != nil {
		return err
	}
	for _, D := range c.dims {
		Dm := min(D, n)
		if err := checkMemory(fmt.Sprintf("-features %d (the %d x %d feature matrix)", D, n, D), budget.Floats(n+Dm, D), c.memory); err != nil {
			return err
		}
	}
	// The standardizer is fitted on the whole file, then applied to the sample.
	st, err := estimator.InputScaler(x, 1, c.standardize)
	if err != nil {
		return err
	}
	idx, err := dataset.Subsample(rows, n, c.seed)
	if err != nil {
		return err
	}
	xs := mat.NewDense(n, d, nil)
	for i, r := range idx {
		xs.SetRow(i, x.RawRowView(r))
	}
	if xs, err = estimator.Scaled(st, xs); err != nil {
		return err
	}
	if err := checkMagnitude(c.path, xs); err != nil {
		return err
	}
	kp, err := approxKernelParams(c.kernel, xs)
	if err != nil {
		return err
	}
	k, err := newKernel(kp)
	if err != nil {
		return err
	}
	b, err := backend.FromEnv()
	if err != nil {
		return err
	}
	spec := estimator.MapSpec{Kernel: k, Lambda: c.lambdas[0], Seed: c.seed, Backend: b, Gegenbauer: c.trunc}
	kmat, err := kernels.Matrix(ctx, k, xs, xs, kernels.Options{Backend: b, MemoryBudget: c.memory})
	if err != nil {
		return err
	}
	ev, err := kernels.NewEvaluator(ctx, kmat, kernels.Options{Backend: b, MemoryBudget: c.memory})
	if err != nil {
		return err
	}
	rep.begin(c.path, n, rows, d, k.String(), b.Name(), c.lambdas)
	for _, m := range c.methods {
		for _, dd := range c.dims {
			if err := ctx.Err(); err != nil {
				return err
			}
			spec.Map, spec.Features = estimator.Map(m), dd
			t0 := time.Now()
			fm, err := estimator.BuildMap(ctx, spec, xs)
			if err != nil {
				return err
			}
			z := mat.NewDense(n, fm.Dim(), nil)
			if err := fm.Transform(z, xs); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			secs := time.Since(t0).Seconds()
			meas, err := ev.Measure(ctx, z, c.lambdas)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			row := approxRow{method: m, features: fm.Dim(), relFro: meas.RelFro, rel2: meas.RelSpec, eps: meas.Eps, seconds: secs,
				kernel: k.String(), n: n, d: d, lambdas: c.lambdas}
			if st, ok := fm.(fmt.Stringer); ok && strings.HasPrefix(m, "gegenbauer") {
				row.note = st.String()
			}
			if err := rep.row(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// approxKernelParams fills in a zero -sigma or -gamma from the sample: for
// gaussian and laplacian scikit-learn's gamma = 'scale' (1/(d var(X))), for
// polynomial gamma = 1/d; a gaussian -gamma gives sigma = 1/sqrt(2 gamma),
// a laplacian one sigma = 1/gamma.
func approxKernelParams(p kernelParams, xs *mat.Dense) (kernelParams, error) {
	_, d := xs.Dims()
	kk, err := lookupKernel(p.Name)
	if err != nil {
		return p, err
	}
	if !kk.bandwidth {
		if p.Gamma == 0 {
			p.Gamma = 1 / float64(d)
		}
		return p, nil
	}
	g := p.Gamma
	if p.Sigma == 0 && g == 0 {
		v := sampleVariance(xs)
		if !(v > 0) || math.IsInf(v, 0) {
			return p, errors.New("the sample has zero (or infinite) variance: give -sigma")
		}
		g = 1 / (float64(d) * v)
	}
	if p.Sigma == 0 {
		if p.Name == "laplacian" {
			p.Sigma = 1 / g
		} else {
			p.Sigma = 1 / math.Sqrt(2*g)
		}
		if _, err := checkKernel(p, false); err != nil {
			return p, fmt.Errorf("sigma %g from the data is unusable: give -sigma", p.Sigma)
		}
	}
	return p, nil
}

// begin prints the text table's header (nothing for -json).
func (r *approxReport) begin(name string, n, of, d int, kernel, bck string, lambdas []float64) {
	if r.json {
		return
	}
	fmt.Fprintf(r.w, "# %s: n=%d of %d rows, d=%d, kernel %s, backend %s\n", name, n, of, d, kernel, bck)
	hdr := fmt.Sprintf("%-22s %8s %10s %10s", "method", "features", "rel_fro", "rel_spec")
	for _, l := range lambdas {
		hdr += fmt.Sprintf(" %10s", fmt.Sprintf("eps(%g)", l))
	}
	fmt.Fprintln(r.w, hdr+fmt.Sprintf(" %8s", "seconds"))
}

// row prints one measurement.
func (r *approxReport) row(a approxRow) error {
	if r.json {
		enc := json.NewEncoder(r.w)
		for i, l := range a.lambdas {
			if err := enc.Encode(approxResult{Method: a.method, Kernel: a.kernel, Features: a.features, N: a.n, D: a.d,
				RelFro: a.relFro, RelSpec: a.rel2, EpsLambda: a.eps[i], Lambda: l, Seconds: a.seconds}); err != nil {
				return err
			}
		}
		return nil
	}
	line := fmt.Sprintf("%-22s %8d %10.4g %10.4g", a.method, a.features, a.relFro, a.rel2)
	for _, e := range a.eps {
		line += fmt.Sprintf(" %10.4g", e)
	}
	if _, err := fmt.Fprintln(r.w, line+fmt.Sprintf(" %8.3f", a.seconds)); err != nil {
		return err
	}
	if a.note != "" {
		fmt.Fprintf(r.w, "#   %s\n", a.note)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// sampleVariance is the variance of all entries of x (numpy's X.var()).
func sampleVariance(x *mat.Dense) float64 {
	r, c := x.Dims()
	sum, sq := 0.0, 0.0
	for i := 0; i < r; i++ {
		for _, v := range x.RawRowView(i) {
			sum += v
		}
	}
	mean := sum / float64(r*c)
	for i := 0; i < r; i++ {
		for _, v := range x.RawRowView(i) {
			sq += (v - mean) * (v - mean)
		}
	}
	return sq / float64(r*c)
}

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
	"github.com/zonal-ml/zonal/kernels"
)

const approxSynopsis = "-data FILE [-standardize] [-kernel gaussian|laplacian|polynomial] [-sigma S | -gamma G] [-methods m1,m2,...] [-features D1,D2,...] [-n 2000] [-lambda l1,l2,...] [-seed 1] [-json]"

func init() {
	addCommand(command{name: "approx", summary: "compare kernel approximations (Gegenbauer, Fourier, Nystrom, sketches) on a data sample", run: runApprox})
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

func runApprox(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("approx", approxSynopsis, stderr)
	var (
		data, kernelName, methods, features, lambdas string
		standardize, asJSON                          bool
		sigma, gamma, coef0, tol, radius             float64
		degree, n, q, s                              int
		seed                                         uint64
	)
	fs.StringVar(&data, "data", "", "data file: LIBSVM or CSV, gzip allowed (by extension)")
	fs.BoolVar(&standardize, "standardize", false, "standardize each feature (mean 0, variance 1; fitted on the whole file)")
	fs.StringVar(&kernelName, "kernel", "gaussian", "kernel: gaussian exp(-|x-y|^2/(2 sigma^2)), laplacian exp(-|x-y|_1/sigma), polynomial (gamma <x,y> + coef0)^degree")
	fs.Float64Var(&sigma, "sigma", 0, "Gaussian/Laplacian bandwidth sigma (0 with -gamma 0: gamma = 1/(d var(X)), scikit-learn's 'scale')")
	fs.Float64Var(&gamma, "gamma", 0, "Gaussian: gamma = 1/(2 sigma^2); polynomial: the scale of <x,y> (0: 1/d)")
	fs.IntVar(&degree, "degree", 3, "polynomial degree")
	fs.Float64Var(&coef0, "coef0", 1, "polynomial offset (>= 0)")
	fs.StringVar(&methods, "methods", "gegenbauer,fourier,nystrom,rls-nystrom", "comma-separated feature maps; available: "+mapNames())
	fs.StringVar(&features, "features", "256,1024,4096", "comma-separated feature counts D")
	fs.IntVar(&n, "n", 2000, "number of rows sampled (uniformly, by -seed); 0 or more than the file: all rows")
	fs.StringVar(&lambdas, "lambda", "1e-3", "comma-separated ridge parameters for eps_lambda (the first one is also rls-nystrom's lambda)")
	fs.Uint64Var(&seed, "seed", 1, "random seed (sample and maps)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per (method, features, lambda)")
	fs.IntVar(&q, "q", 0, "gegenbauer: GZK degree q (0: automatic, see -tol)")
	fs.IntVar(&s, "s", 0, "gegenbauer: GZK order s (0: automatic, see -tol)")
	fs.Float64Var(&tol, "tol", 0, "gegenbauer: > 0 chooses (q, s) by the paper's rule, the smallest truncation whose error bound at the data radius is below tol; 0 (default): the (q, s) of smallest predicted error for each D (bias and variance on a 200-row pilot)")
	fs.Float64Var(&radius, "radius", 0, "gegenbauer: data radius for the truncation (0: the largest row norm of the sample)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if data == "" {
		return usageError{errors.New("-data is required")}
	}
	meths := splitList(methods)
	if len(meths) == 0 {
		return usageError{errors.New("-methods is empty")}
	}
	for _, m := range meths {
		if _, ok := mapBuilders[m]; !ok {
			return usageError{fmt.Errorf("unknown method %q; available: %s", m, mapNames())}
		}
	}
	var dims []int
	for _, f := range splitList(features) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return usageError{fmt.Errorf("bad -features entry %q: want positive integers", f)}
		}
		dims = append(dims, v)
	}
	if len(dims) == 0 {
		return usageError{errors.New("-features is empty")}
	}
	var lams []float64
	for _, l := range splitList(lambdas) {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usageError{fmt.Errorf("bad -lambda entry %q: want positive numbers", l)}
		}
		lams = append(lams, v)
	}
	if len(lams) == 0 {
		return usageError{errors.New("-lambda is empty")}
	}
	if n < 0 || q < 0 || s < 0 || tol < 0 || radius < 0 || sigma < 0 || gamma < 0 || coef0 < 0 {
		return usageError{errors.New("-n, -q, -s, -tol, -radius, -sigma, -gamma and -coef0 must not be negative")}
	}
	if sigma > 0 && gamma > 0 && kernelName != "polynomial" {
		return usageError{errors.New("give -sigma or -gamma, not both")}
	}

	ds, err := dataset.ReadFile(data, dataset.Options{})
	if err != nil {
		return err
	}
	x := ds.X
	if x == nil {
		return fmt.Errorf("%s: no dense feature matrix", data)
	}
	rows, d := x.Dims()
	if rows == 0 || d == 0 {
		return fmt.Errorf("%s: no data", data)
	}
	var std *dataset.Standardizer
	if standardize {
		if std, err = dataset.FitStandardizer(x); err != nil {
			return err
		}
	}
	if n == 0 || n > rows {
		n = rows
	}
	idx, err := dataset.Subsample(rows, n, seed)
	if err != nil {
		return err
	}
	xs := mat.NewDense(n, d, nil)
	for i, r := range idx {
		xs.SetRow(i, x.RawRowView(r))
	}
	if std != nil {
		if err := std.Apply(xs); err != nil {
			return err
		}
	}

	b := backend.Default()
	spec := mapSpec{KernelID: kernelName, Lambda: lams[0], Seed: seed, Backend: b, Degree: degree, Coef0: coef0}
	switch kernelName {
	case "gaussian", "laplacian":
		if sigma == 0 && gamma > 0 {
			if kernelName == "gaussian" {
				sigma = 1 / math.Sqrt(2*gamma)
			} else {
				sigma = 1 / gamma
			}
		}
		if sigma == 0 { // scikit-learn's gamma = 'scale': 1/(d var(X))
			v := sampleVariance(xs)
			if !(v > 0) {
				return errors.New("the sample has zero variance: give -sigma")
			}
			g := 1 / (float64(d) * v)
			sigma = 1 / math.Sqrt(2*g)
			if kernelName == "laplacian" {
				sigma = 1 / g
			}
		}
		spec.Sigma = sigma
		if kernelName == "gaussian" {
			spec.Kernel, err = kernels.NewGaussian(sigma)
		} else {
			spec.Kernel, err = kernels.NewLaplacian(sigma)
		}
	case "polynomial":
		if gamma == 0 {
			gamma = 1 / float64(d)
		}
		spec.Gamma = gamma
		spec.Kernel, err = kernels.NewPolynomial(degree, gamma, coef0)
	default:
		return usageError{fmt.Errorf("unknown -kernel %q (gaussian, laplacian, polynomial)", kernelName)}
	}
	if err != nil {
		return err
	}
	gegenbauerSettings.Q, gegenbauerSettings.S, gegenbauerSettings.Tol, gegenbauerSettings.Radius = q, s, tol, radius

	ctx := context.Background()
	kmat, err := kernels.Matrix(ctx, spec.Kernel, xs, xs, kernels.Options{Backend: b})
	if err != nil {
		return err
	}
	ev, err := kernels.NewEvaluator(ctx, kmat, kernels.Options{Backend: b})
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(stdout, "# %s: n=%d of %d rows, d=%d, kernel %s, backend %s\n", data, n, rows, d, spec.Kernel, b.Name())
		hdr := fmt.Sprintf("%-22s %8s %10s %10s", "method", "features", "rel_fro", "rel_spec")
		for _, l := range lams {
			hdr += fmt.Sprintf(" %10s", fmt.Sprintf("eps(%g)", l))
		}
		fmt.Fprintln(stdout, hdr+fmt.Sprintf(" %8s", "seconds"))
	}
	enc := json.NewEncoder(stdout)
	for _, m := range meths {
		for _, dd := range dims {
			spec.Method, spec.Features = m, dd
			t0 := time.Now()
			fm, err := buildMap(ctx, spec, xs)
			if err != nil {
				return err
			}
			z := mat.NewDense(n, fm.Dim(), nil)
			if err := fm.Transform(z, xs); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			secs := time.Since(t0).Seconds()
			meas, err := ev.Measure(ctx, z, lams)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if asJSON {
				for i, l := range lams {
					if err := enc.Encode(approxResult{Method: m, Kernel: spec.Kernel.String(), Features: fm.Dim(), N: n, D: d,
						RelFro: meas.RelFro, RelSpec: meas.RelSpec, EpsLambda: meas.Eps[i], Lambda: l, Seconds: secs}); err != nil {
						return err
					}
				}
				continue
			}
			row := fmt.Sprintf("%-22s %8d %10.4g %10.4g", m, fm.Dim(), meas.RelFro, meas.RelSpec)
			for _, e := range meas.Eps {
				row += fmt.Sprintf(" %10.4g", e)
			}
			fmt.Fprintln(stdout, row+fmt.Sprintf(" %8.3f", secs))
			if st, ok := fm.(fmt.Stringer); ok && strings.HasPrefix(m, "gegenbauer") {
				fmt.Fprintf(stdout, "#   %s\n", st)
			}
		}
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

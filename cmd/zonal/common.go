package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// kernelParams are the kernel flags of a command.
type kernelParams struct {
	Name         string  // a kernelKinds name
	Sigma        float64 // gaussian, laplacian bandwidth
	Gamma, Coef0 float64 // polynomial (gamma <x,y> + coef0)^degree
	Degree       int
}

// kernelKind is one entry of the kernel table shared by every command.
type kernelKind struct {
	name, formula string
	bandwidth     bool // takes -sigma
	build         func(p kernelParams) (kernels.Kernel, error)
}

// kernelKinds is the one table of -kernel names.
var kernelKinds = []kernelKind{
	{"gaussian", "exp(-|x-y|^2/(2 sigma^2))", true, func(p kernelParams) (kernels.Kernel, error) { return kernels.NewGaussian(p.Sigma) }},
	{"laplacian", "exp(-|x-y|_1/sigma)", true, func(p kernelParams) (kernels.Kernel, error) { return kernels.NewLaplacian(p.Sigma) }},
	{"polynomial", "(gamma <x,y> + coef0)^degree", false, func(p kernelParams) (kernels.Kernel, error) {
		return kernels.NewPolynomial(p.Degree, p.Gamma, p.Coef0)
	}},
}

// kernelHelp is the -kernel flag's usage text.
func kernelHelp() string {
	parts := make([]string, len(kernelKinds))
	for i, k := range kernelKinds {
		parts[i] = k.name + " " + k.formula
	}
	return "kernel: " + strings.Join(parts, ", ")
}

func kernelNames() string {
	names := make([]string, len(kernelKinds))
	for i, k := range kernelKinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// lookupKernel returns the table entry of -kernel name.
func lookupKernel(name string) (kernelKind, error) {
	for _, k := range kernelKinds {
		if k.name == name {
			return k, nil
		}
	}
	return kernelKind{}, usagef("unknown -kernel %q (%s)", name, kernelNames())
}

// maxDegree bounds -degree: (gamma <x,y> + coef0)^degree overflows float64
// for any useful data far below it.
const maxDegree = 64

// checkKernel validates the flags the kernel uses: a bandwidth whose
// square is a normal float64 (1e-154 < sigma < 1e154), or a polynomial
// degree in [1, 64], gamma > 0 and coef0 >= 0, all finite. auto allows 0
// for sigma and gamma (the command picks them from the data).
func checkKernel(p kernelParams, auto bool) (kernelKind, error) {
	k, err := lookupKernel(p.Name)
	if err != nil {
		return k, err
	}
	if k.bandwidth {
		if auto && p.Sigma == 0 {
			return k, nil
		}
		if err := positiveFloat("sigma", p.Sigma); err != nil {
			return k, err
		}
		if s2 := p.Sigma * p.Sigma; s2 < 0x1p-1022 || math.IsInf(s2, 0) {
			return k, usagef("-sigma %g is absurd: sigma^2 is not a normal float64 (want 1e-154 < sigma < 1e154, near the data's scale)", p.Sigma)
		}
		return k, nil
	}
	if p.Degree < 1 || p.Degree > maxDegree {
		return k, usagef("-degree must be in [1, %d], got %d", maxDegree, p.Degree)
	}
	if !(auto && p.Gamma == 0) {
		if err := positiveFloat("gamma", p.Gamma); err != nil {
			return k, err
		}
	}
	return k, nonNegativeFloat("coef0", p.Coef0)
}

// newKernel builds the kernel of p (checked by checkKernel).
func newKernel(p kernelParams) (kernels.Kernel, error) {
	k, err := lookupKernel(p.Name)
	if err != nil {
		return nil, err
	}
	kk, err := k.build(p)
	if err != nil {
		return nil, usageError{err}
	}
	return kk, nil
}

// readData reads the data file given to flag -flagName ("-" for standard
// input) in the format of df, with opts for the rest. With opts.NoDense a
// LIBSVM file gives only Sparse (X nil).
func readData(e *env, df dataFlags, flagName, path string, opts dataset.Options) (*dataset.Data, error) {
	format, err := df.formatOf(flagName, path)
	if err != nil {
		return nil, err
	}
	opts.Format, opts.Header = format, df.header
	var r io.Reader = e.stdin
	name := "standard input"
	if path != "-" {
		name = path
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return nil, fmt.Errorf("-%s %s is a directory, not a data file", flagName, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var d *dataset.Data
	if format == "csv" {
		d, err = dataset.ReadCSV(r, opts)
	} else {
		d, err = dataset.ReadLIBSVM(r, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if d.X == nil && !opts.NoDense {
		return nil, fmt.Errorf("%s: no dense feature matrix", name)
	}
	releaseParserGarbage(d)
	return d, nil
}

// releaseParserGarbage hands the reader's buffers back to the OS when the
// data is large (the reader's blocks are as large as the data itself, and
// garbage once it returns): the fit that follows then starts from the data's
// own footprint instead of twice it. One forced collection, skipped below
// 64 MiB where it would cost more than it saves.
func releaseParserGarbage(d *dataset.Data) {
	var floats int64
	if d.X != nil {
		r, c := d.X.Dims()
		floats += int64(r) * int64(c)
	}
	if d.Sparse != nil {
		floats += 2 * int64(len(d.Sparse.Val)) // values and column indices
	}
	if floats*8 >= 64<<20 {
		debug.FreeOSMemory()
	}
}

// checkOutputPath checks, before any work, that path (given to
// -flagName) can be written: not a directory, in an existing directory
// where a file can be created. It creates and removes a probe file.
func checkOutputPath(flagName, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("-%s %s is a directory", flagName, path)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("-%s %s exists and is not a regular file", flagName, path)
		}
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.probe")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("-%s %s cannot be written: directory %s: %w", flagName, path, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeOutput writes b to path atomically: to a temporary file in the same
// directory (removed on failure, and by main if the process is
// interrupted), then renamed over path.
func writeOutput(e *env, path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	e.addTemp(tmp)
	defer e.dropTemp(tmp)
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// inputScaler returns the input transformation of -scale factor and
// -standardize as a dataset.Standardizer (x' = (x - Mean)/Scale), fitted on
// x when standardize is set, or nil when it is the identity. Standardizing
// factor*x gives the same as standardizing x, so factor does not matter then.
func inputScaler(x *mat.Dense, factor float64, standardize bool) (*dataset.Standardizer, error) {
	if standardize {
		return dataset.FitStandardizer(x)
	}
	if factor == 1 {
		return nil, nil
	}
	_, d := x.Dims()
	st := &dataset.Standardizer{Mean: make([]float64, d), Scale: make([]float64, d)}
	for j := range st.Scale {
		st.Scale[j] = 1 / factor
	}
	return st, nil
}

// scaled returns x transformed by st in a new matrix (x itself when st is nil).
func scaled(st *dataset.Standardizer, x *mat.Dense) (*mat.Dense, error) {
	if st == nil {
		return x, nil
	}
	r, c := x.Dims()
	out := mat.NewDense(r, c, nil)
	if err := st.ApplyTo(out, x); err != nil {
		return nil, err
	}
	return out, nil
}

// checkMemory refuses, as a usage error naming the flag, a size that would
// make an allocation of need bytes exceed the -memory budget limit.
func checkMemory(flagWhat string, need, limit int64) error {
	if err := budget.Check(flagWhat, need, limit); err != nil {
		return usageError{err}
	}
	return nil
}

// checkMagnitude refuses data whose squared row norms come within a factor
// 4 of overflowing float64: |x - y|^2 <= 2|x|^2 + 2|y|^2 would then overflow
// for some pair, and every kernel value built from it be Inf or NaN.
func checkMagnitude(what string, x *mat.Dense) error {
	r, _ := x.Dims()
	for i := 0; i < r; i++ {
		s, big := 0.0, 0.0
		for _, v := range x.RawRowView(i) {
			s += v * v
			big = max(big, math.Abs(v))
		}
		if !(s <= math.MaxFloat64/4) {
			return fmt.Errorf("%s: a row has features as large as %.3g: squared distances overflow float64, so every kernel value would be Inf or NaN; rescale the features (-scale or -standardize)", what, big)
		}
	}
	return nil
}

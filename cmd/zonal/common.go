package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// kernelParams are the kernel flags of a command.
type kernelParams struct {
	Name         string  // an estimator.KernelKind name
	Sigma        float64 // gaussian, laplacian bandwidth
	Gamma, Coef0 float64 // polynomial (gamma <x,y> + coef0)^degree
	Degree       int
}

// kernelKind is what a command needs to know of a -kernel name.
type kernelKind struct {
	kind      estimator.KernelKind
	bandwidth bool // takes -sigma
}

// kernelHelp is the -kernel flag's usage text.
func kernelHelp() string { return "kernel: " + strings.Join(estimator.KernelKinds(), ", ") }

// lookupKernel returns the kind of -kernel name.
func lookupKernel(name string) (kernelKind, error) {
	k, err := estimator.ParseKernelKind(name)
	if err != nil {
		return kernelKind{}, flagError(err)
	}
	return kernelKind{k, k.HasBandwidth()}, nil
}

// spec is p as the estimator's kernel parameters.
func (p kernelParams) spec() (estimator.KernelSpec, error) {
	k, err := lookupKernel(p.Name)
	return estimator.KernelSpec{Kind: k.kind, Sigma: p.Sigma, Gamma: p.Gamma, Coef0: p.Coef0, Degree: p.Degree}, err
}

// checkKernel validates the flags the kernel uses (estimator.KernelSpec's
// Check, as a usage error naming the flag); auto allows 0 for sigma and
// gamma (the command picks them from the data).
func checkKernel(p kernelParams, auto bool) (kernelKind, error) {
	k, err := lookupKernel(p.Name)
	if err != nil {
		return k, err
	}
	s, _ := p.spec()
	return k, flagError(s.Check(auto))
}

// newKernel builds the kernel of p (checked by checkKernel).
func newKernel(p kernelParams) (kernels.Kernel, error) {
	s, err := p.spec()
	if err != nil {
		return nil, err
	}
	kk, err := s.New()
	if err != nil {
		return nil, flagError(err)
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

// checkMemory refuses, as a usage error naming the flag, a size that would
// make an allocation of need bytes exceed the -memory budget limit.
func checkMemory(flagWhat string, need, limit int64) error {
	if err := budget.Check(flagWhat, need, limit); err != nil {
		return usageError{err}
	}
	return nil
}

// checkMagnitude refuses rows that would overflow every kernel value
// (estimator.CheckMagnitude), naming the data.
func checkMagnitude(what string, x mat.Matrix) error {
	if err := estimator.CheckMagnitude(x); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

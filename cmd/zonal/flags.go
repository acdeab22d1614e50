package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/zonal-ml/zonal/dataset"
)

// errHelp is returned when -h was asked for: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// usageError marks bad command-line syntax (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagePrinters holds, for each FlagSet made by newFlagSet, the function that
// prints its full usage; it is printed only when -h is asked for, so a wrong
// flag costs one line, not a page.
var (
	usageMu       sync.Mutex
	usagePrinters = map[*flag.FlagSet]func(){}
)

// newFlagSet returns a FlagSet whose parse errors are reported by parseFlags
// (one line) and whose -h prints the synopsis and every flag with its default
// to stderr.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("zonal "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	usageMu.Lock()
	usagePrinters[fs] = func() {
		fs.SetOutput(stderr)
		defer fs.SetOutput(io.Discard)
		io.WriteString(stderr, "Usage: zonal "+name+" "+synopsis+"\n\nFlags:\n")
		fs.PrintDefaults()
	}
	usageMu.Unlock()
	return fs
}

// parseFlags parses args with fs, mapping -h to errHelp (after printing the
// usage) and syntax errors to a one-line usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		usageMu.Lock()
		p := usagePrinters[fs]
		usageMu.Unlock()
		if p != nil {
			p()
		}
		return errHelp
	}
	if err != nil {
		return usageError{fmt.Errorf("%w (run `%s -h` for the flags)", err, fs.Name())}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (run `%s -h` for the flags)", fs.Arg(0), fs.Name())}
	}
	return nil
}

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Flag checks: each returns a usageError naming the flag and its value, so
// that 0, negative, NaN, Inf and absurd values are refused before any work
// instead of being replaced by a default.

func positiveFloat(flagName string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return usagef("-%s must be positive and finite, got %g", flagName, v)
	}
	return nil
}

func nonNegativeFloat(flagName string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return usagef("-%s must be >= 0 and finite, got %g", flagName, v)
	}
	return nil
}

// maxCount is the largest count flag accepted (-features, -centers, ...):
// far above anything that fits in memory, so only typos and overflow hit it.
const maxCount = 1 << 31

func countAtLeast(flagName string, v, lo int) error {
	if v < lo || v > maxCount {
		return usagef("-%s must be in [%d, %d], got %d", flagName, lo, maxCount, v)
	}
	return nil
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// dataFlags are the flags that say how to read data files, shared by
// every command that reads some.
type dataFlags struct {
	format string // "", "csv" or "libsvm"
	header string // "auto", "yes", "no"
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.format, "format", "", "data format: csv or libsvm (default: from the file name, .csv, .libsvm or .svm, optionally .gz; required for standard input, given as -)")
	fs.StringVar(&d.header, "header", "auto", "CSV header row: auto (a first row of numbers is data), yes or no")
}

func (d *dataFlags) check() error {
	switch d.format {
	case "", "csv", "libsvm":
	default:
		return usagef("-format %q: want csv or libsvm", d.format)
	}
	switch d.header {
	case "auto", "yes", "no":
	default:
		return usagef("-header %q: want auto, yes or no", d.header)
	}
	return nil
}

// formatOf returns the format of the data flag -flagName = path: -format,
// else from the name; a name that does not tell is a usage error.
func (d *dataFlags) formatOf(flagName, path string) (string, error) {
	if d.format != "" {
		return d.format, nil
	}
	if path == "-" {
		return "", usagef("-%s -: reading standard input needs -format csv or -format libsvm", flagName)
	}
	if f, err := dataset.FormatOf(path); err == nil {
		return f, nil
	}
	return "", usagef("-%s %s: cannot tell the format from the name (want .csv, .libsvm or .svm, optionally .gz): give -format csv or -format libsvm", flagName, path)
}

// checkInputs checks the data flags named in paths (flag name -> path):
// a known format each, and standard input for at most one of them.
func (d *dataFlags) checkInputs(paths ...[2]string) error {
	if err := d.check(); err != nil {
		return err
	}
	stdin := ""
	for _, p := range paths {
		if p[1] == "" {
			continue
		}
		if p[1] == "-" {
			if stdin != "" {
				return usagef("-%s and -%s cannot both read standard input", stdin, p[0])
			}
			stdin = p[0]
		}
		if _, err := d.formatOf(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

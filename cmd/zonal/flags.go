package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
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

package main

import (
	"errors"
	"flag"
	"io"
)

// errHelp is returned when -h was asked for: usage was printed, exit 0.
var errHelp = errors.New("help requested")

// usageError marks bad command-line syntax (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// newFlagSet returns a FlagSet that prints its usage to stderr and reports
// errors instead of exiting.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("zonal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, "Usage: zonal "+name+" "+synopsis+"\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs, mapping -h to errHelp and syntax errors to
// usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{errors.New("unexpected argument " + fs.Arg(0))}
	}
	return nil
}

// Command zonal runs zonal's kernel methods on data files: with no arguments it
// shows every method on the embedded digits set; its subcommands compare kernel
// approximations (approx), fit models and predict with them (fit, predict),
// serve a model over HTTP (serve) and grow kernel PCA incrementally (kpca).
// Run `zonal help` for the list.
//
// Every command runs in four steps: parse the flags, build and validate a
// config from them (a bad flag is a usage error before any work), run (the
// work, from the config alone, returning a result) and report (print the
// result). Exit status: 0 on success, 2 for usage errors (bad flags or
// flag values), 1 for runtime errors (files, data, numerics), 130 when
// interrupted (SIGINT or SIGTERM: the command stops within a second, prints
// "interrupted" and leaves no partial output file).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// command is one subcommand. Each lives in its own file and registers itself
// from init with addCommand.
type command struct {
	name    string
	summary string
	// run parses args (without the command name), validates them into the
	// command's config, does the work and prints the report. It returns an
	// error for bad flags (usageError, exit 2), files or data (exit 1);
	// ctx is cancelled on SIGINT/SIGTERM.
	run func(ctx context.Context, e *env, args []string) error
	// ownSignals says the command handles SIGINT and SIGTERM itself (serve
	// drains its in-flight requests and exits 0); run then gets a context
	// that is never cancelled.
	ownSignals bool
}

// env is what a command may touch outside its config: the standard streams
// and the list of temporary files to remove if the process must exit early.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	mu   sync.Mutex
	temp map[string]bool
}

// addTemp records a temporary file to remove on an early exit; dropTemp
// forgets it (renamed or removed).
func (e *env) addTemp(p string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.temp == nil {
		e.temp = map[string]bool{}
	}
	e.temp[p] = true
}

func (e *env) dropTemp(p string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.temp, p)
}

// removeTemps removes every temporary file still recorded.
func (e *env) removeTemps() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for p := range e.temp {
		os.Remove(p)
	}
	e.temp = nil
}

var commands = map[string]command{}

func addCommand(c command) {
	if _, dup := commands[c.name]; dup {
		panic("zonal: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(runMainIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK        = 0
	exitRuntime   = 1
	exitUsage     = 2
	exitInterrupt = 130
)

// interruptGrace is how long a command may take to return after SIGINT or
// SIGTERM before the process exits anyway (its temporary files removed).
const interruptGrace = 700 * time.Millisecond

// runMain is main without the process exit and with an empty standard
// input, for tests.
func runMain(args []string, stdout, stderr io.Writer) int {
	return runMainIO(args, strings.NewReader(""), stdout, stderr)
}

// runMainIO runs the command named by args[0] (the demo without
// arguments) and returns the exit status.
func runMainIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "demo"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 0 {
			return helpTopic(args[0], stdout, stderr)
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "zonal: unknown command %q (run `zonal help`)\n", name)
		return exitUsage
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	var err error
	if c.ownSignals {
		err = c.run(context.Background(), e, args)
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		done := make(chan error, 1)
		go func() { done <- c.run(ctx, e, args) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done:
			case <-time.After(interruptGrace):
			}
		}
		if ctx.Err() != nil {
			e.removeTemps()
			fmt.Fprintf(stderr, "zonal %s: interrupted\n", name)
			return exitInterrupt
		}
	}
	switch {
	case err == nil, err == errHelp:
		return exitOK
	}
	fmt.Fprintf(stderr, "zonal %s: %s\n", name, cliMessage(err))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitRuntime
}

// cliPhrases rewrite the parts of library messages that name Go options a
// command-line user cannot set into the flags that do the same.
var cliPhrases = strings.NewReplacer(
	"; set Options.Format", "; give -format csv or -format libsvm",
	" (use Options.NoDense)", "",
	" (set MinCols)", "",
	"MinCols = ", "",
	"MaxCols = ", "",
	"MaxDenseElements = ", "the limit of ",
	"the limit MaxIndex = ", "the limit ",
	"Samples must be", "-features must be",
	"(tune on fewer: SearchOptions.Rows)", "(tune on fewer rows)",
	"Task = classification", "-task classification",
)

// cliMessage is err's message on one line, in the command's terms.
func cliMessage(err error) string {
	s := cliPhrases.Replace(structuredMessage(err))
	return strings.Join(strings.Fields(s), " ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "zonal: scalable kernel methods\n\nUsage:\n  zonal                 run every method on the embedded digits set\n  zonal <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nExit status: 0 done, 1 runtime error, 2 usage error, 130 interrupted.")
	fmt.Fprintln(w, "Run `zonal <command> -h` for a command's flags and defaults.")
}

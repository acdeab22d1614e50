// Command zonal runs zonal's kernel methods on data files: with no arguments it
// shows every method on the embedded digits set; its subcommands compare kernel
// approximations (approx), fit models and predict with them (fit, predict),
// serve a model over HTTP (serve) and grow kernel PCA incrementally (kpca).
// Run `zonal help` for the list.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand. Each lives in its own file and registers itself
// from init with addCommand.
type command struct {
	name    string
	summary string
	// run parses args (without the command name) and does the work. It
	// returns an error for bad flags, files or data; main prints it on one
	// line and exits 1 (2 for flag syntax errors, as package flag does).
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func addCommand(c command) {
	if _, dup := commands[c.name]; dup {
		panic("zonal: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain is main without the process exit, for tests.
func runMain(args []string, stdout, stderr io.Writer) int {
	name := "demo"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	switch name {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "zonal: unknown command %q (run `zonal help`)\n", name)
		return 2
	}
	if err := c.run(args, stdout, stderr); err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintf(stderr, "zonal %s: %v\n", name, err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
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
	fmt.Fprintln(w, "\nRun `zonal <command> -h` for a command's flags and defaults.")
}

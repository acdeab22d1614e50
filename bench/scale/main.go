//go:build linux

// Command scale measures how FALKON and ParK fits grow with the number of
// rows n (10^4 to 10^7 by default) at a fixed number of centres: the fit
// time, the time of one CG iteration against the n M (2d + c) flops it should
// cost at the backend's measured Gemm and exp rates, and the peak RSS against
// the data, the M x M factor array and the memory budget. See README.md for
// the data, the measurements and the figures they are held to.
//
// Each fit runs in a child process (this program re-executed with the hidden
// flag -child), so that its peak RSS (VmHWM of /proc/self/status at the end
// of the child) is that fit's alone.
//
// Two further modes measure the data's way in and out: -mode read times the
// library's CSV and LIBSVM readers, plain and gzip, on synthetic files
// against wc -l and zcat | wc -l; -mode predict runs `zonal predict` on
// synthetic files of 10^5 and 10^7 rows (fitting its model in a child and
// starting zonal predict through a small launcher, -launch, so that the
// peak RSS is its own) and reports its peak RSS, which
// must not grow with the file.
//
//	cd bench   # its own Go module
//	go run -tags netlib ./scale -out scale.jsonl -fig scale.png
//	go run ./scale -quick          # tiny sizes, a few seconds
//	go run ./scale -mode read      # reader throughput, 10^6 rows
//	go run ./scale -mode predict   # zonal predict, 10^5 and 10^7 rows
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "bench/scale:", err)
		os.Exit(1)
	}
}

// run is the whole program: a child fit when args start with -child (its
// spec as JSON follows), the parent otherwise.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 2 && args[0] == childFlag {
		var s spec
		if err := json.Unmarshal([]byte(args[1]), &s); err != nil {
			return fmt.Errorf("child spec: %w", err)
		}
		res := runChild(s)
		return json.NewEncoder(stdout).Encode(res)
	}
	if len(args) >= 1 && args[0] == launchFlag {
		return runLaunch(args[1:])
	}
	if len(args) == 2 && args[0] == predictFitFlag {
		var s predictFitSpec
		if err := json.Unmarshal([]byte(args[1]), &s); err != nil {
			return fmt.Errorf("predict fit spec: %w", err)
		}
		m, err := fitPredictModel(s, stderr)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(m)
	}
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.replot != "" {
		return runReplot(c, stdout)
	}
	switch c.mode {
	case modeRead:
		return runRead(c, stdout, stderr)
	case modePredict:
		return runPredictMode(c, stdout, stderr)
	}
	return runParent(c, stdout, stderr)
}

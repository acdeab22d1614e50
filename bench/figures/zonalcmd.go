package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zonal-ml/zonal/bench/internal/zonalcmd"
)

// buildZonal builds cmd/zonal (with the same backend tags as this program) to
// path.
func buildZonal(path string) error { return zonalcmd.Build(path, netlibBuilt, os.Stderr) }

// rawDir, when set, is where runJSON keeps each run's JSON output, one file
// per run named by the figure, the data set and the method (NAME.jsonl), and
// replot reads them back instead of running zonal again, so a figure's look
// can be changed without recomputing.
var (
	rawDir string
	replot bool
)

// rawHeader is the first line of every raw file: the command line that made
// it. Args are the arguments after "zonal" as they were passed.
type rawHeader struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// runJSON runs the zonal binary with args and decodes one JSON object per
// output line. The output is kept in rawDir/name.jsonl after a header line
// with the command; with -replot it is read from there, and a stored command
// that differs from args (other than in the folders of file arguments) is
// reported on stderr, since the data then come from another run.
func runJSON(zonal, name string, args ...string) ([]map[string]any, error) {
	raw := filepath.Join(rawDir, name+".jsonl")
	var stdout bytes.Buffer
	if replot {
		b, err := os.ReadFile(raw)
		if err != nil {
			return nil, fmt.Errorf("-replot: %w", err)
		}
		hdr, body, err := splitRaw(b)
		if err != nil {
			return nil, fmt.Errorf("-replot: %s: %w", raw, err)
		}
		if !sameArgs(hdr.Args, args) {
			fmt.Fprintf(os.Stderr, "  note: %s was made by\n    %s\n  while this figure now runs\n    zonal %s\n", raw, hdr.Command, strings.Join(args, " "))
		}
		stdout.Write(body)
	} else {
		fmt.Fprintln(os.Stderr, "  zonal", strings.Join(args, " "))
		cmd := exec.Command(zonal, args...)
		cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("zonal %v: %w", args, err)
		}
		if rawDir != "" {
			if err := os.WriteFile(raw, rawFile(args, stdout.Bytes()), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return decodeLines(&stdout, args)
}

// rawFile is the header line for args followed by the output.
func rawFile(args []string, output []byte) []byte {
	hdr, _ := json.Marshal(rawHeader{Command: "zonal " + strings.Join(args, " "), Args: args})
	return append(append(hdr, '\n'), output...)
}

// splitRaw separates a raw file into its header and the output after it.
func splitRaw(b []byte) (rawHeader, []byte, error) {
	var hdr rawHeader
	line, body, _ := bytes.Cut(b, []byte("\n"))
	if err := json.Unmarshal(line, &hdr); err != nil || len(hdr.Args) == 0 {
		return hdr, nil, fmt.Errorf("no command header line (%v)", err)
	}
	return hdr, body, nil
}

// sameArgs reports whether two command lines agree up to the folders of
// their arguments (the data folder differs between machines).
func sameArgs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if filepath.Base(a[i]) != filepath.Base(b[i]) {
			return false
		}
	}
	return true
}

// decodeLines decodes every line of r that starts with '{' as a JSON object.
func decodeLines(r io.Reader, args []string) ([]map[string]any, error) {
	var rows []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("zonal %v: bad JSON line %q: %w", args, line, err)
		}
		rows = append(rows, m)
	}
	return rows, sc.Err()
}

func num(m map[string]any, key string) (float64, bool) {
	v, ok := m[key].(float64)
	return v, ok
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

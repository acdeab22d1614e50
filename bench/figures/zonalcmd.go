package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// buildZonal builds cmd/zonal (with the same backend tags as this program) to path.
func buildZonal(path string) error {
	args := []string{"build", "-o", path}
	if netlibBuilt {
		args = append(args, "-tags", "netlib")
	}
	args = append(args, "./cmd/zonal")
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building cmd/zonal (run from the repository root): %w", err)
	}
	return nil
}

// rawDir, when set, is where runJSON keeps each run's JSON output (one file
// per run, named by its arguments), and replot reads them back instead of
// running zonal again, so a figure's look can be changed without recomputing.
var (
	rawDir string
	replot bool
)

// runJSON runs the zonal binary with args and decodes one JSON object per
// output line.
func runJSON(zonal string, args ...string) ([]map[string]any, error) {
	raw := filepath.Join(rawDir, rawName(args))
	var stdout bytes.Buffer
	if replot {
		b, err := os.ReadFile(raw)
		if err != nil {
			return nil, fmt.Errorf("-replot: %w", err)
		}
		stdout.Write(b)
	} else {
		fmt.Fprintln(os.Stderr, "  zonal", strings.Join(args, " "))
		cmd := exec.Command(zonal, args...)
		cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("zonal %v: %w", args, err)
		}
		if rawDir != "" {
			if err := os.WriteFile(raw, stdout.Bytes(), 0o644); err != nil {
				return nil, err
			}
		}
	}
	var rows []map[string]any
	sc := bufio.NewScanner(&stdout)
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

// rawName turns a command line into a file name.
func rawName(args []string) string {
	var b strings.Builder
	for _, a := range args {
		a = filepath.Base(a)
		for _, r := range a {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
				b.WriteRune(r)
			default:
				b.WriteByte('_')
			}
		}
		b.WriteByte('_')
	}
	return strings.TrimSuffix(b.String(), "_") + ".jsonl"
}

func num(m map[string]any, key string) (float64, bool) {
	v, ok := m[key].(float64)
	return v, ok
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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

// runJSON runs the zonal binary with args and decodes one JSON object per
// output line.
func runJSON(zonal string, args ...string) ([]map[string]any, error) {
	fmt.Fprintln(os.Stderr, "  zonal", args)
	cmd := exec.Command(zonal, args...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("zonal %v: %w", args, err)
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

func num(m map[string]any, key string) (float64, bool) {
	v, ok := m[key].(float64)
	return v, ok
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

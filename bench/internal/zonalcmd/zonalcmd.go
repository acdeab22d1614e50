// Package zonalcmd builds the zonal command-line tool for the bench
// programs that run it as a child process.
package zonalcmd

import (
	"fmt"
	"io"
	"os/exec"
)

// Build builds cmd/zonal to path, with the netlib build tag when netlib is
// set (the calling program's own backend tags, so that both use the same
// backend). It names the package by its import path, which the bench module
// resolves to the repository through its replace directive (go.mod lists it
// as a tool so that its dependencies stay in go.sum); so it must run inside
// bench/. The go command's output goes to log.
func Build(path string, netlib bool, log io.Writer) error {
	args := []string{"build", "-o", path}
	if netlib {
		args = append(args, "-tags", "netlib")
	}
	args = append(args, "github.com/zonal-ml/zonal/cmd/zonal")
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building cmd/zonal (run inside bench/): %w", err)
	}
	return nil
}

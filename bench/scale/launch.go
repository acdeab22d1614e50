//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// launchFlag starts the hidden launcher mode: `-launch REPORT BIN ARGS...`
// runs BIN ARGS with this process's stdin, stdout and stderr, waits for it
// and writes its launchReport as JSON to the file REPORT.
//
// Why a launcher: on Linux a child's ru_maxrss starts at the high-water mark
// of the memory it shared until its exec. Go's os/exec starts a child with
// clone(CLONE_VM|CLONE_VFORK), so that memory is the parent's, and a child
// of a parent that once held a large array reports at least that array
// whatever it used itself. The launcher is this program freshly exec'd: its
// own address space is new and small (the runtime and the binary), and the
// command it starts shares only that before its exec, so the command's
// ru_maxrss is its own peak, or the launcher's small one if that is larger.
const launchFlag = "-launch"

// launchReport is what the launcher measured of its command.
type launchReport struct {
	MaxRSS     int64   `json:"max_rss_bytes"` // ru_maxrss from wait4
	CPUSeconds float64 `json:"cpu_seconds"`   // user + system
	Seconds    float64 `json:"seconds"`       // start to exit, as the launcher saw it
	ExitCode   int     `json:"exit_code"`
	Error      string  `json:"error,omitempty"`
}

// runLaunch is the launcher: args are REPORT BIN ARGS... It returns an error
// when the command could not run or failed, after writing the report.
func runLaunch(args []string) error {
	if len(args) < 2 {
		return errors.New("launch: want REPORT BIN [ARGS...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	rep := launchReport{Seconds: time.Since(start).Seconds(), ExitCode: -1}
	if ps := cmd.ProcessState; ps != nil {
		rep.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			rep.MaxRSS = ru.Maxrss << 10 // Linux: kilobytes
			rep.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	if err != nil {
		rep.Error = err.Error()
	}
	b, jerr := json.Marshal(rep)
	if jerr == nil {
		jerr = os.WriteFile(args[0], b, 0o644)
	}
	if err := errors.Join(err, jerr); err != nil {
		return fmt.Errorf("launch %s: %w", args[1], err)
	}
	return nil
}

// launchCommand returns the command that runs bin args through the
// launcher self (this program's executable), its report written to report.
func launchCommand(self, report, bin string, args ...string) *exec.Cmd {
	return exec.Command(self, append([]string{launchFlag, report, bin}, args...)...)
}

// readLaunchReport reads the launcher's report file.
func readLaunchReport(path string) (launchReport, error) {
	var rep launchReport
	b, err := os.ReadFile(path)
	if err != nil {
		return rep, fmt.Errorf("the launcher's report: %w", err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("the launcher's report %q: %w", b, err)
	}
	return rep, nil
}

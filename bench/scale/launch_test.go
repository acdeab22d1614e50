//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestLaunchPeakRSS checks the launcher against the inheritance it works
// around: this test process allocates and touches 300 MB, then runs
// /bin/true twice, directly by os/exec and through the launcher (this test
// binary re-executed, see TestMain).
//
// Direct: ru_maxrss of /bin/true must be at least the 300 MB this process
// touched, else the test's setup shows nothing (the inheritance is what
// makes the old figure wrong). Through the launcher: it must be under
// 100 MB. What it can hold is /bin/true's own peak (about 1 MB) or the
// launcher's mark before its exec: the Go runtime and this test binary's
// pages, some tens of MB at most; 100 MB is three times below the
// 300 MB and well above that. Neither depends on timing: ru_maxrss is a
// high-water mark kept by the kernel, not a sample.
//
// The 300 MB would stay in this process's high-water mark and reach every
// child a later test starts (TestQuick compares its children's ru_maxrss
// with their VmHWM), so the test runs in a process of its own: this test
// binary re-executed with -test.run for this test alone and
// ZONAL_SCALE_BIG_PARENT set.
func TestLaunchPeakRSS(t *testing.T) {
	if os.Getenv(bigParentEnv) == "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run=^TestLaunchPeakRSS$", "-test.v")
		cmd.Env = append(os.Environ(), bigParentEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestLaunchPeakRSS") {
			t.Fatalf("the test in its own process: %v:\n%s", err, out)
		}
		t.Logf("in its own process:\n%s", out)
		return
	}
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("no true command: %v", err)
	}
	const big = 300 << 20
	buf := make([]byte, big)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1 // touch every page, so that it is resident
	}

	direct := exec.Command(bin)
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	directRSS := direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	if directRSS < big {
		t.Errorf("direct child's ru_maxrss %d MB, want at least the parent's %d MB (the inheritance the launcher avoids)", directRSS>>20, big>>20)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := launchCommand(self, report, bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("launcher: %v: %s", err, out)
	}
	rep, err := readLaunchReport(report)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != 0 || rep.Error != "" || rep.MaxRSS <= 0 {
		t.Fatalf("launcher report %+v, want exit 0, no error and a positive peak", rep)
	}
	if rep.MaxRSS >= 100<<20 {
		t.Errorf("launched child's ru_maxrss %d MB, want under 100 MB: the parent's %d MB leaked into it", rep.MaxRSS>>20, big>>20)
	}
	t.Logf("ru_maxrss of %s: %d MB directly, %d MB through the launcher", bin, directRSS>>20, rep.MaxRSS>>20)
	runtime.KeepAlive(buf)
}

// bigParentEnv marks the process in which TestLaunchPeakRSS allocates.
const bigParentEnv = "ZONAL_SCALE_BIG_PARENT"

// TestLaunchFailure checks that the launcher reports a failing command's
// exit code and fails itself.
func TestLaunchFailure(t *testing.T) {
	bin, err := exec.LookPath("false")
	if err != nil {
		t.Fatalf("no false command: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	if err := launchCommand(self, report, bin).Run(); err == nil {
		t.Fatal("launcher of false succeeded")
	}
	rep, err := readLaunchReport(report)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != 1 || rep.Error == "" {
		t.Errorf("launcher report %+v, want exit code 1 and an error", rep)
	}
}

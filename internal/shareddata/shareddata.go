// Package shareddata finds the optional shared data sets (digits, MNIST,
// spam, debian_text, ...) for tests and benchmarks.
//
// The folder is $ZONAL_DATA when that is set, otherwise ../shared/data beside
// the repository root (the directory holding the main go.mod). Tests that need
// a file call File, which skips the test with a message naming where it looked
// when the file is absent.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides the data folder.
const EnvVar = "ZONAL_DATA"

// Dir returns the shared data folder, or "" when there is none.
func Dir() string {
	if d := os.Getenv(EnvVar); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() && !isSubmodule(dir) {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data")
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return ""
	}
	return p
}

// isSubmodule reports whether dir holds a nested module of the repository
// (beam/, bench/, asm/_gen/), whose go.mod is not the repository root's.
func isSubmodule(dir string) bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(dir), "go.mod"))
	return err == nil
}

// File returns the path of the shared data file name, skipping tb with a
// message when the folder or the file is absent.
func File(tb testing.TB, name string) string {
	tb.Helper()
	dir := Dir()
	if dir == "" {
		tb.Skipf("shared data folder not found ($%s unset or not a folder, no ../shared/data beside the repository); skipping", EnvVar)
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared data file %s not found; skipping", p)
	}
	return p
}

// Folder returns the shared data folder, skipping tb with a message when
// there is none.
func Folder(tb testing.TB) string {
	tb.Helper()
	dir := Dir()
	if dir == "" {
		tb.Skipf("shared data folder not found ($%s unset or not a folder, no ../shared/data beside the repository); skipping", EnvVar)
	}
	return dir
}

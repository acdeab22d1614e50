package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedDataDir locates ../shared/data as a sibling of the repository root
// (found by walking up from the working directory to the directory holding
// go.mod). It returns "" when absent.
func sharedDataDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
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

// sharedFile returns the path of a shared data file, skipping the test when
// the shared data folder is absent.
func sharedFile(tb testing.TB, name string) string {
	tb.Helper()
	dir := sharedDataDir(tb)
	if dir == "" {
		tb.Skip("../shared/data (sibling of the repository root) not found; skipping shared-data check")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared data file %s not found", p)
	}
	return p
}

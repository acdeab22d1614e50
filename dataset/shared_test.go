package dataset

import (
	"testing"

	"github.com/zonal-ml/zonal/internal/shareddata"
)

// sharedFile returns the path of a shared data file, skipping the test when
// the shared data folder ($ZONAL_DATA or ../shared/data) is absent.
func sharedFile(tb testing.TB, name string) string {
	tb.Helper()
	return shareddata.File(tb, name)
}

package zonal_test

import (
	"errors"
	"testing"

	"github.com/zonal-ml/zonal"
)

// TestParseBytes: sizes with the K, M, G, T suffixes (powers of 1024, with
// an optional iB or B), "" as 0, and ErrParam for anything else.
func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"": 0, "512": 512, "1K": 1 << 10, "512M": 512 << 20, "8G": 8 << 30, "8GiB": 8 << 30, "1.5g": 3 << 29, "2T": 2 << 40, " 4gb ": 4 << 30} {
		if got, err := zonal.ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"x", "-1G", "0", "0.1", "1e30T", "G"} {
		if _, err := zonal.ParseBytes(s); !errors.Is(err, zonal.ErrParam) {
			t.Errorf("ParseBytes(%q): error %v, want ErrParam", s, err)
		}
	}
}

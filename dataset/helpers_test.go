package dataset

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func strconvParse(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

func newTestPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0) }

func TestParseIndex(t *testing.T) {
	cases := []struct {
		in    string
		limit int
		idx   int
		ok    bool
	}{
		{"1", 10, 1, true}, {"2", 1, -1, false}, {"1", 1, 1, true}, {"0", 0, 0, true}, {"1", 0, -1, false}, {"10", 10, 10, true}, {"11", 10, -1, false}, {"0", 10, 0, true},
		{"007", 10, 7, true}, {"", 10, 0, false}, {"1a", 10, 0, false}, {"-1", 10, 0, false},
		{"4611686018427387904", 1 << 62, 1 << 62, true},
		{"4611686018427387905", 1 << 62, -1, false},
		{"99999999999999999999999", 1 << 62, -1, false},
		{"9223372036854775807", math.MaxInt, math.MaxInt, true},
		{"9223372036854775808", math.MaxInt, -1, false},
	}
	for _, c := range cases {
		idx, ok := parseIndex([]byte(c.in), c.limit)
		if idx != c.idx || ok != c.ok {
			t.Errorf("parseIndex(%q, %d) = %d, %v; want %d, %v", c.in, c.limit, idx, ok, c.idx, c.ok)
		}
	}
}

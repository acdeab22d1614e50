package dataset

import (
	"math/rand/v2"
	"strconv"
)

func strconvParse(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

func newTestPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0) }

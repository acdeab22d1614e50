package serve

import (
	"testing"

	"github.com/zonal-ml/zonal/solvers"
)

// BenchModel is benchModel for the external test package's benchmarks.
func BenchModel(b *testing.B) *solvers.Pipeline { return benchModel(b) }

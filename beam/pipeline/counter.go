package pipeline

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// rowCounter is the "zonal/rows_trained" counter, made on first use (a
// beam.Counter is a name, so making it in a DoFn is cheap and safe).
type rowCounter struct{}

func (rowCounter) inc(ctx context.Context, n int) {
	beam.NewCounter("zonal", "rows_trained").Inc(ctx, int64(n))
}

// addMillis adds the milliseconds since start to the counter zonal/<name>:
// the CPU-side cost split of a run (read_ms, kernel_ms, gram_ms, solve_ms,
// cells_ms), summed over workers.
func addMillis(ctx context.Context, name string, start time.Time) {
	beam.NewCounter("zonal", name).Inc(ctx, time.Since(start).Milliseconds())
}

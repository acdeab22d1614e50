package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// rowCounter is the "zonal/rows_trained" counter, made on first use (a
// beam.Counter is a name, so making it in a DoFn is cheap and safe).
type rowCounter struct{}

func (rowCounter) inc(ctx context.Context, n int) {
	beam.NewCounter("zonal", "rows_trained").Inc(ctx, int64(n))
}

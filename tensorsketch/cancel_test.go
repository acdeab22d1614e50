package tensorsketch

import (
	"context"
	"testing"
	"time"

	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// TestFitAdaptiveReturnsOnCancel cancels the adaptive sampler 200 ms and 1 s
// into a fit of 20000 rows with 4096 samples and asserts context.Canceled within
// testctx.Grace (1 s promised).
func TestFitAdaptiveReturnsOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a problem of seconds")
	}
	x := testctx.Normal(91, 20000, 20, 0.25)
	// 200 ms: while the rows are sketched; 1 s: in the level-by-level
	// sampling.
	for _, delay := range []time.Duration{200 * time.Millisecond, time.Second} {
		testctx.CancelsWithin(t, "FitAdaptive(20000 rows, 4096 samples) after "+delay.String(), delay, func(ctx context.Context) error {
			_, err := FitAdaptive(ctx, x, kernels.Gaussian{Sigma: 1}, AdaptiveOptions{Samples: 4096, Lambda: 1e-4})
			return err
		})
	}
}

package serve

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Defaults of Options.
const (
	DefaultName         = "model"
	DefaultMaxBodyBytes = 8 << 20
	DefaultMaxRows      = 10000
	DefaultMaxBatch     = 64
	DefaultBatchDelay   = time.Millisecond
	DefaultRetryAfter   = time.Second
)

// Options configures New. The zero value serves with the defaults above.
type Options struct {
	// Name is the model's name in the v2 routes (/v2/models/{name}) and in
	// the metrics; "" = DefaultName.
	Name string
	// Version is reported in the v2 metadata ("versions") when not empty.
	Version string
	// ModelFile is the file Reload reads; "" = Reload is unavailable.
	ModelFile string
	// ReloadEndpoint enables POST /v1/reload (needs ModelFile).
	ReloadEndpoint bool
	// Backend is the backend a reloaded model predicts on (nil =
	// backend.Default()); the model given to New keeps its own.
	Backend backend.Backend

	// MaxBodyBytes limits a request body (413 above it); 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxRows limits the rows of one request (413 above it); 0 = DefaultMaxRows.
	MaxRows int
	// MaxBatch is the largest block of single-row requests predicted
	// together; 0 = DefaultMaxBatch, 1 = no batching.
	MaxBatch int
	// BatchDelay is the longest a single-row request waits for others to
	// join its block, and it waits only while other requests are being
	// decoded (never for a body still being read); 0 = DefaultBatchDelay,
	// negative = never wait (rows that are already queued are still
	// batched).
	BatchDelay time.Duration
	// Workers is how many block predictions run at once; 0 = GOMAXPROCS.
	Workers int
	// MaxInFlight is how many prediction requests are admitted at once
	// (decoding, queued or predicting); more are refused with 503.
	// 0 = 256 * Workers (with or without batching).
	MaxInFlight int
	// RetryAfter is the Retry-After of a 503 (rounded up to whole seconds);
	// 0 = DefaultRetryAfter.
	RetryAfter time.Duration

	// Logger receives reloads, panics and refused reloads; nil = slog.Default().
	Logger *slog.Logger
	// Registry receives the server's metrics (and /metrics serves it). nil = a
	// new private registry with the Go and process collectors. Two servers
	// must not share a registry: the metric names would collide.
	Registry *prometheus.Registry
}

// withDefaults fills in the defaults and checks the values (zonal.ErrParam).
func (o Options) withDefaults() (Options, error) {
	if o.Name == "" {
		o.Name = DefaultName
	}
	for _, c := range o.Name {
		if c == '/' || c == '?' || c == '#' || c < ' ' {
			return o, fmt.Errorf("%w: serve: model name %q must not contain '/', '?', '#' or control characters", zonal.ErrParam, o.Name)
		}
	}
	if o.ReloadEndpoint && o.ModelFile == "" {
		return o, fmt.Errorf("%w: serve: ReloadEndpoint needs ModelFile", zonal.ErrParam)
	}
	if o.MaxBodyBytes < 0 || o.MaxRows < 0 || o.MaxBatch < 0 || o.Workers < 0 || o.MaxInFlight < 0 || o.RetryAfter < 0 {
		return o, fmt.Errorf("%w: serve: negative limit (MaxBodyBytes %d, MaxRows %d, MaxBatch %d, Workers %d, MaxInFlight %d, RetryAfter %v)",
			zonal.ErrParam, o.MaxBodyBytes, o.MaxRows, o.MaxBatch, o.Workers, o.MaxInFlight, o.RetryAfter)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.BatchDelay == 0 {
		o.BatchDelay = DefaultBatchDelay
	} else if o.BatchDelay < 0 {
		o.BatchDelay = 0
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = 256 * o.Workers
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

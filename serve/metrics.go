package serve

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zonal-ml/zonal"
)

// latencyBuckets are the buckets of the latency histograms, in seconds:
// from 25 µs (a cached single-row answer on a small model) to 10 s (a
// block of MaxRows rows on a big one), about three per decade.
var latencyBuckets = []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10}

// Protocols, the protocol label of the latency histograms.
const (
	protoHTTP = "http"
	protoGRPC = "grpc"
)

// metrics are the server's Prometheus series: the latency histograms
// zonal_{request,queue,compute}_duration_seconds{route,protocol}, the rest
// named zonal_serve_*.
type metrics struct {
	requests  *prometheus.CounterVec   // route, code
	latency   *prometheus.HistogramVec // route, protocol
	queue     *prometheus.HistogramVec // route, protocol
	compute   *prometheus.HistogramVec // route, protocol
	rows      prometheus.Counter
	batchRows prometheus.Histogram
	inFlight  prometheus.Gauge
	rejected  prometheus.Counter
	panics    prometheus.Counter
	reloads   *prometheus.CounterVec // result
	modelInfo *prometheus.GaugeVec   // name, kind, task
	inputDim  prometheus.Gauge
	outputs   prometheus.Gauge
	loadTime  prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry, own bool) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zonal_serve_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "zonal_request_duration_seconds", Help: "Time from the start of the handler to its last byte written (HTTP) or to its answer (gRPC), by route (HTTP pattern or gRPC method) and protocol (http, grpc).",
			Buckets: latencyBuckets,
		}, []string{"route", "protocol"}),
		queue: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "zonal_queue_duration_seconds", Help: "Time a decoded prediction request waited for its prediction to start (a worker, or its block in the batcher), by route and protocol.",
			Buckets: latencyBuckets,
		}, []string{"route", "protocol"}),
		compute: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "zonal_compute_duration_seconds", Help: "Time of the block prediction that answered a request (for a batched row, its whole block's), by route and protocol.",
			Buckets: latencyBuckets,
		}, []string{"route", "protocol"}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zonal_serve_rows_predicted_total", Help: "Rows predicted (successful predictions only).",
		}),
		batchRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "zonal_serve_batch_rows", Help: "Rows per block prediction of single-row requests: the dynamic batcher's blocks, and lone rows predicted at once (blocks of 1).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zonal_serve_in_flight_requests", Help: "Prediction requests admitted and not yet answered.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zonal_serve_rejected_total", Help: "Prediction requests refused with 503 because MaxInFlight were admitted.",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zonal_serve_panics_total", Help: "Panics recovered in handlers and predictions (answered with 500).",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zonal_serve_reloads_total", Help: "Model reloads by result (success, failure: the old model kept serving).",
		}, []string{"result"}),
		modelInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zonal_serve_model_info", Help: "1 for the model being served, labelled by name, kind and task.",
		}, []string{"name", "kind", "task"}),
		inputDim: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zonal_serve_model_input_dim", Help: "Input dimension d of the model being served.",
		}),
		outputs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zonal_serve_model_outputs", Help: "Number of outputs k of the model being served.",
		}),
		loadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zonal_serve_model_load_timestamp_seconds", Help: "Unix time at which the model being served was loaded.",
		}),
	}
	cs := []prometheus.Collector{m.requests, m.latency, m.queue, m.compute, m.rows, m.batchRows, m.inFlight, m.rejected, m.panics,
		m.reloads, m.modelInfo, m.inputDim, m.outputs, m.loadTime}
	if own {
		cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("%w: serve: registering metrics (is the registry shared with another server?): %w", zonal.ErrParam, err)
		}
	}
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	return m, nil
}

// stage observes the queue and compute times of one route's predictions.
type stage struct{ queue, compute prometheus.Observer }

func (m *metrics) stage(route, protocol string) *stage {
	return &stage{queue: m.queue.WithLabelValues(route, protocol), compute: m.compute.WithLabelValues(route, protocol)}
}

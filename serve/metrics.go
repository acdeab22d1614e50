package serve

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zonal-ml/zonal"
)

// metrics are the server's Prometheus series (all named zonal_serve_*).
type metrics struct {
	requests  *prometheus.CounterVec   // route, code
	latency   *prometheus.HistogramVec // route
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
			Name: "zonal_serve_request_duration_seconds", Help: "Time from the request's arrival to the last byte of the answer, by route.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5},
		}, []string{"route"}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zonal_serve_rows_predicted_total", Help: "Rows predicted (successful predictions only).",
		}),
		batchRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "zonal_serve_batch_rows", Help: "Rows per block prediction made by the dynamic batcher.",
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
	cs := []prometheus.Collector{m.requests, m.latency, m.rows, m.batchRows, m.inFlight, m.rejected, m.panics,
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

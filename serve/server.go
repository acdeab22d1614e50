package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/solvers"
)

// Server answers predictions of one model over HTTP (see the package
// documentation for the routes). It is an http.Handler, safe for
// concurrent use; Close stops its batcher.
type Server struct {
	opts   Options
	reg    *prometheus.Registry
	met    *metrics
	mux    *http.ServeMux
	cur    atomic.Pointer[model]
	admit  chan struct{} // one token per admitted prediction request
	slots  chan struct{} // one token per running block prediction
	batch  *batcher      // nil: no batching
	closed atomic.Bool
	drain  atomic.Bool
	relMu  sync.Mutex
	closer sync.Once

	nameJSON, versionJSON []byte // Options.Name and Version as JSON strings
}

// model is one loaded model with what the handlers need of it.
type model struct {
	p        *solvers.Pipeline
	d, k     int
	kind     string
	task     string
	source   string
	loadedAt time.Time
	meta     []byte // v2 model metadata JSON
}

// New serves p with the options. It returns an error wrapping
// zonal.ErrParam for a nil model or bad options (including a Registry that
// already holds a server's metrics), zonal.ErrNonFinite if the model's
// outputs on a probe row are not finite.
func New(p *solvers.Pipeline, opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, reg: o.Registry, nameJSON: jsonString(o.Name), versionJSON: jsonString(o.Version)}
	own := s.reg == nil
	if own {
		s.reg = prometheus.NewRegistry()
	}
	m, err := s.check(p, o.ModelFile, nil)
	if err != nil {
		return nil, err
	}
	if s.met, err = newMetrics(s.reg, own); err != nil {
		return nil, err
	}
	s.admit = make(chan struct{}, o.MaxInFlight)
	s.slots = make(chan struct{}, o.Workers)
	s.install(m)
	if o.MaxBatch > 1 {
		s.batch = newBatcher(s)
	}
	s.routes()
	return s, nil
}

// Registry is the registry holding the server's metrics (what /metrics serves).
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Model is the model being served now.
func (s *Server) Model() *solvers.Pipeline { return s.cur.Load().p }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetDraining marks the server as going away (draining true): /readyz and
// /v2/health/ready answer 503 so load balancers stop sending, while requests
// are still answered. Call it before http.Server.Shutdown.
func (s *Server) SetDraining(draining bool) { s.drain.Store(draining) }

// Close stops the batcher; later prediction requests get 503. Call it after
// the http.Server has shut down (in-flight requests finished).
func (s *Server) Close() error {
	s.closer.Do(func() {
		s.closed.Store(true)
		if s.batch != nil {
			s.batch.stop()
		}
	})
	return nil
}

// HTTPServer returns an http.Server serving s on addr with timeouts that
// bound slow clients: 5 s to read the headers, 30 s to read the request, 30 s
// to write the answer, 2 min for an idle keep-alive connection, 64 KiB of
// headers. Change the fields before ListenAndServe to tune them.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
}

// check verifies p as a replacement of old (nil: the first model): same
// input dimension, finite outputs on a probe row (the scaler's mean, or
// zeros). Errors wrap zonal.ErrParam, zonal.ErrShape or zonal.ErrNonFinite.
func (s *Server) check(p *solvers.Pipeline, source string, old *model) (m *model, err error) {
	if p == nil || p.Model == nil {
		return nil, fmt.Errorf("%w: serve: nil model", zonal.ErrParam)
	}
	d, k := p.InputDim(), p.Outputs()
	if d < 1 || k < 1 {
		return nil, fmt.Errorf("%w: serve: model has d = %d inputs and k = %d outputs", zonal.ErrShape, d, k)
	}
	if old != nil && d != old.d {
		return nil, fmt.Errorf("%w: serve: the new model takes d = %d inputs, the one being served %d; clients would break", zonal.ErrShape, d, old.d)
	}
	probe := make([]float64, d)
	if p.Scaler != nil {
		copy(probe, p.Scaler.Mean)
	}
	out := make([]float64, k)
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%w: serve: the model panicked on a probe row: %v", zonal.ErrParam, r)
		}
	}()
	if err := p.PredictOutputs(mat.NewDense(1, k, out), mat.NewDense(1, d, probe)); err != nil {
		return nil, fmt.Errorf("serve: probe prediction: %w", err)
	}
	for j, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: serve: output %d on a probe row is %g", zonal.ErrNonFinite, j, v)
		}
	}
	m = &model{p: p, d: d, k: k, kind: p.Model.Kind(), task: p.Encoding.Task.String(), source: source, loadedAt: time.Now()}
	m.meta = s.metadata(m)
	return m, nil
}

// install makes m the model being served and updates the model gauges.
func (s *Server) install(m *model) {
	old := s.cur.Swap(m)
	if old != nil {
		s.met.modelInfo.DeleteLabelValues(s.opts.Name, old.kind, old.task)
	}
	s.met.modelInfo.WithLabelValues(s.opts.Name, m.kind, m.task).Set(1)
	s.met.inputDim.Set(float64(m.d))
	s.met.outputs.Set(float64(m.k))
	s.met.loadTime.Set(float64(m.loadedAt.UnixNano()) / 1e9)
}

// Swap checks p (see Reload) and serves it from now on; requests already
// running finish on the model they started with. On error the current model
// keeps serving; the error wraps zonal.ErrParam, zonal.ErrShape or
// zonal.ErrNonFinite. Swaps are counted as reloads.
func (s *Server) Swap(p *solvers.Pipeline) error { return s.swap(p, "", nil) }

// Reload reads Options.ModelFile with solvers.Load and swaps it in (see
// Swap). A missing, corrupt (zonal.ErrFormat), other-version
// (zonal.ErrVersion) or incompatible (zonal.ErrShape: another input
// dimension) file keeps the current model serving; the error is returned,
// logged and counted in zonal_serve_reloads_total{result="failure"}.
// Without a ModelFile the error wraps zonal.ErrParam.
func (s *Server) Reload() error {
	path := s.opts.ModelFile
	if path == "" {
		return s.swap(nil, "", fmt.Errorf("%w: serve: no model file to reload (Options.ModelFile)", zonal.ErrParam))
	}
	f, err := os.Open(path)
	if err != nil {
		return s.swap(nil, path, fmt.Errorf("serve: reload: %w", err))
	}
	p, err := solvers.Load(f, solvers.Options{Backend: s.opts.Backend})
	f.Close()
	if err != nil {
		return s.swap(nil, path, fmt.Errorf("serve: reload %s: %w", path, err))
	}
	return s.swap(p, path, nil)
}

// swap installs p after checking it, or reports loadErr / the check's error.
func (s *Server) swap(p *solvers.Pipeline, source string, loadErr error) error {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	err := loadErr
	var m *model
	if err == nil {
		m, err = s.check(p, source, s.cur.Load())
	}
	if err != nil {
		s.met.reloads.WithLabelValues("failure").Inc()
		s.opts.Logger.Error("model reload failed; the previous model keeps serving", "model", s.opts.Name, "file", source, "error", err)
		return err
	}
	s.install(m)
	s.met.reloads.WithLabelValues("success").Inc()
	s.opts.Logger.Info("model reloaded", "model", s.opts.Name, "file", source, "kind", m.kind, "d", m.d, "k", m.k)
	return nil
}

// routes builds the mux. Every route checks its methods itself so that a
// wrong method is a 405 and an unknown path a 404, both as JSON.
func (s *Server) routes() {
	mux := http.NewServeMux()
	handle := func(pattern, route, method string, h func(http.ResponseWriter, *http.Request) error) {
		mux.Handle(pattern, s.instrument(route, method, h))
	}
	handle("/v1/predict", "/v1/predict", http.MethodPost, s.handleV1(s.met.stage("/v1/predict", protoHTTP)))
	if s.opts.ReloadEndpoint {
		handle("/v1/reload", "/v1/reload", http.MethodPost, s.handleReload)
	}
	handle("/v2", "/v2", http.MethodGet, s.handleServerMeta)
	handle("/v2/health/live", "/v2/health/live", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, []byte(`{"live":true}`))
	})
	handle("/v2/health/ready", "/v2/health/ready", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		if !s.ready() {
			return writeJSON(w, http.StatusServiceUnavailable, []byte(`{"ready":false}`))
		}
		return writeJSON(w, http.StatusOK, []byte(`{"ready":true}`))
	})
	for _, prefix := range []string{"/v2/models/{name}", "/v2/models/{name}/versions/{version}"} {
		handle(prefix, prefix, http.MethodGet, s.handleModelMeta)
		handle(prefix+"/ready", prefix+"/ready", http.MethodGet, s.handleModelReady)
		handle(prefix+"/infer", prefix+"/infer", http.MethodPost, s.handleV2(s.met.stage(prefix+"/infer", protoHTTP)))
	}
	handle("/healthz", "/healthz", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		return writeText(w, http.StatusOK, "ok\n")
	})
	handle("/readyz", "/readyz", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		if !s.ready() {
			return writeText(w, http.StatusServiceUnavailable, "draining\n")
		}
		return writeText(w, http.StatusOK, "ok\n")
	})
	prom := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})
	handle("/metrics", "/metrics", http.MethodGet, func(w http.ResponseWriter, r *http.Request) error {
		prom.ServeHTTP(w, r)
		return nil
	})
	handle("/", "unknown", "", func(w http.ResponseWriter, r *http.Request) error {
		return errorf(http.StatusNotFound, "no route %s %s; see /v1/predict, /v2/models/%s/infer, /healthz, /readyz, /metrics", r.Method, r.URL.Path, s.opts.Name)
	})
	s.mux = mux
}

func (s *Server) ready() bool { return !s.drain.Load() && !s.closed.Load() && s.cur.Load() != nil }

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument wraps a route: method check (GET routes take HEAD too), error
// answers, panic recovery, request count and latency.
func (s *Server) instrument(route, method string, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	lat := s.met.latency.WithLabelValues(route, protoHTTP)
	served := s.met.requests.WithLabelValues(route, codeText(http.StatusOK)) // pre-resolved: the usual answer
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := statusWriters.Get().(*statusWriter)
		*w = statusWriter{ResponseWriter: rw}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.met.panics.Inc()
				s.opts.Logger.Error("panic in handler", "route", route, "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if w.code == 0 {
					writeError(w, errorf(http.StatusInternalServerError, "internal error (logged)"))
				}
			}
			code := w.code
			if code == 0 {
				code = http.StatusOK
			}
			if code == http.StatusOK {
				served.Inc()
			} else {
				s.met.requests.WithLabelValues(route, codeText(code)).Inc()
			}
			lat.Observe(time.Since(start).Seconds())
			*w = statusWriter{}
			statusWriters.Put(w)
		}()
		if method != "" && r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
			allow := method
			if method == http.MethodGet {
				allow = "GET, HEAD"
			}
			w.Header().Set("Allow", allow)
			writeError(w, errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s; use %s", r.Method, r.URL.Path, method))
			return
		}
		if err := h(w, r); err != nil {
			writeError(w, err)
		}
	})
}

// writeError answers err as {"error": "..."}: an *httpError with its code,
// a recovered prediction panic as 500, anything else as 500.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	msg, _ := json.Marshal(err.Error())
	b := make([]byte, 0, len(msg)+16)
	b = append(b, `{"error":`...)
	b = append(b, msg...)
	b = append(b, "}\n"...)
	writeJSON(w, code, b)
}

// codeText is strconv.Itoa(code), without allocating for the usual codes.
func codeText(code int) string {
	switch code {
	case http.StatusOK:
		return "200"
	case http.StatusBadRequest:
		return "400"
	case http.StatusNotFound:
		return "404"
	case http.StatusRequestEntityTooLarge:
		return "413"
	case http.StatusServiceUnavailable:
		return "503"
	}
	return strconv.Itoa(code)
}

// jsonType is the Content-Type value of the JSON answers, shared by every
// answer instead of allocating one each (net/http only reads it).
var jsonType = []string{"application/json"}

// unchunkedBytes is the largest answer net/http sends with a
// Content-Length it computes itself (net/http's bufferBeforeChunkingSize:
// an answer written in one Write that fits its buffer is still buffered
// when the handler returns). Longer answers get theirs from setLength.
const unchunkedBytes = 2048

// setLength sets the Content-Length of an answer of n bytes unless net/http
// computes it (n <= unchunkedBytes), which it does without allocating.
func setLength(h http.Header, n int) {
	if n > unchunkedBytes {
		h["Content-Length"] = headerInt(n)
	}
}

// smallInts are the header values "0" .. "2047", shared read-only by every
// answer (net/http copies header values when it writes them).
var smallInts = func() [][]string {
	v := make([][]string, unchunkedBytes)
	for i := range v {
		v[i] = []string{strconv.Itoa(i)}
	}
	return v
}()

// headerInt is the header value of n (shared for small n).
func headerInt(n int) []string {
	if n >= 0 && n < len(smallInts) {
		return smallInts[n]
	}
	return []string{strconv.Itoa(n)}
}

func writeJSON(w http.ResponseWriter, code int, b []byte) error {
	h := w.Header()
	h["Content-Type"] = jsonType
	setLength(h, len(b))
	w.WriteHeader(code)
	_, _ = w.Write(b) // an error means the client went away: nothing more to answer
	return nil
}

func writeText(w http.ResponseWriter, code int, text string) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
	return nil
}

// admitRequest takes an admission token (give it back with release) or
// answers 503, with Retry-After when the server is saturated.
func (s *Server) admitRequest(w http.ResponseWriter) error {
	err := s.tryAdmit()
	if err == errSaturated {
		secs := int(math.Ceil(s.opts.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		return errorf(http.StatusServiceUnavailable, "server is saturated (%d requests in flight); retry later", s.opts.MaxInFlight)
	}
	return err
}

// errSaturated is tryAdmit's refusal when MaxInFlight requests are admitted.
var errSaturated = errorf(http.StatusServiceUnavailable, "server is saturated; retry later")

// tryAdmit takes an admission token (give it back with release), or
// returns errClosed or errSaturated.
func (s *Server) tryAdmit() error {
	if s.closed.Load() {
		return errClosed
	}
	select {
	case s.admit <- struct{}{}:
	default:
		s.met.rejected.Inc()
		return errSaturated
	}
	s.met.inFlight.Inc()
	return nil
}

// release gives back the token of admitRequest.
func (s *Server) release() {
	s.met.inFlight.Dec()
	<-s.admit
}

// predict answers the n x d rows x with model m into labels (n) and outs
// (n x k), as one block on a worker slot. A lone row goes to the batcher
// (when batching is on) unless it has nothing to join: when no other
// single-row request is being decoded or waits for a block and a worker
// is free, it is predicted at once on the request's goroutine, which
// spares the two goroutine handoffs of the batcher (a block of one row
// either way). The wait and the prediction are observed in st.
func (s *Server) predict(ctx context.Context, m *model, x []float64, n int, labels, outs []float64, st *stage) error {
	t0 := time.Now()
	if n == 1 && s.batch != nil {
		if !s.batch.alone() {
			return s.batch.predictRow(ctx, m, x, labels, outs, st)
		}
		select {
		case s.slots <- struct{}{}:
		default:
			return s.batch.predictRow(ctx, m, x, labels, outs, st)
		}
		s.met.batchRows.Observe(1)
	} else {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return errorf(http.StatusServiceUnavailable, "request cancelled while waiting for a worker: %v", ctx.Err())
		}
	}
	defer func() { <-s.slots }()
	dn := denseHeaders.Get().(*denses)
	defer denseHeaders.Put(dn)
	t1 := time.Now()
	st.queue.Observe(t1.Sub(t0).Seconds())
	err := s.predictBlock(m, x, n, labels, outs, dn)
	st.compute.Observe(time.Since(t1).Seconds())
	return err
}

// predictBlock predicts the n x d block x with m into labels (n) and outs
// (n x k): outs = f(x) (raw outputs), labels = the pipeline's decoding of
// outs (DecodeOutputs), which is what Pipeline.PredictLabels computes. dn holds the
// matrix headers (reused: no allocation per block). A panic is recovered,
// logged and counted and becomes an error answered with 500.
func (s *Server) predictBlock(m *model, x []float64, n int, labels, outs []float64, dn *denses) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.met.panics.Inc()
			s.opts.Logger.Error("panic in prediction", "model", s.opts.Name, "kind", m.kind, "rows", n, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = errorf(http.StatusInternalServerError, "internal error in the model (logged)")
		}
	}()
	// Drop the references afterwards: the pooled headers must not keep a
	// request's arrays alive.
	defer func() { dn.o, dn.x = mat.Dense{}, mat.Dense{} }()
	dn.o.SetRawMatrix(blas64.General{Rows: n, Cols: m.k, Stride: m.k, Data: outs[:n*m.k]})
	dn.x.SetRawMatrix(blas64.General{Rows: n, Cols: m.d, Stride: m.d, Data: x[:n*m.d]})
	if err := m.p.PredictOutputs(&dn.o, &dn.x); err != nil {
		return fmt.Errorf("prediction failed: %w", err)
	}
	if err := m.p.DecodeOutputs(labels, &dn.o); err != nil {
		return fmt.Errorf("prediction failed: %w", err)
	}
	s.met.rows.Add(float64(n))
	return nil
}

// handleV1 answers POST /v1/predict.
func (s *Server) handleV1(st *stage) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error { return s.serveV1(w, r, st) }
}

func (s *Server) serveV1(w http.ResponseWriter, r *http.Request, st *stage) error {
	if err := s.admitRequest(w); err != nil {
		return err
	}
	defer s.release()
	sc := getScratch()
	defer putScratch(sc)
	m := s.cur.Load()
	var err error
	sc.body, err = readBodyInto(w, r, s.opts.MaxBodyBytes, sc.body)
	var x []float64
	var n int
	var wantOut, wantProba bool
	if err == nil {
		// Only now is the request "arriving" for the batcher: a block waits
		// for rows being decoded (microseconds of CPU), never for a body
		// still on the network.
		s.batch.decoding(func() {
			var ok bool
			if sc.x, n, wantOut, wantProba, ok = fastV1(sc.body, m.d, s.opts.MaxRows, sc.x); ok {
				x = sc.x[:n*m.d]
			} else {
				x, n, wantOut, wantProba, err = decodeV1(sc.body, m.d, s.opts.MaxRows)
			}
		})
	}
	if err == nil && wantProba {
		err = checkProba(m)
	}
	if err != nil {
		return err
	}
	labels, outs := sc.results(n, m.k)
	if err := s.predict(r.Context(), m, x, n, labels, outs, st); err != nil {
		return err
	}
	b := append(sc.resp[:0], `{"predictions":`...)
	if b, err = appendFloats(b, labels, 64); err != nil {
		return err
	}
	if wantOut {
		b = append(b, `,"outputs":[`...)
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendFloats(b, outs[i*m.k:(i+1)*m.k], 64); err != nil {
				return err
			}
		}
		b = append(b, ']')
	}
	if wantProba {
		prob, err := probabilities(m, outs, n)
		if err != nil {
			return err
		}
		c := m.p.Classes()
		b = append(b, `,"probabilities":[`...)
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendFloats(b, prob[i*c:(i+1)*c], 64); err != nil {
				return err
			}
		}
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	sc.resp = b
	return writeJSON(w, http.StatusOK, b)
}

// checkProba refuses (400) a request for the probabilities of a model
// that has none.
func checkProba(m *model) error {
	if m.p.HasProbabilities() {
		return nil
	}
	return errorf(http.StatusBadRequest, "the model has no class probabilities (a %s model, calibrated: false); only a classifier fitted with a calibration has them", m.task)
}

// probabilities maps the n x k outputs outs of m to its n x c class
// probabilities (row-major), for a model that has them (checkProba).
func probabilities(m *model, outs []float64, n int) ([]float64, error) {
	c := m.p.Classes()
	prob := make([]float64, n*c)
	var o, p mat.Dense
	o.SetRawMatrix(blas64.General{Rows: n, Cols: m.k, Stride: m.k, Data: outs[:n*m.k]})
	p.SetRawMatrix(blas64.General{Rows: n, Cols: c, Stride: c, Data: prob})
	if err := m.p.Probabilities(&p, &o); err != nil {
		return nil, fmt.Errorf("probabilities failed: %w", err)
	}
	return prob, nil
}

// handleReload answers POST /v1/reload: 200 with the new model, or 422 with
// the reason the file was refused (the old model keeps serving).
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) error {
	if err := s.Reload(); err != nil {
		return errorf(http.StatusUnprocessableEntity, "reload refused, the previous model keeps serving: %v", err)
	}
	m := s.cur.Load()
	b, _ := json.Marshal(map[string]any{"reloaded": true, "file": m.source, "kind": m.kind, "task": m.task, "d": m.d, "k": m.k})
	return writeJSON(w, http.StatusOK, append(b, '\n'))
}

// The v2 server metadata: the server's name and protocol version, and the
// extensions it implements (REST and gRPC answer the same).
const (
	serverName    = "zonal"
	serverVersion = "1"
	extBinary     = "binary_tensor_data"
)

// handleServerMeta answers GET /v2 (server metadata).
func (s *Server) handleServerMeta(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, []byte(`{"name":"`+serverName+`","version":"`+serverVersion+`","extensions":["`+extBinary+`"]}`+"\n"))
}

// modelFor returns the model named in the path (and its version, when the
// path has one), or a 404.
func (s *Server) modelFor(r *http.Request) (*model, error) {
	return s.lookup(r.PathValue("name"), r.PathValue("version"))
}

// lookup returns the model called name, of version ("" = any), or a 404.
func (s *Server) lookup(name, version string) (*model, error) {
	if name != s.opts.Name {
		return nil, errorf(http.StatusNotFound, "no model %q; this server serves %q", name, s.opts.Name)
	}
	if version != "" && version != s.opts.Version {
		if s.opts.Version == "" {
			return nil, errorf(http.StatusNotFound, "model %q has no versions; use /v2/models/%s", s.opts.Name, s.opts.Name)
		}
		return nil, errorf(http.StatusNotFound, "model %q has no version %q; it serves version %q", s.opts.Name, version, s.opts.Version)
	}
	return s.cur.Load(), nil
}

// v2Meta is the v2 model metadata answer.
type v2Meta struct {
	Name     string       `json:"name"`
	Versions []string     `json:"versions,omitempty"`
	Platform string       `json:"platform"`
	Inputs   []v2MetaItem `json:"inputs"`
	Outputs  []v2MetaItem `json:"outputs"`
	// Properties are the protocol's optional model properties: the
	// training weights the model file records (weightProperties), absent
	// for an unweighted model.
	Properties map[string]string `json:"properties,omitempty"`
}

type v2MetaItem struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// metadata is the v2 model metadata of m as JSON (REST's answer).
func (s *Server) metadata(m *model) []byte {
	b, _ := json.Marshal(s.metaOf(m))
	return append(b, '\n')
}

// metaOf is the v2 model metadata of m, for REST and gRPC.
func (s *Server) metaOf(m *model) v2Meta {
	md := v2Meta{
		Name:     s.opts.Name,
		Platform: "zonal_" + m.kind,
		Inputs:   []v2MetaItem{{Name: "input-0", Datatype: "FP64", Shape: []int64{-1, int64(m.d)}}},
		Outputs: []v2MetaItem{
			{Name: outPredictions, Datatype: "FP64", Shape: []int64{-1}},
			{Name: outOutputs, Datatype: "FP64", Shape: []int64{-1, int64(m.k)}},
		},
	}
	if m.p.HasProbabilities() {
		md.Outputs = append(md.Outputs, v2MetaItem{Name: outProbabilities, Datatype: "FP64", Shape: []int64{-1, int64(m.p.Classes())}})
	}
	if s.opts.Version != "" {
		md.Versions = []string{s.opts.Version}
	}
	md.Properties = weightProperties(m.p.Weights, m.p.Encoding.Classes)
	return md
}

// weightProperties are the model properties of the training weights tw
// of a model of the classes (nil for nil tw): "weight_sum" (the sum of the
// row weights), "weighted_rows" (the rows of positive weight) and, with
// class weights, "class_weights" ("LABEL:W,LABEL:W,..." in class order).
func weightProperties(tw *solvers.TrainingWeights, classes []float64) map[string]string {
	if tw == nil {
		return nil
	}
	pr := map[string]string{
		"weight_sum":    strconv.FormatFloat(tw.Sum, 'g', -1, 64),
		"weighted_rows": strconv.Itoa(tw.Rows),
	}
	if tw.ClassFactors != nil {
		parts := make([]string, len(tw.ClassFactors))
		for c, f := range tw.ClassFactors {
			parts[c] = strconv.FormatFloat(classes[c], 'g', -1, 64) + ":" + strconv.FormatFloat(f, 'g', -1, 64)
		}
		pr["class_weights"] = strings.Join(parts, ",")
	}
	return pr
}

// handleModelMeta answers GET /v2/models/{name}.
func (s *Server) handleModelMeta(w http.ResponseWriter, r *http.Request) error {
	m, err := s.modelFor(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m.meta)
}

// handleModelReady answers GET /v2/models/{name}/ready.
func (s *Server) handleModelReady(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.modelFor(r); err != nil {
		return err
	}
	name, _ := json.Marshal(s.opts.Name)
	code, ready := http.StatusOK, "true"
	if !s.ready() {
		code, ready = http.StatusServiceUnavailable, "false"
	}
	return writeJSON(w, code, []byte(`{"name":`+string(name)+`,"ready":`+ready+"}\n"))
}

// handleV2 answers POST /v2/models/{name}/infer, in JSON or with the
// binary tensor data extension (binary.go).
func (s *Server) handleV2(st *stage) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error { return s.serveV2(w, r, st) }
}

func (s *Server) serveV2(w http.ResponseWriter, r *http.Request, st *stage) error {
	m, err := s.modelFor(r)
	if err != nil {
		return err
	}
	if err := s.admitRequest(w); err != nil {
		return err
	}
	defer s.release()
	sc := getScratch()
	defer putScratch(sc)
	sc.body, err = readBodyInto(w, r, s.opts.MaxBodyBytes, sc.body)
	var c *v2Call
	if err == nil {
		// Arriving for the batcher while decoding, not while reading (serveV1).
		s.batch.decoding(func() { c, err = s.decodeInfer(r.Header, sc, m) })
	}
	if err == nil && c.proba {
		err = checkProba(m)
	}
	if err != nil {
		return err
	}
	labels, outs := sc.results(c.n, m.k)
	if err := s.predict(r.Context(), m, c.x, c.n, labels, outs, st); err != nil {
		return err
	}
	b, jsonLen, err := s.appendV2Answer(sc.resp[:0], c, m, labels, outs)
	sc.resp = b
	if err != nil {
		return err
	}
	if jsonLen >= 0 {
		return writeBinary(w, b, jsonLen)
	}
	return writeJSON(w, http.StatusOK, b)
}

// appendV2Answer appends the infer answer to b: JSON, or (when an output
// is asked for as binary data) the JSON header followed by the binary
// tensors, with jsonLen the header's length (-1: all JSON).
func (s *Server) appendV2Answer(b []byte, c *v2Call, m *model, labels, outs []float64) (_ []byte, jsonLen int, err error) {
	dt, bits := c.datatype(), 64
	if c.fp32 {
		bits = 32
	}
	b = append(b, `{"model_name":`...)
	b = append(b, s.nameJSON...)
	if s.opts.Version != "" {
		b = append(b, `,"model_version":`...)
		b = append(b, s.versionJSON...)
	}
	if c.id != nil {
		b = append(b, `,"id":`...)
		b = append(b, c.id...)
	}
	b = append(b, `,"outputs":[`...)
	if c.predictions {
		b, err = appendTensor(b, outPredictions, dt, labels, c.binPred, c.elemSize(), bits, c.n, 0)
	}
	if c.outputs && err == nil {
		if c.predictions {
			b = append(b, ',')
		}
		b, err = appendTensor(b, outOutputs, dt, outs, c.binOuts, c.elemSize(), bits, c.n, m.k)
	}
	var prob []float64
	if c.proba && err == nil {
		if prob, err = probabilities(m, outs, c.n); err == nil {
			if c.predictions || c.outputs {
				b = append(b, ',')
			}
			b, err = appendTensor(b, outProbabilities, dt, prob, c.binProba, c.elemSize(), bits, c.n, m.p.Classes())
		}
	}
	b = append(b, "]}"...)
	if err != nil {
		return b, -1, err
	}
	if !(c.predictions && c.binPred) && !(c.outputs && c.binOuts) && !(c.proba && c.binProba) {
		return append(b, '\n'), -1, nil
	}
	jsonLen = len(b)
	if c.predictions && c.binPred {
		if b, err = appendBinary(b, labels, c.fp32); err != nil {
			return b, -1, err
		}
	}
	if c.outputs && c.binOuts {
		if b, err = appendBinary(b, outs, c.fp32); err != nil {
			return b, -1, err
		}
	}
	if c.proba && c.binProba {
		if b, err = appendBinary(b, prob, c.fp32); err != nil {
			return b, -1, err
		}
	}
	return b, jsonLen, nil
}

// appendTensor appends one output tensor of the infer answer, of shape
// [n] (k = 0) or [n, k]: its data as JSON, or its binary_data_size when it
// is answered as binary data.
func appendTensor(b []byte, name, dt string, v []float64, bin bool, elemSize, bits, n, k int) ([]byte, error) {
	b = append(b, `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","datatype":"`...)
	b = append(b, dt...)
	b = append(b, `","shape":[`...)
	b = strconv.AppendInt(b, int64(n), 10)
	if k > 0 {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(k), 10)
	}
	if bin {
		b = append(b, `],"parameters":{"binary_data_size":`...)
		b = strconv.AppendInt(b, int64(len(v)*elemSize), 10)
		return append(b, "}}"...), nil
	}
	b = append(b, `],"data":`...)
	b, err := appendFloats(b, v, bits)
	return append(b, '}'), err
}

// denses are the two matrix headers of a block prediction.
type denses struct{ x, o mat.Dense }

var denseHeaders = sync.Pool{New: func() any { return new(denses) }}

// errClosed answers requests that reach a closed server.
var errClosed = errorf(http.StatusServiceUnavailable, "server is shutting down")

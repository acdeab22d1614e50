// Package serve puts a fitted zonal model (a *solvers.Pipeline, as read from
// a model file by solvers.Load) behind HTTP: New returns a *Server, an
// http.Handler that can be mounted in any mux or served on its own (the
// `zonal serve` command does the latter).
//
// # Routes
//
//	POST /v1/predict               {"rows": [[x11, ..., x1d], ...], "outputs": false, "probabilities": false}
//	                               -> {"predictions": [y1, ...], "outputs": [[...], ...],
//	                                   "probabilities": [[p11, ..., p1c], ...]}
//	POST /v1/reload                reload the model file (only with Options.ReloadEndpoint)
//	GET  /v2                       Open Inference Protocol v2 server metadata (extensions:
//	                               "binary_tensor_data")
//	GET  /v2/health/live           {"live": true}
//	GET  /v2/health/ready          {"ready": true} (503 while draining)
//	GET  /v2/models/{name}         model metadata: input tensor [-1, d], output tensors,
//	                               and for a weighted fit the properties weight_sum,
//	                               weighted_rows and class_weights (the weights its
//	                               file records, solvers.TrainingWeights)
//	GET  /v2/models/{name}/ready   {"name": name, "ready": true}
//	POST /v2/models/{name}/infer   one FP64 or FP32 input tensor of shape [n, d], in JSON
//	                               or as binary data (the binary tensor data extension:
//	                               Inference-Header-Content-Length, binary_data_size,
//	                               binary_data, binary_data_output; see binary.go)
//	     /v2/models/{name}/versions/{version}[/ready|/infer]  the same, for Options.Version
//	GET  /healthz, /readyz         liveness and readiness (text "ok")
//	GET  /metrics                  Prometheus text format, from Options.Registry
//
// Server.GRPCServer serves the same model over the protocol's gRPC service
// (inference.GRPCInferenceService, package serve/oip): ServerLive,
// ServerReady, ModelReady, ServerMetadata, ModelMetadata and ModelInfer,
// with typed or raw tensor contents, under the same limits, batching,
// reload and metrics; `zonal serve -grpc-addr` runs it next to HTTP.
//
// A prediction is the class label (one of the training labels) for a
// classification model and the value for regression; the outputs are the k
// raw model outputs f(x) = sum_j alpha_j k(x, c_j) (per-class scores, one vs
// all) or, for ridge on features, W^T z(x). Labels are
// Pipeline.PredictLabels': a calibrated binary classifier predicts the
// larger label when its probability exceeds 0.5.
//
// A classifier whose model file holds a calibration (solvers.Calibration,
// fitted by `zonal fit`) also answers class probabilities, one per class in
// the order of the training labels, each row summing to 1: on /v1/predict
// with "probabilities": true, in v2 infer as the output tensor
// "probabilities" of shape [n, classes] when it is asked for in "outputs"
// (it is not among the default outputs, so answers that do not ask are
// unchanged), and the model metadata lists it. Asking a model without a
// calibration is a 400 (InvalidArgument over gRPC).
//
// # Limits
//
// The body is limited to Options.MaxBodyBytes (413), a request to
// Options.MaxRows rows (413); malformed JSON, a row of the wrong length or a
// non-finite value is a 400 whose message names the problem and the model's
// d; an unknown path is a 404 and a wrong method a 405 (with Allow), all as
// {"error": "..."}. At most Options.MaxInFlight prediction requests are
// admitted at once; the next one is refused at once with 503 and Retry-After,
// so nothing queues without bound. At most Options.Workers block predictions
// run at once. A panic in a handler or a prediction is recovered, logged,
// counted and answered with a 500.
//
// # Decoding
//
// The bodies clients send ({"rows": [[...]]}, and v2 infer requests with
// their data in JSON or binary) are read into pooled buffers and decoded
// by a hand-written scanner straight into a pooled float64 block (numbers
// by strconv.ParseFloat, as encoding/json parses them, except integers of
// up to 15 digits, which float64 holds exactly and the scanner converts
// as it reads them), and the answers
// are written with strconv.AppendFloat into a pooled buffer: a request of
// 784 numbers costs a few allocations of net/http's and none of the
// decoder's. Whatever the scanner does not handle exactly as encoding/json
// would (a key with escapes, null, a duplicate key) and every malformed
// body goes to encoding/json, which decides and words the error, so the
// answers and the messages are those of encoding/json either way (a fuzz
// test holds the scanner to that).
//
// # Dynamic batching
//
// Single-row requests that arrive together are stacked into one block X_b
// (b x d, b <= Options.MaxBatch) and predicted with one block product
// K(X_b, C) alpha instead of b products k(x_i, C) alpha: for FALKON with M
// centres that is one b x M kernel block (a matrix-matrix product) instead of
// b matrix-vector products. A request waits at most Options.BatchDelay for
// companions, and only while other requests' messages are in and being
// decoded (not while a body is still being read from the network, which a
// slow client could stretch to the whole delay): an idle server predicts a
// lone row at once. A
// row with nothing to join (no other prediction request being decoded, no
// row queued) and a free worker is predicted on its request's own
// goroutine, without the two goroutine handoffs of the batcher (to its
// dispatcher and back). While every worker is busy, rows queue and the
// next block takes them all, so blocks grow with the load. Row i of a
// block is answered with the prediction of row i alone: exactly for
// blocks of at most 32 rows (the solvers predict those row by row) and to
// rounding for larger ones (kernel blocks and Gemm sum in another order;
// the tests allow 1e-12 (1 + |y|)).
//
// # Metrics
//
// /metrics serves, besides the Go and process collectors of a private
// registry:
//
//	zonal_request_duration_seconds{route,protocol}  handler time, start to last byte
//	zonal_queue_duration_seconds{route,protocol}    decoded request waiting for its prediction
//	zonal_compute_duration_seconds{route,protocol}  its block prediction (a batched row: the block's)
//	zonal_serve_requests_total{route,code}          requests by status code
//	zonal_serve_rows_predicted_total, zonal_serve_batch_rows (histogram of the sizes of the
//	                               blocks of single rows, a lone row predicted at once being one of 1),
//	zonal_serve_in_flight_requests, zonal_serve_rejected_total, zonal_serve_panics_total,
//	zonal_serve_reloads_total{result}, zonal_serve_model_info{name,kind,task},
//	zonal_serve_model_input_dim, zonal_serve_model_outputs,
//	zonal_serve_model_load_timestamp_seconds
//
// route is the HTTP route pattern (e.g. /v2/models/{name}/infer) or the
// gRPC method (e.g. ModelInfer), protocol is http or grpc. The latency
// buckets run from 25 µs to 10 s, about three per decade: a single row on
// a small model is answered in tens of microseconds, a block of thousands
// of rows on a big one in seconds, and the request, queue and compute
// times of one request fall into comparable buckets. Request minus queue
// minus compute is the decoding and encoding time.
//
// # Reload
//
// Reload loads Options.ModelFile, checks it (same input dimension d as the
// model being served, finite outputs on a probe row) and swaps it in
// atomically; a request keeps the model it started with. A bad file keeps
// the old model: the error is returned (and answered by /v1/reload), logged
// and counted in zonal_serve_reloads_total{result="failure"}.
package serve

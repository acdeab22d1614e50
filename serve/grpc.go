package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zonal-ml/zonal/serve/oip"
)

// GRPCServer returns a *grpc.Server with the Open Inference Protocol v2
// service inference.GRPCInferenceService (package oip) for s's model,
// under the same rules as the REST routes: messages up to
// Options.MaxBodyBytes, MaxRows rows, the same admission (MaxInFlight
// requests, REST and gRPC together; more are refused with Unavailable),
// batching, reload, metrics (protocol="grpc", route = the method name,
// zonal_serve_requests_total{code} = the gRPC code's name) and panic
// recovery (Internal). Serve it on a listener; stop it with GracefulStop
// (in-flight calls finish) before Close. opts are added after the
// server's own; add interceptors with grpc.ChainUnaryInterceptor (the
// server sets grpc.UnaryInterceptor itself).
//
// ModelInfer takes one FP64 or FP32 input tensor of shape [n, d] with its
// values in contents (fp64_contents or fp32_contents) or in
// raw_input_contents (little-endian, row-major). The answer has the
// "predictions" and "outputs" tensors (or those in outputs), in the
// input's datatype, as raw_output_contents when the input was raw and as
// typed contents otherwise; the request parameter binary_data_output
// (bool) asks for one or the other (the protocol has raw outputs for all
// tensors or none, so a tensor's own binary_data is not consulted).
func (s *Server) GRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	maxMsg := int(min(s.opts.MaxBodyBytes, math.MaxInt32))
	routes := make(map[string]grpcRoute) // filled below, before any call
	g := grpc.NewServer(append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxMsg),
		grpc.MaxSendMsgSize(math.MaxInt32), // answers are bounded by MaxRows
		grpc.UnaryInterceptor(s.grpcIntercept(routes)),
	}, opts...)...)
	oip.RegisterGRPCInferenceServiceServer(g, &grpcService{s: s, st: s.met.stage("ModelInfer", protoGRPC)})
	for name, info := range g.GetServiceInfo() {
		for _, mi := range info.Methods {
			routes["/"+name+"/"+mi.Name] = grpcRoute{
				ok:  s.met.requests.WithLabelValues(mi.Name, codes.OK.String()),
				lat: s.met.latency.WithLabelValues(mi.Name, protoGRPC),
			}
		}
	}
	return g
}

// grpcRoute is the request counter of the OK answers and the latency
// observer of one gRPC method, resolved once (GRPCServer) for the methods
// registered on the server.
type grpcRoute struct {
	ok  prometheus.Counter
	lat prometheus.Observer
}

// grpcIntercept counts, times and recovers every call; routes holds the
// pre-resolved series of the service's methods (the usual case: no label
// lookup per call).
func (s *Server) grpcIntercept(routes map[string]grpcRoute) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		route := path.Base(info.FullMethod)
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				s.met.panics.Inc()
				s.opts.Logger.Error("panic in handler", "route", route, "protocol", protoGRPC, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, "internal error (logged)")
			}
			r, known := routes[info.FullMethod]
			if code := status.Code(err); code == codes.OK && known {
				r.ok.Inc()
			} else {
				s.met.requests.WithLabelValues(route, code.String()).Inc()
			}
			if known {
				r.lat.Observe(time.Since(start).Seconds())
			} else {
				s.met.latency.WithLabelValues(route, protoGRPC).Observe(time.Since(start).Seconds())
			}
		}()
		return h(ctx, req)
	}
}

// grpcError turns an *httpError into a status of the matching code, any
// other error into Internal.
func grpcError(err error) error {
	var he *httpError
	if !errors.As(err, &he) {
		return status.Error(codes.Internal, err.Error())
	}
	c := codes.Internal
	switch he.code {
	case http.StatusBadRequest:
		c = codes.InvalidArgument
	case http.StatusNotFound:
		c = codes.NotFound
	case http.StatusRequestEntityTooLarge:
		c = codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		c = codes.Unavailable
	}
	return status.Error(c, he.msg)
}

type grpcService struct {
	oip.UnimplementedGRPCInferenceServiceServer
	s  *Server
	st *stage
}

func (g *grpcService) ServerLive(context.Context, *oip.ServerLiveRequest) (*oip.ServerLiveResponse, error) {
	return &oip.ServerLiveResponse{Live: true}, nil
}

func (g *grpcService) ServerReady(context.Context, *oip.ServerReadyRequest) (*oip.ServerReadyResponse, error) {
	return &oip.ServerReadyResponse{Ready: g.s.ready()}, nil
}

func (g *grpcService) ModelReady(_ context.Context, req *oip.ModelReadyRequest) (*oip.ModelReadyResponse, error) {
	if _, err := g.s.lookup(req.GetName(), req.GetVersion()); err != nil {
		return nil, grpcError(err)
	}
	return &oip.ModelReadyResponse{Ready: g.s.ready()}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *oip.ServerMetadataRequest) (*oip.ServerMetadataResponse, error) {
	return &oip.ServerMetadataResponse{Name: serverName, Version: serverVersion, Extensions: []string{extBinary}}, nil
}

func (g *grpcService) ModelMetadata(_ context.Context, req *oip.ModelMetadataRequest) (*oip.ModelMetadataResponse, error) {
	m, err := g.s.lookup(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	meta := g.s.metaOf(m)
	md := &oip.ModelMetadataResponse{Name: meta.Name, Versions: meta.Versions, Platform: meta.Platform, Properties: meta.Properties}
	for _, it := range meta.Inputs {
		md.Inputs = append(md.Inputs, &oip.ModelMetadataResponse_TensorMetadata{Name: it.Name, Datatype: it.Datatype, Shape: it.Shape})
	}
	for _, it := range meta.Outputs {
		md.Outputs = append(md.Outputs, &oip.ModelMetadataResponse_TensorMetadata{Name: it.Name, Datatype: it.Datatype, Shape: it.Shape})
	}
	return md, nil
}

func (g *grpcService) ModelInfer(ctx context.Context, req *oip.ModelInferRequest) (*oip.ModelInferResponse, error) {
	s := g.s
	m, err := s.lookup(req.GetModelName(), req.GetModelVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	if err := s.tryAdmit(); err != nil {
		return nil, grpcError(err)
	}
	defer s.release()
	sc := getScratch()
	defer putScratch(sc)
	var c *v2Call
	s.batch.decoding(func() { c, err = decodeGRPC(req, m.d, s.opts.MaxRows, sc) })
	if err == nil && c.proba {
		err = checkProba(m)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	labels, outs := sc.results(c.n, m.k)
	if err := s.predict(ctx, m, c.x, c.n, labels, outs, g.st); err != nil {
		return nil, grpcError(err)
	}
	resp := &oip.ModelInferResponse{ModelName: s.opts.Name, ModelVersion: s.opts.Version, Id: req.GetId()}
	tensor := func(name string, v []float64, shape ...int64) error {
		t := &oip.ModelInferResponse_InferOutputTensor{Name: name, Datatype: c.datatype(), Shape: shape}
		resp.Outputs = append(resp.Outputs, t)
		if c.binPred { // raw outputs
			b, err := appendBinary(make([]byte, 0, len(v)*c.elemSize()), v, c.fp32)
			resp.RawOutputContents = append(resp.RawOutputContents, b)
			return err
		}
		t.Contents = &oip.InferTensorContents{}
		if c.fp32 {
			t.Contents.Fp32Contents = make([]float32, len(v))
			for i, f := range v {
				t.Contents.Fp32Contents[i] = float32(f)
			}
		} else {
			t.Contents.Fp64Contents = append([]float64(nil), v...)
		}
		if i := nonFinite(v, c.fp32); i >= 0 {
			return fmt.Errorf("the model produced a non-finite value (%g) at position %d", v[i], i)
		}
		return nil
	}
	if c.predictions {
		if err := tensor(outPredictions, labels, int64(c.n)); err != nil {
			return nil, grpcError(err)
		}
	}
	if c.outputs {
		if err := tensor(outOutputs, outs, int64(c.n), int64(m.k)); err != nil {
			return nil, grpcError(err)
		}
	}
	if c.proba {
		prob, err := probabilities(m, outs, c.n)
		if err == nil {
			err = tensor(outProbabilities, prob, int64(c.n), int64(m.p.Classes()))
		}
		if err != nil {
			return nil, grpcError(err)
		}
	}
	return resp, nil
}

// decodeGRPC checks a ModelInfer request as decodeV2 does a REST one and
// returns its rows (in sc.x, or the request's own fp64_contents) as a
// v2Call; c.binPred says the answer is raw. Errors are *httpError.
func decodeGRPC(req *oip.ModelInferRequest, d, maxRows int, sc *scratch) (*v2Call, error) {
	c := &sc.call
	*c = v2Call{binSize: -1}
	ins := req.GetInputs()
	if len(ins) != 1 {
		return nil, errorf(http.StatusBadRequest, "%d input tensors; the model takes exactly one, FP64 or FP32 of shape [n, %d]", len(ins), d)
	}
	in := ins[0]
	c.name = []byte(in.GetName())
	var err error
	if c.n, c.fp32, err = checkInput(in.GetName(), in.GetDatatype(), in.GetShape(), d, maxRows); err != nil {
		return nil, err
	}
	nd := c.n * d
	raw := req.GetRawInputContents()
	ct := in.GetContents()
	switch {
	case len(raw) > 1:
		return nil, errorf(http.StatusBadRequest, "%d raw_input_contents for one input tensor", len(raw))
	case len(raw) == 1:
		if filled(ct) != "" {
			return nil, errorf(http.StatusBadRequest, "input %q has both contents (%s) and raw_input_contents; send its values one way", in.GetName(), filled(ct))
		}
		if need := nd * c.elemSize(); len(raw[0]) != need {
			return nil, errorf(http.StatusBadRequest, "input %q: raw_input_contents has %d bytes; shape [%d, %d] of %s needs %d", in.GetName(), len(raw[0]), c.n, d, c.datatype(), need)
		}
		sc.x = grow(sc.x, nd)
		c.x = sc.x
		readRaw(c.x, raw[0], c.fp32)
	default:
		want, got := "fp64_contents", len(ct.GetFp64Contents())
		if c.fp32 {
			want, got = "fp32_contents", len(ct.GetFp32Contents())
		}
		if f := filled(ct); f != "" && f != want {
			return nil, errorf(http.StatusBadRequest, "input %q of datatype %s has its values in %s; use %s or raw_input_contents", in.GetName(), c.datatype(), f, want)
		}
		if got != nd {
			return nil, errorf(http.StatusBadRequest, "input %q: %s has %d values, shape [%d, %d] needs %d", in.GetName(), want, got, c.n, d, nd)
		}
		if c.fp32 {
			sc.x = grow(sc.x, nd)
			c.x = sc.x
			for i, v := range ct.GetFp32Contents() {
				c.x[i] = float64(v)
			}
		} else {
			c.x = ct.GetFp64Contents() // read only: the prediction does not write its input
		}
	}
	if i := nonFinite(c.x, false); i >= 0 {
		return nil, errorf(http.StatusBadRequest, "input %q: row %d, column %d is not a finite %s; the model expects d = %d finite values per row",
			in.GetName(), i/d, i%d, c.datatype(), d)
	}
	rawOut := len(raw) == 1
	if p, ok := req.GetParameters()["binary_data_output"]; ok {
		b, isBool := p.GetParameterChoice().(*oip.InferParameter_BoolParam)
		if !isBool {
			return nil, errorf(http.StatusBadRequest, "request parameter \"binary_data_output\" must be a bool_param")
		}
		rawOut = b.BoolParam
	}
	c.binPred, c.binOuts = rawOut, rawOut
	outs := req.GetOutputs()
	if len(outs) == 0 {
		c.predictions, c.outputs = true, true
	}
	for _, o := range outs {
		switch o.GetName() {
		case outPredictions:
			c.predictions = true
		case outOutputs:
			c.outputs = true
		case outProbabilities:
			c.proba = true
		default:
			return nil, unknownOutput(o.GetName())
		}
	}
	return c, nil
}

// filled names the first typed contents field that holds values ("": none).
func filled(ct *oip.InferTensorContents) string {
	switch {
	case ct == nil:
		return ""
	case len(ct.GetBoolContents()) > 0:
		return "bool_contents"
	case len(ct.GetIntContents()) > 0:
		return "int_contents"
	case len(ct.GetInt64Contents()) > 0:
		return "int64_contents"
	case len(ct.GetUintContents()) > 0:
		return "uint_contents"
	case len(ct.GetUint64Contents()) > 0:
		return "uint64_contents"
	case len(ct.GetFp32Contents()) > 0:
		return "fp32_contents"
	case len(ct.GetFp64Contents()) > 0:
		return "fp64_contents"
	case len(ct.GetBytesContents()) > 0:
		return "bytes_contents"
	}
	return ""
}

//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zonal-ml/zonal/serve/oip"
	"github.com/zonal-ml/zonal/solvers"
)

// modelFloor is the "model" of no model: the transport's floor. Its HTTP
// server (net/http with the timeouts of serve.Server.HTTPServer) reads
// every request's body whole and answers a constant one-prediction JSON
// object on every path; its gRPC server (grpc-go with serve's message
// limits) answers ServerLive and every ModelInfer with a constant
// one-output response, without looking at the tensor. What the server
// process spends per request under this load is what net/http or grpc-go
// and the Go runtime cost on this machine for a body of that size, with
// nothing of package serve (no decoding, admission, model or metrics): the
// least a server written on them can spend.
const modelFloor = "floor"

// modelFloorFalkon is the floor with the FALKON model's prediction in it:
// the bare HTTP handler scans the /v1/predict rows with strconv and the
// bare gRPC service reads the FP64 raw_input_contents, and both call the
// model's PredictOutputs on them before answering their constant; json
// and grpc only. Its CPU per request less the floor's is what one
// prediction costs in a server under this load, without package serve's
// decoder, admission, batcher or metrics.
const modelFloorFalkon = "floor-falkon"

// floorAnswer is the floor's HTTP answer, the shape of a one-row /v1
// answer.
var floorAnswer = []byte(`{"predictions":[0]}` + "\n")

// floorBodies holds the floor's request body buffers between requests.
var floorBodies = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 64<<10)) }}

// floorScratch is one request's rows and outputs (floor-falkon).
type floorScratch struct {
	x, out []float64
}

var floorScratches = sync.Pool{New: func() any { return new(floorScratch) }}

// predict predicts the n x d rows sc.x with p into sc.out (the outputs
// are dropped).
func (sc *floorScratch) predict(p *solvers.Pipeline) error {
	x := sc.x
	d := p.InputDim()
	n := len(x) / d
	if n == 0 || n*d != len(x) {
		return fmt.Errorf("%d values for rows of %d", len(x), d)
	}
	k := p.Outputs()
	if cap(sc.out) < n*k {
		sc.out = make([]float64, n*k)
	}
	return p.PredictOutputs(mat.NewDense(n, k, sc.out[:n*k]), mat.NewDense(n, d, x))
}

// scanRows appends the numbers of a {"rows": [[...], ...]} body to x.
func scanRows(x []float64, b []byte) ([]float64, error) {
	i := bytes.Index(b, []byte(`"rows"`))
	if i < 0 {
		return x, errors.New(`no "rows"`)
	}
	b = b[i+len(`"rows"`):]
	for len(b) > 0 {
		switch c := b[0]; {
		case c == '[' || c == ']' || c == ',' || c == ':' || c == ' ' || c == '\n' || c == '}':
			b = b[1:]
		default:
			j := 0
			for j < len(b) && b[j] != ',' && b[j] != ']' {
				j++
			}
			v, err := strconv.ParseFloat(string(b[:j]), 64)
			if err != nil {
				return x, err
			}
			x = append(x, v)
			b = b[j:]
		}
	}
	return x, nil
}

// floorHandler is the floor's HTTP handler; with p (floor-falkon) it
// also predicts the rows of the body.
func floorHandler(p *solvers.Pipeline) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { floorHTTP(w, r, p) }
}

// floorHTTP reads the body into a pooled buffer, predicts its rows with p
// when p is not nil, and answers floorAnswer.
func floorHTTP(w http.ResponseWriter, r *http.Request, p *solvers.Pipeline) {
	buf := floorBodies.Get().(*bytes.Buffer)
	defer floorBodies.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if p != nil {
		sc := floorScratches.Get().(*floorScratch)
		defer floorScratches.Put(sc)
		var err error
		if sc.x, err = scanRows(sc.x[:0], buf.Bytes()); err == nil {
			err = sc.predict(p)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	_, _ = w.Write(floorAnswer)
}

// floorGRPC is the floor's OIP service: ServerLive and ModelInfer only.
type floorGRPC struct {
	oip.UnimplementedGRPCInferenceServiceServer
	answer *oip.ModelInferResponse
	p      *solvers.Pipeline // floor-falkon: predict the FP64 raw tensor
}

func (floorGRPC) ServerLive(context.Context, *oip.ServerLiveRequest) (*oip.ServerLiveResponse, error) {
	return &oip.ServerLiveResponse{Live: true}, nil
}

func (f floorGRPC) ModelInfer(_ context.Context, req *oip.ModelInferRequest) (*oip.ModelInferResponse, error) {
	if f.p != nil {
		if len(req.RawInputContents) != 1 {
			return nil, status.Error(codes.InvalidArgument, "floor-falkon takes one FP64 raw tensor")
		}
		raw := req.RawInputContents[0]
		sc := floorScratches.Get().(*floorScratch)
		defer floorScratches.Put(sc)
		sc.x = sc.x[:0]
		for i := 0; i+8 <= len(raw); i += 8 {
			sc.x = append(sc.x, math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])))
		}
		if err := sc.predict(f.p); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	return f.answer, nil
}

// startFloor starts the floor's HTTP and gRPC servers on loopback; with p
// (floor-falkon) they predict each request's rows with it.
func startFloor(p *solvers.Pipeline) (*server, error) {
	hs := &http.Server{
		Handler:           floorHandler(p),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(slog.New(slog.NewTextHandler(io.Discard, nil)).Handler(), slog.LevelWarn),
	}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(8<<20), grpc.MaxSendMsgSize(math.MaxInt32))
	answer := &oip.ModelInferResponse{ModelName: modelName,
		Outputs:           []*oip.ModelInferResponse_InferOutputTensor{{Name: "predictions", Datatype: "FP64", Shape: []int64{1}}},
		RawOutputContents: [][]byte{binary.LittleEndian.AppendUint64(nil, math.Float64bits(0))}}
	oip.RegisterGRPCInferenceServiceServer(gs, floorGRPC{answer: answer, p: p})
	return listenAndServe(nil, hs, gs)
}

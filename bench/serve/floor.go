//go:build linux

package main

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/zonal-ml/zonal/serve/oip"
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

// floorAnswer is the floor's HTTP answer, the shape of a one-row /v1
// answer.
var floorAnswer = []byte(`{"predictions":[0]}` + "\n")

// floorBodies holds the floor's request body buffers between requests.
var floorBodies = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// floorHTTP reads the body into a pooled buffer and answers floorAnswer.
func floorHTTP(w http.ResponseWriter, r *http.Request) {
	bp := floorBodies.Get().(*[]byte)
	b := (*bp)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			*bp = b
			floorBodies.Put(bp)
			return
		}
	}
	*bp = b
	floorBodies.Put(bp)
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	_, _ = w.Write(floorAnswer)
}

// floorGRPC is the floor's OIP service: ServerLive and ModelInfer only.
type floorGRPC struct {
	oip.UnimplementedGRPCInferenceServiceServer
	answer *oip.ModelInferResponse
}

func (floorGRPC) ServerLive(context.Context, *oip.ServerLiveRequest) (*oip.ServerLiveResponse, error) {
	return &oip.ServerLiveResponse{Live: true}, nil
}

func (f floorGRPC) ModelInfer(context.Context, *oip.ModelInferRequest) (*oip.ModelInferResponse, error) {
	return f.answer, nil
}

// startFloor starts the floor's HTTP and gRPC servers on loopback.
func startFloor() (*server, error) {
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hl.Close()
		return nil, err
	}
	hs := &http.Server{
		Handler:           http.HandlerFunc(floorHTTP),
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
	oip.RegisterGRPCInferenceServiceServer(gs, floorGRPC{answer: answer})
	srv := &server{hs: hs, gs: gs, httpBase: "http://" + hl.Addr().String(), grpcAddr: gl.Addr().String()}
	go func() { _ = srv.hs.Serve(hl) }()
	go func() { _ = srv.gs.Serve(gl) }()
	return srv, nil
}

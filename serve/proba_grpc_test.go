package serve_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/serve/oip"
	"github.com/zonal-ml/zonal/solvers"
)

// ModelInfer answers the "probabilities" output [n, classes] of a
// calibrated classifier when it is asked for, the pipeline's PredictProba
// bit for bit; an uncalibrated model refuses it (InvalidArgument).
func TestGRPCProbabilities(t *testing.T) {
	plain := falkonModel(t, 1)
	x := rows(60, 2)
	xm := mat.NewDense(60, gd, x)
	out := mat.NewDense(60, 3, nil)
	if err := plain.PredictOutputs(out, xm); err != nil {
		t.Fatal(err)
	}
	labels := make([]float64, 60)
	for i := range labels {
		labels[i] = float64(i % 3) // any labels with every class: the calibrator only has to be valid
	}
	mc, err := calibrate.FitMulticlass(calibrate.MethodPlatt, out, plain.Encoding.Classes, labels, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plain.WithCalibration(&solvers.Calibration{Multiclass: mc})
	if err != nil {
		t.Fatal(err)
	}
	xt := x[:8*gd]
	req := inferRequest(xt, "FP64", false)
	req.Outputs = []*oip.ModelInferRequest_InferRequestedOutputTensor{{Name: "probabilities"}}
	r := start(t, p, serve.Options{})
	resp, err := r.client.ModelInfer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetOutputs()) != 1 || resp.Outputs[0].GetName() != "probabilities" || len(resp.Outputs[0].GetShape()) != 2 || resp.Outputs[0].Shape[1] != 3 {
		t.Fatalf("outputs %v", resp.GetOutputs())
	}
	want := mat.NewDense(8, 3, nil)
	if err := p.PredictProba(want, mat.NewDense(8, gd, xt)); err != nil {
		t.Fatal(err)
	}
	got := resp.Outputs[0].GetContents().GetFp64Contents()
	for i := 0; i < 8; i++ {
		s := 0.0
		for j := 0; j < 3; j++ {
			if got[3*i+j] != want.At(i, j) {
				t.Fatalf("row %d class %d: %v, PredictProba %v", i, j, got[3*i+j], want.At(i, j))
			}
			s += got[3*i+j]
		}
		// Three float64 values of at most 1: a few ulps.
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
	r2 := start(t, plain, serve.Options{})
	if _, err := r2.client.ModelInfer(context.Background(), req); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("uncalibrated model: %v", err)
	}
}

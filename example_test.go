package zonal_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// Fit FALKON on the embedded digits set, save the model with its scaler,
// load it back and serve one prediction on a raw row: the example of the
// README.
func Example() {
	data, _ := dataset.Digits() // 1797 x 64, labels 0..9
	std, _ := dataset.FitStandardizer(data.X)
	xs := mat.NewDense(1797, 64, nil)
	std.ApplyTo(xs, data.X)           // standardized copy for training
	k, _ := kernels.NewGaussian(5.66) // exp(-|x-y|^2 / (2 sigma^2))
	enc, _ := solvers.NewEncoding(data.Y, solvers.TaskClassification)
	y, _ := enc.Targets(data.Y) // one-vs-all targets, +1/-1
	model, err := solvers.FitFalkon(context.Background(), k, xs, y, 1e-6,
		solvers.FalkonOptions{Centers: 500, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	// The pipeline stores the scaler, so the served model takes raw rows.
	scaler, _ := solvers.NewScaler(std.Mean, std.Scale)
	pipe, _ := solvers.NewPipeline(scaler, enc, model)
	var file bytes.Buffer
	solvers.Save(&file, pipe) // or an *os.File
	served, _ := solvers.Load(&file, solvers.Options{})
	pred := make([]float64, 1)
	served.PredictLabels(pred, data.X.Slice(0, 1, 0, 64).(*mat.Dense))
	fmt.Println("first digit:", data.Y[0], "predicted:", pred[0])
	// Output: first digit: 0 predicted: 0
}

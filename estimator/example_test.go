package estimator_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// From raw rows to a saved model with the defaults: the README's example.
// Every choice (method, sigma, lambda, centres, standardization, task) is
// made by Fit and recorded in the report; the model file keeps the scaler
// and the classes, so raw rows go in at prediction time.
func Example() {
	data, err := dataset.ReadFile("../dataset/embed/digits.csv.gz", dataset.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pipe, report, err := estimator.Fit(context.Background(), data.Matrix(), data.Y, estimator.Options{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(filepath.Join(os.TempDir(), "digits.zonal"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := solvers.Save(f, pipe); err != nil {
		log.Fatal(err)
	}
	fmt.Println(report.Method, report.Task, report.Rows, report.Cols, report.Chosen.Lambda != "")
	// Output: falkon classification 1797 64 true
}

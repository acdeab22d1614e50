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
	// The first 600 rows keep the example quick (every row is a centre).
	x, y := dataset.MustSelectRows(data.Matrix(), first(600)), data.Y[:600]
	pipe, report, err := estimator.Fit(context.Background(), x, y, estimator.Options{Seed: 1})
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
	// Output: falkon classification 600 64 true
}

// first returns 0, 1, ..., n-1.
func first(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

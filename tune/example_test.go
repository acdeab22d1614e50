package tune_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/tune"
)

func ExampleMedianSigma() {
	// Points 0, 1, 2, 3 on a line: pairwise distances 1, 1, 1, 2, 2, 3.
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	s, _ := tune.MedianSigma(x, 0, 1)
	fmt.Println(s)
	// Output: 1.5
}

func ExampleAutoCenters() {
	// ceil(sqrt(n) ln n), capped by n and by the memory budget.
	fmt.Println(tune.AutoCenters(405, 0, zonal.Float64), tune.AutoCenters(60000, 0, zonal.Float64), tune.AutoCenters(60000, 64<<20, zonal.Float64))
	// Output: 121 2695 139
}

// Tune exact KRR on 300 digits: 5 sigmas around the median heuristic times
// 10 lambdas, 5-fold CV, five eigendecompositions per sigma in all.
func ExampleSearch() {
	d, _ := dataset.Digits()
	sub, _ := d.Subset(seq(300))
	x := sub.X
	x.Scale(1.0/16, x)
	y := mat.NewDense(300, 1, sub.Y)
	res, err := tune.Search(context.Background(), x, y, tune.SearchOptions{Method: tune.MethodExact, Seed: 1, Refit: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Encoding.Task, len(res.Encoding.Classes), "classes;", len(res.Rows), "settings;", res.Metric, res.Best.Mean > 0.95)
	// Output: classification 10 classes; 50 settings; accuracy true
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

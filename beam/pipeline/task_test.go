package pipeline

import (
	"context"
	"testing"

	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/solvers"
)

// The task is read off the label counts merged over bundles, as zonal fit
// reads it off the labels (solvers.DetectTask): ten digits with many rows
// each are classes even though every bundle sees each label few times;
// integers that each occur once are a regression target.
func TestSummaryTask(t *testing.T) {
	fn := &summaryFn{}
	classes := fn.CreateAccumulator()
	for b := 0; b < 4; b++ { // four bundles, 2 rows of each digit in each
		var y []float64
		for r := 0; r < 20; r++ {
			y = append(y, float64(r%10))
		}
		blk := Block{File: "f", Cols: 1, Y: y, Ptr: make([]int32, len(y)+1)}
		classes = fn.MergeAccumulators(classes, fn.AddInput(fn.CreateAccumulator(), blk))
	}
	if got := classes.LabelRows; len(got) != 10 || got[0] != 8 || got[9] != 8 {
		t.Fatalf("label rows %v, want 10 labels of 8 rows", got)
	}
	unique := fn.CreateAccumulator()
	var y []float64
	for r := 0; r < 40; r++ {
		y = append(y, float64(100+r))
	}
	unique = fn.AddInput(unique, Block{File: "g", Cols: 1, Y: y, Ptr: make([]int32, len(y)+1)})
	cfg := Config{Options: estimator.Options{Sigma: 1, Lambda: 1e-3, Centers: 2}, Model: "m.zonal"}
	for _, c := range []struct {
		s    Summary
		want solvers.Task
	}{{classes, solvers.TaskClassification}, {unique, solvers.TaskRegression}} {
		p, err := makePlan(context.Background(), cfg, c.s, Layout{Total: c.s.N, Cols: c.s.Cols, Files: c.s.Files, Counts: c.s.Counts})
		if err != nil {
			t.Fatal(err)
		}
		if solvers.Task(p.Task) != c.want {
			t.Errorf("task %v, want %v", solvers.Task(p.Task), c.want)
		}
	}
}

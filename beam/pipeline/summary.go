package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"math"
	"slices"
	"sort"

	"github.com/zonal-ml/zonal/solvers"
)

// maxLabels bounds the distinct labels a Summary keeps: past it the
// labels are taken as continuous (regression).
const maxLabels = 4096

// Summary is what one pass over the training Blocks learns: the row count
// per file (which fixes the global row order: files sorted by path, rows in
// file order), the dimension, the distinct labels and, when asked, the
// column means and sums of squared deviations (merged with Chan, Golub and
// LeVeque's pairwise update, so the combine order does not matter beyond
// rounding).
type Summary struct {
	N          int
	Cols       int
	Files      []string // sorted
	Counts     []int    // rows per file
	Labels     []float64
	LabelRows  []int // rows with each of Labels (the task is read off them)
	ManyLabels bool  // more than maxLabels distinct labels
	NonInteger bool  // some label is not an integer
	// NNZ counts the stored feature values and Sparse says some rows came
	// from LIBSVM files (the estimator's sparse shape).
	NNZ      int
	Sparse   bool
	Mean, M2 []float64
}

// summaryFn is the combiner of Summaries over Blocks.
type summaryFn struct {
	Moments bool // accumulate Mean and M2
}

func (fn *summaryFn) CreateAccumulator() Summary { return Summary{} }

func (fn *summaryFn) AddInput(a Summary, b Block) Summary {
	n := b.Rows()
	if n == 0 {
		return a
	}
	s := Summary{N: n, Cols: b.Cols, Files: []string{b.File}, Counts: []int{n}, NNZ: len(b.Val), Sparse: b.Sparse}
	s.Labels, s.LabelRows = countLabels(b.Y, nil)
	for _, v := range s.Labels {
		if v != math.Trunc(v) {
			s.NonInteger = true
			break
		}
	}
	if len(s.Labels) > maxLabels {
		s.Labels, s.LabelRows, s.ManyLabels = nil, nil, true
	}
	if fn.Moments {
		d := b.Cols
		s.Mean = make([]float64, d)
		s.M2 = make([]float64, d)
		row := make([]float64, d)
		for i := 0; i < n; i++ {
			b.rowDense(row, i, nil)
			for j, v := range row {
				s.Mean[j] += v
			}
		}
		for j := range s.Mean {
			s.Mean[j] /= float64(n)
		}
		for i := 0; i < n; i++ {
			b.rowDense(row, i, nil)
			for j, v := range row {
				r := v - s.Mean[j]
				s.M2[j] += r * r
			}
		}
	}
	return fn.MergeAccumulators(a, s)
}

func (fn *summaryFn) MergeAccumulators(a, b Summary) Summary {
	if a.N == 0 {
		return b
	}
	if b.N == 0 {
		return a
	}
	out := Summary{N: a.N + b.N, Cols: max(a.Cols, b.Cols), NNZ: a.NNZ + b.NNZ, Sparse: a.Sparse || b.Sparse}
	// Row counts per file.
	counts := map[string]int{}
	for i, f := range a.Files {
		counts[f] += a.Counts[i]
	}
	for i, f := range b.Files {
		counts[f] += b.Counts[i]
	}
	for f := range counts {
		out.Files = append(out.Files, f)
	}
	sort.Strings(out.Files)
	for _, f := range out.Files {
		out.Counts = append(out.Counts, counts[f])
	}
	// Labels.
	out.NonInteger = a.NonInteger || b.NonInteger
	out.ManyLabels = a.ManyLabels || b.ManyLabels
	if !out.ManyLabels {
		out.Labels, out.LabelRows = mergeLabels(a.Labels, a.LabelRows, b.Labels, b.LabelRows)
		if len(out.Labels) > maxLabels {
			out.Labels, out.LabelRows, out.ManyLabels = nil, nil, true
		}
	}
	// Moments: pad the shorter side with zero columns (missing LIBSVM
	// columns are zeros: mean 0, no deviation), then merge.
	if fn.Moments {
		d := out.Cols
		am, a2 := pad(a.Mean, d), pad(a.M2, d)
		bm, b2 := pad(b.Mean, d), pad(b.M2, d)
		na, nb, n := float64(a.N), float64(b.N), float64(out.N)
		out.Mean = make([]float64, d)
		out.M2 = make([]float64, d)
		for j := 0; j < d; j++ {
			delta := bm[j] - am[j]
			out.Mean[j] = am[j] + delta*nb/n
			out.M2[j] = a2[j] + b2[j] + delta*delta*na*nb/n
		}
	}
	return out
}

func (fn *summaryFn) ExtractOutput(a Summary) Summary { return a }

// mergeSummaries is the combiner of Summaries (of files' training rows).
type mergeSummaries struct{ Moments bool }

func (fn *mergeSummaries) MergeAccumulators(a, b Summary) Summary {
	return (&summaryFn{Moments: fn.Moments}).MergeAccumulators(a, b)
}

// trainSummaryFn reads a file again and sums the Summary of its training
// rows (the layout's split), with the column moments.
type trainSummaryFn struct{ In parseSpec }

func (fn *trainSummaryFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, l Layout, emit func(Summary)) error {
	sum := &summaryFn{Moments: true}
	acc := sum.CreateAccumulator()
	err := readTrainRows(ctx, fn.In, f, l, func(b Block) error {
		acc = sum.AddInput(acc, b)
		return nil
	})
	if err != nil {
		return err
	}
	if acc.N > 0 {
		emit(acc)
	}
	return nil
}

// pad returns v extended with zeros to length d.
func pad(v []float64, d int) []float64 {
	if len(v) >= d {
		return v
	}
	return append(slices.Clone(v), make([]float64, d-len(v))...)
}

// countLabels returns the distinct values of y, sorted, and how many rows
// hold each (weights w per row, nil = 1 each).
func countLabels(y []float64, w []int) ([]float64, []int) {
	idx := make([]int, len(y))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return y[idx[i]] < y[idx[j]] })
	var labels []float64
	var rows []int
	for _, i := range idx {
		c := 1
		if w != nil {
			c = w[i]
		}
		if k := len(labels) - 1; k >= 0 && labels[k] == y[i] {
			rows[k] += c
			continue
		}
		labels, rows = append(labels, y[i]), append(rows, c)
	}
	return labels, rows
}

// mergeLabels merges two label sets with their row counts.
func mergeLabels(la []float64, ra []int, lb []float64, rb []int) ([]float64, []int) {
	y := append(slices.Clone(la), lb...)
	w := append(slices.Clone(ra), rb...)
	if len(w) != len(y) { // summaries from before row counts: one row each
		w = nil
	}
	return countLabels(y, w)
}

// labelSample is a label vector with the structure solvers.DetectTask reads
// (which values, and whether each has solvers.MinClassRows rows), at most
// MinClassRows copies of each distinct label.
func labelSample(labels []float64, rows []int) []float64 {
	var y []float64
	for k, v := range labels {
		c := solvers.MinClassRows
		if k < len(rows) {
			c = min(c, rows[k])
		}
		for ; c > 0; c-- {
			y = append(y, v)
		}
	}
	return y
}

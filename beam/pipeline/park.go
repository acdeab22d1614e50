package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/solvers"
)

// Centroids are ParK's Q cell centres with their k(c_q, c_q).
type Centroids struct {
	D    int
	X    []float64 // Q x D
	Diag []float64
}

// Cell is one fitted ParK cell: a FALKON model file payload.
type Cell struct {
	Q     int
	Rows  int
	Model []byte // solvers.Falkon MarshalBinary
}

// fitParK adds ParK's stages: the centroid sample (every row by default)
// is gathered on one worker, which picks Q centroids by the farthest-point
// rule in the RKHS (the rule and first draw of solvers.FitParK); every
// worker assigns its rows to the nearest centroid; the rows are grouped by
// cell and each cell is fitted by FALKON on one worker, independently of
// the others (cell q: M_q = round(M n_q / n) centres, lambda n / n_q, seed
// Seed+q, as solvers.FitParK); one worker gathers the cells into a ParK
// model file.
func fitParK(s beam.Scope, sp parseSpec, plan, files beam.PCollection) beam.PCollection {
	sel := beam.ParDo(s.Scope("sample"), &selectFn{In: sp, Which: "sample"}, files, beam.SideInput{Input: plan})
	sample := beam.Combine(s.Scope("gather"), &gatherFn{}, sel)
	cents := beam.ParDo(s.Scope("centroids"), &centroidsFn{}, sample, beam.SideInput{Input: plan})
	assigned := beam.ParDo(s.Scope("assign"), &assignFn{In: sp}, files, beam.SideInput{Input: plan}, beam.SideInput{Input: cents})
	grouped := beam.GroupByKey(s.Scope("cells"), assigned)
	cells := beam.ParDo(s.Scope("fitcell"), &cellFn{}, grouped, beam.SideInput{Input: plan})
	all := beam.Combine(s.Scope("gathercells"), &cellsFn{}, cells)
	return beam.ParDo(s.Scope("write"), &writeParKFn{}, all, beam.SideInput{Input: plan}, beam.SideInput{Input: cents})
}

// centroidsFn picks the centroids from the sample.
type centroidsFn struct{}

func (centroidsFn) ProcessElement(ctx context.Context, r Rows, p Plan, emit func(Centroids)) error {
	k, err := p.kernel()
	if err != nil {
		return err
	}
	n, d, Q := r.n(), r.D, p.Cells
	if Q > n {
		return fmt.Errorf("%w: %d cells from a sample of %d rows", zonal.ErrParam, Q, n)
	}
	row := func(i int) []float64 { return r.X[i*d : (i+1)*d] }
	diag := make([]float64, n)
	dist := make([]float64, n)
	for i := range diag {
		diag[i] = k.Eval(row(i), row(i))
		dist[i] = math.Inf(1)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x5851f42d4c957f2d))
	next := rng.IntN(n)
	out := Centroids{D: d}
	for q := 0; q < Q; q++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		out.X = append(out.X, row(next)...)
		out.Diag = append(out.Diag, diag[next])
		c := row(next)
		far, farD := -1, -1.0
		for i := 0; i < n; i++ {
			if di := diag[i] + diag[next] - 2*k.Eval(row(i), c); di < dist[i] {
				dist[i] = di
			}
			if dist[i] > farD {
				far, farD = i, dist[i]
			}
		}
		if q+1 < Q && !(farD > 0) {
			return fmt.Errorf("%w: only %d distinct points in feature space, cannot make %d cells", zonal.ErrParam, q+1, Q)
		}
		next = far
	}
	emit(out)
	return nil
}

// assignFn reads a file again and keys every training row by its cell: the
// nearest centroid in the RKHS, ||phi(x) - phi(c_q)||^2 = k(x,x) +
// k(c_q,c_q) - 2 k(x,c_q), ties to the smaller index (the rule ParK models
// predict with). It emits one Rows per cell and block.
type assignFn struct {
	In   parseSpec
	rows rowCounter
}

func (fn *assignFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, p Plan, c Centroids, emit func(int, Rows)) error {
	k, err := p.kernel()
	if err != nil {
		return err
	}
	sc := p.scaler()
	Q := len(c.Diag)
	row := make([]float64, p.D)
	return readRows(ctx, fn.In, f, p.Layout, func(b Block, off int) error {
		if b.Cols > p.D {
			return fmt.Errorf("%w: %s rows %d..%d have %d columns, the data set %d", zonal.ErrRange, b.File, b.First+1, b.First+b.Rows(), b.Cols, p.D)
		}
		groups := make([]Rows, Q)
		trained := 0
		for i := 0; i < b.Rows(); i++ {
			g := off + b.First + i
			if !p.Layout.isTrain(g) {
				continue
			}
			b.rowDense(row, i, sc)
			best, bestD := 0, math.Inf(1)
			for q := 0; q < Q; q++ {
				if dq := c.Diag[q] - 2*k.Eval(row, c.X[q*c.D:(q+1)*c.D]); dq < bestD {
					best, bestD = q, dq
				}
			}
			gr := &groups[best]
			gr.D = p.D
			gr.G, gr.X, gr.Y = append(gr.G, g), append(gr.X, row...), append(gr.Y, b.Y[i])
			trained++
		}
		for q, g := range groups {
			if len(g.G) > 0 {
				emit(q, g)
			}
		}
		fn.rows.inc(ctx, trained)
		return nil
	})
}

// cellFn fits one cell by FALKON on its rows in global order.
type cellFn struct{}

func (cellFn) ProcessElement(ctx context.Context, q int, parts func(*Rows) bool, p Plan, emit func(Cell)) error {
	defer addMillis(ctx, "cells_ms", time.Now())
	var all []Rows
	var r Rows
	nq := 0
	for parts(&r) {
		all = append(all, r)
		nq += len(r.G)
		r = Rows{}
	}
	if nq == 0 {
		return fmt.Errorf("%w: ParK cell %d has no rows", zonal.ErrState, q)
	}
	type ref struct{ part, i int }
	refs := make([]ref, 0, nq)
	for pi, part := range all {
		for i := range part.G {
			refs = append(refs, ref{pi, i})
		}
	}
	sort.Slice(refs, func(a, b int) bool { return all[refs[a].part].G[refs[a].i] < all[refs[b].part].G[refs[b].i] })
	d := p.D
	x := mat.NewDense(nq, d, nil)
	labels := make([]float64, nq)
	for j, rf := range refs {
		part := all[rf.part]
		copy(x.RawRowView(j), part.X[rf.i*d:(rf.i+1)*d])
		labels[j] = part.Y[rf.i]
	}
	y, err := p.encoding().Targets(labels)
	if err != nil {
		return fmt.Errorf("ParK cell %d: %w", q, err)
	}
	k, err := p.kernel()
	if err != nil {
		return err
	}
	mq := int(math.Round(float64(p.Centers) * float64(nq) / float64(p.N)))
	mq = max(1, min(mq, nq))
	f, err := solvers.FitFalkon(ctx, k, x, y, p.Lambda*float64(p.N)/float64(nq), solvers.FalkonOptions{
		Centers: mq, Iterations: p.Iterations, Seed: p.Seed + uint64(q),
	})
	if err != nil {
		return fmt.Errorf("ParK cell %d (%d rows, %d centres): %w", q, nq, mq, err)
	}
	b, err := f.MarshalBinary()
	if err != nil {
		return err
	}
	emit(Cell{Q: q, Rows: nq, Model: b})
	return nil
}

// cellsFn gathers the cells, ordered by index.
type cellsFn struct{}

func (cellsFn) CreateAccumulator() []Cell { return nil }

func (cellsFn) AddInput(a []Cell, c Cell) []Cell { return append(a, c) }

func (cellsFn) MergeAccumulators(a, b []Cell) []Cell { return append(a, b...) }

func (cellsFn) ExtractOutput(a []Cell) []Cell {
	a = slices.Clone(a)
	slices.SortFunc(a, func(x, y Cell) int { return x.Q - y.Q })
	return a
}

// writeParKFn builds the ParK model from the cells and writes it.
type writeParKFn struct{}

func (writeParKFn) ProcessElement(ctx context.Context, cells []Cell, p Plan, c Centroids, emit func(FitReport)) error {
	k, err := p.kernel()
	if err != nil {
		return err
	}
	Q := len(c.Diag)
	if len(cells) != Q {
		return fmt.Errorf("%w: %d of %d ParK cells have rows", zonal.ErrState, len(cells), Q)
	}
	models := make([]*solvers.Falkon, Q)
	rows := 0
	for i, cell := range cells {
		if cell.Q != i {
			return fmt.Errorf("%w: ParK cell %d is missing", zonal.ErrState, i)
		}
		m, err := solvers.UnmarshalModel(solvers.KindFalkon, cell.Model, solvers.Options{})
		if err != nil {
			return err
		}
		models[i] = m.(*solvers.Falkon)
		rows += cell.Rows
	}
	pk, err := solvers.NewParKModel(k, mat.NewDense(Q, c.D, slices.Clone(c.X)), models, p.Lambda, solvers.Options{})
	if err != nil {
		return err
	}
	if err := writeModel(ctx, p.Model, p, pk); err != nil {
		return err
	}
	emit(FitReport{Model: p.Model, Kind: pk.Kind(), Rows: rows, Cols: p.D, Centers: p.Centers, Cells: Q})
	return nil
}

package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Rows is a set of dense rows with their global indices, sorted by index:
// the Nystrom centres or the ParK centroid sample.
type Rows struct {
	G []int     // global row indices (ascending); nil for given centres
	D int       // columns
	X []float64 // len(G) x D (or len(X)/D rows), row-major
	Y []float64 // the rows' labels (ParK sample only)
}

func (r Rows) n() int {
	if r.D == 0 {
		return 0
	}
	return len(r.X) / r.D
}

func (r Rows) dense() *mat.Dense { return mat.NewDense(r.n(), r.D, slices.Clone(r.X)) }

// selectFn reads a file again and emits its rows whose global index is in
// the plan's CenterIdx (Which = "centers") or SampleIdx (Which = "sample";
// nil there means every training row), scaled like the data.
type selectFn struct {
	In    parseSpec
	Which string
}

func (fn *selectFn) ProcessElement(ctx context.Context, f fileio.ReadableFile, p Plan, emit func(Rows)) error {
	idx := p.CenterIdx
	if fn.Which == "sample" {
		idx = p.SampleIdx
	}
	all := fn.Which == "sample" && idx == nil
	sc := p.scaler()
	out := Rows{D: p.D}
	row := make([]float64, p.D)
	err := readRows(ctx, fn.In, f, p.Layout, func(b Block, off int) error {
		for i := 0; i < b.Rows(); i++ {
			g := off + b.First + i
			if all {
				if !p.Layout.isTrain(g) {
					continue
				}
			} else if _, ok := slices.BinarySearch(idx, g); !ok {
				continue
			}
			if b.Cols > p.D {
				return fmt.Errorf("%w: %s row %d has %d columns, the data set %d", zonal.ErrRange, b.File, b.First+i+1, b.Cols, p.D)
			}
			b.rowDense(row, i, sc)
			out.G = append(out.G, g)
			out.X = append(out.X, row...)
			out.Y = append(out.Y, b.Y[i])
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(out.G) > 0 {
		emit(out)
	}
	return nil
}

// gatherFn is the combiner that merges Rows in global-index order.
type gatherFn struct{}

func (gatherFn) CreateAccumulator() Rows { return Rows{} }

func (fn gatherFn) AddInput(a, b Rows) Rows { return fn.MergeAccumulators(a, b) }

func (gatherFn) MergeAccumulators(a, b Rows) Rows {
	if len(a.G) == 0 {
		return b
	}
	if len(b.G) == 0 {
		return a
	}
	d := a.D
	out := Rows{D: d, G: make([]int, 0, len(a.G)+len(b.G)), X: make([]float64, 0, len(a.X)+len(b.X)), Y: make([]float64, 0, len(a.Y)+len(b.Y))}
	i, j := 0, 0
	for i < len(a.G) || j < len(b.G) {
		if j == len(b.G) || (i < len(a.G) && a.G[i] < b.G[j]) {
			out.G, out.X, out.Y = append(out.G, a.G[i]), append(out.X, a.X[i*d:(i+1)*d]...), append(out.Y, a.Y[i])
			i++
		} else {
			out.G, out.X, out.Y = append(out.G, b.G[j]), append(out.X, b.X[j*d:(j+1)*d]...), append(out.Y, b.Y[j])
			j++
		}
	}
	return out
}

func (gatherFn) ExtractOutput(a Rows) Rows { return a }

// givenCentersFn emits the plan's given centres, scaled like the data.
type givenCentersFn struct{}

func (givenCentersFn) ProcessElement(_ context.Context, p Plan, emit func(Rows)) error {
	if len(p.GivenCenters) == 0 || p.GivenCols == 0 || len(p.GivenCenters)%p.GivenCols != 0 {
		return fmt.Errorf("%w: no given centres", zonal.ErrParam)
	}
	m := len(p.GivenCenters) / p.GivenCols
	sc := p.scaler()
	out := Rows{D: p.D, X: make([]float64, m*p.D)}
	for i := 0; i < m; i++ {
		row := out.X[i*p.D : (i+1)*p.D]
		copy(row, p.GivenCenters[i*p.GivenCols:(i+1)*p.GivenCols])
		sc.apply(row)
	}
	emit(out)
	return nil
}

// readRows reads file f again, as the first pass read it (bad lines are
// dropped: the first pass reported them), and calls fn with every block and
// the global index of the file's first row. The file must have the rows the
// first pass counted.
func readRows(ctx context.Context, sp parseSpec, f fileio.ReadableFile, l Layout, fn func(b Block, off int) error) error {
	i, err := l.index(f.Metadata.Path)
	if err != nil {
		return err
	}
	off, rows := l.Offsets[i], 0
	if err := sp.readFile(ctx, f, func(b Block) error {
		rows += b.Rows()
		return fn(b, off)
	}, nil); err != nil {
		return err
	}
	if rows != l.Counts[i] {
		return fmt.Errorf("%w: %s has %d rows, the first pass read %d (did it change?)", zonal.ErrState, f.Metadata.Path, rows, l.Counts[i])
	}
	return nil
}

// readTrainRows is readRows keeping the training rows of each block.
func readTrainRows(ctx context.Context, sp parseSpec, f fileio.ReadableFile, l Layout, fn func(Block) error) error {
	return readRows(ctx, sp, f, l, func(b Block, off int) error {
		t := b.keep(func(i int) bool { return l.isTrain(off + b.First + i) })
		if t.Rows() == 0 {
			return nil
		}
		return fn(t)
	})
}

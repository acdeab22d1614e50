package pipeline

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Block is a run of consecutive rows of one input file, the unit the
// pipelines pass between stages. The features are stored sparse (CSR) so a
// LIBSVM shard costs what it costs on disk, and a block of a file whose
// highest index is below the data set's dimension is padded with zeros when
// it is made dense.
type Block struct {
	File  string    // the file's path, as matched
	First int       // 0-based row index in the file of the block's first row
	Cols  int       // feature columns the block needs (highest index + 1)
	Y     []float64 // labels, one per row
	Ptr   []int32   // CSR row pointers, len(Y)+1
	Idx   []int32   // CSR column indices
	Val   []float64 // CSR values
	// Sparse says the rows come from a LIBSVM file (sparse input for the
	// estimator's plan), not a CSV one.
	Sparse bool
}

// Rows is the number of rows in the block.
func (b Block) Rows() int { return len(b.Y) }

// dense returns the rows as an n x d matrix, each row transformed by
// (x - mean) / scale when sc is not nil.
//
// Errors: zonal.ErrRange when the block has more than d columns.
func (b Block) dense(d int, sc *scaler) (*mat.Dense, error) {
	if b.Cols > d {
		return nil, fmt.Errorf("%w: %s rows %d..%d have %d feature columns, the data set has %d",
			zonal.ErrRange, b.File, b.First+1, b.First+b.Rows(), b.Cols, d)
	}
	n := b.Rows()
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for p := b.Ptr[i]; p < b.Ptr[i+1]; p++ {
			row[b.Idx[p]] = b.Val[p]
		}
		sc.apply(row)
	}
	return x, nil
}

// rowDense writes row i, padded and scaled, to dst (length d).
func (b Block) rowDense(dst []float64, i int, sc *scaler) {
	clear(dst)
	for p := b.Ptr[i]; p < b.Ptr[i+1]; p++ {
		dst[b.Idx[p]] = b.Val[p]
	}
	sc.apply(dst)
}

// keep returns the block of the rows i for which in(i) holds (b itself
// when that is every row); First is then the file row of the first row
// kept, and Cols stays b's (the dimension is the whole file's, as for
// `zonal fit`, which splits the rows after reading them).
func (b Block) keep(in func(i int) bool) Block {
	all := true
	for i := 0; i < b.Rows() && all; i++ {
		all = in(i)
	}
	if all {
		return b
	}
	out := Block{File: b.File, First: -1, Cols: b.Cols, Ptr: []int32{0}, Sparse: b.Sparse}
	for i := 0; i < b.Rows(); i++ {
		if !in(i) {
			continue
		}
		if out.First < 0 {
			out.First = b.First + i
		}
		lo, hi := b.Ptr[i], b.Ptr[i+1]
		out.Y = append(out.Y, b.Y[i])
		out.Idx = append(out.Idx, b.Idx[lo:hi]...)
		out.Val = append(out.Val, b.Val[lo:hi]...)
		out.Ptr = append(out.Ptr, int32(len(out.Idx)))
	}
	out.First = max(out.First, 0)
	return out
}

// blockBuilder collects rows into Blocks of at most size rows.
type blockBuilder struct {
	file   string
	size   int
	sparse bool
	cur    Block
	next   int // file row index of the next row
	emit   func(Block)
}

func newBlockBuilder(file string, size int, sparse bool, emit func(Block)) *blockBuilder {
	b := &blockBuilder{file: file, size: size, sparse: sparse, emit: emit}
	b.reset()
	return b
}

func (bb *blockBuilder) reset() {
	bb.cur = Block{File: bb.file, First: bb.next, Ptr: []int32{0}, Sparse: bb.sparse}
}

// add appends one row given by its non-zero entries (idx ascending).
func (bb *blockBuilder) add(y float64, idx []int32, val []float64) {
	bb.cur.Y = append(bb.cur.Y, y)
	bb.cur.Idx = append(bb.cur.Idx, idx...)
	bb.cur.Val = append(bb.cur.Val, val...)
	bb.cur.Ptr = append(bb.cur.Ptr, int32(len(bb.cur.Idx)))
	if len(idx) > 0 {
		bb.cur.Cols = max(bb.cur.Cols, int(idx[len(idx)-1])+1)
	}
	bb.next++
	if len(bb.cur.Y) == bb.size {
		bb.flush()
	}
}

// addDense appends one dense row (its zeros are dropped).
func (bb *blockBuilder) addDense(y float64, row []float64) {
	bb.cur.Y = append(bb.cur.Y, y)
	for j, v := range row {
		if v != 0 {
			bb.cur.Idx = append(bb.cur.Idx, int32(j))
			bb.cur.Val = append(bb.cur.Val, v)
		}
	}
	bb.cur.Ptr = append(bb.cur.Ptr, int32(len(bb.cur.Idx)))
	bb.cur.Cols = max(bb.cur.Cols, len(row))
	bb.next++
	if len(bb.cur.Y) == bb.size {
		bb.flush()
	}
}

// flush emits the current block if it has rows.
func (bb *blockBuilder) flush() {
	if len(bb.cur.Y) > 0 {
		bb.cur.Ptr = slices.Clip(bb.cur.Ptr)
		bb.emit(bb.cur)
	}
	bb.reset()
}

// scaler is the input transform x' = (x - Mean) / Scale of a model file
// (nil: none).
type scaler struct{ mean, scale []float64 }

func newScaler(mean, scale []float64) *scaler {
	if len(mean) == 0 {
		return nil
	}
	return &scaler{mean: mean, scale: scale}
}

func (s *scaler) apply(x []float64) {
	if s == nil {
		return
	}
	for j, v := range x {
		x[j] = (v - s.mean[j]) / s.scale[j]
	}
}

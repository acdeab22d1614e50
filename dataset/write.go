package dataset

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// WriteLIBSVM writes the rows of x with labels y as LIBSVM text: per row
// "label idx:value ..." with 1-based indices and the nonzero values only.
// Numbers are written in the shortest form that reads back to the same
// float64 (NaN and ±Inf as "NaN", "+Inf", "-Inf", which ReadLIBSVM accepts
// with AllowNonFinite), so ReadLIBSVM with MinCols = d returns x and y
// exactly (a -0 entry, being zero, is written as absent and reads as +0).
func WriteLIBSVM(w io.Writer, x mat.Matrix, y []float64) error {
	n, d := x.Dims()
	if len(y) != n {
		return fmt.Errorf("%w: WriteLIBSVM: %d rows, %d labels", zonal.ErrShape, n, len(y))
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	for i := 0; i < n; i++ {
		buf = strconv.AppendFloat(buf[:0], y[i], 'g', -1, 64)
		for j := 0; j < d; j++ {
			v := x.At(i, j)
			if v == 0 {
				continue
			}
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(j+1), 10)
			buf = append(buf, ':')
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("dataset: WriteLIBSVM: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: WriteLIBSVM: %w", err)
	}
	return nil
}

// WriteCSV writes a header and the rows of x as CSV. When y is not nil its
// column comes first, named "y"; the features follow, named by names (nil
// gives "x1".."xd"; a name holding a comma, quote or surrounding space is
// quoted). Numbers are formatted as in WriteLIBSVM, so ReadCSV returns x, y
// and names exactly. A feature named "y" next to a target is an error
// (the file could not be read back unambiguously).
func WriteCSV(w io.Writer, x mat.Matrix, y []float64, names []string) error {
	n, d := x.Dims()
	if y != nil && len(y) != n {
		return fmt.Errorf("%w: WriteCSV: %d rows, %d targets", zonal.ErrShape, n, len(y))
	}
	if names != nil && len(names) != d {
		return fmt.Errorf("%w: WriteCSV: %d columns, %d names", zonal.ErrShape, d, len(names))
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	sep := false
	if y != nil {
		buf = append(buf, 'y')
		sep = true
	}
	for j := 0; j < d; j++ {
		nm := "x" + strconv.Itoa(j+1)
		if names != nil {
			nm = names[j]
		}
		if nm == "" || (y != nil && nm == "y") {
			return fmt.Errorf("%w: WriteCSV: feature %d has the name %q", zonal.ErrParam, j, nm)
		}
		if sep {
			buf = append(buf, ',')
		}
		sep = true
		if strings.ContainsAny(nm, ",\"\r\n") || strings.TrimSpace(nm) != nm {
			if strings.ContainsAny(nm, "\r\n") {
				return fmt.Errorf("%w: WriteCSV: feature name %q holds a line break", zonal.ErrParam, nm)
			}
			nm = `"` + strings.ReplaceAll(nm, `"`, `""`) + `"`
		}
		buf = append(buf, nm...)
	}
	buf = append(buf, '\n')
	for i := 0; i < n; i++ {
		sep = false
		if y != nil {
			buf = strconv.AppendFloat(buf, y[i], 'g', -1, 64)
			sep = true
		}
		for j := 0; j < d; j++ {
			if sep {
				buf = append(buf, ',')
			}
			sep = true
			buf = strconv.AppendFloat(buf, x.At(i, j), 'g', -1, 64)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("dataset: WriteCSV: %w", err)
		}
		buf = buf[:0]
	}
	if _, err := bw.Write(buf); err != nil {
		return fmt.Errorf("dataset: WriteCSV: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: WriteCSV: %w", err)
	}
	return nil
}

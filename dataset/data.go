package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Options controls the readers. The zero value is valid: CSV target "y" (or
// the first column), no NaN/Inf, no padding, no column limit beyond MaxIndex.
type Options struct {
	// Format selects the parser for ReadFile: "libsvm" or "csv". Empty means
	// by file extension (see ReadFile). Read* functions ignore it.
	Format string

	// Header says whether a CSV starts with a header row: "yes", "no", or
	// "auto" (also ""): a first row whose fields all read as numbers is
	// data, anything else is the header. Ignored for LIBSVM.
	Header string

	// Target selects the CSV target column: a column name from the header,
	// or, when no column has that name, a 0-based column index written in
	// decimal ("0" is the first column). Empty means the column named "y" if
	// the header has one, else the first column. Ignored for LIBSVM.
	Target string
	// NoTarget reads a CSV without a target: every column is a feature and
	// Data.Y is nil (for unlabeled prediction input). Ignored for LIBSVM.
	NoTarget bool
	// TargetOptional reads a CSV whose target column may be absent: when
	// the column named by Target (or, with Target empty, a column named
	// "y") is missing, every column is a feature and Data.Y is nil, instead
	// of an error (or, with Target empty, taking the first column). Meant for
	// prediction input that may or may not carry labels.
	TargetOptional bool
	// TargetIfExtra reads a CSV that may or may not hold a target column,
	// told apart by the column count: a file of exactly MaxCols columns has
	// none (every column is a feature, as with NoTarget), any other has its
	// target chosen by Target. Meant for prediction input for a model of d
	// features, read with MinCols = MaxCols = d: d + 1 columns are labelled
	// rows, d columns unlabelled ones. Ignored without MaxCols, and for LIBSVM.
	TargetIfExtra bool

	// AllowNonFinite accepts NaN, Inf and Infinity (any case, optional sign)
	// as values and labels. By default they are errors wrapping zonal.ErrNonFinite.
	// Numbers too large for float64 (1e400) are always errors.
	AllowNonFinite bool

	// MinCols pads a LIBSVM file to at least this many feature columns.
	// LIBSVM omits zeros, so a test file whose highest index is below the
	// model's dimension d is normal: read it with MinCols = d. For CSV, a
	// file with fewer feature columns is an error wrapping zonal.ErrRange.
	MinCols int
	// MaxCols, when positive, is the largest feature count accepted: a LIBSVM
	// index above it, or a CSV with more feature columns, is an error
	// wrapping zonal.ErrRange (with the line number). Use MinCols = MaxCols = d to
	// read test data for a model of dimension d.
	MaxCols int

	// MaxRows, when positive, stops reading after that many data rows.
	MaxRows int
	// NoDense skips building the dense X (LIBSVM only; Data.X is nil and the
	// data are in Data.Sparse). The MaxDenseElements limit then does not apply.
	NoDense bool
	// NoSparse drops the CSR of a LIBSVM file (Data.Sparse is nil): the
	// dense X is filled straight from the parsed entries, which lowers the
	// peak memory by 16 bytes per stored entry. Use it when only X is
	// needed. NoSparse with NoDense is an error.
	NoSparse bool
}

func (o *Options) check() error {
	if o.MinCols < 0 || o.MaxCols < 0 || o.MaxRows < 0 {
		return fmt.Errorf("%w: negative MinCols, MaxCols or MaxRows", zonal.ErrParam)
	}
	if o.MaxCols > 0 && o.MinCols > o.MaxCols {
		return fmt.Errorf("%w: MinCols %d > MaxCols %d", zonal.ErrParam, o.MinCols, o.MaxCols)
	}
	switch o.Header {
	case "", "auto", "yes", "no":
	default:
		return fmt.Errorf("%w: Header %q (want auto, yes or no)", zonal.ErrParam, o.Header)
	}
	if o.NoDense && o.NoSparse {
		return fmt.Errorf("%w: NoDense and NoSparse leave nothing to read", zonal.ErrParam)
	}
	if o.MinCols > MaxIndex {
		return fmt.Errorf("%w: MinCols %d above the limit MaxIndex = %d", zonal.ErrTooLarge, o.MinCols, MaxIndex)
	}
	return nil
}

// Data is a data set: n rows (points) of d features, with targets.
type Data struct {
	// X is the n x d feature matrix (nil only when read with NoDense).
	X *mat.Dense
	// Y holds the n targets (labels as float64), nil for CSV read with NoTarget.
	Y []float64
	// Sparse is the same matrix in CSR form; set by the LIBSVM reader (it
	// holds the entries present in the file, explicit zeros included), nil
	// for CSV. Use NewCSRFromDense to build one from X.
	Sparse *CSR
	// Names holds the d feature names from a CSV header; nil for LIBSVM.
	Names []string
	// TargetName is the CSV target column's name ("" for LIBSVM or NoTarget).
	TargetName string
}

// Dims returns the number of rows and feature columns.
func (d *Data) Dims() (n, cols int) {
	switch {
	case d.X != nil:
		return d.X.Dims()
	case d.Sparse != nil:
		return d.Sparse.Dims()
	}
	return len(d.Y), 0
}

// Matrix returns the rows as a fit takes them: the CSR of a LIBSVM file
// (the estimator keeps it sparse or densifies it), else X.
func (d *Data) Matrix() mat.Matrix {
	if d.Sparse != nil {
		return d.Sparse
	}
	return d.X
}

// Subset returns a new Data holding the given rows, in the given order
// (repeats allowed), copied: X, Y and Sparse rows; Names are shared.
// An empty rows is an error wrapping zonal.ErrEmpty (gonum has no 0-row matrix);
// an index outside [0, n) is an error wrapping zonal.ErrRange.
func (d *Data) Subset(rows []int) (*Data, error) {
	n, c := d.Dims()
	for k, r := range rows {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("%w: Subset: rows[%d] = %d not in [0, %d)", zonal.ErrRange, k, r, n)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: Subset of no rows", zonal.ErrEmpty)
	}
	out := &Data{Names: d.Names, TargetName: d.TargetName}
	if d.X != nil {
		out.X = mat.NewDense(len(rows), c, nil)
		for k, r := range rows {
			out.X.SetRow(k, d.X.RawRowView(r))
		}
	}
	if d.Y != nil {
		out.Y = make([]float64, len(rows))
		for k, r := range rows {
			out.Y[k] = d.Y[r]
		}
	}
	if d.Sparse != nil {
		s, err := d.Sparse.Subset(rows)
		if err != nil {
			return nil, err
		}
		out.Sparse = s
	}
	return out, nil
}

// FormatOf returns the format a file's name says, after removing a ".gz"
// suffix: ".libsvm", ".svm" -> "libsvm"; ".csv" -> "csv". Compression is
// detected from the content, not the name. Errors: zonal.ErrParam naming
// the file when the name says neither.
func FormatOf(path string) (string, error) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	switch filepath.Ext(base) {
	case ".libsvm", ".svm":
		return "libsvm", nil
	case ".csv":
		return "csv", nil
	}
	return "", fmt.Errorf("%w: %s: cannot tell the format from the name (want .libsvm, .svm or .csv, optionally .gz); set Options.Format", zonal.ErrParam, path)
}

// ReadFile reads a data file. The format comes from opts.Format, or else
// from the name, after removing a ".gz" suffix: ".libsvm", ".svm" →
// LIBSVM; ".csv" → CSV. Compression is detected from the content (gzip
// magic bytes), not the name. Errors carry the path. The path "-" reads
// standard input and needs opts.Format.
func ReadFile(path string, opts Options) (*Data, error) {
	format := strings.ToLower(opts.Format)
	if path == "-" && format == "" {
		return nil, fmt.Errorf("%w: reading standard input (\"-\") needs Options.Format", zonal.ErrParam)
	}
	if format == "" {
		var err error
		if format, err = FormatOf(path); err != nil {
			return nil, err
		}
	}
	var read func(*os.File, Options) (*Data, error)
	switch format {
	case "libsvm", "svm":
		read = func(f *os.File, o Options) (*Data, error) { return ReadLIBSVM(f, o) }
	case "csv":
		read = func(f *os.File, o Options) (*Data, error) { return ReadCSV(f, o) }
	default:
		return nil, fmt.Errorf("%w: unknown Options.Format %q (want libsvm or csv)", zonal.ErrParam, opts.Format)
	}
	f := os.Stdin
	if path != "-" {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		defer f.Close()
	}
	d, err := read(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

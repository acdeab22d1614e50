// Package dataset reads data sets for zonal's kernel methods and prepares
// them: LIBSVM and CSV readers (plain or gzip), a CSR sparse matrix,
// standardization, text transforms (tf-idf, L2 rows), seeded splits, and
// an embedded default data set.
//
// # Data
//
// A data set is n points (rows) of d features: Data.X is the n x d
// *mat.Dense, Data.Y the n targets (class labels are stored as float64),
// Data.Sparse the same X in compressed sparse row form when read from
// LIBSVM (algorithms that run in input-sparsity time, O(nnz(X)), take it),
// Data.Names the CSV feature names.
//
// # Reading
//
// ReadLIBSVM and ReadCSV read from an io.Reader; ReadFile picks the
// parser from the file name (.libsvm, .svm, .csv, each optionally .gz) or
// Options.Format. Gzip is recognized by its magic bytes 1f 8b, so a
// compressed stream needs no special name. Numbers are parsed strictly
// (decimal only; NaN/Inf rejected unless Options.AllowNonFinite). Any
// malformed line is an error naming the line number and the problem, of
// type *ParseError wrapping zonal.ErrFormat (and zonal.ErrNonFinite, zonal.ErrRange or
// zonal.ErrTooLarge where apt); input without rows wraps zonal.ErrEmpty. Fixed limits
// (MaxIndex, MaxDenseElements, MaxLineBytes) stop a corrupt file from
// triggering huge allocations.
//
// A CSV's first line is its header unless every field of it reads as a
// number: then it is the first data row and the columns are named by their
// index (Options.Header forces either reading).
//
// LIBSVM omits zero values, so a file alone does not tell d: it is the
// highest index present. Test data for a model of dimension d is read with
// Options{MinCols: d, MaxCols: d}: rows are padded with zero columns up to
// d, and an index above d is an error. For CSV the same options make a
// different column count an error; Options.TargetOptional reads prediction
// input that may lack the target column.
//
// The readers run as a pipeline: one goroutine reads the input (and
// decompresses gzip) into chunks of about 1 MiB cut at line ends,
// GOMAXPROCS goroutines parse chunks independently (numbers without an
// allocation per field), and the caller takes the parsed chunks in input
// order, applying what depends on the rows before a chunk (Options.MaxRows,
// MaxDenseElements, the first error in line order). So the values, errors
// and line numbers are those of a reader going line by line, and the
// speed grows with the cores until decompression or the disk is the limit.
// Memory beyond the result is a few chunks per core.
//
// NewBlockReader reads the same formats in blocks of rows (a *Data per
// block: a dense X, or for LIBSVM a CSR, and the labels), through the same
// pipeline and parser, for inputs larger than memory: `zonal predict`
// reads, predicts and prints block by block.
//
// WriteLIBSVM and WriteCSV write data back with the shortest round-trip
// number formatting, so a write followed by a read returns the same
// float64 values.
//
// # Scaling
//
// Standardizer maps column j to (x_j - mean_j) / std_j, with mean_j the
// training mean and std_j the population standard deviation
// sqrt((1/n) sum_i (x_ij - mean_j)^2); constant columns get std_j = 1.
// MinMaxScaler maps column j to (x_j - min_j) / (max_j - min_j). Both are
// fitted on training rows and applied unchanged to test rows; their
// parameters are exported so models can store them.
//
// # Text
//
// TextTransform (FitTextTransform) is for count data such as bag-of-words
// rows: tf-idf, x_ij idf_j with the smoothed idf_j = ln((1+n)/(1+df_j)) + 1
// of the training rows (df_j the rows where word j occurs), then, when
// asked, division of every row by its Euclidean norm. Both keep zeros
// zero, so ApplyCSR transforms a CSR in O(nnz) and keeps it sparse (unlike
// Standardizer, whose centring would make every row dense). MarshalBinary
// stores it with a model (`zonal fit -tfidf -normalize`).
//
// # Splits
//
// Split, KFold and Subsample draw seeded permutations (Fisher-Yates driven
// by PCG from math/rand/v2 with the caller's seed), so the same seed gives
// the same rows on every run, machine and Go version. Returned index lists
// are sorted; Data.Subset extracts the rows.
//
// # Default data
//
// Digits returns the embedded scikit-learn digits set (1797 x 64, labels
// 0..9, BSD-3-Clause), so examples and the CLI run without any file.
package dataset

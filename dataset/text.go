package dataset

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// TextOptions selects the transforms of a TextTransform. At least one must
// be set.
type TextOptions struct {
	// TFIDF weights column j by its inverse document frequency
	// idf_j = ln((1 + n) / (1 + df_j)) + 1, with n the number of training
	// rows and df_j the number of training rows whose entry j is nonzero.
	// The term frequency is the raw entry (a count), so the weighted entry
	// is x_ij idf_j. This is the smoothed idf of scikit-learn's
	// TfidfTransformer (smooth_idf=True, sublinear_tf=False): the "+1"s
	// act as one extra document holding every word, so no idf is infinite
	// and a word in every row keeps weight 1 instead of 0.
	TFIDF bool
	// Normalize divides each row (after the idf weighting) by its Euclidean
	// norm, so every nonzero row has |x|_2 = 1; an all-zero row stays zero.
	Normalize bool
}

// TextTransform is a fitted text transform: x'_ij = x_ij IDF[j] (when IDF
// is not nil), then x'_i = x'_i / |x'_i|_2 (when Normalize). Both steps
// keep zeros zero, so ApplyCSR keeps a CSR sparse (the same pattern, new
// values). Fit it on the training rows (FitTextTransform), then apply the
// same transform to training and test rows; MarshalBinary stores it with a
// model.
//
// A fitted TextTransform is read-only and safe for concurrent use.
type TextTransform struct {
	Cols      int       // number of columns d it was fitted on
	IDF       []float64 // len Cols, or nil when TF-IDF is off
	Normalize bool
}

// FitTextTransform fits the transforms of opts to the rows of x (n x d): a
// *CSR is read through its nonzeros; any other mat.Matrix (a *mat.Dense
// row by row) entry by entry.
//
// Errors: zonal.ErrParam when opts selects nothing; zonal.ErrEmpty for a
// matrix without rows or columns; zonal.ErrNonFinite for NaN or Inf;
// zonal.ErrRange for a negative entry with TFIDF (counts are not negative);
// a malformed CSR's Validate error.
func FitTextTransform(x mat.Matrix, opts TextOptions) (*TextTransform, error) {
	if !opts.TFIDF && !opts.Normalize {
		return nil, fmt.Errorf("%w: FitTextTransform: neither TFIDF nor Normalize is set", zonal.ErrParam)
	}
	if c, ok := x.(*CSR); x == nil || ok && c == nil {
		return nil, fmt.Errorf("%w: FitTextTransform: nil matrix", zonal.ErrEmpty)
	}
	if m, ok := x.(*mat.Dense); ok && m == nil {
		return nil, fmt.Errorf("%w: FitTextTransform: nil matrix", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("%w: FitTextTransform: %d x %d matrix", zonal.ErrEmpty, n, d)
	}
	if c, ok := x.(*CSR); ok {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("FitTextTransform: %w", err)
		}
	}
	t := &TextTransform{Cols: d, Normalize: opts.Normalize}
	var df []int
	if opts.TFIDF {
		df = make([]int, d)
	}
	err := eachRow(x, func(i int, cols []int, vals []float64) error {
		for k, v := range vals {
			j := k
			if cols != nil {
				j = cols[k]
			}
			if err := checkTextValue(v, opts.TFIDF, i, j); err != nil {
				return err
			}
			if df != nil && v != 0 {
				df[j]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("FitTextTransform: %w", err)
	}
	if df != nil {
		t.IDF = make([]float64, d)
		for j, c := range df {
			t.IDF[j] = math.Log(float64(1+n)/float64(1+c)) + 1
		}
	}
	return t, nil
}

// checkTextValue refuses NaN and Inf, and with tfidf a negative count.
func checkTextValue(v float64, tfidf bool, i, j int) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: row %d, column %d is %v", zonal.ErrNonFinite, i, j, v)
	}
	if tfidf && v < 0 {
		return fmt.Errorf("%w: row %d, column %d is %v: tf-idf needs counts (>= 0)", zonal.ErrRange, i, j, v)
	}
	return nil
}

// eachRow calls f with the entries of every row of x: for a *CSR its
// columns and values, otherwise cols == nil and vals the whole dense row
// (a view for *mat.Dense, a reused copy for other matrices).
func eachRow(x mat.Matrix, f func(i int, cols []int, vals []float64) error) error {
	n, d := x.Dims()
	switch m := x.(type) {
	case *CSR:
		for i := 0; i < n; i++ {
			cols, vals := m.Row(i)
			if err := f(i, cols, vals); err != nil {
				return err
			}
		}
	case *mat.Dense:
		for i := 0; i < n; i++ {
			if err := f(i, nil, m.RawRowView(i)); err != nil {
				return err
			}
		}
	default:
		buf := make([]float64, d)
		for i := 0; i < n; i++ {
			for j := range buf {
				buf[j] = x.At(i, j)
			}
			if err := f(i, nil, buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// String describes the transform, e.g. "tf-idf + l2 rows (d = 23959)".
func (t *TextTransform) String() string {
	var parts []string
	if t.IDF != nil {
		parts = append(parts, "tf-idf")
	}
	if t.Normalize {
		parts = append(parts, "l2 rows")
	}
	return fmt.Sprintf("%s (d = %d)", strings.Join(parts, " + "), t.Cols)
}

// check reports a transform that is not fitted or not of width d.
func (t *TextTransform) check(who string, d int) error {
	if t == nil || t.Cols <= 0 || (t.IDF != nil && len(t.IDF) != t.Cols) || (t.IDF == nil && !t.Normalize) {
		return fmt.Errorf("%w: TextTransform.%s: transform is not fitted", zonal.ErrParam, who)
	}
	if d != t.Cols {
		return fmt.Errorf("%w: TextTransform.%s: fitted on %d columns, input has %d", zonal.ErrShape, who, t.Cols, d)
	}
	return nil
}

// row transforms one row in place: cols nil means vals is the dense row.
// i names the row in errors.
func (t *TextTransform) row(i int, cols []int, vals []float64) error {
	for k, v := range vals {
		j := k
		if cols != nil {
			j = cols[k]
		}
		if err := checkTextValue(v, t.IDF != nil, i, j); err != nil {
			return err
		}
		if t.IDF != nil {
			vals[k] = v * t.IDF[j]
		}
	}
	if t.Normalize {
		if nrm := norm2(vals); nrm > 0 {
			for k := range vals {
				vals[k] /= nrm
			}
		}
	}
	return nil
}

// norm2 is the Euclidean norm of v, computed on v / max|v_k| so that
// squares neither overflow nor underflow.
func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s = max(s, math.Abs(x))
	}
	if s == 0 || math.IsInf(s, 0) {
		return s
	}
	var q float64
	for _, x := range v {
		r := x / s
		q += r * r
	}
	return s * math.Sqrt(q)
}

// ApplyCSR returns the transformed x as a new CSR with x's sparsity
// pattern (RowPtr and Col are shared with x, Val is new); x is unchanged.
// Cost O(nnz(x)).
//
// Errors: zonal.ErrParam for an unfitted transform; zonal.ErrShape when x
// does not have Cols columns; zonal.ErrNonFinite for NaN or Inf;
// zonal.ErrRange for a negative entry with tf-idf; a malformed CSR's
// Validate error.
func (t *TextTransform) ApplyCSR(x *CSR) (*CSR, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: TextTransform.ApplyCSR: nil matrix", zonal.ErrEmpty)
	}
	if err := t.check("ApplyCSR", x.Cols); err != nil {
		return nil, err
	}
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("TextTransform.ApplyCSR: %w", err)
	}
	out := &CSR{Rows: x.Rows, Cols: x.Cols, RowPtr: x.RowPtr, Col: x.Col, Val: make([]float64, len(x.Val))}
	copy(out.Val, x.Val)
	for i := 0; i < out.Rows; i++ {
		cols, vals := out.Row(i)
		if err := t.row(i, cols, vals); err != nil {
			return nil, fmt.Errorf("TextTransform.ApplyCSR: %w", err)
		}
	}
	return out, nil
}

// Apply transforms the dense rows of x in place (x is n x Cols). On error
// the rows before the offending one are already transformed.
//
// Errors: as ApplyCSR.
func (t *TextTransform) Apply(x *mat.Dense) error {
	if x == nil {
		return fmt.Errorf("%w: TextTransform.Apply: nil matrix", zonal.ErrEmpty)
	}
	n, d := x.Dims()
	if err := t.check("Apply", d); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := t.row(i, nil, x.RawRowView(i)); err != nil {
			return fmt.Errorf("TextTransform.Apply: %w", err)
		}
	}
	return nil
}

// ApplyVec transforms one dense row in place (len(x) == Cols) without
// allocating, for serving single predictions. Errors: as ApplyCSR.
func (t *TextTransform) ApplyVec(x []float64) error {
	if err := t.check("ApplyVec", len(x)); err != nil {
		return err
	}
	return t.row(0, nil, x)
}

// The binary form: "ZTXT", version byte 1, flags byte (bit 0 tf-idf, bit 1
// normalize), uint64 Cols (little-endian), then with tf-idf Cols IEEE-754
// float64 idf values.
const (
	textMagic   = "ZTXT"
	textVersion = 1
	textTFIDF   = 1 << 0
	textNorm    = 1 << 1
)

// MarshalBinary encodes the fitted transform (see UnmarshalBinary).
// Errors: zonal.ErrParam for an unfitted transform.
func (t *TextTransform) MarshalBinary() ([]byte, error) {
	if err := t.check("MarshalBinary", t.colsOrZero()); err != nil {
		return nil, err
	}
	var flags byte
	if t.IDF != nil {
		flags |= textTFIDF
	}
	if t.Normalize {
		flags |= textNorm
	}
	b := make([]byte, 0, len(textMagic)+2+8+8*len(t.IDF))
	b = append(b, textMagic...)
	b = append(b, textVersion, flags)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Cols))
	for _, v := range t.IDF {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

func (t *TextTransform) colsOrZero() int {
	if t == nil {
		return 0
	}
	return t.Cols
}

// UnmarshalBinary decodes what MarshalBinary wrote into t, checking the
// declared width against the bytes present before allocating.
//
// Errors: zonal.ErrFormat for bad magic, unknown flags, a length that does
// not match, or an idf value that is not finite and >= 1 (every idf of
// the formula is); zonal.ErrVersion for another version.
func (t *TextTransform) UnmarshalBinary(b []byte) error {
	if len(b) < len(textMagic)+2+8 || string(b[:len(textMagic)]) != textMagic {
		return fmt.Errorf("%w: not a text transform (bad magic or %d bytes)", zonal.ErrFormat, len(b))
	}
	if v := b[len(textMagic)]; v != textVersion {
		return fmt.Errorf("%w: text transform version %d, this build reads %d", zonal.ErrVersion, v, textVersion)
	}
	flags := b[len(textMagic)+1]
	if flags&^(textTFIDF|textNorm) != 0 || flags == 0 {
		return fmt.Errorf("%w: text transform flags %#x", zonal.ErrFormat, flags)
	}
	rest := b[len(textMagic)+2:]
	cols := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	want := uint64(0)
	if flags&textTFIDF != 0 {
		want = uint64(len(rest)) / 8
		if cols != want {
			return fmt.Errorf("%w: text transform of %d columns holds %d bytes of idf", zonal.ErrFormat, cols, len(rest))
		}
	}
	if cols == 0 || cols > uint64(MaxIndex) || uint64(len(rest)) != 8*want {
		return fmt.Errorf("%w: text transform of %d columns with %d trailing bytes", zonal.ErrFormat, cols, len(rest))
	}
	out := TextTransform{Cols: int(cols), Normalize: flags&textNorm != 0}
	if flags&textTFIDF != 0 {
		out.IDF = make([]float64, cols)
		for j := range out.IDF {
			v := math.Float64frombits(binary.LittleEndian.Uint64(rest[8*j:]))
			if !(v >= 1) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: text transform idf[%d] = %v (want finite and >= 1)", zonal.ErrFormat, j, v)
			}
			out.IDF[j] = v
		}
	}
	*t = out
	return nil
}

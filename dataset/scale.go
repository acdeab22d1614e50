package dataset

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"gonum.org/v1/gonum/mat"
)

// Standardizer centres and scales each column: x'_j = (x_j - Mean[j]) / Scale[j],
// with Mean the column mean and Scale the population standard deviation
// sqrt(sum_i (x_ij - Mean[j])^2 / n) of the data given to Fit. A constant
// column (all values equal) gets Scale 1, so it maps to 0 instead of
// dividing by zero. Fit on the training rows only, then Apply the same
// Standardizer to training and test rows. Mean and Scale are exported so a
// fitted Standardizer can be saved with a model and rebuilt.
//
// A fitted Standardizer is read-only and safe for concurrent use.
type Standardizer struct {
	Mean  []float64
	Scale []float64
}

// FitStandardizer returns a Standardizer fitted to x.
func FitStandardizer(x mat.Matrix) (*Standardizer, error) {
	s := new(Standardizer)
	if err := s.Fit(x); err != nil {
		return nil, err
	}
	return s, nil
}

// Fit computes Mean and Scale of the columns of x (n x d, n >= 1). The mean
// is computed in two passes (sum, then a correction sum of the residuals)
// and the deviation from residuals divided by their largest magnitude, so
// neither cancellation nor overflow/underflow of squares spoils it. NaN or
// Inf in x is an error wrapping zonal.ErrNonFinite; s is unchanged on error.
func (s *Standardizer) Fit(x mat.Matrix) error {
	mean, scale, err := columnMoments(x)
	if err != nil {
		return fmt.Errorf("Standardizer.Fit: %w", err)
	}
	s.Mean, s.Scale = mean, scale
	return nil
}

// columnMoments returns the mean and population standard deviation of each
// column of x (std 1 for a constant column).
func columnMoments(x mat.Matrix) (mean, std []float64, err error) {
	n, d, rows, err := rowsOf(x)
	if err != nil {
		return nil, nil, err
	}
	mean = make([]float64, d)
	lo := make([]float64, d)
	hi := make([]float64, d)
	copy(lo, rows(0))
	copy(hi, rows(0))
	for i := 0; i < n; i++ {
		r := rows(i)
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("%w: row %d, column %d is %v", zonal.ErrNonFinite, i, j, v)
			}
			mean[j] += v
			lo[j] = min(lo[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	fn := float64(n)
	for j := range mean {
		mean[j] /= fn
		if math.IsInf(mean[j], 0) { // the sum overflowed: average the scaled values
			mean[j] = 0
			for i := 0; i < n; i++ {
				mean[j] += rows(i)[j] / fn
			}
		}
	}
	// Correction pass: mean += sum(x - mean)/n removes most rounding error.
	// Residuals are taken at half scale, r = x/2 - mean/2 (exact), so that
	// x - mean cannot overflow for values near MaxFloat64.
	corr := make([]float64, d)
	amax := make([]float64, d) // max |r|
	for i := 0; i < n; i++ {
		for j, v := range rows(i) {
			corr[j] += (0.5*v - 0.5*mean[j]) / fn
		}
	}
	for j := range mean {
		mean[j] += 2 * corr[j]
		mean[j] = min(max(mean[j], lo[j]), hi[j])
	}
	for i := 0; i < n; i++ {
		for j, v := range rows(i) {
			amax[j] = max(amax[j], math.Abs(0.5*v-0.5*mean[j]))
		}
	}
	std = make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range rows(i) {
			if amax[j] > 0 {
				t := (0.5*v - 0.5*mean[j]) / amax[j]
				std[j] += t * t
			}
		}
	}
	for j := range std {
		std[j] = 2 * amax[j] * math.Sqrt(std[j]/fn)
		if lo[j] == hi[j] || !(std[j] > 0) || math.IsInf(std[j], 0) {
			std[j] = 1
		}
	}
	return mean, std, nil
}

// rowsOf gives row access to x, copying rows of a non-Dense matrix.
func rowsOf(x mat.Matrix) (n, d int, row func(i int) []float64, err error) {
	n, d = x.Dims()
	if n == 0 || d == 0 {
		return 0, 0, nil, fmt.Errorf("%w: %d x %d matrix", zonal.ErrEmpty, n, d)
	}
	if dense, ok := x.(*mat.Dense); ok {
		return n, d, dense.RawRowView, nil
	}
	buf := make([]float64, d)
	return n, d, func(i int) []float64 {
		for j := range buf {
			buf[j] = x.At(i, j)
		}
		return buf
	}, nil
}

// Apply standardizes x in place: x_ij = (x_ij - Mean[j]) / Scale[j]. x must
// have len(Mean) columns (zonal.ErrShape otherwise). NaN and Inf propagate.
func (s *Standardizer) Apply(x *mat.Dense) error {
	return applyAffine("Standardizer", s.Mean, s.Scale, x, x)
}

// ApplyTo writes the standardized x into dst (same shape as x; dst may be x).
func (s *Standardizer) ApplyTo(dst *mat.Dense, x mat.Matrix) error {
	return applyAffine("Standardizer", s.Mean, s.Scale, dst, x)
}

// ApplyVec standardizes one row in place (len(x) == len(Mean)); it does not
// allocate, for use when serving single predictions.
func (s *Standardizer) ApplyVec(x []float64) error {
	return applyVec("Standardizer", s.Mean, s.Scale, x)
}

// Inverse undoes Apply in place: x_ij = x_ij * Scale[j] + Mean[j].
func (s *Standardizer) Inverse(x *mat.Dense) error {
	return inverseAffine("Standardizer", s.Mean, s.Scale, x)
}

// MinMaxScaler maps each column linearly onto [0, 1]:
// x'_j = (x_j - Min[j]) / Scale[j] with Scale[j] = max_j - min_j over the
// data given to Fit, or 1 for a constant column (which maps to 0). Test
// values outside the training range map outside [0, 1]; they are not
// clipped.
type MinMaxScaler struct {
	Min   []float64
	Scale []float64
}

// Fit computes Min and Scale of the columns of x. NaN or Inf is an error
// wrapping zonal.ErrNonFinite. A range that overflows float64 gets Scale 1.
func (s *MinMaxScaler) Fit(x mat.Matrix) error {
	n, d, rows, err := rowsOf(x)
	if err != nil {
		return fmt.Errorf("MinMaxScaler.Fit: %w", err)
	}
	lo := make([]float64, d)
	hi := make([]float64, d)
	copy(lo, rows(0))
	copy(hi, rows(0))
	for i := 0; i < n; i++ {
		for j, v := range rows(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("MinMaxScaler.Fit: %w: row %d, column %d is %v", zonal.ErrNonFinite, i, j, v)
			}
			lo[j] = min(lo[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	for j := range hi {
		hi[j] -= lo[j]
		if hi[j] == 0 || math.IsInf(hi[j], 0) {
			hi[j] = 1
		}
	}
	s.Min, s.Scale = lo, hi
	return nil
}

// Apply scales x in place: x_ij = (x_ij - Min[j]) / Scale[j].
func (s *MinMaxScaler) Apply(x *mat.Dense) error {
	return applyAffine("MinMaxScaler", s.Min, s.Scale, x, x)
}

// ApplyTo writes the scaled x into dst (same shape as x; dst may be x).
func (s *MinMaxScaler) ApplyTo(dst *mat.Dense, x mat.Matrix) error {
	return applyAffine("MinMaxScaler", s.Min, s.Scale, dst, x)
}

// ApplyVec scales one row in place without allocating.
func (s *MinMaxScaler) ApplyVec(x []float64) error {
	return applyVec("MinMaxScaler", s.Min, s.Scale, x)
}

// Inverse undoes Apply in place.
func (s *MinMaxScaler) Inverse(x *mat.Dense) error {
	return inverseAffine("MinMaxScaler", s.Min, s.Scale, x)
}

func checkFitted(who string, shift, scale []float64, d int) error {
	if shift == nil || len(shift) != len(scale) {
		return fmt.Errorf("%w: %s is not fitted (len %d and %d)", zonal.ErrParam, who, len(shift), len(scale))
	}
	if d != len(shift) {
		return fmt.Errorf("%w: %s fitted on %d columns, given %d", zonal.ErrShape, who, len(shift), d)
	}
	return nil
}

func applyAffine(who string, shift, scale []float64, dst *mat.Dense, x mat.Matrix) error {
	n, d := x.Dims()
	if err := checkFitted(who, shift, scale, d); err != nil {
		return err
	}
	if dn, dd := dst.Dims(); dn != n || dd != d {
		return fmt.Errorf("%w: %s: dst is %d x %d, x is %d x %d", zonal.ErrShape, who, dn, dd, n, d)
	}
	xd, isDense := x.(*mat.Dense)
	for i := 0; i < n; i++ {
		out := dst.RawRowView(i)
		if isDense {
			for j, v := range xd.RawRowView(i) {
				out[j] = affine(v, shift[j], scale[j])
			}
		} else {
			for j := range out {
				out[j] = affine(x.At(i, j), shift[j], scale[j])
			}
		}
	}
	return nil
}

// affine is (v - shift)/scale, computed at half scale when v - shift
// overflows (values near MaxFloat64 of opposite signs), so a finite result
// is not lost to an infinite intermediate.
func affine(v, shift, scale float64) float64 {
	r := (v - shift) / scale
	if math.IsInf(r, 0) && !math.IsInf(v, 0) {
		r = (0.5*v - 0.5*shift) / scale * 2
	}
	return r
}

func applyVec(who string, shift, scale []float64, x []float64) error {
	if err := checkFitted(who, shift, scale, len(x)); err != nil {
		return err
	}
	for j, v := range x {
		x[j] = affine(v, shift[j], scale[j])
	}
	return nil
}

func inverseAffine(who string, shift, scale []float64, x *mat.Dense) error {
	n, d := x.Dims()
	if err := checkFitted(who, shift, scale, d); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j, v := range row {
			row[j] = v*scale[j] + shift[j]
		}
	}
	return nil
}

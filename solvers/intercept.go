package solvers

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Intercept is how a FALKON fit gets its constant term
// (FalkonOptions.Intercept), a typed setting (String, ParseIntercept).
type Intercept string

// Intercept modes.
const (
	// InterceptMean centres the targets by their (weighted) training mean
	// and adds it back at prediction: the constant is fixed before the
	// kernel expansion is fitted.
	InterceptMean Intercept = "mean"
	// InterceptFitted fits the constant together with the expansion,
	// unpenalised: min over alpha and b of the weighted mean squared error
	// of K_nM alpha + b plus lambda alpha^T K_MM alpha.
	InterceptFitted Intercept = "fitted"
)

func (c Intercept) String() string {
	if c == "" {
		return string(InterceptMean)
	}
	return string(c)
}

// ParseIntercept parses mean or fitted.
func ParseIntercept(s string) (Intercept, error) {
	return zonal.ParseSetting("Intercept", s, InterceptMean, InterceptFitted)
}

// check validates the mode for a fit at precision p.
func (c Intercept) check(p zonal.Precision) error {
	switch c {
	case "", InterceptMean:
		return nil
	case InterceptFitted:
		if p == zonal.Float32 {
			return &zonal.ParamError{Param: "Intercept", Value: c, Reason: "a fitted intercept needs K_nM's column means, which the float32 path does not form: use Precision float64 or Intercept mean"}
		}
		return nil
	}
	return &zonal.ParamError{Param: "Intercept", Value: c, Reason: "unknown intercept (mean, fitted)", Err: zonal.ErrUnknown}
}

// addColumnSums adds K_b^T w_b to sums: the weighted column sums of the
// block kv of K_nM's rows i0.. (w nil: all weights 1), row by row.
func addColumnSums(sums []float64, kv *mat.Dense, w []float64, i0 int) {
	r := kv.RawMatrix()
	for i := 0; i < r.Rows; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i0+i]
		}
		for j, v := range r.Data[i*r.Stride : i*r.Stride+r.Cols] {
			sums[j] += wi * v
		}
	}
}

// centreColumns subtracts mu[j] from every entry of column j of r.
func centreColumns(r blas64.General, mu []float64) {
	for i := 0; i < r.Rows; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+r.Cols]
		for j := range row {
			row[j] -= mu[j]
		}
	}
}

// fittedIntercept is the unpenalised constant of a fit on K_nM's centred
// columns: b = mean - mu^T alpha per output.
func fittedIntercept(mean, mu []float64, alpha *mat.Dense) []float64 {
	b := make([]float64, len(mean))
	a := alpha.RawMatrix()
	for t := range b {
		d := 0.0
		for j, m := range mu {
			d += m * a.Data[j*a.Stride+t]
		}
		b[t] = mean[t] - d
	}
	return b
}

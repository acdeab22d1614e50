package estimator

import (
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/solvers"
)

// float32Rows reports whether the plan's final fits read the training rows
// only through float32 kernel blocks, so that they can hold them as a
// *dataset.Dense32: FALKON with the squared loss, Precision float32 and
// uniform centres (see the package doc, "Float32 rows").
func float32Rows(p *Plan, o Options) bool {
	return p.Method == MethodFalkon && p.Loss != LossLogistic && p.Precision == zonal.Float32 &&
		(o.Sampling == "" || o.Sampling == solvers.SamplingUniform)
}

// rowsTo32 replaces c.x, after tuning, by its float32 rows when the plan
// reads them so and c.x is Fit's own scaled copy of the dense input in
// (never the caller's matrix): the float64 copy is then no longer
// referenced, and the rows of the final fit, its lambda raises and the
// calibration's fold fits take 4 bytes an entry instead of 8.
//
// Errors: those of dataset.NewDense32 (zonal.ErrNonFinite for a scaled
// value beyond float32's range).
func (c *choice) rowsTo32(p *Plan, o Options, in mat.Matrix) error {
	xd, ok := c.x.(*mat.Dense)
	if !ok || !float32Rows(p, o) {
		return nil
	}
	if orig, ok := in.(*mat.Dense); ok && orig == xd {
		return nil // the caller's rows: a float32 copy would add to them
	}
	x32, err := dataset.NewDense32(xd)
	if err != nil {
		return err
	}
	c.x = x32
	return nil
}

// rowBytes reports whether c.x is held in float32 and the memory of its
// entries (0 for CSR rows).
func (c *choice) rowBytes() (bool, int64) {
	switch x := c.x.(type) {
	case *dataset.Dense32:
		return true, x.Bytes()
	case *mat.Dense:
		r, d := x.Dims()
		return false, 8 * int64(r) * int64(d)
	}
	return false, 0
}

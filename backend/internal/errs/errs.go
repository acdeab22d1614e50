// Package errs holds the typed error shared by every backend implementation;
// the sentinels themselves are the module's (package zonal).
package errs

import (
	"fmt"

	"github.com/zonal-ml/zonal"
)

// NotPositiveDefiniteError reports the (0-based) pivot at which a Cholesky
// factorization failed and the value found there. It matches
// zonal.ErrNotPositiveDefinite under errors.Is.
type NotPositiveDefiniteError struct {
	Pivot int
	Value float64
}

func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("backend: matrix is not positive definite: pivot %d is %g", e.Pivot, e.Value)
}

// Is reports whether target is zonal.ErrNotPositiveDefinite.
func (e *NotPositiveDefiniteError) Is(target error) bool {
	return target == zonal.ErrNotPositiveDefinite
}

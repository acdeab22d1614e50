// Package errs holds the sentinel errors shared by every backend implementation.
// Package backend re-exports them; callers test with errors.Is against the
// backend names.
package errs

import (
	"errors"
	"fmt"
)

var (
	// ErrNotPositiveDefinite: a Cholesky factorization met a non-positive pivot.
	ErrNotPositiveDefinite = errors.New("matrix is not positive definite")
	// ErrNoConvergence: an iterative kernel (eigen solver, secular root finder)
	// did not converge.
	ErrNoConvergence = errors.New("no convergence")
	// ErrShape: operands have incompatible shapes or invalid lengths.
	ErrShape = errors.New("incompatible shapes")
	// ErrNaN: input holds NaN or Inf where finite values are required.
	ErrNaN = errors.New("input is not finite")
)

// NotPositiveDefiniteError reports the (0-based) pivot at which a Cholesky
// factorization failed and the value found there. It matches
// ErrNotPositiveDefinite under errors.Is.
type NotPositiveDefiniteError struct {
	Pivot int
	Value float64
}

func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("backend: matrix is not positive definite: pivot %d is %g", e.Pivot, e.Value)
}

// Is reports whether target is ErrNotPositiveDefinite.
func (e *NotPositiveDefiniteError) Is(target error) bool { return target == ErrNotPositiveDefinite }

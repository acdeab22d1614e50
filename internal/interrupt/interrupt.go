// Package interrupt makes a step that cannot check a context itself (a
// dense factorization or eigendecomposition inside a backend) return as
// soon as the context is done.
package interrupt

import "context"

// Do runs f on its own goroutine and returns nil when it finishes, or
// ctx.Err() as soon as ctx is done first. In the second case f keeps
// running until it finishes and its results must be dropped: callers pass
// an f that writes only into buffers they abandon with the error. The
// abandoned work costs CPU, and its buffers stay allocated, until f ends.
// A panic in f is re-raised on the caller's goroutine when f finishes first.
func Do(ctx context.Context, f func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil { // never canceled: no goroutine needed
		f()
		return nil
	}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case p := <-done:
		if p != nil {
			panic(p)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Package testctx holds the test helpers of the module's cancellation and
// allocation contracts: a long call canceled after a delay must return
// context.Canceled within a second, and a call given a memory budget must
// not allocate far beyond it.
package testctx

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Grace is how long a canceled call may take to return: the promise is
// 1 s; the extra half second leaves room for a loaded machine.
const Grace = 1500 * time.Millisecond

// CancelsWithin runs call with a context canceled after delay and fails t
// unless call returns an error wrapping context.Canceled within Grace of
// the cancellation.
//
// How far a problem gets in delay depends on the machine, so a call that
// finishes before its cancellation is run again with a quarter of the
// delay, down to MinDelay: on a fast machine the cancellation lands earlier
// in the computation but still inside it. A call that returns nil just
// after its cancellation (it was past its last check of ctx) counts as
// finished first. A call that finishes uncanceled even at MinDelay fails the
// test (the problem is too small to test anything, or the call ignores its
// context), as does one that runs on past Grace after the cancellation or
// returns an error other than context.Canceled.
func CancelsWithin(t testing.TB, name string, delay time.Duration, call func(ctx context.Context) error) {
	t.Helper()
	for d := delay; ; d /= 4 {
		if d < MinDelay {
			d = MinDelay
		}
		finished, err := cancelAfter(t, name, d, call)
		if !finished {
			return
		}
		if d == MinDelay {
			t.Fatalf("%s finished before its cancellation even after %v (err = %v): make the problem larger", name, d, err)
		}
		t.Logf("%s finished within %v (err = %v); again with a quarter of the delay", name, d, err)
	}
}

// MinDelay is the shortest delay CancelsWithin tries.
const MinDelay = time.Millisecond

// cancelAfter runs call once, canceling it after delay. It reports whether
// call finished (with err) before the cancellation; otherwise it has
// checked the canceled call's return against Grace and context.Canceled.
func cancelAfter(t testing.TB, name string, delay time.Duration, call func(ctx context.Context) error) (finished bool, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case err := <-done:
		return true, err
	case <-timer.C:
	}
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if err == nil {
			// It finished its work as the cancellation came (past its last
			// check of ctx): as if it had finished first. A call that
			// ignores ctx fails at MinDelay, or by running past Grace.
			return true, nil
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s canceled after %v: err = %v, want context.Canceled", name, delay, err)
		}
		t.Logf("%s canceled after %v returned %v later", name, delay, time.Since(start))
	case <-time.After(Grace):
		t.Fatalf("%s still running %v after its cancellation at %v", name, Grace, delay)
	}
	return false, nil
}

// Allocated returns the bytes allocated (runtime.MemStats.TotalAlloc
// growth) while f runs. It counts every goroutine's allocations, so callers
// state a generous multiple of their budget.
func Allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// FuzzBudget is the memory budget the fuzz targets give the constructors,
// and FuzzAllocFactor the multiple of it a call may allocate in all (the
// budget bounds the largest working set, not the sum of every temporary,
// and the count includes the test's own data).
const (
	FuzzBudget      = 64 << 20
	FuzzAllocFactor = 4
)

// WithinBudget runs f and fails t when it allocated more than
// FuzzAllocFactor * FuzzBudget bytes.
func WithinBudget(t testing.TB, what string, f func()) {
	t.Helper()
	if got := Allocated(f); got > FuzzAllocFactor*FuzzBudget {
		t.Fatalf("%s allocated %d bytes, more than %d x the budget of %d", what, got, FuzzAllocFactor, FuzzBudget)
	}
}

// Normal returns an n x d matrix of independent N(0, scale^2) entries from
// a PCG stream seeded with seed.
func Normal(seed uint64, n, d int, scale float64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return x
}

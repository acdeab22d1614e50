// Package parallel runs the module's block loops: f over consecutive blocks
// of an index range, on up to GOMAXPROCS goroutines that take the next
// block as they finish one.
package parallel

import (
	"context"
	"runtime"
	"sync"
)

// Blocks runs f(i0, i1) on the blocks [i0, i1) of bs indices of [0, n), on
// up to GOMAXPROCS goroutines (one block, or one core: on the caller's
// goroutine, without allocating). It checks ctx before every block and
// returns ctx.Err() (nil for a nil ctx) once the blocks started are done.
func Blocks(ctx context.Context, n, bs int, f func(i0, i1 int)) error {
	if n <= 0 {
		return ctxErr(ctx)
	}
	nb := (n + bs - 1) / bs
	workers := min(runtime.GOMAXPROCS(0), nb)
	if workers <= 1 {
		for i0 := 0; i0 < n; i0 += bs {
			if err := ctxErr(ctx); err != nil {
				return err
			}
			f(i0, min(n, i0+bs))
		}
		return nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if ctxErr(ctx) != nil {
					return
				}
				mu.Lock()
				blk := next
				next++
				mu.Unlock()
				if blk >= nb {
					return
				}
				i0 := blk * bs
				f(i0, min(n, i0+bs))
			}
		}()
	}
	wg.Wait()
	return ctxErr(ctx)
}

func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

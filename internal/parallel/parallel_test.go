package parallel

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Every index of [0, n) is covered by exactly one block of at most bs.
func TestBlocksCoverOnce(t *testing.T) {
	for _, c := range [][2]int{{0, 4}, {1, 4}, {7, 3}, {64, 8}, {1000, 7}} {
		n, bs := c[0], c[1]
		seen := make([]int, n)
		var mu sync.Mutex
		if err := Blocks(nil, n, bs, func(i0, i1 int) {
			if i1-i0 > bs || i1 <= i0 {
				t.Errorf("n=%d bs=%d: block [%d, %d)", n, bs, i0, i1)
			}
			mu.Lock()
			for i := i0; i < i1; i++ {
				seen[i]++
			}
			mu.Unlock()
		}); err != nil {
			t.Fatal(err)
		}
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d bs=%d: index %d covered %d times", n, bs, i, s)
			}
		}
	}
}

// A canceled context stops the loop before any block and is returned.
func TestBlocksCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := Blocks(ctx, 100, 10, func(int, int) { calls++ })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

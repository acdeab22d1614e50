package interrupt

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDo(t *testing.T) {
	ran := false
	if err := Do(context.Background(), func() { ran = true }); err != nil || !ran {
		t.Fatalf("Do on a background context: err %v, ran %v", err, ran)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran = false
	if err := Do(ctx, func() { ran = true }); err != nil || !ran {
		t.Fatalf("Do on a live context: err %v, ran %v", err, ran)
	}
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	err := Do(ctx, func() { <-release })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do of a blocked step: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Do returned %v after the step started", d)
	}
	if err := Do(ctx, func() { t.Fatal("ran on a canceled context") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do on a canceled context: %v", err)
	}
	defer func() {
		if recover() != "boom" {
			t.Error("a panic in the step is not re-raised")
		}
	}()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	_ = Do(ctx2, func() { panic("boom") })
}

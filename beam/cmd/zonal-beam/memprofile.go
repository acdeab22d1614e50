package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// memProfiler writes heap profiles of this process (with the in-process
// prism runner, the whole job) for -memprofile FILE: FILE is rewritten each
// time the live heap (as the last collection marked it, polled every
// 100 ms) reaches a new high by at least 64 MB, so at the end it holds the
// profile near the largest live heap; FILE.end is written when the command
// ends. The profiles have inuse_space and alloc_space (go tool pprof
// -sample_index=...). Each write
// logs the heap figures to w (the Go runtime's view: live heap, the heap
// obtained from the OS, and the heap goal the collector aims for).
type memProfiler struct {
	path  string
	w     io.Writer
	stop  chan struct{}
	done  chan struct{}
	err   error
	start time.Time
}

const memProfileStep = 64 << 20

func startMemProfile(path string, w io.Writer) *memProfiler {
	m := &memProfiler{path: path, w: w, stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	go m.run()
	return m
}

func (m *memProfiler) run() {
	defer close(m.done)
	start := m.start
	var best uint64
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		// The live heap as the last collection marked it.
		metrics.Read(sample)
		live := sample[0].Value.Uint64()
		if live < best+memProfileStep {
			continue
		}
		best = live
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if err := m.write(m.path, start, live, &ms); err != nil {
			m.err = err
			return
		}
	}
}

// write writes a heap profile to path and logs the heap figures.
func (m *memProfiler) write(path string, start time.Time, live uint64, ms *runtime.MemStats) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("-memprofile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	fmt.Fprintf(m.w, "memprofile %s at %.1f s: live heap %.0f MB, allocated %.0f MB, from OS %.0f MB, GC goal %.0f MB\n",
		path, time.Since(start).Seconds(), mb(live), mb(ms.HeapAlloc), mb(ms.HeapSys-ms.HeapReleased), mb(ms.NextGC))
	return nil
}

func mb(b uint64) float64 { return float64(b) / 1e6 }

// finish stops the poller and writes path.end after a collection.
func (m *memProfiler) finish() error {
	close(m.stop)
	<-m.done
	if m.err != nil {
		return m.err
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return m.write(m.path+".end", m.start, sample[0].Value.Uint64(), &ms)
}

package serve

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// job is one single-row request waiting in the batcher.
type job struct {
	m     *model
	x     []float64 // the row, d values
	outs  []float64 // the k outputs
	label float64
	err   error
	done  chan struct{} // one send when the answer is in

	queued, started time.Time     // when the row was queued, and its block began
	compute         time.Duration // the block's prediction time
}

// batcher merges concurrent single-row requests into blocks. One dispatcher
// goroutine takes the first queued row, waits for a worker slot (rows that
// arrive meanwhile queue up behind it), then takes every queued row up to
// MaxBatch; if the block is not full and other single-row requests are
// still being decoded, it waits for them until BatchDelay has passed since
// it took the first row. The block is predicted on its own goroutine, which
// gives the slot back.
type batcher struct {
	s        *Server
	queue    chan *job
	quit     chan struct{}
	stopped  chan struct{}
	arriving atomic.Int64 // prediction requests whose message is in and still being decoded (not while a body is read)
	pending  atomic.Int64 // rows queued and not yet in a block (taken by run)
	jobs     sync.Pool    // *job
	scratch  sync.Pool    // *blockScratch
	blocks   sync.Pool    // *block
}

// block is the jobs of one block prediction (pooled).
type block struct{ jobs []*job }

type blockScratch struct {
	x, outs, labels []float64
	dn              denses
}

func newBatcher(s *Server) *batcher {
	b := &batcher{
		s:       s,
		queue:   make(chan *job, s.opts.MaxInFlight),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go b.run()
	return b
}

func (b *batcher) stop() {
	close(b.quit)
	<-b.stopped
}

// alone reports whether a single-row request that has been decoded has
// no block to join: no other prediction request is being decoded and no
// row waits in the batcher.
func (b *batcher) alone() bool { return b.arriving.Load() == 0 && b.pending.Load() == 0 }

// decoding runs decode, a prediction request's decoding of a message
// already read, counted in arriving (blocks wait for such rows, not for
// bodies still being read); the count is given back even if decode
// panics. b may be nil (batching off): decode just runs.
func (b *batcher) decoding(decode func()) {
	if b == nil {
		decode()
		return
	}
	b.arriving.Add(1)
	defer b.arriving.Add(-1)
	decode()
}

// predictRow queues the row x (d values) for model m and waits for its
// answer, the label into labels[0] and the k outputs into outs.
func (b *batcher) predictRow(ctx context.Context, m *model, x, labels, outs []float64, st *stage) error {
	j, _ := b.jobs.Get().(*job)
	if j == nil {
		j = &job{done: make(chan struct{}, 1)}
	}
	j.m, j.err = m, nil
	j.x = append(j.x[:0], x...)
	if cap(j.outs) < m.k {
		j.outs = make([]float64, m.k)
	}
	j.outs = j.outs[:m.k]
	j.queued = time.Now()
	// At most MaxInFlight requests are admitted and the queue holds as many
	// jobs, so it is full only when cancelled requests left jobs behind.
	b.pending.Add(1)
	select {
	case b.queue <- j:
	default:
		b.pending.Add(-1)
		return errorf(http.StatusServiceUnavailable, "server is saturated (batch queue full); retry later")
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		// The job stays with the batcher, which still writes to it: drop it.
		return errorf(http.StatusServiceUnavailable, "request cancelled while queued: %v", ctx.Err())
	case <-b.stopped:
		return errClosed
	}
	labels[0] = j.label
	copy(outs, j.outs)
	st.queue.Observe(j.started.Sub(j.queued).Seconds())
	st.compute.Observe(j.compute.Seconds())
	err := j.err
	j.m = nil
	b.jobs.Put(j)
	return err
}

func (b *batcher) run() {
	defer close(b.stopped)
	s := b.s
	maxBatch, delay := s.opts.MaxBatch, s.opts.BatchDelay
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var first *job
		select {
		case first = <-b.queue:
		case <-b.quit:
			b.failQueued()
			return
		}
		select {
		case s.slots <- struct{}{}:
		case <-b.quit:
			b.finish([]*job{first}, errClosed)
			b.failQueued()
			return
		}
		blk, _ := b.blocks.Get().(*block)
		if blk == nil {
			blk = &block{jobs: make([]*job, 0, maxBatch)}
		}
		batch := append(blk.jobs[:0], first)
		deadline := time.Now().Add(delay)
	fill:
		for len(batch) < maxBatch {
			select {
			case j := <-b.queue:
				batch = append(batch, j)
				continue
			default:
			}
			wait := time.Until(deadline)
			if b.arriving.Load() == 0 || wait <= 0 {
				break
			}
			timer.Reset(wait)
			select {
			case j := <-b.queue:
				timer.Stop()
				batch = append(batch, j)
			case <-timer.C:
				break fill
			case <-b.quit:
				timer.Stop()
				break fill
			}
		}
		blk.jobs = batch
		b.pending.Add(-int64(len(batch)))
		go b.runBlock(blk)
	}
}

// failQueued answers every queued job with errClosed.
func (b *batcher) failQueued() {
	for {
		select {
		case j := <-b.queue:
			b.finish([]*job{j}, errClosed)
		default:
			return
		}
	}
}

func (b *batcher) finish(js []*job, err error) {
	b.pending.Add(-int64(len(js)))
	for _, j := range js {
		j.err = err
		j.done <- struct{}{}
	}
}

// runBlock predicts the jobs, one block per run of jobs on the same model
// (a reload between two rows splits the block), then frees the worker slot.
func (b *batcher) runBlock(blk *block) {
	batch := blk.jobs
	defer func() {
		<-b.s.slots
		clear(batch)
		blk.jobs = batch[:0]
		b.blocks.Put(blk)
	}()
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].m == batch[i].m {
			j++
		}
		b.runGroup(batch[i:j])
		i = j
	}
}

func (b *batcher) runGroup(g []*job) {
	m := g[0].m
	n := len(g)
	sc, _ := b.scratch.Get().(*blockScratch)
	if sc == nil {
		sc = new(blockScratch)
	}
	sc.x = grow(sc.x, n*m.d)
	sc.outs = grow(sc.outs, n*m.k)
	sc.labels = grow(sc.labels, n)
	for i, j := range g {
		copy(sc.x[i*m.d:(i+1)*m.d], j.x)
	}
	b.s.met.batchRows.Observe(float64(n))
	start := time.Now()
	err := b.s.predictBlock(m, sc.x, n, sc.labels, sc.outs, &sc.dn)
	el := time.Since(start)
	for i, j := range g {
		if err == nil {
			j.label = sc.labels[i]
			copy(j.outs, sc.outs[i*m.k:(i+1)*m.k])
		}
		j.err = err
		j.started, j.compute = start, el
		j.done <- struct{}{}
	}
	b.scratch.Put(sc)
}

func grow(v []float64, n int) []float64 {
	if cap(v) < n {
		return make([]float64, n)
	}
	return v[:n]
}

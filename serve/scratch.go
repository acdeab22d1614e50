package serve

import (
	"io"
	"net/http"
	"sync"
)

// scratch holds the buffers of one prediction request: the body, the
// decoded rows, the answers and the encoded response. Requests take one
// from scratchPool and give it back when answered, so that a steady
// stream of requests decodes and answers without allocating.
type scratch struct {
	body         []byte
	x            []float64
	labels, outs []float64
	resp         []byte
	call         v2Call
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled is the largest buffer (in bytes) kept for the next request: a
// rare huge request should not pin its memory in the pool.
const maxPooled = 1 << 20

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	if cap(s.body) > maxPooled {
		s.body = nil
	}
	if cap(s.resp) > maxPooled {
		s.resp = nil
	}
	if 8*cap(s.x) > maxPooled {
		s.x = nil
	}
	if 8*(cap(s.labels)+cap(s.outs)) > maxPooled {
		s.labels, s.outs = nil, nil
	}
	s.call = v2Call{}
	scratchPool.Put(s)
}

// readBodyInto reads the whole body into buf[:0], at most limit bytes
// (413 above, and the connection is closed after the answer: the rest of
// the body is not read).
func readBodyInto(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		return buf, errorf(http.StatusRequestEntityTooLarge, "request body of %d bytes is over the limit of %d bytes", r.ContentLength, limit)
	}
	buf = buf[:0]
	// One byte more than the body: the read that finds its end needs room.
	switch {
	case r.ContentLength > 0 && int64(cap(buf)) <= r.ContentLength:
		buf = make([]byte, 0, r.ContentLength+1)
	case cap(buf) == 0:
		buf = make([]byte, 0, 4096) // a body of unknown length: grown by append from here
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := int(min(int64(cap(buf)), limit+1))
		k, err := r.Body.Read(buf[len(buf):end])
		buf = buf[:len(buf)+k]
		if int64(len(buf)) > limit {
			w.Header().Set("Connection", "close")
			return buf, errorf(http.StatusRequestEntityTooLarge, "request body is over the limit of %d bytes", limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, errorf(http.StatusBadRequest, "reading the request body: %v", err)
		}
	}
}

// results returns the label (n) and output (n x k) arrays of an answer.
func (s *scratch) results(n, k int) (labels, outs []float64) {
	s.labels = grow(s.labels, n)
	s.outs = grow(s.outs, n*k)
	return s.labels, s.outs
}

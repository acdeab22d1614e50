package dataset

// chunkLen is the length of one block of a chunked buffer (512 KiB of
// float64). Growing a single slice by append would copy the data log(n)
// times and hold up the garbage collector with huge non-preemptible copies;
// blocks are copied once, into the final array.
const chunkLen = 1 << 16

// chunked is an append-only buffer stored in fixed-size blocks.
type chunked[T any] struct {
	full [][]T
	cur  []T
	n    int
}

func (c *chunked[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, chunkLen)
	}
	c.cur = append(c.cur, v)
	c.n++
}

func (c *chunked[T]) len() int { return c.n }

// truncate drops the elements after the first n (n <= len, and n is in the
// current block: used to undo a partly read row).
func (c *chunked[T]) truncate(n int) {
	c.cur = c.cur[:len(c.cur)-(c.n-n)]
	c.n = n
}

// copyTo copies the content into dst (len(dst) >= c.len()) and returns the
// number of elements copied.
func (c *chunked[T]) copyTo(dst []T) int {
	k := 0
	for _, b := range c.full {
		k += copy(dst[k:], b)
	}
	k += copy(dst[k:], c.cur)
	return k
}

// slice returns the content as one slice of length c.len() (exact capacity).
func (c *chunked[T]) slice() []T {
	if len(c.full) == 0 {
		return c.cur[:c.n:c.n]
	}
	out := make([]T, c.n)
	c.copyTo(out)
	return out
}

// blocks returns the content as consecutive blocks (views, not copies).
func (c *chunked[T]) blocks() [][]T {
	if c.cur == nil {
		return c.full
	}
	return append(c.full[:len(c.full):len(c.full)], c.cur)
}

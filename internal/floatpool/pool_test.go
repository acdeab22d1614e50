package floatpool

import "testing"

// TestGetPut: Get returns the requested length whether the pooled slice is
// reused (big enough) or not (too small), and never a shorter slice.
func TestGetPut(t *testing.T) {
	for _, n := range []int{0, 1, 10, 1000, 5, 2000} {
		p := Get(n)
		if len(*p) != n {
			t.Fatalf("Get(%d) has length %d", n, len(*p))
		}
		for i := range *p {
			(*p)[i] = float64(i)
		}
		Put(p)
	}
}

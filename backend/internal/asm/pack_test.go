package asm

import "testing"

// TestPackRows: packRows interleaves w rows exactly as the element loop
// of packB and packA does (dst[p*w+i] = row i at p), for every tile
// height and width of the kernels (the wide ones eight rows at a time),
// in float64 and float32, with a row stride above the row length; other
// widths are declined.
func TestPackRows(t *testing.T) {
	testPackRows[float64](t)
	testPackRows[float32](t)
}

func testPackRows[T float](t *testing.T) {
	const k, ld = 37, 41
	for _, w := range []int{4, 6, 8, 12, 16, 24, 32, 48} {
		src := make([]T, (w-1)*ld+k)
		for i := range src {
			src[i] = T(i) + 0.5
		}
		dst := make([]T, k*w)
		if !packRows(dst, src, ld, k, w) {
			t.Fatalf("w = %d declined", w)
		}
		for i := 0; i < w; i++ {
			for p := 0; p < k; p++ {
				if got, want := dst[p*w+i], src[i*ld+p]; got != want {
					t.Fatalf("%T w = %d: dst[%d*w+%d] = %v, want %v", got, w, p, i, got, want)
				}
			}
		}
	}
	for _, w := range []int{5, 10, 20} {
		if packRows(make([]T, k*w), make([]T, (w-1)*ld+k), ld, k, w) {
			t.Errorf("w = %d accepted", w)
		}
	}
}

package asm

// DotRows sets dst[i] = sum_j k[i*ldk+j] * v[j] for i < len(dst) and
// j < n = len(v): the product of the len(dst) x n float64 block k with v,
// one dispatched ddot per row (the same AVX2/AVX-512 or Go kernel as ddot,
// so a row's sum is ddot's). The caller validates the lengths (k holds
// (len(dst)-1)*ldk+n values when len(dst) > 0).
func DotRows(dst []float64, k []float64, ldk int, v []float64) {
	m, n := len(dst), len(v)
	if m == 0 {
		return
	}
	if n == 0 {
		clear(dst)
		return
	}
	_ = k[(m-1)*ldk+n-1]
	dot := cur().dot
	for i := range dst {
		dst[i] = dot(k[i*ldk:i*ldk+n], v)
	}
}

// AxpyRows adds sum_i t[i] * k[i*ldk+j] into acc[j] for j < n = len(acc)
// and i < len(t): acc += K^T t for the len(t) x n float64 block k, one
// dispatched daxpy per row, rows in order (rows with t[i] = 0 skipped, as
// Daxpy skips alpha = 0). The caller validates the lengths.
//
// Unlike AxpyRows32 there is no four-row kernel: acc (n doubles) is read
// and written once per row, which stays in L1 for the n of FALKON's
// centres (16 KiB at n = 2000) next to the row being read; the dispatched
// daxpy kernels are reused instead of a new generator.
func AxpyRows(acc []float64, k []float64, ldk int, t []float64) {
	m, n := len(t), len(acc)
	if m == 0 || n == 0 {
		return
	}
	_ = k[(m-1)*ldk+n-1]
	axpy := cur().axpy
	for i, a := range t {
		if a != 0 {
			axpy(a, k[i*ldk:i*ldk+n], acc)
		}
	}
}

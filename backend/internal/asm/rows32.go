package asm

// Mixed-precision row products: the rows of a float32 block (a kernel
// block K_b, m x n, leading dimension ldk) against float64 vectors, every
// float32 entry widened exactly and every product and sum in float64. They
// are the two products of a float32 FALKON pass, t = K_b v and
// acc += K_b^T t, done on the float32 block where it lies (in cache) with
// no widened float64 copy. The AVX2 kernels (generator _gen/rows32) use
// float64 FMAs; the Go fallbacks round the products separately, so the two
// differ in the last bits (within the usual n u sum |k_ij v_j| of a float64
// sum; the tests check that bound).

// DotRows32 sets dst[i] = sum_j float64(k[i*ldk+j]) * v[j] for i < len(dst)
// and j < n = len(v): the product of the len(dst) x n float32 block k with
// the float64 vector v, summed in float64. The caller validates the
// lengths (k holds (len(dst)-1)*ldk+n values when len(dst) > 0).
func DotRows32(dst []float64, k []float32, ldk int, v []float64) {
	m, n := len(dst), len(v)
	if m == 0 {
		return
	}
	if n == 0 {
		clear(dst)
		return
	}
	_ = k[(m-1)*ldk+n-1]
	dot := k32().dotRow
	for i := range dst {
		dst[i] = dot(k[i*ldk:i*ldk+n], v)
	}
}

// AxpyRows32 adds sum_i t[i] * float64(k[i*ldk+j]) into acc[j] for
// j < n = len(acc) and i < len(t): acc += K^T t for the len(t) x n float32
// block k, in float64 (four rows at a time, each element's four products
// added in row order). The caller validates the lengths (k holds
// (len(t)-1)*ldk+n values when len(t) > 0).
func AxpyRows32(acc []float64, k []float32, ldk int, t []float64) {
	m, n := len(t), len(acc)
	if m == 0 || n == 0 {
		return
	}
	_ = k[(m-1)*ldk+n-1]
	kk := k32()
	i := 0
	for ; i+4 <= m; i += 4 {
		kk.axpy4Row(acc, k[i*ldk:(i+3)*ldk+n], ldk, (*[4]float64)(t[i:i+4]))
	}
	for ; i < m; i++ {
		kk.axpyRow(t[i], k[i*ldk:i*ldk+n], acc)
	}
}

func dotRow32Generic(x []float32, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i]) * y[i]
		s1 += float64(x[i+1]) * y[i+1]
		s2 += float64(x[i+2]) * y[i+2]
		s3 += float64(x[i+3]) * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i]) * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpy4Rows32Generic(y []float64, k []float32, ldk int, t *[4]float64) {
	n := len(y)
	r0, r1, r2, r3 := k[:n], k[ldk:ldk+n], k[2*ldk:2*ldk+n], k[3*ldk:3*ldk+n]
	t0, t1, t2, t3 := t[0], t[1], t[2], t[3]
	for j := range y {
		a := y[j]
		a += t0 * float64(r0[j])
		a += t1 * float64(r1[j])
		a += t2 * float64(r2[j])
		a += t3 * float64(r3[j])
		y[j] = a
	}
}

func axpyRow32Generic(alpha float64, x []float32, y []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * float64(v)
	}
}

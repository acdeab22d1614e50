package asm

// ddot returns sum_i x[i]*y[i] over the first n = len(x) elements (y must be
// at least as long). The summation order differs from a plain loop (several
// partial sums), so results may differ from it in the last bits.
func ddot(x, y []float64) float64 {
	return cur().dot(x, y[:len(x)])
}

// Daxpy computes y[i] += alpha*x[i] for i < len(x) (y must be at least as
// long; the caller validates the lengths).
func Daxpy(alpha float64, x, y []float64) {
	if alpha == 0 {
		return
	}
	cur().axpy(alpha, x, y[:len(x)])
}

// dscal computes x[i] *= alpha. As in gonum's BLAS, alpha == 0 sets x to
// zero even where it held NaN or Inf.
func dscal(alpha float64, x []float64) {
	if alpha == 0 {
		clear(x)
		return
	}
	cur().scal(alpha, x)
}

// SumSq returns sum_i x[i]^2, the squared Euclidean norm, without scaling
// (it overflows for |x| beyond about 1e154, like the plain sum).
func SumSq(x []float64) float64 { return cur().sumsq(x) }

// DdotInc is ddot for strided vectors: sum_i x[i*incX]*y[i*incY], i < n.
func DdotInc(n int, x []float64, incX int, y []float64, incY int) float64 {
	if incX == 1 && incY == 1 {
		return ddot(x[:n], y[:n])
	}
	ix, iy := 0, 0
	if incX < 0 {
		ix = (1 - n) * incX
	}
	if incY < 0 {
		iy = (1 - n) * incY
	}
	var s float64
	for i := 0; i < n; i++ {
		s += x[ix] * y[iy]
		ix += incX
		iy += incY
	}
	return s
}

// DaxpyInc is Daxpy for strided vectors: y[i*incY] += alpha*x[i*incX], i < n.
func DaxpyInc(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	if incX == 1 && incY == 1 {
		Daxpy(alpha, x[:n], y[:n])
		return
	}
	if alpha == 0 {
		return
	}
	ix, iy := 0, 0
	if incX < 0 {
		ix = (1 - n) * incX
	}
	if incY < 0 {
		iy = (1 - n) * incY
	}
	for i := 0; i < n; i++ {
		y[iy] += alpha * x[ix]
		ix += incX
		iy += incY
	}
}

// DscalInc is dscal for a strided vector: x[i*incX] *= alpha, i < n, incX > 0.
func DscalInc(n int, alpha float64, x []float64, incX int) {
	if incX == 1 {
		dscal(alpha, x[:n])
		return
	}
	for i := 0; i < n; i++ {
		if alpha == 0 {
			x[i*incX] = 0
		} else {
			x[i*incX] *= alpha
		}
	}
}

func dotGeneric(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scalGeneric(alpha float64, x []float64) {
	for i := range x {
		x[i] *= alpha
	}
}

func sumsqGeneric(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * x[i]
		s1 += x[i+1] * x[i+1]
		s2 += x[i+2] * x[i+2]
		s3 += x[i+3] * x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

package asm

// Panic messages for invalid arguments, the same strings as gonum's BLAS so
// that code (and gonum's testblas suite) sees identical behaviour.
const (
	errMLT0         = "blas: m < 0"
	errNLT0         = "blas: n < 0"
	errKLT0         = "blas: k < 0"
	errBadUplo      = "blas: illegal triangle"
	errBadTranspose = "blas: illegal transpose"
	errBadLdA       = "blas: bad leading dimension of A"
	errBadLdB       = "blas: bad leading dimension of B"
	errBadLdC       = "blas: bad leading dimension of C"
	errShortA       = "blas: insufficient length of a"
	errShortB       = "blas: insufficient length of b"
	errShortC       = "blas: insufficient length of c"
)

package purego

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Single-precision products (backend.Float32Products): the float32 kernels
// of backend/internal/asm, with the packing, blocking, threading and code
// path of the float64 Gemm and Syrk.

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in single precision,
// accumulated in float32 with the same summation structure as Gemm (an entry
// is within about k*2^-24*sum_p |op(A)[i,p]||op(B)[p,j]| of the exact
// product). With beta == 0, C is not read. Shape mismatches panic with an
// error wrapping zonal.ErrShape. It implements backend.Float32Products; call
// it through backend.Sgemm.
func (Backend) Sgemm(tA, tB blas.Transpose, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	m, n, k := check.Gemm32(tA, tB, a, b, c)
	if m == 0 || n == 0 {
		return
	}
	// asm.Sgemm sets C = beta C without reading A or B when k or alpha is 0.
	asm.Sgemm(check.NormT(tA), check.NormT(tB), m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Ssyrk computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans) or
// alpha*A*A^T + beta*C (t == NoTrans) in single precision: only the
// micro-tiles meeting the lower triangle are computed, which is then
// mirrored into the upper one. Only the lower triangle of C is read (when
// beta != 0). It implements backend.Float32Products; call it through
// backend.Ssyrk.
func (Backend) Ssyrk(t blas.Transpose, alpha float32, a blas32.General, beta float32, c blas32.General) {
	n, k := check.Syrk32(t, a, c)
	if n == 0 {
		return
	}
	asm.Ssyrk(blas.Lower, check.NormT(t), n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
	check.MirrorLower32(c)
}

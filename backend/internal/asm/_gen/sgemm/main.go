// Command sgemm generates the float32 GEMM micro-kernels of package asm (the
// kernel code is package gemmgen's, shared with command gemm):
//
//   - skern6x16AVX2: the float64 6x8 AVX2 tile with eight floats per ymm
//     register (12 accumulators, 2 B vectors, 1 broadcast: 15 of 16).
//   - skern12x32AVX512: 24 zmm accumulators as in the float64 8x24 kernel,
//     arranged as 12 rows of two 16-float vectors (27 of 32 registers), so
//     that the tile width 32 divides the usual sizes (256, 1024, 2048) and
//     no column strip is computed partly for nothing.
//   - skern8x48AVX512: the float64 8x24 tile doubled in width (three
//     16-float vectors per row); kept as the alternative the comparison
//     benchmark measures against skern12x32AVX512.
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/zonal-ml/zonal/backend/internal/asm/_gen/internal/gemmgen"
)

func main() {
	ConstraintExpr("!noasm")
	gemmgen.Kernel(gemmgen.Spec{Name: "skern6x16AVX2", Elem: gemmgen.Float32, MR: 6, NV: 2, Width: 8, Vec: gemmgen.Y, Unroll: 4})
	gemmgen.Kernel(gemmgen.Spec{Name: "skern12x32AVX512", Elem: gemmgen.Float32, MR: 12, NV: 2, Width: 16, Vec: gemmgen.Z, Unroll: 4})
	gemmgen.Kernel(gemmgen.Spec{Name: "skern8x48AVX512", Elem: gemmgen.Float32, MR: 8, NV: 3, Width: 16, Vec: gemmgen.Z, Unroll: 4})
	Generate()
}

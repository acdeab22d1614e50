// Command gemm generates the float64 GEMM micro-kernels of package asm (the
// kernel code is package gemmgen's, shared with command sgemm).
package main

import (
	. "github.com/mmcloughlin/avo/build"

	"github.com/zonal-ml/zonal/backend/internal/asm/_gen/internal/gemmgen"
)

func main() {
	ConstraintExpr("!noasm")
	gemmgen.Kernel(gemmgen.Spec{Name: "kern6x8AVX2", Elem: gemmgen.Float64, MR: 6, NV: 2, Width: 4, Vec: gemmgen.Y, Unroll: 4})
	gemmgen.Kernel(gemmgen.Spec{Name: "kern8x24AVX512", Elem: gemmgen.Float64, MR: 8, NV: 3, Width: 8, Vec: gemmgen.Z, Unroll: 4})
	Generate()
}

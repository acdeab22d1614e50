// Command gemm generates the GEMM micro-kernels of package asm.
//
// A micro-kernel multiplies a packed MR x kc sliver of A (stored k-major:
// a[p*MR+i]) by a packed kc x NR sliver of B (b[p*NR+j]) and writes
//
//	C[i*ldc+j] = alpha*acc[i][j] + beta*C[i*ldc+j]    (beta != 0)
//	C[i*ldc+j] = alpha*acc[i][j]                      (beta == 0, C not read)
//
// for the full MR x NR tile of the row-major C. All MR*NR accumulators live in
// vector registers; elements of A are broadcast from memory, rows of B are
// loaded as vectors.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

type spec struct {
	name  string
	mr    int // rows of the tile
	nv    int // vectors per tile row
	width int // doubles per vector
	vec   func(i int) reg.VecPhysical
	unrol int
}

func ymm(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}[i]
}

func zmm(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}[i]
}

func main() {
	ConstraintExpr("!noasm")
	kernel(spec{name: "kern6x8AVX2", mr: 6, nv: 2, width: 4, vec: ymm, unrol: 4})
	kernel(spec{name: "kern8x24AVX512", mr: 8, nv: 3, width: 8, vec: zmm, unrol: 4})
	Generate()
}

func kernel(s spec) {
	nr := s.nv * s.width
	TEXT(s.name, NOSPLIT, "func(k int, a, b, c *float64, ldc int, alpha, beta float64)")
	Doc(fmt.Sprintf("%s computes a %dx%d tile C = alpha*A*B + beta*C from packed slivers (beta == 0: C is not read).", s.name, s.mr, nr))
	k := Load(Param("k"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(3), ldc)

	nacc := s.mr * s.nv
	acc := func(i, v int) reg.VecPhysical { return s.vec(i*s.nv + v) }
	bv := func(v int) reg.VecPhysical { return s.vec(nacc + v) }
	bc := s.vec(nacc + s.nv)

	Comment("Zero the accumulators.")
	for i := 0; i < nacc; i++ {
		r := s.vec(i)
		VXORPD(r, r, r)
	}
	// Prefetch the C tile rows for the final update.
	t := GP64()
	MOVQ(pc, t)
	for i := 0; i < s.mr; i++ {
		PREFETCHT0(Mem{Base: t})
		PREFETCHT0(Mem{Base: t, Disp: nr*8 - 8})
		if i < s.mr-1 {
			ADDQ(ldc, t)
		}
	}

	step := func(p int) {
		for v := 0; v < s.nv; v++ {
			VMOVUPD(Mem{Base: pb, Disp: (p*nr + v*s.width) * 8}, bv(v))
		}
		for i := 0; i < s.mr; i++ {
			VBROADCASTSD(Mem{Base: pa, Disp: (p*s.mr + i) * 8}, bc)
			for v := 0; v < s.nv; v++ {
				VFMADD231PD(bv(v), bc, acc(i, v))
			}
		}
	}

	Comment("Main loop, unrolled.")
	Label(s.name + "_loop")
	CMPQ(k, Imm(uint64(s.unrol)))
	JL(LabelRef(s.name + "_tail"))
	PREFETCHT0(Mem{Base: pa, Disp: s.unrol * s.mr * 8 * 4})
	for p := 0; p < s.unrol; p++ {
		step(p)
	}
	ADDQ(U32(s.unrol*s.mr*8), pa)
	ADDQ(U32(s.unrol*nr*8), pb)
	SUBQ(Imm(uint64(s.unrol)), k)
	JMP(LabelRef(s.name + "_loop"))

	Label(s.name + "_tail")
	TESTQ(k, k)
	JE(LabelRef(s.name + "_store"))
	step(0)
	ADDQ(U32(s.mr*8), pa)
	ADDQ(U32(nr*8), pb)
	DECQ(k)
	JMP(LabelRef(s.name + "_tail"))

	Label(s.name + "_store")
	al := bv(0)
	be := bv(1)
	VBROADCASTSD(paramAddr("alpha"), al)
	VBROADCASTSD(paramAddr("beta"), be)
	// beta == 0 (and not NaN): overwrite without reading C.
	VXORPD(bc.AsX(), bc.AsX(), bc.AsX())
	VUCOMISD(bc.AsX(), be.AsX())
	JNE(LabelRef(s.name + "_beta"))
	JP(LabelRef(s.name + "_beta"))
	for i := 0; i < s.mr; i++ {
		for v := 0; v < s.nv; v++ {
			VMULPD(al, acc(i, v), acc(i, v))
			VMOVUPD(acc(i, v), Mem{Base: pc, Disp: v * s.width * 8})
		}
		if i < s.mr-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()

	Label(s.name + "_beta")
	for i := 0; i < s.mr; i++ {
		for v := 0; v < s.nv; v++ {
			VMULPD(al, acc(i, v), acc(i, v))
			VFMADD231PD(Mem{Base: pc, Disp: v * s.width * 8}, be, acc(i, v))
			VMOVUPD(acc(i, v), Mem{Base: pc, Disp: v * s.width * 8})
		}
		if i < s.mr-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

// paramAddr returns the memory operand of a scalar argument.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

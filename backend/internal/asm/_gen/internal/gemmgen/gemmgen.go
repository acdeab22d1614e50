// Package gemmgen writes the register-blocked GEMM micro-kernels of package
// asm for the generators gemm (float64) and sgemm (float32); the two differ
// only in the element size and the PD/SD versus PS/SS instructions.
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
package gemmgen

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/zonal-ml/zonal/backend/internal/asm/_gen/internal/vexpgen"
)

// Elem is the element type of a kernel: its size, Go name and instructions.
type Elem struct {
	Size   int
	GoType string
	Note   string // appended to the kernel's doc sentence
	xor    func(ops ...Op)
	load   func(ops ...Op)
	bcast  func(ops ...Op)
	fma    func(ops ...Op)
	mul    func(ops ...Op)
	ucomis func(mx, x Op)
}

var (
	// Float64 kernels use the packed-double instructions.
	Float64 = Elem{Size: 8, GoType: "float64", xor: VXORPD, load: VMOVUPD, bcast: VBROADCASTSD,
		fma: VFMADD231PD, mul: VMULPD, ucomis: VUCOMISD}
	// Float32 kernels use the packed-single instructions.
	Float32 = Elem{Size: 4, GoType: "float32", Note: " in single precision", xor: VXORPS, load: VMOVUPS,
		bcast: VBROADCASTSS, fma: VFMADD231PS, mul: VMULPS, ucomis: VUCOMISS}
)

// Spec describes one micro-kernel.
type Spec struct {
	Name   string
	Elem   Elem
	MR     int // rows of the tile
	NV     int // vectors per tile row
	Width  int // elements per vector
	Vec    func(i int) reg.VecPhysical
	Unroll int
}

// Y returns the i-th 256-bit register.
func Y(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}[i]
}

// Z returns the i-th 512-bit register.
func Z(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}[i]
}

// Kernel emits the micro-kernel s.
func Kernel(s Spec) {
	e := s.Elem
	sz := e.Size
	shift := map[int]uint64{4: 2, 8: 3}[sz]
	nr := s.NV * s.Width
	TEXT(s.Name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldc int, alpha, beta %s)", e.GoType, e.GoType))
	Doc(fmt.Sprintf("%s computes a %dx%d tile C = alpha*A*B + beta*C from packed slivers (beta == 0: C is not read)%s.", s.Name, s.MR, nr, e.Note))
	k := Load(Param("k"), GP64())
	pa := Load(Param("a"), GP64())
	pb := Load(Param("b"), GP64())
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(Imm(shift), ldc)

	nacc := s.MR * s.NV
	acc := func(i, v int) reg.VecPhysical { return s.Vec(i*s.NV + v) }
	bv := func(v int) reg.VecPhysical { return s.Vec(nacc + v) }
	bc := s.Vec(nacc + s.NV)

	Comment("Zero the accumulators.")
	for i := 0; i < nacc; i++ {
		r := s.Vec(i)
		e.xor(r, r, r)
	}
	// Prefetch the C tile rows for the final update.
	t := GP64()
	MOVQ(pc, t)
	for i := 0; i < s.MR; i++ {
		PREFETCHT0(Mem{Base: t})
		PREFETCHT0(Mem{Base: t, Disp: nr*sz - sz})
		if i < s.MR-1 {
			ADDQ(ldc, t)
		}
	}

	step := func(p int) {
		for v := 0; v < s.NV; v++ {
			e.load(Mem{Base: pb, Disp: (p*nr + v*s.Width) * sz}, bv(v))
		}
		for i := 0; i < s.MR; i++ {
			e.bcast(Mem{Base: pa, Disp: (p*s.MR + i) * sz}, bc)
			for v := 0; v < s.NV; v++ {
				e.fma(bv(v), bc, acc(i, v))
			}
		}
	}

	Comment("Main loop, unrolled.")
	Label(s.Name + "_loop")
	CMPQ(k, Imm(uint64(s.Unroll)))
	JL(LabelRef(s.Name + "_tail"))
	PREFETCHT0(Mem{Base: pa, Disp: s.Unroll * s.MR * sz * 4})
	for p := 0; p < s.Unroll; p++ {
		step(p)
	}
	ADDQ(U32(s.Unroll*s.MR*sz), pa)
	ADDQ(U32(s.Unroll*nr*sz), pb)
	SUBQ(Imm(uint64(s.Unroll)), k)
	JMP(LabelRef(s.Name + "_loop"))

	Label(s.Name + "_tail")
	TESTQ(k, k)
	JE(LabelRef(s.Name + "_store"))
	step(0)
	ADDQ(U32(s.MR*sz), pa)
	ADDQ(U32(nr*sz), pb)
	DECQ(k)
	JMP(LabelRef(s.Name + "_tail"))

	Label(s.Name + "_store")
	al := bv(0)
	be := bv(1)
	e.bcast(vexpgen.ParamAddr("alpha"), al)
	e.bcast(vexpgen.ParamAddr("beta"), be)
	// beta == 0 (and not NaN): overwrite without reading C.
	e.xor(bc.AsX(), bc.AsX(), bc.AsX())
	e.ucomis(bc.AsX(), be.AsX())
	JNE(LabelRef(s.Name + "_beta"))
	JP(LabelRef(s.Name + "_beta"))
	for i := 0; i < s.MR; i++ {
		for v := 0; v < s.NV; v++ {
			e.mul(al, acc(i, v), acc(i, v))
			e.load(acc(i, v), Mem{Base: pc, Disp: v * s.Width * sz})
		}
		if i < s.MR-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()

	Label(s.Name + "_beta")
	for i := 0; i < s.MR; i++ {
		for v := 0; v < s.NV; v++ {
			e.mul(al, acc(i, v), acc(i, v))
			e.fma(Mem{Base: pc, Disp: v * s.Width * sz}, be, acc(i, v))
			e.load(acc(i, v), Mem{Base: pc, Disp: v * s.Width * sz})
		}
		if i < s.MR-1 {
			ADDQ(ldc, pc)
		}
	}
	VZEROUPPER()
	RET()
}

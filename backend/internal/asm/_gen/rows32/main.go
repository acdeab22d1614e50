// Command rows32 generates the AVX2+FMA mixed-precision row kernels of
// package asm: products of float32 rows (a float32 kernel block) with
// float64 vectors, accumulated in float64. Each float32 element is widened
// exactly (VCVTPS2PD, four at a time) and multiplied and added by a
// float64 FMA, so the only roundings are the float64 FMAs.
//
//   - dotRows32AVX2: sum_j float64(x[j]) * y[j] with four vector
//     accumulators (16 elements a step), then 4, then one at a time.
//   - axpy4Rows32AVX2: y[j] += t0 x0[j] + t1 x1[j] + t2 x2[j] + t3 x3[j] for
//     four rows x_r = k[r*ldk:], the four FMAs of an element in row order.
//   - axpyRow32AVX2: y[j] += alpha x[j], one row.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!noasm")
	dot()
	axpy4()
	axpy1()
	Generate()
}

func dot() {
	TEXT("dotRow32AVX2", NOSPLIT, "func(x []float32, y []float64) float64")
	Doc("dotRow32AVX2 returns sum_j float64(x[j])*y[j] for j < len(x); len(y) >= len(x).")
	px := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	py := Load(Param("y").Base(), GP64())
	acc := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	for _, r := range acc {
		VXORPD(r, r, r)
	}
	tmp := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	Label("dot32_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef("dot32_loop4"))
	for u := 0; u < 4; u++ {
		VCVTPS2PD(Mem{Base: px, Disp: 16 * u}, tmp[u])
		VFMADD231PD(Mem{Base: py, Disp: 32 * u}, tmp[u], acc[u])
	}
	ADDQ(Imm(64), px)
	ADDQ(Imm(128), py)
	SUBQ(Imm(16), n)
	JMP(LabelRef("dot32_loop16"))

	Label("dot32_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("dot32_reduce"))
	VCVTPS2PD(Mem{Base: px}, tmp[0])
	VFMADD231PD(Mem{Base: py}, tmp[0], acc[0])
	ADDQ(Imm(16), px)
	ADDQ(Imm(32), py)
	SUBQ(Imm(4), n)
	JMP(LabelRef("dot32_loop4"))

	Label("dot32_reduce")
	VADDPD(acc[1], acc[0], acc[0])
	VADDPD(acc[3], acc[2], acc[2])
	VADDPD(acc[2], acc[0], acc[0])
	VEXTRACTF128(Imm(1), acc[0], tmp[0].AsX())
	VADDPD(tmp[0].AsX(), acc[0].AsX(), acc[0].AsX())
	VUNPCKHPD(acc[0].AsX(), acc[0].AsX(), tmp[0].AsX())
	VADDSD(tmp[0].AsX(), acc[0].AsX(), acc[0].AsX())

	Label("dot32_loop1")
	TESTQ(n, n)
	JE(LabelRef("dot32_done"))
	VCVTSS2SD(Mem{Base: px}, tmp[0].AsX(), tmp[0].AsX())
	VFMADD231SD(Mem{Base: py}, tmp[0].AsX(), acc[0].AsX())
	ADDQ(Imm(4), px)
	ADDQ(Imm(8), py)
	DECQ(n)
	JMP(LabelRef("dot32_loop1"))

	Label("dot32_done")
	VZEROUPPER()
	Store(acc[0].AsX(), ReturnIndex(0))
	RET()
}

func axpy4() {
	TEXT("axpy4Rows32AVX2", NOSPLIT, "func(y []float64, k []float32, ldk int, t *[4]float64)")
	Doc("axpy4Rows32AVX2 computes y[j] += t[0]*k[j] + t[1]*k[ldk+j] + t[2]*k[2*ldk+j] + t[3]*k[3*ldk+j]",
		"for j < len(y) (four float64 FMAs per element, in row order); k holds 3*ldk+len(y) values.")
	py := Load(Param("y").Base(), GP64())
	n := Load(Param("y").Len(), GP64())
	pk := Load(Param("k").Base(), GP64())
	ld := Load(Param("ldk"), GP64())
	pt := Load(Param("t"), GP64())
	SHLQ(Imm(2), ld) // bytes
	ld3 := GP64()
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	tv := []reg.VecPhysical{reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	for r := range tv {
		VBROADCASTSD(Mem{Base: pt, Disp: 8 * r}, tv[r])
	}
	row := func(r, disp int) Mem {
		switch r {
		case 0:
			return Mem{Base: pk, Disp: disp}
		case 1:
			return Mem{Base: pk, Index: ld, Scale: 1, Disp: disp}
		case 2:
			return Mem{Base: pk, Index: ld, Scale: 2, Disp: disp}
		}
		return Mem{Base: pk, Index: ld3, Scale: 1, Disp: disp}
	}
	acc := []reg.VecPhysical{reg.Y0, reg.Y1}
	x := []reg.VecPhysical{reg.Y2, reg.Y3}
	Label("axpy4r_loop8")
	CMPQ(n, Imm(8))
	JL(LabelRef("axpy4r_loop4"))
	for u := 0; u < 2; u++ {
		VMOVUPD(Mem{Base: py, Disp: 32 * u}, acc[u])
	}
	for r := 0; r < 4; r++ {
		for u := 0; u < 2; u++ {
			VCVTPS2PD(row(r, 16*u), x[u])
			VFMADD231PD(x[u], tv[r], acc[u])
		}
	}
	for u := 0; u < 2; u++ {
		VMOVUPD(acc[u], Mem{Base: py, Disp: 32 * u})
	}
	ADDQ(Imm(64), py)
	ADDQ(Imm(32), pk)
	SUBQ(Imm(8), n)
	JMP(LabelRef("axpy4r_loop8"))

	Label("axpy4r_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("axpy4r_loop1"))
	VMOVUPD(Mem{Base: py}, acc[0])
	for r := 0; r < 4; r++ {
		VCVTPS2PD(row(r, 0), x[0])
		VFMADD231PD(x[0], tv[r], acc[0])
	}
	VMOVUPD(acc[0], Mem{Base: py})
	ADDQ(Imm(32), py)
	ADDQ(Imm(16), pk)
	SUBQ(Imm(4), n)
	JMP(LabelRef("axpy4r_loop4"))

	Label("axpy4r_loop1")
	TESTQ(n, n)
	JE(LabelRef("axpy4r_done"))
	VMOVSD(Mem{Base: py}, acc[0].AsX())
	for r := 0; r < 4; r++ {
		VCVTSS2SD(row(r, 0), x[0].AsX(), x[0].AsX())
		VFMADD231SD(x[0].AsX(), tv[r].AsX(), acc[0].AsX())
	}
	VMOVSD(acc[0].AsX(), Mem{Base: py})
	ADDQ(Imm(8), py)
	ADDQ(Imm(4), pk)
	DECQ(n)
	JMP(LabelRef("axpy4r_loop1"))

	Label("axpy4r_done")
	VZEROUPPER()
	RET()
}

func axpy1() {
	TEXT("axpyRow32AVX2", NOSPLIT, "func(alpha float64, x []float32, y []float64)")
	Doc("axpyRow32AVX2 computes y[j] += alpha*float64(x[j]) for j < len(x); len(y) >= len(x).")
	px := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	py := Load(Param("y").Base(), GP64())
	a := reg.Y8
	VBROADCASTSD(paramAddr("alpha"), a)
	v := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	xv := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	Label("axpyr_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef("axpyr_loop4"))
	for u := 0; u < 4; u++ {
		VMOVUPD(Mem{Base: py, Disp: 32 * u}, v[u])
		VCVTPS2PD(Mem{Base: px, Disp: 16 * u}, xv[u])
		VFMADD231PD(xv[u], a, v[u])
		VMOVUPD(v[u], Mem{Base: py, Disp: 32 * u})
	}
	ADDQ(Imm(64), px)
	ADDQ(Imm(128), py)
	SUBQ(Imm(16), n)
	JMP(LabelRef("axpyr_loop16"))
	Label("axpyr_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("axpyr_loop1"))
	VMOVUPD(Mem{Base: py}, v[0])
	VCVTPS2PD(Mem{Base: px}, xv[0])
	VFMADD231PD(xv[0], a, v[0])
	VMOVUPD(v[0], Mem{Base: py})
	ADDQ(Imm(16), px)
	ADDQ(Imm(32), py)
	SUBQ(Imm(4), n)
	JMP(LabelRef("axpyr_loop4"))
	Label("axpyr_loop1")
	TESTQ(n, n)
	JE(LabelRef("axpyr_done"))
	VMOVSD(Mem{Base: py}, v[0].AsX())
	VCVTSS2SD(Mem{Base: px}, xv[0].AsX(), xv[0].AsX())
	VFMADD231SD(xv[0].AsX(), a.AsX(), v[0].AsX())
	VMOVSD(v[0].AsX(), Mem{Base: py})
	ADDQ(Imm(4), px)
	ADDQ(Imm(8), py)
	DECQ(n)
	JMP(LabelRef("axpyr_loop1"))
	Label("axpyr_done")
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

// Command level1 generates the AVX2+FMA level-1 kernels of package asm:
// dot product, squared norm, axpy and scal on unit-stride slices. Each main
// loop handles 16 elements with four independent vector accumulators (or
// four independent load/op/store chains), then 4 at a time, then one at a
// time with scalar FMAs.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!noasm")
	reduction("dotAVX2", false)
	reduction("sumsqAVX2", true)
	axpy()
	scal()
	Generate()
}

// reduction generates sum_i x[i]*y[i] (or x[i]^2 when square).
func reduction(name string, square bool) {
	if square {
		TEXT(name, NOSPLIT, "func(x []float64) float64")
		Doc(name + " returns sum_i x[i]^2.")
	} else {
		TEXT(name, NOSPLIT, "func(x, y []float64) float64")
		Doc(name + " returns sum_i x[i]*y[i]; len(y) >= len(x).")
	}
	px := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	py := px
	if !square {
		py = Load(Param("y").Base(), GP64())
	}
	acc := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	for _, r := range acc {
		VXORPD(r, r, r)
	}
	tmp := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	Label(name + "_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef(name + "_loop4"))
	for u := 0; u < 4; u++ {
		VMOVUPD(Mem{Base: px, Disp: 32 * u}, tmp[u])
		VFMADD231PD(Mem{Base: py, Disp: 32 * u}, tmp[u], acc[u])
	}
	ADDQ(Imm(128), px)
	if !square {
		ADDQ(Imm(128), py)
	}
	SUBQ(Imm(16), n)
	JMP(LabelRef(name + "_loop16"))

	Label(name + "_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef(name + "_reduce"))
	VMOVUPD(Mem{Base: px}, tmp[0])
	VFMADD231PD(Mem{Base: py}, tmp[0], acc[0])
	ADDQ(Imm(32), px)
	if !square {
		ADDQ(Imm(32), py)
	}
	SUBQ(Imm(4), n)
	JMP(LabelRef(name + "_loop4"))

	Label(name + "_reduce")
	VADDPD(acc[1], acc[0], acc[0])
	VADDPD(acc[3], acc[2], acc[2])
	VADDPD(acc[2], acc[0], acc[0])
	VEXTRACTF128(Imm(1), acc[0], tmp[0].AsX())
	VADDPD(tmp[0].AsX(), acc[0].AsX(), acc[0].AsX())
	VUNPCKHPD(acc[0].AsX(), acc[0].AsX(), tmp[0].AsX())
	VADDSD(tmp[0].AsX(), acc[0].AsX(), acc[0].AsX())

	Label(name + "_loop1")
	TESTQ(n, n)
	JE(LabelRef(name + "_done"))
	VMOVSD(Mem{Base: px}, tmp[0].AsX())
	VFMADD231SD(Mem{Base: py}, tmp[0].AsX(), acc[0].AsX())
	ADDQ(Imm(8), px)
	if !square {
		ADDQ(Imm(8), py)
	}
	DECQ(n)
	JMP(LabelRef(name + "_loop1"))

	Label(name + "_done")
	VZEROUPPER()
	Store(acc[0].AsX(), ReturnIndex(0))
	RET()
}

func axpy() {
	TEXT("axpyAVX2", NOSPLIT, "func(alpha float64, x, y []float64)")
	Doc("axpyAVX2 computes y[i] += alpha*x[i] for i < len(x); len(y) >= len(x).")
	px := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	py := Load(Param("y").Base(), GP64())
	a := reg.Y8
	VBROADCASTSD(paramAddr("alpha"), a)
	v := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	Label("axpy_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef("axpy_loop4"))
	for u := 0; u < 4; u++ {
		VMOVUPD(Mem{Base: py, Disp: 32 * u}, v[u])
		VFMADD231PD(Mem{Base: px, Disp: 32 * u}, a, v[u])
		VMOVUPD(v[u], Mem{Base: py, Disp: 32 * u})
	}
	ADDQ(Imm(128), px)
	ADDQ(Imm(128), py)
	SUBQ(Imm(16), n)
	JMP(LabelRef("axpy_loop16"))
	Label("axpy_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("axpy_loop1"))
	VMOVUPD(Mem{Base: py}, v[0])
	VFMADD231PD(Mem{Base: px}, a, v[0])
	VMOVUPD(v[0], Mem{Base: py})
	ADDQ(Imm(32), px)
	ADDQ(Imm(32), py)
	SUBQ(Imm(4), n)
	JMP(LabelRef("axpy_loop4"))
	Label("axpy_loop1")
	TESTQ(n, n)
	JE(LabelRef("axpy_done"))
	VMOVSD(Mem{Base: py}, v[0].AsX())
	VFMADD231SD(Mem{Base: px}, a.AsX(), v[0].AsX())
	VMOVSD(v[0].AsX(), Mem{Base: py})
	ADDQ(Imm(8), px)
	ADDQ(Imm(8), py)
	DECQ(n)
	JMP(LabelRef("axpy_loop1"))
	Label("axpy_done")
	VZEROUPPER()
	RET()
}

func scal() {
	TEXT("scalAVX2", NOSPLIT, "func(alpha float64, x []float64)")
	Doc("scalAVX2 computes x[i] *= alpha.")
	px := Load(Param("x").Base(), GP64())
	n := Load(Param("x").Len(), GP64())
	a := reg.Y8
	VBROADCASTSD(paramAddr("alpha"), a)
	v := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	Label("scal_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef("scal_loop4"))
	for u := 0; u < 4; u++ {
		VMULPD(Mem{Base: px, Disp: 32 * u}, a, v[u])
		VMOVUPD(v[u], Mem{Base: px, Disp: 32 * u})
	}
	ADDQ(Imm(128), px)
	SUBQ(Imm(16), n)
	JMP(LabelRef("scal_loop16"))
	Label("scal_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("scal_loop1"))
	VMULPD(Mem{Base: px}, a, v[0])
	VMOVUPD(v[0], Mem{Base: px})
	ADDQ(Imm(32), px)
	SUBQ(Imm(4), n)
	JMP(LabelRef("scal_loop4"))
	Label("scal_loop1")
	TESTQ(n, n)
	JE(LabelRef("scal_done"))
	VMULSD(Mem{Base: px}, a.AsX(), v[0].AsX())
	VMOVSD(v[0].AsX(), Mem{Base: px})
	ADDQ(Imm(8), px)
	DECQ(n)
	JMP(LabelRef("scal_loop1"))
	Label("scal_done")
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

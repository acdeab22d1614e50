// Command gegen generates the AVX2+FMA step of the Gegenbauer three-term
// recurrence of package asm: for every point i,
//
//	dst[i] = fma(a*t[i], p1[i], -(b*p2[i]))
//
// i.e. P^l = a t P^{l-1} - b P^{l-2} with the same three roundings as the Go
// fallback (a*t, b*p2, one fused multiply-subtract), so both agree exactly.
package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("!noasm")
	TEXT("gegenAVX2", NOSPLIT, "func(dst, t, p1, p2 []float64, a, b float64)")
	Doc("gegenAVX2 sets dst[i] = fma(a*t[i], p1[i], -(b*p2[i])) for i < len(dst) &^ 3; t, p1, p2 at least as long.")
	pd := Load(Param("dst").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	pt := Load(Param("t").Base(), GP64())
	p1 := Load(Param("p1").Base(), GP64())
	p2 := Load(Param("p2").Base(), GP64())
	va, vb := reg.Y14, reg.Y15
	VBROADCASTSD(paramAddr("a"), va)
	VBROADCASTSD(paramAddr("b"), vb)
	u := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3}
	v := []reg.VecPhysical{reg.Y4, reg.Y5, reg.Y6, reg.Y7}
	step := func(k int) {
		for q := 0; q < k; q++ {
			VMULPD(Mem{Base: pt, Disp: 32 * q}, va, u[q])
			VMULPD(Mem{Base: p2, Disp: 32 * q}, vb, v[q])
			VFMSUB231PD(Mem{Base: p1, Disp: 32 * q}, u[q], v[q]) // v = u*p1 - v
			VMOVUPD(v[q], Mem{Base: pd, Disp: 32 * q})
		}
		for _, p := range []reg.Register{pd, pt, p1, p2} {
			ADDQ(U32(32*k), p)
		}
		SUBQ(U32(4*k), n)
	}
	Label("gegen_loop16")
	CMPQ(n, Imm(16))
	JL(LabelRef("gegen_loop4"))
	step(4)
	JMP(LabelRef("gegen_loop16"))
	Label("gegen_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("gegen_done"))
	step(1)
	JMP(LabelRef("gegen_loop4"))
	Label("gegen_done")
	VZEROUPPER()
	RET()
	Generate()
}

// paramAddr returns the memory operand of a scalar argument.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

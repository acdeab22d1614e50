// Command vexp generates the AVX2+FMA vector exponential of package asm and
// the fused Gaussian-kernel epilogue built on it.
//
// exp(x), four lanes at a time:
//
//  1. clamp x to [-746, 710] (NaN passes through: the clamps return their
//     register operand when it is NaN); beyond these bounds the result is
//     already 0 or +Inf, and the clamp keeps n below in range;
//  2. n = round(x/ln2) by the shifter trick t = fma(x, log2(e), 1.5*2^52),
//     n = t - 1.5*2^52 (round to nearest even);
//  3. r = x - n*ln2 with ln2 in two parts (Cody-Waite): ln2hi has 32
//     significant bits so n*ln2hi is exact, and both steps are FMAs;
//     |r| <= ln2/2 (plus rounding);
//  4. e^r by its Taylor polynomial of degree 13 in Horner form with FMAs:
//     the truncation error r^14/14! < 4e-18 is far below half an ulp;
//  5. 2^n as the product of two powers of two 2^n1 * 2^n2 with
//     n1 = floor(n/2), n2 = n - n1, each built from exponent bits
//     ((n_i + 1023) << 52, again by adding a shifter), so that results in the
//     subnormal range (n down to -1076) and n = 1024 (x up to 710) are formed
//     by ordinary, correctly rounded multiplications: overflow gives +Inf and
//     underflow goes gradually through the subnormals to 0.
package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const shifter = 6755399441055744.0 // 1.5 * 2^52

// Constant table, each value replicated in four lanes (32 bytes).
var consts = []struct {
	name string
	v    float64
}{
	{"hi", 710},
	{"lo", -746},
	{"log2e", math.Log2E},
	{"shift", shifter},
	{"ln2hi", 6.93147180369123816490e-01},
	{"ln2lo", 1.90821492927058770002e-10},
	{"half", 0.5},
	{"bias", shifter + 1023},
	{"zero", 0},
}

var table Mem

func cst(name string) Mem {
	for i, c := range consts {
		if c.name == name {
			return table.Offset(32 * i)
		}
	}
	panic(name)
}

// taylor returns 1/k! at table offset.
func taylor(k int) Mem { return table.Offset(32 * (len(consts) + k)) }

func main() {
	ConstraintExpr("!noasm")
	table = GLOBL("expconst", RODATA|NOPTR)
	off := 0
	put := func(v float64) {
		for l := 0; l < 4; l++ {
			DATA(off, U64(math.Float64bits(v))) // bit patterns: avo prints integral F64 values as integers
			off += 8
		}
	}
	for _, c := range consts {
		put(c.v)
	}
	f := 1.0
	for k := 0; k <= 13; k++ {
		if k > 0 {
			f *= float64(k)
		}
		put(1 / f)
	}
	expKernel()
	gaussKernel()
	expKernel512()
	gaussKernel512()
	Generate()
}

// lane holds the registers of one vector being exponentiated.
type lane struct{ x, t, n, r, p reg.VecPhysical }

// expLane computes e^x into l.p; hi, lo hold the clamps. l.x is clobbered.
func expLane(l lane, hi, lo reg.VecPhysical) {
	VMINPD(l.x, hi, l.x)
	VMAXPD(l.x, lo, l.x)
	VMOVUPD(cst("shift"), l.t)
	VFMADD231PD(cst("log2e"), l.x, l.t)
	VSUBPD(cst("shift"), l.t, l.n)
	VMOVAPD(l.x, l.r)
	VFNMADD231PD(cst("ln2hi"), l.n, l.r)
	VFNMADD231PD(cst("ln2lo"), l.n, l.r)
	VMOVUPD(taylor(13), l.p)
	for k := 12; k >= 0; k-- {
		VFMADD213PD(taylor(k), l.r, l.p)
	}
	// n1 = floor(n/2) in x, n2 = n - n1 in t.
	VMULPD(cst("half"), l.n, l.x)
	VROUNDPD(Imm(9), l.x, l.x)
	VSUBPD(l.x, l.n, l.t)
	VADDPD(cst("bias"), l.x, l.x)
	VADDPD(cst("bias"), l.t, l.t)
	VPSLLQ(Imm(52), l.x, l.x)
	VPSLLQ(Imm(52), l.t, l.t)
	VMULPD(l.x, l.p, l.p)
	VMULPD(l.t, l.p, l.p)
}

func expKernel() {
	TEXT("expAVX2", NOSPLIT, "func(dst, src []float64)")
	Doc("expAVX2 sets dst[i] = e^src[i] for i < len(src) &^ 3; len(dst) >= len(src).")
	pd := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	hi, lo := reg.Y14, reg.Y15
	VMOVUPD(cst("hi"), hi)
	VMOVUPD(cst("lo"), lo)
	l0 := lane{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4}
	l1 := lane{reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9}
	Label("exp_loop8")
	CMPQ(n, Imm(8))
	JL(LabelRef("exp_loop4"))
	VMOVUPD(Mem{Base: ps}, l0.x)
	VMOVUPD(Mem{Base: ps, Disp: 32}, l1.x)
	expPair(l0, l1, hi, lo)
	VMOVUPD(l0.p, Mem{Base: pd})
	VMOVUPD(l1.p, Mem{Base: pd, Disp: 32})
	ADDQ(Imm(64), ps)
	ADDQ(Imm(64), pd)
	SUBQ(Imm(8), n)
	JMP(LabelRef("exp_loop8"))
	Label("exp_loop4")
	CMPQ(n, Imm(4))
	JL(LabelRef("exp_done"))
	VMOVUPD(Mem{Base: ps}, l0.x)
	expLane(l0, hi, lo)
	VMOVUPD(l0.p, Mem{Base: pd})
	Label("exp_done")
	VZEROUPPER()
	RET()
}

// expPair interleaves two lanes instruction by instruction for ILP.
func expPair(a, b lane, hi, lo reg.VecPhysical) {
	// Emitting both lanes' sequences back to back is enough: the out-of-order
	// core overlaps them; keep it simple.
	expLane(a, hi, lo)
	expLane(b, hi, lo)
}

func gaussKernel() {
	TEXT("gaussAVX2", NOSPLIT, "func(c *float64, ldc, rows, cols int, xn, yn *float64, gamma float64)")
	Doc("gaussAVX2 sets c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])) for i < rows, j < cols &^ 3.")
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	pxn := Load(Param("xn"), GP64())
	pyn := Load(Param("yn"), GP64())
	SHLQ(Imm(3), ldc)
	SHRQ(Imm(2), cols)
	hi, lo := reg.Y14, reg.Y15
	zero, ng, xi := reg.Y11, reg.Y12, reg.Y13
	VMOVUPD(cst("hi"), hi)
	VMOVUPD(cst("lo"), lo)
	VXORPD(zero, zero, zero)
	VBROADCASTSD(paramAddr("gamma"), ng)
	VSUBPD(ng, zero, ng) // -gamma
	l0 := lane{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4}
	l1 := lane{reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9}
	j := GP64()
	pr := GP64()
	py := GP64()
	body := func(l lane, disp int) {
		VADDPD(Mem{Base: py, Disp: disp}, xi, l.x)
		VADDPD(Mem{Base: pr, Disp: disp}, l.x, l.x)
		VMAXPD(l.x, zero, l.x) // NaN stays NaN
		VMULPD(ng, l.x, l.x)
	}
	Label("gauss_row")
	TESTQ(rows, rows)
	JE(LabelRef("gauss_done"))
	VBROADCASTSD(Mem{Base: pxn}, xi)
	MOVQ(cols, j)
	MOVQ(pc, pr)
	MOVQ(pyn, py)
	Label("gauss_col2")
	CMPQ(j, Imm(2))
	JL(LabelRef("gauss_col1"))
	body(l0, 0)
	body(l1, 32)
	expLane(l0, hi, lo)
	expLane(l1, hi, lo)
	VMOVUPD(l0.p, Mem{Base: pr})
	VMOVUPD(l1.p, Mem{Base: pr, Disp: 32})
	ADDQ(Imm(64), pr)
	ADDQ(Imm(64), py)
	SUBQ(Imm(2), j)
	JMP(LabelRef("gauss_col2"))
	Label("gauss_col1")
	TESTQ(j, j)
	JE(LabelRef("gauss_next"))
	body(l0, 0)
	expLane(l0, hi, lo)
	VMOVUPD(l0.p, Mem{Base: pr})
	ADDQ(Imm(32), pr)
	ADDQ(Imm(32), py)
	DECQ(j)
	JMP(LabelRef("gauss_col1"))
	Label("gauss_next")
	ADDQ(ldc, pc)
	ADDQ(Imm(8), pxn)
	DECQ(rows)
	JMP(LabelRef("gauss_row"))
	Label("gauss_done")
	VZEROUPPER()
	RET()
}

// expLane512 computes e^x into l.p for eight lanes with AVX-512: the same
// operations as expLane, except that the final scaling p*2^n is the single
// VSCALEFPD, which rounds once exactly like the two exact-then-rounding
// multiplications of the AVX2 form, so the results are bit-identical.
func expLane512(l lane, hi, lo reg.VecPhysical) {
	VMINPD(l.x, hi, l.x)
	VMAXPD(l.x, lo, l.x)
	VBROADCASTSD(cst("shift"), l.t)
	VFMADD231PD_BCST(cst("log2e"), l.x, l.t)
	VSUBPD_BCST(cst("shift"), l.t, l.n)
	VMOVAPD(l.x, l.r)
	VFNMADD231PD_BCST(cst("ln2hi"), l.n, l.r)
	VFNMADD231PD_BCST(cst("ln2lo"), l.n, l.r)
	VBROADCASTSD(taylor(13), l.p)
	for k := 12; k >= 0; k-- {
		VFMADD213PD_BCST(taylor(k), l.r, l.p)
	}
	VSCALEFPD(l.n, l.p, l.p)
}

func zlane(i int) lane {
	z := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23}
	return lane{z[5*i], z[5*i+1], z[5*i+2], z[5*i+3], z[5*i+4]}
}

func expKernel512() {
	TEXT("expAVX512", NOSPLIT, "func(dst, src []float64)")
	Doc("expAVX512 sets dst[i] = e^src[i] for i < len(src) &^ 7; len(dst) >= len(src).")
	pd := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	hi, lo := reg.Z30, reg.Z31
	VBROADCASTSD(cst("hi"), hi)
	VBROADCASTSD(cst("lo"), lo)
	const u = 4
	Label("exp512_loop32")
	CMPQ(n, Imm(8*u))
	JL(LabelRef("exp512_loop8"))
	for i := 0; i < u; i++ {
		VMOVUPD(Mem{Base: ps, Disp: 64 * i}, zlane(i).x)
	}
	for i := 0; i < u; i++ {
		expLane512(zlane(i), hi, lo)
	}
	for i := 0; i < u; i++ {
		VMOVUPD(zlane(i).p, Mem{Base: pd, Disp: 64 * i})
	}
	ADDQ(U32(64*u), ps)
	ADDQ(U32(64*u), pd)
	SUBQ(Imm(8*u), n)
	JMP(LabelRef("exp512_loop32"))
	Label("exp512_loop8")
	CMPQ(n, Imm(8))
	JL(LabelRef("exp512_done"))
	VMOVUPD(Mem{Base: ps}, zlane(0).x)
	expLane512(zlane(0), hi, lo)
	VMOVUPD(zlane(0).p, Mem{Base: pd})
	ADDQ(Imm(64), ps)
	ADDQ(Imm(64), pd)
	SUBQ(Imm(8), n)
	JMP(LabelRef("exp512_loop8"))
	Label("exp512_done")
	VZEROUPPER()
	RET()
}

func gaussKernel512() {
	TEXT("gaussAVX512", NOSPLIT, "func(c *float64, ldc, rows, cols int, xn, yn *float64, gamma float64)")
	Doc("gaussAVX512 sets c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])) for i < rows, j < cols &^ 7.")
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	pxn := Load(Param("xn"), GP64())
	pyn := Load(Param("yn"), GP64())
	SHLQ(Imm(3), ldc)
	SHRQ(Imm(3), cols)
	hi, lo := reg.Z30, reg.Z31
	zero, ng, xi := reg.Z27, reg.Z28, reg.Z29
	VBROADCASTSD(cst("hi"), hi)
	VBROADCASTSD(cst("lo"), lo)
	VPXORQ(zero, zero, zero)
	VBROADCASTSD(paramAddr("gamma"), ng)
	VSUBPD(ng, zero, ng) // -gamma
	j := GP64()
	pr := GP64()
	py := GP64()
	body := func(l lane, disp int) {
		VADDPD(Mem{Base: py, Disp: disp}, xi, l.x)
		VADDPD(Mem{Base: pr, Disp: disp}, l.x, l.x)
		VMAXPD(l.x, zero, l.x) // NaN stays NaN
		VMULPD(ng, l.x, l.x)
	}
	Label("gauss512_row")
	TESTQ(rows, rows)
	JE(LabelRef("gauss512_done"))
	VBROADCASTSD(Mem{Base: pxn}, xi)
	MOVQ(cols, j)
	MOVQ(pc, pr)
	MOVQ(pyn, py)
	Label("gauss512_col3")
	CMPQ(j, Imm(3))
	JL(LabelRef("gauss512_col1"))
	for i := 0; i < 3; i++ {
		body(zlane(i), 64*i)
	}
	for i := 0; i < 3; i++ {
		expLane512(zlane(i), hi, lo)
	}
	for i := 0; i < 3; i++ {
		VMOVUPD(zlane(i).p, Mem{Base: pr, Disp: 64 * i})
	}
	ADDQ(U32(192), pr)
	ADDQ(U32(192), py)
	SUBQ(Imm(3), j)
	JMP(LabelRef("gauss512_col3"))
	Label("gauss512_col1")
	TESTQ(j, j)
	JE(LabelRef("gauss512_next"))
	body(zlane(0), 0)
	expLane512(zlane(0), hi, lo)
	VMOVUPD(zlane(0).p, Mem{Base: pr})
	ADDQ(Imm(64), pr)
	ADDQ(Imm(64), py)
	DECQ(j)
	JMP(LabelRef("gauss512_col1"))
	Label("gauss512_next")
	ADDQ(ldc, pc)
	ADDQ(Imm(8), pxn)
	DECQ(rows)
	JMP(LabelRef("gauss512_row"))
	Label("gauss512_done")
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

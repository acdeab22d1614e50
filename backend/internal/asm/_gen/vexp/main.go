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
//  4. e^r by a polynomial of degree 11 in Horner form with FMAs: the
//     degree-13 Taylor polynomial (truncation error < 4e-18) economized by
//     Chebyshev to degree 11 (added error < 3.5e-18), far below half an ulp;
//  5. 2^n as the product of two powers of two 2^n1 * 2^n2 with
//     n1 = floor(n/2), n2 = n - n1, each built from exponent bits
//     ((n_i + 1023) << 52, again by adding a shifter), so that results in the
//     subnormal range (n down to -1076) and n = 1024 (x up to 710) are formed
//     by ordinary, correctly rounded multiplications: overflow gives +Inf and
//     underflow goes gradually through the subnormals to 0.
package main

import (
	"fmt"
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

// poly returns the k-th polynomial coefficient.
func poly(k int) Mem { return table.Offset(32 * (len(consts) + k)) }

// polyCoef: e^r on |r| <= 0.35, the degree-13 Taylor polynomial economized to
// degree 11 (T13 and T12 Chebyshev components removed, exact rational
// arithmetic); the same values as expPoly in package asm.
var polyCoef = []float64{
	1.0,
	1.0,
	0.500000000000002,
	0.16666666666666707,
	0.041666666666473846,
	0.008333333333307623,
	0.0013888888956048683,
	0.00019841269913226762,
	2.4801481568968142e-05,
	2.7557221323412594e-06,
	2.7634041305916304e-07,
	2.5116043453717065e-08,
}

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
	for _, v := range polyCoef {
		put(v)
	}
	expKernel(false)
	gaussKernel(false)
	expKernel(true)
	gaussKernel(true)
	Generate()
}

// lane holds the three registers of one vector being exponentiated: x (the
// argument, then r, then n1), t (the shifted product, then the polynomial,
// then the result) and n (then n2).
type lane struct{ x, t, n reg.VecPhysical }

// expLanes computes e^x for every lane into lane.t, emitting each step for
// all lanes before the next step: the lanes are independent, so the
// out-of-order core overlaps their long FMA chains (the Horner scheme alone
// is 14 dependent FMAs). wide selects AVX-512 (broadcast memory operands and
// the VSCALEFPD scaling, which rounds once exactly like the two
// multiplications of the AVX2 form, so the results are bit-identical).
func expLanes(ls []lane, hi, lo reg.VecPhysical, wide bool) {
	each := func(f func(l lane)) {
		for _, l := range ls {
			f(l)
		}
	}
	each(func(l lane) { VMINPD(l.x, hi, l.x) })
	each(func(l lane) { VMAXPD(l.x, lo, l.x) })
	if wide {
		each(func(l lane) { VBROADCASTSD(cst("shift"), l.t) })
		each(func(l lane) { VFMADD231PD_BCST(cst("log2e"), l.x, l.t) })
		each(func(l lane) { VSUBPD_BCST(cst("shift"), l.t, l.n) })
		each(func(l lane) { VFNMADD231PD_BCST(cst("ln2hi"), l.n, l.x) })
		each(func(l lane) { VFNMADD231PD_BCST(cst("ln2lo"), l.n, l.x) })
		each(func(l lane) { VBROADCASTSD(poly(11), l.t) })
		for k := 10; k >= 0; k-- {
			each(func(l lane) { VFMADD213PD_BCST(poly(k), l.x, l.t) })
		}
		each(func(l lane) { VSCALEFPD(l.n, l.t, l.t) })
		return
	}
	each(func(l lane) { VMOVUPD(cst("shift"), l.t) })
	each(func(l lane) { VFMADD231PD(cst("log2e"), l.x, l.t) })
	each(func(l lane) { VSUBPD(cst("shift"), l.t, l.n) })
	each(func(l lane) { VFNMADD231PD(cst("ln2hi"), l.n, l.x) })
	each(func(l lane) { VFNMADD231PD(cst("ln2lo"), l.n, l.x) })
	each(func(l lane) { VMOVUPD(poly(11), l.t) })
	for k := 10; k >= 0; k-- {
		each(func(l lane) { VFMADD213PD(poly(k), l.x, l.t) })
	}
	// n1 = floor(n/2) in x, n2 = n - n1 in n, each turned into 2^n_i.
	each(func(l lane) { VMULPD(cst("half"), l.n, l.x) })
	each(func(l lane) { VROUNDPD(Imm(9), l.x, l.x) })
	each(func(l lane) { VSUBPD(l.x, l.n, l.n) })
	each(func(l lane) { VADDPD(cst("bias"), l.x, l.x) })
	each(func(l lane) { VADDPD(cst("bias"), l.n, l.n) })
	each(func(l lane) { VPSLLQ(Imm(52), l.x, l.x) })
	each(func(l lane) { VPSLLQ(Imm(52), l.n, l.n) })
	each(func(l lane) { VMULPD(l.x, l.t, l.t) })
	each(func(l lane) { VMULPD(l.n, l.t, l.t) })
}

func ylanes(n int) []lane {
	y := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	var ls []lane
	for i := 0; i < n; i++ {
		ls = append(ls, lane{y[3*i], y[3*i+1], y[3*i+2]})
	}
	return ls
}

func zlanes(n int) []lane {
	z := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23}
	var ls []lane
	for i := 0; i < n; i++ {
		ls = append(ls, lane{z[3*i], z[3*i+1], z[3*i+2]})
	}
	return ls
}

// expLoop emits a loop over src/dst handling len(ls) vectors of w doubles
// per iteration, jumping to next when fewer remain.
func expLoop(name string, ls []lane, w int, ps, pd, n reg.Register, hi, lo reg.VecPhysical, wide bool, next string) {
	per := len(ls) * w
	Label(name)
	CMPQ(n, U32(per))
	JL(LabelRef(next))
	for i, l := range ls {
		VMOVUPD(Mem{Base: ps, Disp: 8 * w * i}, l.x)
	}
	expLanes(ls, hi, lo, wide)
	for i, l := range ls {
		VMOVUPD(l.t, Mem{Base: pd, Disp: 8 * w * i})
	}
	ADDQ(U32(8*per), ps)
	ADDQ(U32(8*per), pd)
	SUBQ(U32(per), n)
	JMP(LabelRef(name))
}

func expKernel(wide bool) {
	name, w, hi, lo, ls := "expAVX2", 4, reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y15), ylanes(4)
	if wide {
		name, w, hi, lo, ls = "expAVX512", 8, reg.Z30, reg.Z31, zlanes(6)
	}
	TEXT(name, NOSPLIT, "func(dst, src []float64)")
	Doc(fmt.Sprintf("%s sets dst[i] = e^src[i] for i < len(src) &^ %d; len(dst) >= len(src).", name, w-1))
	pd := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	if wide {
		VBROADCASTSD(cst("hi"), hi)
		VBROADCASTSD(cst("lo"), lo)
	} else {
		VMOVUPD(cst("hi"), hi)
		VMOVUPD(cst("lo"), lo)
	}
	expLoop(name+"_many", ls, w, ps, pd, n, hi, lo, wide, name+"_one")
	expLoop(name+"_one", ls[:1], w, ps, pd, n, hi, lo, wide, name+"_done")
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func gaussKernel(wide bool) {
	name, w, ls := "gaussAVX2", 4, ylanes(3)
	hi, lo, zero, ng, xi := reg.VecPhysical(reg.Y15), reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y13), reg.VecPhysical(reg.Y12), reg.VecPhysical(reg.Y11)
	if wide {
		name, w, ls = "gaussAVX512", 8, zlanes(4)
		hi, lo, zero, ng, xi = reg.Z31, reg.Z30, reg.Z29, reg.Z28, reg.Z27
	}
	TEXT(name, NOSPLIT, "func(c *float64, ldc, rows, cols int, xn, yn *float64, gamma float64)")
	Doc(fmt.Sprintf("%s sets c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])) for i < rows, j < cols &^ %d.", name, w-1))
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	pxn := Load(Param("xn"), GP64())
	pyn := Load(Param("yn"), GP64())
	SHLQ(Imm(3), ldc)
	if wide {
		SHRQ(Imm(3), cols)
		VBROADCASTSD(cst("hi"), hi)
		VBROADCASTSD(cst("lo"), lo)
		VPXORQ(zero, zero, zero)
	} else {
		SHRQ(Imm(2), cols)
		VMOVUPD(cst("hi"), hi)
		VMOVUPD(cst("lo"), lo)
		VXORPD(zero, zero, zero)
	}
	VBROADCASTSD(paramAddr("gamma"), ng)
	VSUBPD(ng, zero, ng) // -gamma
	j := GP64()
	pr := GP64()
	py := GP64()
	// cols counts vectors; each step handles k of them.
	step := func(label, next string, k int) {
		Label(label)
		CMPQ(j, U32(k))
		JL(LabelRef(next))
		for i := 0; i < k; i++ {
			VADDPD(Mem{Base: py, Disp: 8 * w * i}, xi, ls[i].x)
		}
		for i := 0; i < k; i++ {
			VADDPD(Mem{Base: pr, Disp: 8 * w * i}, ls[i].x, ls[i].x)
		}
		for i := 0; i < k; i++ {
			VMAXPD(ls[i].x, zero, ls[i].x) // NaN stays NaN
		}
		for i := 0; i < k; i++ {
			VMULPD(ng, ls[i].x, ls[i].x)
		}
		expLanes(ls[:k], hi, lo, wide)
		for i := 0; i < k; i++ {
			VMOVUPD(ls[i].t, Mem{Base: pr, Disp: 8 * w * i})
		}
		ADDQ(U32(8*w*k), pr)
		ADDQ(U32(8*w*k), py)
		SUBQ(U32(k), j)
		JMP(LabelRef(label))
	}
	Label(name + "_row")
	TESTQ(rows, rows)
	JE(LabelRef(name + "_done"))
	VBROADCASTSD(Mem{Base: pxn}, xi)
	MOVQ(cols, j)
	MOVQ(pc, pr)
	MOVQ(pyn, py)
	step(name+"_many", name+"_one", len(ls))
	step(name+"_one", name+"_next", 1)
	Label(name + "_next")
	ADDQ(ldc, pc)
	ADDQ(Imm(8), pxn)
	DECQ(rows)
	JMP(LabelRef(name + "_row"))
	Label(name + "_done")
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

// Command vexp32 generates the single-precision vector exponential of
// package asm (AVX2+FMA, eight lanes, and AVX-512, sixteen lanes) and the
// float32 Gaussian-kernel epilogue built on it.
//
// exp(x), per lane, all in float32:
//
//  1. clamp x to [-104, 89] (NaN passes through: the clamps return their
//     register operand when it is NaN); e^89 overflows and e^-104 is below
//     half the smallest subnormal, so the results there are already +Inf and
//     0, and the clamp keeps n below in [-150, 128];
//  2. n = round(x/ln2) by the shifter trick t = fma(x, log2(e), 1.5*2^23),
//     n = t - 1.5*2^23 (round to nearest even);
//  3. r = x - n*ln2 with ln2 in two parts (Cody-Waite): ln2hi has 16
//     significant bits, so x - n*ln2hi is exact; both steps are FMAs and
//     |r| <= ln2/2 (plus rounding);
//  4. e^r by a polynomial of degree 7 in Horner form with FMAs: the
//     degree-10 Taylor polynomial economized by Chebyshev to degree 7 (error
//     below 2.2e-9 relative with the float32 coefficients);
//  5. 2^n as the product of two powers of two 2^n1 * 2^n2 with
//     n1 = floor(n/2), n2 = n - n1, each built from exponent bits
//     ((n_i + 127) << 23, by adding a shifter), so that the first product is
//     exact and the second rounds once: subnormal results are correctly
//     rounded from the approximation and overflow gives +Inf. The AVX-512
//     form uses VSCALEFPS, which rounds p*2^n once in the same way, so the
//     two forms are bit-identical.
package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const shifter = 12582912.0 // 1.5 * 2^23

// Constant table, each value replicated in eight lanes (32 bytes); the
// AVX-512 kernels broadcast the first lane.
var consts = []struct {
	name string
	v    float32
}{
	{"hi", 89},
	{"lo", -104},
	{"log2e", math.Log2E},
	{"shift", shifter},
	{"ln2hi", 0.693145751953125},
	{"ln2lo", math.Ln2 - 0.693145751953125},
	{"half", 0.5},
	{"bias", shifter + 127},
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

// polyCoef: e^r on |r| <= 0.35, the degree-10 Taylor polynomial economized
// to degree 7, rounded to float32; the same values as exp32Poly in package
// asm.
var polyCoef = []float32{
	1,
	1,
	0.5,
	0.16666667,
	0.0416662,
	0.008333264,
	0.0013949769,
	0.00019917225,
}

func main() {
	ConstraintExpr("!noasm")
	table = GLOBL("exp32const", RODATA|NOPTR)
	off := 0
	put := func(v float32) {
		for l := 0; l < 8; l++ {
			DATA(off, U32(math.Float32bits(v)))
			off += 4
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
// all lanes before the next, so the out-of-order core overlaps the lanes'
// dependent FMA chains. wide selects AVX-512 (broadcast memory operands and
// VSCALEFPS for the scaling).
func expLanes(ls []lane, hi, lo reg.VecPhysical, wide bool) {
	each := func(f func(l lane)) {
		for _, l := range ls {
			f(l)
		}
	}
	each(func(l lane) { VMINPS(l.x, hi, l.x) })
	each(func(l lane) { VMAXPS(l.x, lo, l.x) })
	last := len(polyCoef) - 1
	if wide {
		each(func(l lane) { VBROADCASTSS(cst("shift"), l.t) })
		each(func(l lane) { VFMADD231PS_BCST(cst("log2e"), l.x, l.t) })
		each(func(l lane) { VSUBPS_BCST(cst("shift"), l.t, l.n) })
		each(func(l lane) { VFNMADD231PS_BCST(cst("ln2hi"), l.n, l.x) })
		each(func(l lane) { VFNMADD231PS_BCST(cst("ln2lo"), l.n, l.x) })
		each(func(l lane) { VBROADCASTSS(poly(last), l.t) })
		for k := last - 1; k >= 0; k-- {
			each(func(l lane) { VFMADD213PS_BCST(poly(k), l.x, l.t) })
		}
		each(func(l lane) { VSCALEFPS(l.n, l.t, l.t) })
		return
	}
	each(func(l lane) { VMOVUPS(cst("shift"), l.t) })
	each(func(l lane) { VFMADD231PS(cst("log2e"), l.x, l.t) })
	each(func(l lane) { VSUBPS(cst("shift"), l.t, l.n) })
	each(func(l lane) { VFNMADD231PS(cst("ln2hi"), l.n, l.x) })
	each(func(l lane) { VFNMADD231PS(cst("ln2lo"), l.n, l.x) })
	each(func(l lane) { VMOVUPS(poly(last), l.t) })
	for k := last - 1; k >= 0; k-- {
		each(func(l lane) { VFMADD213PS(poly(k), l.x, l.t) })
	}
	// n1 = floor(n/2) in x, n2 = n - n1 in n, each turned into 2^n_i.
	each(func(l lane) { VMULPS(cst("half"), l.n, l.x) })
	each(func(l lane) { VROUNDPS(Imm(9), l.x, l.x) })
	each(func(l lane) { VSUBPS(l.x, l.n, l.n) })
	each(func(l lane) { VADDPS(cst("bias"), l.x, l.x) })
	each(func(l lane) { VADDPS(cst("bias"), l.n, l.n) })
	each(func(l lane) { VPSLLD(Imm(23), l.x, l.x) })
	each(func(l lane) { VPSLLD(Imm(23), l.n, l.n) })
	each(func(l lane) { VMULPS(l.x, l.t, l.t) })
	each(func(l lane) { VMULPS(l.n, l.t, l.t) })
}

func lanes(regs []reg.VecPhysical, n int) []lane {
	var ls []lane
	for i := 0; i < n; i++ {
		ls = append(ls, lane{regs[3*i], regs[3*i+1], regs[3*i+2]})
	}
	return ls
}

var (
	ymm = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23}
)

// expLoop emits a loop over src/dst handling len(ls) vectors of w floats per
// iteration, jumping to next when fewer remain.
func expLoop(name string, ls []lane, w int, ps, pd, n reg.Register, hi, lo reg.VecPhysical, wide bool, next string) {
	per := len(ls) * w
	Label(name)
	CMPQ(n, U32(per))
	JL(LabelRef(next))
	for i, l := range ls {
		VMOVUPS(Mem{Base: ps, Disp: 4 * w * i}, l.x)
	}
	expLanes(ls, hi, lo, wide)
	for i, l := range ls {
		VMOVUPS(l.t, Mem{Base: pd, Disp: 4 * w * i})
	}
	ADDQ(U32(4*per), ps)
	ADDQ(U32(4*per), pd)
	SUBQ(U32(per), n)
	JMP(LabelRef(name))
}

func expKernel(wide bool) {
	name, w, hi, lo, ls := "exp32AVX2", 8, reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y15), lanes(ymm, 4)
	if wide {
		name, w, hi, lo, ls = "exp32AVX512", 16, reg.Z30, reg.Z31, lanes(zmm, 6)
	}
	TEXT(name, NOSPLIT, "func(dst, src []float32)")
	Doc(fmt.Sprintf("%s sets dst[i] = e^src[i] for i < len(src) &^ %d; len(dst) >= len(src).", name, w-1))
	pd := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	if wide {
		VBROADCASTSS(cst("hi"), hi)
		VBROADCASTSS(cst("lo"), lo)
	} else {
		VMOVUPS(cst("hi"), hi)
		VMOVUPS(cst("lo"), lo)
	}
	expLoop(name+"_many", ls, w, ps, pd, n, hi, lo, wide, name+"_one")
	expLoop(name+"_one", ls[:1], w, ps, pd, n, hi, lo, wide, name+"_done")
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

func gaussKernel(wide bool) {
	name, w, ls := "gauss32AVX2", 8, lanes(ymm, 3)
	hi, lo, zero, ng, xi := reg.VecPhysical(reg.Y15), reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y13), reg.VecPhysical(reg.Y12), reg.VecPhysical(reg.Y11)
	if wide {
		name, w, ls = "gauss32AVX512", 16, lanes(zmm, 4)
		hi, lo, zero, ng, xi = reg.Z31, reg.Z30, reg.Z29, reg.Z28, reg.Z27
	}
	TEXT(name, NOSPLIT, "func(c *float32, ldc, rows, cols int, xn, yn *float32, gamma float32)")
	Doc(fmt.Sprintf("%s sets c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])) for i < rows, j < cols &^ %d.", name, w-1))
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	pxn := Load(Param("xn"), GP64())
	pyn := Load(Param("yn"), GP64())
	SHLQ(Imm(2), ldc)
	if wide {
		SHRQ(Imm(4), cols)
		VBROADCASTSS(cst("hi"), hi)
		VBROADCASTSS(cst("lo"), lo)
		VPXORD(zero, zero, zero)
	} else {
		SHRQ(Imm(3), cols)
		VMOVUPS(cst("hi"), hi)
		VMOVUPS(cst("lo"), lo)
		VXORPS(zero, zero, zero)
	}
	VBROADCASTSS(paramAddr("gamma"), ng)
	VSUBPS(ng, zero, ng) // -gamma
	j := GP64()
	pr := GP64()
	py := GP64()
	// cols counts vectors; each step handles k of them.
	step := func(label, next string, k int) {
		Label(label)
		CMPQ(j, U32(k))
		JL(LabelRef(next))
		for i := 0; i < k; i++ {
			VADDPS(Mem{Base: py, Disp: 4 * w * i}, xi, ls[i].x)
		}
		for i := 0; i < k; i++ {
			VADDPS(Mem{Base: pr, Disp: 4 * w * i}, ls[i].x, ls[i].x)
		}
		for i := 0; i < k; i++ {
			VMAXPS(ls[i].x, zero, ls[i].x) // NaN stays NaN
		}
		for i := 0; i < k; i++ {
			VMULPS(ng, ls[i].x, ls[i].x)
		}
		expLanes(ls[:k], hi, lo, wide)
		for i := 0; i < k; i++ {
			VMOVUPS(ls[i].t, Mem{Base: pr, Disp: 4 * w * i})
		}
		ADDQ(U32(4*w*k), pr)
		ADDQ(U32(4*w*k), py)
		SUBQ(U32(k), j)
		JMP(LabelRef(label))
	}
	Label(name + "_row")
	TESTQ(rows, rows)
	JE(LabelRef(name + "_done"))
	VBROADCASTSS(Mem{Base: pxn}, xi)
	MOVQ(cols, j)
	MOVQ(pc, pr)
	MOVQ(pyn, py)
	step(name+"_many", name+"_one", len(ls))
	step(name+"_one", name+"_next", 1)
	Label(name + "_next")
	ADDQ(ldc, pc)
	ADDQ(Imm(4), pxn)
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

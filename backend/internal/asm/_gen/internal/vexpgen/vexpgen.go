// Package vexpgen emits the vector exponential and the Gaussian-kernel
// epilogue built on it, for one floating-point precision: the generators
// vexp (float64) and vexp32 (float32) describe their precision (element
// size, instruction forms, constant table) in a Prec and share the code
// here. The algorithm is described in those generators.
package vexpgen

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Inst is an avo instruction taking its operands in Go assembler order.
type Inst func(ops ...Op)

// Prec describes one precision: the packed instruction of each operation
// (PD or PS forms, the _BCST forms for AVX-512), the element type and size,
// and the constant table.
type Prec struct {
	Elem string // Go element type, "float64" or "float32"
	Size int    // bytes per element
	// Lanes per AVX2 and AVX-512 vector.
	W2, W512 int

	Min, Max, Add, Sub, Mul, MovU, Xor, XorWide Inst
	Fmadd231, Fnmadd231, Fmadd213               Inst
	Fmadd231B, SubB, Fnmadd231B, Fmadd213B      Inst // AVX-512 broadcast forms
	Bcast, Scalef                               Inst
	Round                                       func(i, mxy, xy Op)
	// ShiftLeft shifts each lane left by ExpShift bits, moving the
	// shifter's low bits into the exponent field.
	ShiftLeft Inst
	ExpShift  int

	// Cst returns the named constant of the table (one AVX2 vector of it);
	// Poly the k-th polynomial coefficient, k = 0..Degree.
	Cst    func(name string) Mem
	Poly   func(k int) Mem
	Degree int
}

// Lane holds the three registers of one vector being exponentiated: X (the
// argument, then r, then n1), T (the shifted product, then the polynomial,
// then the result) and N (then n2).
type Lane struct{ X, T, N reg.VecPhysical }

// Ymm and Zmm are the registers the lanes are made of.
var (
	Ymm = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	Zmm = []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23}
)

// Lanes returns n lanes of three consecutive registers of regs.
func Lanes(regs []reg.VecPhysical, n int) []Lane {
	var ls []Lane
	for i := 0; i < n; i++ {
		ls = append(ls, Lane{regs[3*i], regs[3*i+1], regs[3*i+2]})
	}
	return ls
}

// ExpLanes computes e^x for every lane into Lane.T, emitting each step for
// all lanes before the next step: the lanes are independent, so the
// out-of-order core overlaps their long FMA chains. wide selects AVX-512
// (broadcast memory operands and VSCALEF for the scaling, which rounds once
// exactly like the two multiplications of the AVX2 form, so the results are
// bit-identical).
func (p *Prec) ExpLanes(ls []Lane, hi, lo reg.VecPhysical, wide bool) {
	each := func(f func(l Lane)) {
		for _, l := range ls {
			f(l)
		}
	}
	each(func(l Lane) { p.Min(l.X, hi, l.X) })
	each(func(l Lane) { p.Max(l.X, lo, l.X) })
	if wide {
		each(func(l Lane) { p.Bcast(p.Cst("shift"), l.T) })
		each(func(l Lane) { p.Fmadd231B(p.Cst("log2e"), l.X, l.T) })
		each(func(l Lane) { p.SubB(p.Cst("shift"), l.T, l.N) })
		each(func(l Lane) { p.Fnmadd231B(p.Cst("ln2hi"), l.N, l.X) })
		each(func(l Lane) { p.Fnmadd231B(p.Cst("ln2lo"), l.N, l.X) })
		each(func(l Lane) { p.Bcast(p.Poly(p.Degree), l.T) })
		for k := p.Degree - 1; k >= 0; k-- {
			each(func(l Lane) { p.Fmadd213B(p.Poly(k), l.X, l.T) })
		}
		each(func(l Lane) { p.Scalef(l.N, l.T, l.T) })
		return
	}
	each(func(l Lane) { p.MovU(p.Cst("shift"), l.T) })
	each(func(l Lane) { p.Fmadd231(p.Cst("log2e"), l.X, l.T) })
	each(func(l Lane) { p.Sub(p.Cst("shift"), l.T, l.N) })
	each(func(l Lane) { p.Fnmadd231(p.Cst("ln2hi"), l.N, l.X) })
	each(func(l Lane) { p.Fnmadd231(p.Cst("ln2lo"), l.N, l.X) })
	each(func(l Lane) { p.MovU(p.Poly(p.Degree), l.T) })
	for k := p.Degree - 1; k >= 0; k-- {
		each(func(l Lane) { p.Fmadd213(p.Poly(k), l.X, l.T) })
	}
	// n1 = floor(n/2) in X, n2 = n - n1 in N, each turned into 2^n_i.
	each(func(l Lane) { p.Mul(p.Cst("half"), l.N, l.X) })
	each(func(l Lane) { p.Round(Imm(9), l.X, l.X) })
	each(func(l Lane) { p.Sub(l.X, l.N, l.N) })
	each(func(l Lane) { p.Add(p.Cst("bias"), l.X, l.X) })
	each(func(l Lane) { p.Add(p.Cst("bias"), l.N, l.N) })
	each(func(l Lane) { p.ShiftLeft(Imm(uint64(p.ExpShift)), l.X, l.X) })
	each(func(l Lane) { p.ShiftLeft(Imm(uint64(p.ExpShift)), l.N, l.N) })
	each(func(l Lane) { p.Mul(l.X, l.T, l.T) })
	each(func(l Lane) { p.Mul(l.N, l.T, l.T) })
}

// expLoop emits a loop over src/dst handling len(ls) vectors of w elements
// per iteration, jumping to next when fewer remain.
func (p *Prec) expLoop(name string, ls []Lane, w int, ps, pd, n reg.Register, hi, lo reg.VecPhysical, wide bool, next string) {
	per := len(ls) * w
	Label(name)
	CMPQ(n, U32(per))
	JL(LabelRef(next))
	for i, l := range ls {
		p.MovU(Mem{Base: ps, Disp: p.Size * w * i}, l.X)
	}
	p.ExpLanes(ls, hi, lo, wide)
	for i, l := range ls {
		p.MovU(l.T, Mem{Base: pd, Disp: p.Size * w * i})
	}
	ADDQ(U32(p.Size*per), ps)
	ADDQ(U32(p.Size*per), pd)
	SUBQ(U32(per), n)
	JMP(LabelRef(name))
}

// ExpKernel emits func name(dst, src []Elem), e^x on len(src) rounded down
// to a multiple of the vector width: four lanes of Ymm (AVX2) or six of
// Zmm (wide).
func (p *Prec) ExpKernel(name string, wide bool) {
	w, hi, lo, ls := p.W2, reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y15), Lanes(Ymm, 4)
	if wide {
		w, hi, lo, ls = p.W512, reg.Z30, reg.Z31, Lanes(Zmm, 6)
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src []%s)", p.Elem))
	Doc(fmt.Sprintf("%s sets dst[i] = e^src[i] for i < len(src) &^ %d; len(dst) >= len(src).", name, w-1))
	pd := Load(Param("dst").Base(), GP64())
	ps := Load(Param("src").Base(), GP64())
	n := Load(Param("src").Len(), GP64())
	if wide {
		p.Bcast(p.Cst("hi"), hi)
		p.Bcast(p.Cst("lo"), lo)
	} else {
		p.MovU(p.Cst("hi"), hi)
		p.MovU(p.Cst("lo"), lo)
	}
	p.expLoop(name+"_many", ls, w, ps, pd, n, hi, lo, wide, name+"_one")
	p.expLoop(name+"_one", ls[:1], w, ps, pd, n, hi, lo, wide, name+"_done")
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// log2 returns k for v = 2^k.
func log2(v int) uint64 {
	k := uint64(0)
	for 1<<k < v {
		k++
	}
	return k
}

// GaussKernel emits func name(c *Elem, ldc, rows, cols int, xn, yn *Elem,
// gamma Elem): c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j]))
// on whole vectors of columns (three AVX2 lanes, or four AVX-512 lanes at a
// time, then one).
func (p *Prec) GaussKernel(name string, wide bool) {
	w, ls := p.W2, Lanes(Ymm, 3)
	hi, lo, zero, ng, xi := reg.VecPhysical(reg.Y15), reg.VecPhysical(reg.Y14), reg.VecPhysical(reg.Y13), reg.VecPhysical(reg.Y12), reg.VecPhysical(reg.Y11)
	if wide {
		w, ls = p.W512, Lanes(Zmm, 4)
		hi, lo, zero, ng, xi = reg.Z31, reg.Z30, reg.Z29, reg.Z28, reg.Z27
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(c *%[1]s, ldc, rows, cols int, xn, yn *%[1]s, gamma %[1]s)", p.Elem))
	Doc(fmt.Sprintf("%s sets c[i*ldc+j] = exp(-gamma*max(0, (xn[i]+yn[j]) + c[i*ldc+j])) for i < rows, j < cols &^ %d.", name, w-1))
	pc := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	rows := Load(Param("rows"), GP64())
	cols := Load(Param("cols"), GP64())
	pxn := Load(Param("xn"), GP64())
	pyn := Load(Param("yn"), GP64())
	SHLQ(Imm(log2(p.Size)), ldc)
	SHRQ(Imm(log2(w)), cols)
	if wide {
		p.Bcast(p.Cst("hi"), hi)
		p.Bcast(p.Cst("lo"), lo)
		p.XorWide(zero, zero, zero)
	} else {
		p.MovU(p.Cst("hi"), hi)
		p.MovU(p.Cst("lo"), lo)
		p.Xor(zero, zero, zero)
	}
	p.Bcast(ParamAddr("gamma"), ng)
	p.Sub(ng, zero, ng) // -gamma
	j := GP64()
	pr := GP64()
	py := GP64()
	// cols counts vectors; each step handles k of them.
	step := func(label, next string, k int) {
		Label(label)
		CMPQ(j, U32(k))
		JL(LabelRef(next))
		for i := 0; i < k; i++ {
			p.Add(Mem{Base: py, Disp: p.Size * w * i}, xi, ls[i].X)
		}
		for i := 0; i < k; i++ {
			p.Add(Mem{Base: pr, Disp: p.Size * w * i}, ls[i].X, ls[i].X)
		}
		for i := 0; i < k; i++ {
			p.Max(ls[i].X, zero, ls[i].X) // NaN stays NaN
		}
		for i := 0; i < k; i++ {
			p.Mul(ng, ls[i].X, ls[i].X)
		}
		p.ExpLanes(ls[:k], hi, lo, wide)
		for i := 0; i < k; i++ {
			p.MovU(ls[i].T, Mem{Base: pr, Disp: p.Size * w * i})
		}
		ADDQ(U32(p.Size*w*k), pr)
		ADDQ(U32(p.Size*w*k), py)
		SUBQ(U32(k), j)
		JMP(LabelRef(label))
	}
	Label(name + "_row")
	TESTQ(rows, rows)
	JE(LabelRef(name + "_done"))
	p.Bcast(Mem{Base: pxn}, xi)
	MOVQ(cols, j)
	MOVQ(pc, pr)
	MOVQ(pyn, py)
	step(name+"_many", name+"_one", len(ls))
	step(name+"_one", name+"_next", 1)
	Label(name + "_next")
	ADDQ(ldc, pc)
	ADDQ(Imm(uint64(p.Size)), pxn)
	DECQ(rows)
	JMP(LabelRef(name + "_row"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// ParamAddr returns the memory operand of a scalar argument.
func ParamAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// Table emits the constant table name: the values of names (their bit
// patterns, in order) and then the polynomial coefficients, each replicated
// across one 32-byte AVX2 vector (the AVX-512 kernels broadcast the first
// lane), and points Cst, Poly and Degree at it.
func (p *Prec) Table(name string, names []string, bits []uint64) {
	t := GLOBL(name, RODATA|NOPTR)
	off := 0
	for _, b := range bits {
		for l := 0; l < 32/p.Size; l++ {
			if p.Size == 8 {
				DATA(off, U64(b)) // bit patterns: avo prints integral F64 values as integers
			} else {
				DATA(off, U32(uint32(b)))
			}
			off += p.Size
		}
	}
	p.Cst = func(c string) Mem {
		for i, n := range names {
			if n == c {
				return t.Offset(32 * i)
			}
		}
		panic(c)
	}
	p.Poly = func(k int) Mem { return t.Offset(32 * (len(names) + k)) }
	p.Degree = len(bits) - len(names) - 1
}

// Float64 returns the double-precision instruction set (PD forms, four
// AVX2 lanes, eight AVX-512 lanes); Table completes it.
func Float64() *Prec {
	return &Prec{
		Elem: "float64", Size: 8, W2: 4, W512: 8,
		Min: VMINPD, Max: VMAXPD, Add: VADDPD, Sub: VSUBPD, Mul: VMULPD, MovU: VMOVUPD, Xor: VXORPD, XorWide: VPXORQ,
		Fmadd231: VFMADD231PD, Fnmadd231: VFNMADD231PD, Fmadd213: VFMADD213PD,
		Fmadd231B: VFMADD231PD_BCST, SubB: VSUBPD_BCST, Fnmadd231B: VFNMADD231PD_BCST, Fmadd213B: VFMADD213PD_BCST,
		Bcast: VBROADCASTSD, Scalef: VSCALEFPD, Round: VROUNDPD,
		ShiftLeft: VPSLLQ, ExpShift: 52,
	}
}

// Float32 returns the single-precision instruction set (PS forms, eight
// AVX2 lanes, sixteen AVX-512 lanes); Table completes it.
func Float32() *Prec {
	return &Prec{
		Elem: "float32", Size: 4, W2: 8, W512: 16,
		Min: VMINPS, Max: VMAXPS, Add: VADDPS, Sub: VSUBPS, Mul: VMULPS, MovU: VMOVUPS, Xor: VXORPS, XorWide: VPXORD,
		Fmadd231: VFMADD231PS, Fnmadd231: VFNMADD231PS, Fmadd213: VFMADD213PS,
		Fmadd231B: VFMADD231PS_BCST, SubB: VSUBPS_BCST, Fnmadd231B: VFNMADD231PS_BCST, Fmadd213B: VFMADD213PS_BCST,
		Bcast: VBROADCASTSS, Scalef: VSCALEFPS, Round: VROUNDPS,
		ShiftLeft: VPSLLD, ExpShift: 23,
	}
}

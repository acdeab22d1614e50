package asm

import "math"

// A double-double (unevaluated sum hi + lo) reference for e^x, good to about 1e-24
// relative error (80 bits), used to measure the error of Exp in ulps of the exact result.

type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	s.lo += a.lo + b.lo
	return twoSum(s.hi, s.lo)
}

func ddMul(a, b dd) dd {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p)
	e += a.hi*b.lo + a.lo*b.hi
	return twoSum(p, e)
}

func ddDivInt(a dd, k float64) dd {
	q := a.hi / k
	// remainder a - q*k, exactly with FMA for the hi part.
	r := math.FMA(-q, k, a.hi) + a.lo
	return twoSum(q, r/k)
}

// ln2 to about 160 bits in three parts.
var ln2dd = [3]float64{0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56, 0x1.7b57a079a1934p-111}

// refExpScaled returns n and e^(x - n*ln2) as a double-double, |x| <= 746.
func refExpScaled(x float64) (int, dd) {
	n := math.Round(x / math.Ln2)
	// r = x - n*ln2 in double-double: n has at most 11 bits, each product
	// n*part is split exactly by FMA.
	r := dd{x, 0}
	for _, part := range ln2dd {
		p := n * part
		e := math.FMA(n, part, -p)
		r = ddAdd(r, dd{-p, -e})
	}
	// Nested Taylor series e^r = 1 + r(1 + r/2(1 + r/3(... (1 + r/18)))),
	// |r| <= 0.35 so the truncation is below 0.35^19/19! < 1e-24. The inner
	// levels k >= 9 are summed in float64: their contribution to the result
	// is scaled by r^8/8! < 6e-9, so their rounding errors stay below 1e-24.
	s := 1.0
	for k := 18; k >= 9; k-- {
		s = 1 + s*r.hi/float64(k)
	}
	sum := dd{s, 0}
	for k := 8; k >= 1; k-- {
		sum = ddAdd(dd{1, 0}, ddDivInt(ddMul(sum, r), float64(k)))
	}
	return int(n), sum
}

// expErrULP returns the error of got as an approximation of e^x in ulps of
// the exact value (spacing 2^-1074 in the subnormal range; +Inf counts as
// 2^1024, the next value after MaxFloat64 in the unbounded exponent range, so
// a correct overflow scores at most 1). NaN x must give NaN.
func expErrULP(x, got float64) float64 {
	switch {
	case math.IsNaN(x):
		if math.IsNaN(got) {
			return 0
		}
		return math.Inf(1)
	case math.IsNaN(got):
		return math.Inf(1)
	case x > 710:
		if math.IsInf(got, 1) {
			return 0
		}
		return math.Inf(1)
	case x < -746:
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	n, t := refExpScaled(x)
	// Overflow is correct when the exact value is at least MaxFloat64 plus
	// half an ulp (2^1024 - 2^970), the IEEE round-to-nearest threshold.
	overflows := t.hi+t.lo >= math.Ldexp(1, 1024-n)-math.Ldexp(1, 970-n)
	if math.IsInf(got, 1) {
		if overflows {
			return 0
		}
		return math.Inf(1)
	}
	if overflows {
		return math.Inf(1)
	}
	// Scale got by 2^-n exactly (Ldexp is exact here: the result is normal).
	g := math.Ldexp(got, -n)
	_, e := math.Frexp(t.hi) // t.hi in [2^(e-1), 2^e)
	exp := e - 1 + n         // exponent of the exact result
	ulpExp := max(exp, -1022) - 52
	diff := (g - t.hi) - t.lo
	return math.Abs(diff) / math.Ldexp(1, ulpExp-n)
}

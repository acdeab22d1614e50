package dataset

import (
	"math"
	"strconv"
)

// numStatus classifies the result of parseNumber.
type numStatus uint8

const (
	numOK        numStatus = iota
	numSyntax              // not a decimal number
	numNonFinite           // NaN, Inf or Infinity (any case, optional sign)
	numOverflow            // finite syntax but |value| > MaxFloat64
)

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber parses b strictly as a decimal floating-point number:
//
//	[+-]? ( digits [ "." digits* ] | "." digits ) [ [eE] [+-]? digits ]
//
// or, reported as numNonFinite with its value, [+-]?(nan|inf|infinity) in any
// case. Hexadecimal floats, underscores, spaces and empty input are
// rejected. The result is the correctly rounded float64 (as strconv.ParseFloat
// gives); values that underflow become 0 or subnormal without error.
//
// Most data files hold short integers or short decimals; those take a fast
// path (Clinger's: an integer mantissa below 2^53 divided by an exact power of
// ten is correctly rounded) that allocates nothing.
func parseNumber[T string | []byte](b T) (float64, numStatus) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	nd := 0     // significant digits accumulated into mant (up to 19)
	frac := 0   // digits after the point accumulated into mant
	digits := 0 // digits seen in total
	exact := true
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
		if mant == 0 && b[i] == '0' {
			continue // leading zeros do not count
		}
		if nd < 19 {
			mant = mant*10 + uint64(b[i]-'0')
			nd++
		} else {
			exact = false
		}
	}
	intDigits := i - start
	if i < len(b) && b[i] == '.' {
		i++
		fstart := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			if mant == 0 && b[i] == '0' {
				frac++
				continue
			}
			if nd < 19 {
				mant = mant*10 + uint64(b[i]-'0')
				nd++
				frac++
			} else {
				exact = false
			}
		}
		if intDigits == 0 && i == fstart {
			return 0, numSyntax // "." or "-."
		}
	}
	if digits == 0 {
		return nonFinite(b)
	}
	hasExp := false
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		hasExp = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		es := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
		if i == es {
			return 0, numSyntax
		}
	}
	if i != len(b) {
		return 0, numSyntax
	}
	if !hasExp && exact && mant < 1<<53 && frac < len(pow10) {
		v := float64(mant)
		if frac > 0 {
			v /= pow10[frac]
		}
		if neg {
			v = -v
		}
		return v, numOK
	}
	// The syntax is validated; strconv does the correctly rounded conversion.
	// string(b) does not escape here, so short tokens are not heap allocated.
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if math.IsInf(v, 0) {
			return v, numOverflow
		}
		return 0, numSyntax
	}
	return v, numOK
}

// nonFinite recognizes [+-]?(nan|inf|infinity), case-insensitively.
func nonFinite[T string | []byte](b T) (float64, numStatus) {
	s := b
	sign := 1.0
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case equalFold(s, "nan"):
		return math.NaN(), numNonFinite
	case equalFold(s, "inf"), equalFold(s, "infinity"):
		return math.Inf(int(sign)), numNonFinite
	}
	return 0, numSyntax
}

func equalFold[T string | []byte](b T, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

package serve

import (
	"math"
	"strconv"
)

// fastV1 parses the common /v1/predict body, {"rows": [[numbers], ...]}
// with an optional "outputs": true|false, straight into the row-major
// n x d matrix, without reflection. It reports ok = false for anything
// else (other keys, escapes, duplicate keys, a row of another length, more
// than maxRows rows, a number out of range, malformed JSON), and the
// caller then decodes with encoding/json, which gives the error message.
// When ok, the result equals decodeV1's (the fuzz test checks this).
func fastV1(body []byte, d, maxRows int) (x []float64, n int, outputs, ok bool) {
	p := fastParser{b: body}
	if !p.byte('{') {
		return nil, 0, false, false
	}
	seenRows, seenOut := false, false
	for {
		key, good := p.key()
		if !good {
			return nil, 0, false, false
		}
		switch {
		case key == "rows" && !seenRows:
			seenRows = true
			if x, n, good = p.rows(d, maxRows); !good {
				return nil, 0, false, false
			}
		case key == "outputs" && !seenOut:
			seenOut = true
			if outputs, good = p.boolean(); !good {
				return nil, 0, false, false
			}
		default:
			return nil, 0, false, false
		}
		if p.byte(',') {
			continue
		}
		if !p.byte('}') {
			return nil, 0, false, false
		}
		break
	}
	p.ws()
	if p.i != len(p.b) || !seenRows || n == 0 {
		return nil, 0, false, false
	}
	return x, n, outputs, true
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte skips white space and then c, reporting whether c was there.
func (p *fastParser) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads "name": where name has no escapes.
func (p *fastParser) key() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) && p.b[p.i] != '"' {
		if c := p.b[p.i]; c == '\\' || c < ' ' || c >= 0x80 {
			return "", false
		}
		p.i++
	}
	if p.i >= len(p.b) {
		return "", false
	}
	k := string(p.b[start:p.i])
	p.i++
	return k, p.byte(':')
}

func (p *fastParser) boolean() (bool, bool) {
	p.ws()
	for _, lit := range [...]string{"true", "false"} {
		if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// rows reads [[d numbers], ...] with at most maxRows rows.
func (p *fastParser) rows(d, maxRows int) ([]float64, int, bool) {
	if !p.byte('[') {
		return nil, 0, false
	}
	x := make([]float64, 0, d)
	n := 0
	if p.byte(']') {
		return x, 0, true
	}
	for {
		if n == maxRows || !p.byte('[') {
			return nil, 0, false
		}
		for j := 0; j < d; j++ {
			if j > 0 && !p.byte(',') {
				return nil, 0, false
			}
			v, ok := p.number()
			if !ok {
				return nil, 0, false
			}
			x = append(x, v)
		}
		if !p.byte(']') {
			return nil, 0, false
		}
		n++
		if p.byte(',') {
			continue
		}
		if !p.byte(']') {
			return nil, 0, false
		}
		return x, n, true
	}
}

// number reads a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?)
// and parses it as encoding/json does; out of range is not ok.
func (p *fastParser) number() (float64, bool) {
	p.ws()
	b, i := p.b, p.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	tok := b[start:i]
	var v float64
	if len(tok) <= 3 && tok[0] != '-' { // small non-negative integers: pixels
		v = 0
		for _, c := range tok {
			if c < '0' || c > '9' {
				v = math.NaN()
				break
			}
			v = 10*v + float64(c-'0')
		}
	} else {
		v = math.NaN()
	}
	if math.IsNaN(v) {
		var err error
		if v, err = strconv.ParseFloat(string(tok), 64); err != nil {
			return 0, false
		}
	}
	p.i = i
	return v, true
}

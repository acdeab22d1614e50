package serve

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The fast decoders read the request bodies clients send straight into a
// caller's float64 block, without reflection or interface values. Each
// either accepts a body, and then returns exactly what the encoding/json
// decoders (decodeV1, decodeV2) return for it (FuzzDecoders checks this),
// or declines it, and the caller runs the encoding/json decoder, which
// accepts what the fast one declined for want of generality (a key with
// escapes, null, a duplicate key, a nesting deeper than maxSkipDepth) or
// refuses the body with its error message. Declining is always safe, so
// every rule below errs on that side.

// maxSkipDepth bounds the nesting of the values skipped (unknown fields,
// parameters); deeper ones are left to encoding/json (which allows 10000).
const maxSkipDepth = 64

// scanner reads JSON from b at i.
type scanner struct {
	b []byte
	i int
}

func (p *scanner) ws() {
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
func (p *scanner) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek skips white space and returns the next byte (0 at the end).
func (p *scanner) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// end reports whether only white space is left.
func (p *scanner) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// str reads a string and returns its raw contents (between the quotes)
// and whether it has escapes; the escapes are checked, control characters
// refused. Bytes of 0x80 and above pass (encoding/json takes invalid UTF-8
// too, replacing it).
func (p *scanner) str() (raw []byte, esc, ok bool) {
	if !p.byte('"') {
		return nil, false, false
	}
	b, i := p.b, p.i
	start := i
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return b[start:i], esc, true
		case c < ' ':
			return nil, false, false
		case c == '\\':
			esc = true
			i++
			if i >= len(b) {
				return nil, false, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 {
					return nil, false, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, false, false
					}
				}
				i += 5
			default:
				return nil, false, false
			}
		default:
			i++
		}
	}
	return nil, false, false
}

// key reads "name": and returns the name; a name with escapes is not ok
// (it would have to be unescaped to be matched).
func (p *scanner) key() ([]byte, bool) {
	k, esc, ok := p.str()
	if !ok || esc || !p.byte(':') {
		return nil, false
	}
	return k, true
}

// numberToken reads a JSON number, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// and returns its text.
func (p *scanner) numberToken() ([]byte, bool) {
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
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false
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
			return nil, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	p.i = i
	return b[start:i], true
}

// maxExactDigits is the most decimal digits of an integer that float64
// holds exactly whatever they are (10^15 < 2^53).
const maxExactDigits = 15

// float reads a number as encoding/json does for a float64 (the same
// strconv.ParseFloat call); out of range is not ok. Integers of at most
// maxExactDigits digits (pixels, counts) are converted as they are
// scanned: float64 holds them exactly, which is what ParseFloat returns
// for them (-0 included). Anything else (a fraction, an exponent, more
// digits, a leading zero followed by more) takes numberToken and
// ParseFloat.
func (p *scanner) float() (float64, bool) {
	p.ws()
	b, i := p.b, p.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	j := i
	var u uint64
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && j-i < maxExactDigits && b[j] >= '0' && b[j] <= '9' {
			u = 10*u + uint64(b[j]-'0')
			j++
		}
	}
	if j > i && (j == len(b) || !numberByte(b[j])) {
		p.i = j
		v := float64(u)
		if neg {
			v = -v
		}
		return v, true
	}
	tok, ok := p.numberToken()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil
}

// numberByte reports whether c can continue a JSON number after its
// integer digits.
func numberByte(c byte) bool { return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' }

// int reads a number as encoding/json does for an int64 (strconv.ParseInt:
// no fraction, no exponent, in range).
func (p *scanner) int() (int64, bool) {
	tok, ok := p.numberToken()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	return v, err == nil
}

// literal reads the literal s (true, false or null).
func (p *scanner) literal(s string) bool {
	p.ws()
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// boolean reads true or false (null is not ok: encoding/json would leave
// the field as it was, which the fast decoders do not model).
func (p *scanner) boolean() (bool, bool) {
	switch p.peek() {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	}
	return false, false
}

// skip reads and checks any JSON value.
func (p *scanner) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch p.peek() {
	case '{':
		p.i++
		if p.byte('}') {
			return true
		}
		for {
			if _, _, ok := p.str(); !ok || !p.byte(':') || !p.skip(depth+1) {
				return false
			}
			if p.byte(',') {
				continue
			}
			return p.byte('}')
		}
	case '[':
		p.i++
		if p.byte(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.byte(',') {
				continue
			}
			return p.byte(']')
		}
	case '"':
		_, _, ok := p.str()
		return ok
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	_, ok := p.numberToken()
	return ok
}

// object reads an object, calling field for each key with the scanner at
// its value; field reads the value and reports whether it was good. An
// empty object is fine.
func (p *scanner) object(field func(k []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		k, ok := p.key()
		if !ok || !field(k) {
			return false
		}
		if p.byte(',') {
			continue
		}
		return p.byte('}')
	}
}

// is reports whether the key k names the struct field name as
// encoding/json matches them: exactly or case-insensitively, with
// Unicode's simple folding (bytes.EqualFold is what encoding/json's
// folding is defined by).
func is(k []byte, name string) bool {
	if len(k) == len(name) && string(k) == name {
		return true
	}
	return bytes.EqualFold(k, []byte(name))
}

// fastV1 decodes a /v1/predict body, {"rows": [[numbers], ...]} with
// optional "outputs" and "probabilities": true|false, appending the rows
// to x[:0] (row-major n x d). It declines (ok = false) anything it does
// not decode exactly as decodeV1 does, and every body decodeV1 refuses.
func fastV1(body []byte, d, maxRows int, x []float64) (xo []float64, n int, outputs, proba, ok bool) {
	p := scanner{b: body}
	seenRows, seenOut, seenProba := false, false, false
	x = x[:0]
	ok = p.object(func(k []byte) bool {
		var good bool
		switch {
		case is(k, "rows") && !seenRows:
			seenRows = true
			x, n, good = p.rows(d, maxRows, x)
			return good
		case is(k, "outputs") && !seenOut:
			seenOut = true
			outputs, good = p.boolean()
			return good
		case is(k, "probabilities") && !seenProba:
			seenProba = true
			proba, good = p.boolean()
			return good
		}
		return false // unknown (refused) or duplicate (left to encoding/json)
	})
	if !ok || !p.end() || !seenRows || n == 0 {
		return x, 0, false, false, false
	}
	return x, n, outputs, proba, true
}

// rows reads [[d numbers], ...] with at most maxRows rows, appending to x.
func (p *scanner) rows(d, maxRows int, x []float64) ([]float64, int, bool) {
	if !p.byte('[') {
		return x, 0, false
	}
	if p.byte(']') {
		return x, 0, true
	}
	for n := 0; ; {
		if n == maxRows {
			return x, 0, false
		}
		var ok bool
		if x, ok = p.row(d, x); !ok {
			return x, 0, false
		}
		n++
		if p.byte(',') {
			continue
		}
		return x, n, p.byte(']')
	}
}

// row reads [d numbers], appending them to x.
func (p *scanner) row(d int, x []float64) ([]float64, bool) {
	if !p.byte('[') {
		return x, false
	}
	for j := 0; j < d; j++ {
		if j > 0 && !p.byte(',') {
			return x, false
		}
		v, ok := p.float()
		if !ok {
			return x, false
		}
		x = append(x, v)
	}
	return x, p.byte(']')
}

// fastV2 decodes a v2 infer body (or the JSON header of a binary one) into
// c, appending the tensor data to c.x[:0]. It declines (false) anything it
// does not decode exactly as decodeV2 does, and every body decodeV2 refuses.
func fastV2(body []byte, d, maxRows int, c *v2Call) bool {
	p := scanner{b: body}
	x := c.x[:0]
	*c = v2Call{x: x, binSize: -1}
	var seen [4]bool // id, parameters, inputs, outputs
	var binOut, binOutSet bool
	var outs [3]int8 // per output (predictions, outputs, probabilities): -1 not asked, 0 JSON, 1 binary, 2 request default
	outs[0], outs[1], outs[2] = -1, -1, -1
	var in v2In
	inputs := 0
	once := func(i int) bool {
		if seen[i] {
			return false
		}
		seen[i] = true
		return true
	}
	ok := p.object(func(k []byte) bool {
		switch {
		case is(k, "id"):
			if !once(0) {
				return false
			}
			raw, esc, ok := p.str()
			if !ok || esc || !plainASCII(raw) {
				return false
			}
			if len(raw) > 0 {
				c.id = body[p.i-len(raw)-2 : p.i]
			}
			return true
		case is(k, "parameters"):
			if !once(1) {
				return false
			}
			return p.params(func(k []byte) bool {
				if string(k) != "binary_data_output" || binOutSet {
					return p.skip(1) && string(k) != "binary_data_output"
				}
				binOutSet = true
				var ok bool
				binOut, ok = p.boolean()
				return ok
			})
		case is(k, "inputs"):
			if !once(2) || !p.byte('[') {
				return false
			}
			if p.byte(']') {
				return true
			}
			for {
				inputs++
				if inputs > 1 || !p.tensor(&in, &x) {
					return false
				}
				if p.byte(',') {
					continue
				}
				return p.byte(']')
			}
		case is(k, "outputs"):
			if !once(3) || !p.byte('[') {
				return false
			}
			if p.byte(']') {
				return true
			}
			for {
				var name []byte
				var bin int8 = 2
				var seenName, seenParams bool
				ok := p.object(func(k []byte) bool {
					switch {
					case is(k, "name"):
						if seenName {
							return false
						}
						seenName = true
						var esc, ok bool
						name, esc, ok = p.str()
						return ok && !esc
					case is(k, "parameters"):
						if seenParams {
							return false
						}
						seenParams = true
						return p.params(func(k []byte) bool {
							if string(k) != "binary_data" || bin != 2 {
								return p.skip(1) && string(k) != "binary_data"
							}
							b, ok := p.boolean()
							bin = 0
							if b {
								bin = 1
							}
							return ok
						})
					}
					return p.skip(1)
				})
				switch {
				case !ok:
					return false
				case string(name) == outPredictions:
					outs[0] = bin
				case string(name) == outOutputs:
					outs[1] = bin
				case string(name) == outProbabilities:
					outs[2] = bin
				default:
					return false
				}
				if p.byte(',') {
					continue
				}
				return p.byte(']')
			}
		}
		return p.skip(1)
	})
	c.x = x
	if !ok || !p.end() || inputs != 1 || !in.seenShape || in.dims != 2 || in.shape[1] != int64(d) || in.shape[0] < 1 || in.shape[0] > int64(maxRows) {
		return false
	}
	switch string(in.datatype) {
	case "FP64":
	case "FP32":
		c.fp32 = true
	default:
		return false
	}
	c.n = int(in.shape[0])
	c.name = in.name
	nd := c.n * d
	switch {
	case in.binSize >= 0:
		if in.seenData {
			return false
		}
		c.binSize = in.binSize
		c.x = grow(x, nd)
	case !in.seenData || len(x) != nd:
		return false
	case in.rows >= 0 && (in.rows != c.n || in.rowLen != d):
		return false
	}
	if !c.binary() && nonFinite(c.x, c.fp32) >= 0 {
		return false
	}
	if outs[0] < 0 && outs[1] < 0 && outs[2] < 0 {
		outs[0], outs[1] = 2, 2
	}
	c.predictions, c.outputs, c.proba = outs[0] >= 0, outs[1] >= 0, outs[2] >= 0
	c.binPred = outs[0] == 1 || outs[0] == 2 && binOut
	c.binOuts = outs[1] == 1 || outs[1] == 2 && binOut
	c.binProba = outs[2] == 1 || outs[2] == 2 && binOut
	return true
}

// v2In is what fastV2 reads of the input tensor.
type v2In struct {
	seen                [5]bool // name, shape, datatype, parameters, data
	seenShape, seenData bool
	shape               [2]int64
	dims                int
	name, datatype      []byte
	binSize             int64
	rows, rowLen        int // nested data: rows and the common row length; rows -1 = flat
	binSizeSet          bool
}

// tensor reads the input tensor object, its data appended to *x.
func (p *scanner) tensor(in *v2In, x *[]float64) bool {
	*in = v2In{binSize: -1, rows: -1}
	once := func(i int) bool {
		if in.seen[i] {
			return false
		}
		in.seen[i] = true
		return true
	}
	return p.object(func(k []byte) bool {
		switch {
		case is(k, "name"):
			name, esc, ok := p.str()
			in.name = name
			return once(0) && ok && !esc
		case is(k, "shape"):
			if !once(1) || !p.byte('[') {
				return false
			}
			in.seenShape = true
			if p.byte(']') {
				return true
			}
			for {
				v, ok := p.int()
				if !ok {
					return false
				}
				if in.dims < 2 {
					in.shape[in.dims] = v
				}
				in.dims++
				if p.byte(',') {
					continue
				}
				return p.byte(']')
			}
		case is(k, "datatype"):
			dt, esc, ok := p.str()
			in.datatype = dt
			return once(2) && ok && !esc
		case is(k, "parameters"):
			return once(3) && p.params(func(k []byte) bool {
				if string(k) != "binary_data_size" || in.binSizeSet {
					return p.skip(1) && string(k) != "binary_data_size"
				}
				in.binSizeSet = true
				v, ok := p.int()
				in.binSize = v
				return ok && v >= 0
			})
		case is(k, "data"):
			if !once(4) {
				return false
			}
			in.seenData = true
			return p.data(in, x)
		}
		return p.skip(1)
	})
}

// data reads tensor data, flat [numbers] or nested [[numbers], ...] with
// rows of one length, appending the numbers to *x.
func (p *scanner) data(in *v2In, x *[]float64) bool {
	if !p.byte('[') {
		return false
	}
	if p.byte(']') {
		return true
	}
	v := *x
	defer func() { *x = v }()
	if p.peek() == '[' {
		in.rows = 0
		for {
			if !p.byte('[') {
				return false
			}
			start := len(v)
			if !p.byte(']') {
				for {
					f, ok := p.float()
					if !ok {
						return false
					}
					v = append(v, f)
					if p.byte(',') {
						continue
					}
					if !p.byte(']') {
						return false
					}
					break
				}
			}
			if in.rows == 0 {
				in.rowLen = len(v) - start
			} else if len(v)-start != in.rowLen {
				return false
			}
			in.rows++
			if p.byte(',') {
				continue
			}
			return p.byte(']')
		}
	}
	for {
		f, ok := p.float()
		if !ok {
			return false
		}
		v = append(v, f)
		if p.byte(',') {
			continue
		}
		return p.byte(']')
	}
}

// params reads a parameters object, calling field for each key with the
// scanner at its value. A field that is not an object is declined.
func (p *scanner) params(field func(k []byte) bool) bool {
	return p.peek() == '{' && p.object(field)
}

// plainASCII reports whether a string's raw bytes are what json.Marshal
// writes for it: printable ASCII without '"', '\\', '<', '>' or '&'.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c < ' ' || c > '~' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// jsonString encodes s as json.Marshal does.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

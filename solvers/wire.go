package solvers

import (
	"encoding/binary"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// The field encoding of model files (see the layout in modelfile.go): enc
// appends fields, dec reads them back, checking every declared length
// against the bytes left before allocating, and keeps the first error
// (wrapping zonal.ErrFormat).

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) f64(v float64) {
	e.u64(math.Float64bits(v))
}
func (e *enc) bytes(p []byte) { e.u64(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) str(s string)   { e.bytes([]byte(s)) }
func (e *enc) floats(v []float64) {
	e.u64(uint64(len(v)))
	for _, x := range v {
		e.f64(x)
	}
}
func (e *enc) dense(m *mat.Dense) {
	r, c := m.Dims()
	e.u64(uint64(r))
	e.u64(uint64(c))
	for i := 0; i < r; i++ {
		for _, x := range rowOf(m, i) {
			e.f64(x)
		}
	}
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", zonal.ErrFormat, fmt.Sprintf(format, a...))
	}
}

func (d *dec) take(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("%s needs %d bytes, %d left", what, n, len(d.b))
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) u8(what string) uint8 {
	p := d.take(1, what)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *dec) u64(what string) uint64 {
	p := d.take(8, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

func (d *dec) f64(what string) float64 { return math.Float64frombits(d.u64(what)) }

func (d *dec) bytes(what string) []byte {
	n := d.u64(what + " length")
	return d.take(n, what)
}

func (d *dec) str(what string) string { return string(d.bytes(what)) }

func (d *dec) floats(what string) []float64 {
	n := d.u64(what + " length")
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b))/8 {
		d.fail("%s declares %d values, %d bytes left", what, n, len(d.b))
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = d.f64(what)
	}
	return v
}

// dims reads a matrix's row and column counts, refusing an empty shape;
// ok is false after an error.
func (d *dec) dims(what string) (r, c uint64, ok bool) {
	r = d.u64(what + " rows")
	c = d.u64(what + " cols")
	if d.err != nil {
		return 0, 0, false
	}
	if r == 0 || c == 0 {
		d.fail("%s is empty (%dx%d)", what, r, c)
		return 0, 0, false
	}
	return r, c, true
}

func (d *dec) dense(what string) *mat.Dense {
	r, c, ok := d.dims(what)
	if !ok {
		return nil
	}
	left := uint64(len(d.b)) / 8
	if r > left || c > left || r*c > left {
		d.fail("%s declares %dx%d values, %d bytes left", what, r, c, len(d.b))
		return nil
	}
	m := mat.NewDense(int(r), int(c), nil)
	raw := m.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = d.f64(what)
	}
	return m
}

// end returns the first error, or one wrapping zonal.ErrFormat when bytes are
// left over.
func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

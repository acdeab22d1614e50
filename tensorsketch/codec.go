package tensorsketch

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// enc and dec are a minimal little-endian codec for the maps' parameters.
type enc struct{ b []byte }

func (e *enc) u(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i(v int)     { e.u(uint64(int64(v))) }
func (e *enc) f(v float64) { e.u(math.Float64bits(v)) }

func (e *enc) expansion(x expansion) {
	if x.gauss {
		e.u(1)
		e.f(x.sigma)
		e.i(x.q)
		return
	}
	e.u(0)
	e.i(x.poly.Degree)
	e.f(x.poly.Gamma)
	e.f(x.poly.Coef0)
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = fmt.Errorf("%w: truncated tensorsketch map encoding", zonal.ErrFormat)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) i() int     { return int(int64(d.u())) }
func (d *dec) f() float64 { return math.Float64frombits(d.u()) }

func (d *dec) expansion() (expansion, error) {
	switch d.u() {
	case 1:
		s := d.f()
		q := d.i()
		if d.err != nil {
			return expansion{}, d.err
		}
		return gaussExpansion(s, q)
	default:
		p := kernels.Polynomial{Degree: d.i(), Gamma: d.f(), Coef0: d.f()}
		if d.err != nil {
			return expansion{}, d.err
		}
		return polyExpansion(p)
	}
}

const codecVersion = 1

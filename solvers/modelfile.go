package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// Model file layout (all integers little-endian):
//
//	magic    8 bytes  "ZONALMDL"
//	version  uint16   FormatVersion
//	body     ...      fields below
//	crc      uint32   CRC-32 (IEEE) of every byte before it
//
// The body is a sequence of fields: strings and byte strings are a uint64
// length then the bytes; float slices a uint64 length then IEEE-754 bits;
// matrices uint64 rows, uint64 cols, then rows*cols floats row by row.
//
//	kind string ("ridge", "krr", "falkon", "park")
//	task uint8, classes []float64
//	scaler: uint8 present, then mean []float64, scale []float64
//	ridge:  lambda, map kind, map bytes, W (D x k), mean []float64
//	krr, falkon: lambda, kernel kind, kernel bytes, centres (M x d),
//	        alpha (M x k), mean []float64
//	park:   lambda, kernel kind, kernel bytes, centroids (Q x d),
//	        k(c_q, c_q) []float64, then Q cells of centres, alpha, mean
const (
	fileMagic = "ZONALMDL"
	// FormatVersion is the model-file format version this package writes
	// and reads.
	FormatVersion = 1
)

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

// Save writes p to w in the versioned model format.
func Save(w io.Writer, p *Pipeline) error {
	b, err := MarshalPipeline(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// MarshalPipeline encodes p in the versioned model format.
func MarshalPipeline(p *Pipeline) ([]byte, error) {
	if p == nil || p.Model == nil {
		return nil, fmt.Errorf("%w: nil pipeline", zonal.ErrParam)
	}
	e := &enc{b: []byte(fileMagic)}
	e.b = binary.LittleEndian.AppendUint16(e.b, FormatVersion)
	e.str(p.Model.Kind())
	e.u8(uint8(p.Encoding.Task))
	e.floats(p.Encoding.Classes)
	if p.Scaler != nil {
		e.u8(1)
		e.floats(p.Scaler.Mean)
		e.floats(p.Scaler.Scale)
	} else {
		e.u8(0)
	}
	putKernel := func(k kernels.Kernel) error {
		kb, err := k.MarshalBinary()
		if err != nil {
			return fmt.Errorf("solvers: encoding kernel %s: %w", k, err)
		}
		e.str(k.Kind())
		e.bytes(kb)
		return nil
	}
	putExp := func(x *expansion) {
		e.dense(x.centers)
		e.dense(x.alpha)
		e.floats(x.mean)
	}
	switch m := p.Model.(type) {
	case *Ridge:
		pm, ok := m.fm.(kernels.PersistentMap)
		if !ok {
			return nil, fmt.Errorf("%w: feature map %T cannot be saved (not a kernels.PersistentMap)", zonal.ErrParam, m.fm)
		}
		mb, err := pm.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("solvers: encoding feature map %s: %w", pm.Kind(), err)
		}
		e.f64(m.lambda)
		e.str(pm.Kind())
		e.bytes(mb)
		e.dense(m.w)
		e.floats(m.mean)
	case *KRR:
		e.f64(m.lambda)
		if err := putKernel(m.exp.kern); err != nil {
			return nil, err
		}
		putExp(m.exp)
	case *Falkon:
		e.f64(m.lambda)
		if err := putKernel(m.exp.kern); err != nil {
			return nil, err
		}
		putExp(m.exp)
	case *ParK:
		e.f64(m.lambda)
		if err := putKernel(m.kern); err != nil {
			return nil, err
		}
		e.dense(m.centroids)
		e.floats(m.cdiag)
		for _, c := range m.cells {
			putExp(c)
		}
	default:
		return nil, fmt.Errorf("%w: cannot save model type %T", zonal.ErrParam, p.Model)
	}
	return binary.LittleEndian.AppendUint32(e.b, crc32.ChecksumIEEE(e.b)), nil
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

func (d *dec) dense(what string) *mat.Dense {
	r := d.u64(what + " rows")
	c := d.u64(what + " cols")
	if d.err != nil {
		return nil
	}
	if r == 0 || c == 0 {
		d.fail("%s is empty (%dx%d)", what, r, c)
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

// Load reads a model file written by Save. A file that is truncated, has a
// wrong checksum or inconsistent contents is an error wrapping zonal.ErrFormat; a
// file from another format version wraps zonal.ErrVersion.
func Load(r io.Reader) (*Pipeline, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("solvers: reading model: %w", err)
	}
	return UnmarshalPipeline(b)
}

// UnmarshalPipeline decodes a model file's bytes (see Load).
func UnmarshalPipeline(b []byte) (*Pipeline, error) {
	if len(b) < len(fileMagic) || !bytes.Equal(b[:len(fileMagic)], []byte(fileMagic)) {
		return nil, fmt.Errorf("%w: not a zonal model file (bad magic)", zonal.ErrFormat)
	}
	if len(b) < len(fileMagic)+2 {
		return nil, fmt.Errorf("%w: truncated header (%d bytes)", zonal.ErrFormat, len(b))
	}
	if v := binary.LittleEndian.Uint16(b[len(fileMagic):]); v != FormatVersion {
		return nil, fmt.Errorf("%w: file has format version %d, this build reads version %d", zonal.ErrVersion, v, FormatVersion)
	}
	if len(b) < len(fileMagic)+2+4 {
		return nil, fmt.Errorf("%w: truncated (%d bytes)", zonal.ErrFormat, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.ChecksumIEEE(body); got != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): the file is truncated or corrupted", zonal.ErrFormat, sum, got)
	}
	d := &dec{b: body[len(fileMagic)+2:]}
	p, err := decodeBody(d)
	if err != nil {
		return nil, err
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

func decodeBody(d *dec) (*Pipeline, error) {
	kind := d.str("model kind")
	var encg Encoding
	encg.Task = Task(d.u8("task"))
	encg.Classes = d.floats("classes")
	if len(encg.Classes) == 0 {
		encg.Classes = nil
	}
	var sc *Scaler
	switch d.u8("scaler flag") {
	case 0:
	case 1:
		mean, scale := d.floats("scaler mean"), d.floats("scaler scale")
		if d.err == nil {
			var err error
			if sc, err = NewScaler(mean, scale); err != nil {
				return nil, fmt.Errorf("%w: %w", zonal.ErrFormat, err)
			}
		}
	default:
		d.fail("bad scaler flag")
	}
	if d.err != nil {
		return nil, d.err
	}
	switch encg.Task {
	case TaskRegression:
		if encg.Classes != nil {
			d.fail("regression model with classes")
		}
	case TaskClassification:
		if len(encg.Classes) < 2 {
			d.fail("classification model with %d classes", len(encg.Classes))
		}
		for i := 1; i < len(encg.Classes); i++ {
			if !(encg.Classes[i] > encg.Classes[i-1]) {
				d.fail("classes not strictly increasing")
				break
			}
		}
	default:
		d.fail("bad task %d", encg.Task)
	}
	getKernel := func() kernels.Kernel {
		kk, kb := d.str("kernel kind"), d.bytes("kernel")
		if d.err != nil {
			return nil
		}
		k, err := kernels.UnmarshalKernel(kk, kb)
		if err != nil {
			d.fail("kernel: %v", err)
			return nil
		}
		return k
	}
	getExp := func(k kernels.Kernel, d0 int) *expansion {
		c, a, mean := d.dense("centres"), d.dense("alpha"), d.floats("mean")
		if d.err != nil {
			return nil
		}
		mr, md := c.Dims()
		ar, ak := a.Dims()
		if ar != mr || len(mean) != ak || (d0 > 0 && md != d0) {
			d.fail("inconsistent shapes: centres %dx%d, alpha %dx%d, mean %d", mr, md, ar, ak, len(mean))
			return nil
		}
		return newExpansion(k, c, a, mean)
	}
	var m Model
	switch kind {
	case KindRidge:
		lambda := d.f64("lambda")
		mk, mb := d.str("map kind"), d.bytes("map")
		w, mean := d.dense("weights"), d.floats("mean")
		if d.err != nil {
			return nil, d.err
		}
		fm, err := kernels.UnmarshalMap(mk, mb)
		if err != nil {
			return nil, fmt.Errorf("%w: feature map: %w", zonal.ErrFormat, err)
		}
		D, k := w.Dims()
		if fm.Dim() != D || len(mean) != k {
			return nil, fmt.Errorf("%w: map has %d features, weights are %dx%d, mean %d", zonal.ErrFormat, fm.Dim(), D, k, len(mean))
		}
		m = newRidge(fm, w, mean, lambda)
	case KindKRR, KindFalkon:
		lambda := d.f64("lambda")
		k := getKernel()
		e := getExp(k, 0)
		if d.err != nil {
			return nil, d.err
		}
		if kind == KindKRR {
			m = &KRR{exp: e, lambda: lambda}
		} else {
			m = &Falkon{exp: e, lambda: lambda}
		}
	case KindParK:
		lambda := d.f64("lambda")
		k := getKernel()
		cent := d.dense("centroids")
		cdiag := d.floats("centroid norms")
		if d.err != nil {
			return nil, d.err
		}
		q, dim := cent.Dims()
		if len(cdiag) != q {
			return nil, fmt.Errorf("%w: %d centroids, %d norms", zonal.ErrFormat, q, len(cdiag))
		}
		p := &ParK{kern: k, centroids: cent, cdiag: cdiag, lambda: lambda, cells: make([]*expansion, q)}
		for i := range p.cells {
			p.cells[i] = getExp(k, dim)
			if d.err != nil {
				return nil, d.err
			}
			if _, _, kk := p.cells[i].dims(); kk != p.cells[0].Outputs() {
				return nil, fmt.Errorf("%w: cells have different output counts", zonal.ErrFormat)
			}
		}
		m = p
	default:
		d.fail("unknown model kind %q", kind)
	}
	if d.err != nil {
		return nil, d.err
	}
	p, err := NewPipeline(sc, encg, m)
	if err != nil {
		if errors.Is(err, zonal.ErrFormat) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", zonal.ErrFormat, err)
	}
	return p, nil
}

func (e *expansion) Outputs() int { _, _, k := e.dims(); return k }

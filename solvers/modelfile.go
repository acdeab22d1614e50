package solvers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/calibrate"
	"github.com/zonal-ml/zonal/dataset"
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
// Centres and centroids are input-space matrices: dense as above, or, for
// a model fitted on CSR rows, uint64 0 (no dense matrix has 0 rows, so
// files written before CSR existed read unchanged), uint64 1 (the CSR tag),
// uint64 rows, cols, nnz, then RowPtr (rows+1 uint64), Col (nnz uint64) and
// Val (nnz floats).
//
//	kind string (Model.Kind: "ridge", "krr", "falkon", "park", "logistic", or any
//	        kind registered with RegisterModel)
//	task uint8, classes []float64
//	inputs: uint8 flags (bit 0 scaler, bit 1 text transform, bit 2
//	        calibration, bit 3 training weights; version 1 files only know
//	        bit 0, version 2 files bits 0 and 1, version 3 bits 0 to 2), then with bit 0 the scaler's mean []float64,
//	        scale []float64, then with bit 1 the bytes of
//	        dataset.TextTransform.MarshalBinary (applied before the scaler)
//	calibration (bit 2, version 3): uint8 method (calibrate.Method: 0
//	        Platt, 1 isotonic), then one calibrator for two classes (of
//	        the probability of the larger class), one per class in class
//	        order for more: Platt A, B (float64 each), isotonic knots
//	        X []float64, Y []float64
//	weights (bit 3, version 4): the pipeline's TrainingWeights: Sum
//	        float64, Rows uint64, ClassFactors []float64 (length 0: no
//	        class weights, else one per class)
//	model: the bytes of PersistentModel.MarshalBinary, up to the crc
//
// The model bytes of this package's kinds (written by the MarshalBinary
// method in each model's file):
//
//	ridge:  lambda, map kind, map bytes, W (D x k), mean []float64, then
//	        only for a float32 model (format 2) uint8 1, uint8 precision
//	krr, falkon, logistic: lambda, kernel kind, kernel bytes, centres (M x d),
//	        alpha (M x k), mean []float64, then only for a float32
//	        model (format 2) uint8 1, uint8 precision (1 = float32)
//	park:   lambda, kernel kind, kernel bytes, centroids (Q x d),
//	        k(c_q, c_q) []float64, then Q cells of centres, alpha, mean,
//	        then optionally (capped partitions) uint8 1, offsets []float64,
//	        then only for a float32 model (format 2) uint8 2, uint8
//	        precision
//
// Version 2 differs from version 1 only by the precision sections of
// float32 models (zonal.Float32) and the text transform (input flag bit 1);
// version 3 from version 2 only by the calibration (input flag bit 2),
// version 4 from version 3 only by the training weights (input flag bit 3).
// A file is written with the lowest version that holds its parts: files
// without a calibration or weights byte for byte as before, so that
// earlier builds read them; an earlier build refuses a calibrated or
// weighted file by its version (zonal.ErrVersion) rather than by an
// unknown flag.
const (
	fileMagic = "ZONALMDL"
	// FormatVersion is the newest model-file format version this package
	// writes; it reads every version from 1 to FormatVersion. Version 2
	// added the precision section of float32 models and the text transform
	// of pipelines, version 3 the calibration of classifiers, version 4
	// the training weights of weighted fits; a file is written with the
	// lowest version that holds its parts, so older builds still read
	// what they can.
	FormatVersion = 4
	// formatV1 is the version of files with none of them.
	formatV1     = 1
	inputScaler  = 1 << 0 // input flags: a scaler follows
	inputText    = 1 << 1 // input flags: a text transform follows (version 2)
	inputCalibra = 1 << 2 // input flags: a calibration follows (version 3)
	inputWeights = 1 << 3 // input flags: training weights follow (version 4)
)

// Save writes p to w in the versioned model format (see MarshalPipeline).
//
// Errors: those of MarshalPipeline, and w's write error.
func Save(w io.Writer, p *Pipeline) error {
	b, err := MarshalPipeline(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// MarshalPipeline encodes p in the versioned model format: version 4 when
// p records training weights (Pipeline.Weights), else version 3 when p has
// a calibration, else version 2 when the model records float32
// precision or p has a text transform, else version 1 (which earlier
// builds read). The model must be
// a PersistentModel whose kind is registered (RegisterModel), so that the
// file can be loaded again.
//
// Errors: zonal.ErrParam for a nil pipeline, a model that is not a
// PersistentModel or whose kind has no decoder, or a Ridge model on a
// feature map that is not a kernels.PersistentMap; otherwise the model's,
// kernel's or map's MarshalBinary error.
func MarshalPipeline(p *Pipeline) ([]byte, error) {
	if p == nil || p.Model == nil {
		return nil, fmt.Errorf("%w: nil pipeline", zonal.ErrParam)
	}
	pm, ok := p.Model.(PersistentModel)
	if !ok {
		return nil, fmt.Errorf("%w: cannot save model type %T (not a solvers.PersistentModel)", zonal.ErrParam, p.Model)
	}
	kind := pm.Kind()
	if _, ok := modelDecoder(kind); !ok {
		return nil, fmt.Errorf("%w: model kind %q has no decoder (RegisterModel), the file could not be loaded", zonal.ErrParam, kind)
	}
	body, err := pm.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var text []byte
	if p.Text != nil {
		if text, err = p.Text.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	version := pipelineVersion(p)
	e := &enc{b: []byte(fileMagic)}
	e.b = binary.LittleEndian.AppendUint16(e.b, version)
	e.str(kind)
	e.u8(uint8(p.Encoding.Task))
	e.floats(p.Encoding.Classes)
	var flags uint8
	if p.Scaler != nil {
		flags |= inputScaler
	}
	if p.Text != nil {
		flags |= inputText
	}
	if p.Calibration != nil {
		flags |= inputCalibra
	}
	if p.Weights != nil {
		flags |= inputWeights
	}
	e.u8(flags)
	if p.Scaler != nil {
		e.floats(p.Scaler.Mean)
		e.floats(p.Scaler.Scale)
	}
	if p.Text != nil {
		e.bytes(text)
	}
	if p.Calibration != nil {
		e.calibration(p.Calibration)
	}
	if p.Weights != nil {
		e.f64(p.Weights.Sum)
		e.u64(uint64(p.Weights.Rows))
		e.floats(p.Weights.ClassFactors)
	}
	e.b = append(e.b, body...)
	return binary.LittleEndian.AppendUint32(e.b, crc32.ChecksumIEEE(e.b)), nil
}

// Load reads a model file written by Save (see UnmarshalPipeline for opts).
//
// Errors: zonal.ErrFormat for a file that is truncated, has a wrong checksum
// or inconsistent contents (an unknown model, kernel or map kind wraps
// zonal.ErrUnknown too); zonal.ErrVersion for a format version other than 1
// to FormatVersion; r's read error.
func Load(r io.Reader, opts Options) (*Pipeline, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("solvers: reading model: %w", err)
	}
	return UnmarshalPipeline(b, opts)
}

// UnmarshalPipeline decodes a model file's bytes. The model predicts on
// opts.Backend, or, when that is nil, on backend.Default() as it is when
// UnmarshalPipeline runs (not when Predict runs). opts.MemoryBudget and
// opts.Progress are not used: decoding allocates about len(b) bytes, every
// length the file declares being checked against the bytes present first.
//
// Errors: zonal.ErrFormat for bytes that are truncated, have a wrong checksum
// or inconsistent contents (an unknown model, kernel or map kind wraps
// zonal.ErrUnknown too, and a version that does not match the model, e.g. a
// float32 model in a version-1 file); zonal.ErrVersion for a format version
// other than 1 to FormatVersion.
func UnmarshalPipeline(b []byte, opts Options) (*Pipeline, error) {
	if len(b) < len(fileMagic) || !bytes.Equal(b[:len(fileMagic)], []byte(fileMagic)) {
		return nil, fmt.Errorf("%w: not a zonal model file (bad magic)", zonal.ErrFormat)
	}
	if len(b) < len(fileMagic)+2 {
		return nil, fmt.Errorf("%w: truncated header (%d bytes)", zonal.ErrFormat, len(b))
	}
	version := binary.LittleEndian.Uint16(b[len(fileMagic):])
	if version < formatV1 || version > FormatVersion {
		return nil, fmt.Errorf("%w: file has format version %d, this build reads versions %d to %d", zonal.ErrVersion, version, formatV1, FormatVersion)
	}
	if len(b) < len(fileMagic)+2+4 {
		return nil, fmt.Errorf("%w: truncated (%d bytes)", zonal.ErrFormat, len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.ChecksumIEEE(body); got != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): the file is truncated or corrupted", zonal.ErrFormat, sum, got)
	}
	d := &dec{b: body[len(fileMagic)+2:]}
	p, err := decodeBody(d, version, opts.backend())
	if err != nil {
		return nil, err
	}
	if want := pipelineVersion(p); version != want {
		return nil, fmt.Errorf("%w: a %s model in a format-%d file (written as format %d)", zonal.ErrFormat, p.Model.Kind(), version, want)
	}
	return p, nil
}

func decodeBody(d *dec, version uint16, be backend.Backend) (*Pipeline, error) {
	kind := d.str("model kind")
	var encg Encoding
	encg.Task = Task(d.u8("task"))
	encg.Classes = d.floats("classes")
	if len(encg.Classes) == 0 {
		encg.Classes = nil
	}
	var sc *Scaler
	var text *dataset.TextTransform
	flags := d.u8("input flags")
	known := uint8(inputScaler)
	if version >= 2 {
		known |= inputText
	}
	if version >= 3 {
		known |= inputCalibra
	}
	if version >= 4 {
		known |= inputWeights
	}
	if flags&^known != 0 {
		d.fail("bad input flags %#x for format version %d", flags, version)
	}
	if d.err == nil && flags&inputScaler != 0 {
		mean, scale := d.floats("scaler mean"), d.floats("scaler scale")
		if d.err == nil {
			var err error
			if sc, err = NewScaler(mean, scale); err != nil {
				return nil, fmt.Errorf("%w: %w", zonal.ErrFormat, err)
			}
		}
	}
	if d.err == nil && flags&inputText != 0 {
		tb := d.bytes("text transform")
		if d.err == nil {
			text = new(dataset.TextTransform)
			if err := text.UnmarshalBinary(tb); err != nil {
				return nil, fmt.Errorf("%w: %w", zonal.ErrFormat, err)
			}
		}
	}
	var cal *Calibration
	if d.err == nil && flags&inputCalibra != 0 {
		cal = d.calibration(encg)
	}
	var tw *TrainingWeights
	if d.err == nil && flags&inputWeights != 0 {
		tw = d.trainingWeights()
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
	if d.err != nil {
		return nil, d.err
	}
	decode, ok := modelDecoder(kind)
	if !ok {
		return nil, fmt.Errorf("%w: %w: model kind %q (registered: %v)", zonal.ErrFormat, zonal.ErrUnknown, kind, ModelKinds())
	}
	m, err := decode(d.b, be)
	if err != nil {
		return nil, asFormatError(kind, err)
	}
	if s, ok := m.(weightSumSetter); ok && tw != nil {
		s.setWeightSum(tw.Sum)
	}
	p, err := NewPipeline(sc, encg, m)
	if err == nil && text != nil {
		p, err = p.WithText(text)
	}
	if err == nil && cal != nil {
		p, err = p.WithCalibration(cal)
	}
	if err == nil && tw != nil {
		p, err = p.WithWeights(tw) // checks the record against the encoding
	}
	if err != nil {
		return nil, asFormatError(kind, err)
	}
	return p, nil
}

// asFormatError makes err wrap zonal.ErrFormat (a file whose parts do not fit
// together is a malformed file, whatever the part's own error says).
func asFormatError(kind string, err error) error {
	if errors.Is(err, zonal.ErrFormat) {
		return err
	}
	return fmt.Errorf("%w: %s model: %w", zonal.ErrFormat, kind, err)
}

// Fields shared by the model kinds of this package.

// kernel appends a kernel's kind and parameters.
func (e *enc) kernel(k kernels.Kernel) error {
	kb, err := k.MarshalBinary()
	if err != nil {
		return fmt.Errorf("solvers: encoding kernel %s: %w", k, err)
	}
	e.str(k.Kind())
	e.bytes(kb)
	return nil
}

// kernel reads what enc.kernel wrote.
func (d *dec) kernel() kernels.Kernel {
	kk, kb := d.str("kernel kind"), d.bytes("kernel")
	if d.err != nil {
		return nil
	}
	k, err := kernels.UnmarshalKernel(kk, kb)
	if err != nil {
		if d.err == nil {
			d.err = fmt.Errorf("%w: kernel: %w", zonal.ErrFormat, err)
		}
		return nil
	}
	return k
}

// expansion appends an expansion's centres, coefficients and mean (not its
// kernel).
func (e *enc) expansion(x *expansion) {
	e.matrix(x.centers)
	e.dense(x.alpha)
	e.floats(x.mean)
}

// expansion reads what enc.expansion wrote, for kernel k and inputs of
// dimension d0 (0: any).
func (d *dec) expansion(be backend.Backend, k kernels.Kernel, d0 int) *expansion {
	c, a, mean := d.matrix("centres"), d.dense("alpha"), d.floats("mean")
	if d.err != nil {
		return nil
	}
	mr, md := c.Dims()
	ar, ak := a.Dims()
	if ar != mr || len(mean) != ak || (d0 > 0 && md != d0) {
		d.fail("inconsistent shapes: centres %dx%d, alpha %dx%d, mean %d", mr, md, ar, ak, len(mean))
		return nil
	}
	return newExpansion(be, k, c, a, mean)
}

// marshalExpansionModel encodes the fields of a model that is one
// expansion (KRR, Falkon): lambda, kernel, expansion, precision section.
func marshalExpansionModel(lambda float64, x *expansion) ([]byte, error) {
	e := &enc{}
	e.f64(lambda)
	if err := e.kernel(x.kern); err != nil {
		return nil, err
	}
	e.expansion(x)
	e.precision(expansionPrecisionTag, x.prec)
	return e.b, nil
}

// expansionDecoder is the ModelDecoder of a kind that is one expansion: it
// reads what marshalExpansionModel wrote and builds the model with mk.
func expansionDecoder(mk func(lambda float64, e *expansion) Model) ModelDecoder {
	return func(data []byte, be backend.Backend) (Model, error) {
		d := &dec{b: data}
		lambda := d.f64("lambda")
		k := d.kernel()
		e := d.expansion(be, k, 0)
		if d.err == nil && len(d.b) > 0 {
			if tag := d.u8("section tag"); tag != expansionPrecisionTag {
				d.fail("unknown section %d", tag)
			}
			e.prec = d.precisionValue()
		}
		if err := d.end(); err != nil {
			return nil, err
		}
		return mk(lambda, e), nil
	}
}

// pipelineVersion is the format version p is written with: 4 when it
// records training weights, else 3 when it has a calibration, else 2 when
// its model is float32 or it has a text transform, else 1.
func pipelineVersion(p *Pipeline) uint16 {
	v := modelFormatVersion(p.Model)
	if p.Text != nil {
		v = max(v, 2)
	}
	if p.Calibration != nil {
		v = max(v, 3)
	}
	if p.Weights != nil {
		v = max(v, 4)
	}
	return v
}

// trainingWeights reads what MarshalPipeline wrote of a pipeline's
// TrainingWeights; WithWeights checks the values against the encoding.
func (d *dec) trainingWeights() *TrainingWeights {
	sum, rows, cf := d.f64("weight sum"), d.u64("weighted rows"), d.floats("class factors")
	if d.err != nil {
		return nil
	}
	if rows > uint64(math.MaxInt) {
		d.fail("%d weighted rows", rows)
		return nil
	}
	if len(cf) == 0 {
		cf = nil
	}
	return &TrainingWeights{Sum: sum, Rows: int(rows), ClassFactors: cf}
}

// calibration appends c's method and calibrators (see the layout).
func (e *enc) calibration(c *Calibration) {
	m := c.Method()
	e.u8(uint8(m))
	if c.Binary != nil {
		e.calibrator(c.Binary)
		return
	}
	for j := range c.Multiclass.Classes {
		if m == calibrate.MethodPlatt {
			e.calibrator(&c.Multiclass.Platt[j])
		} else {
			e.calibrator(&c.Multiclass.Isotonic[j])
		}
	}
}

func (e *enc) calibrator(c calibrate.Calibrator) {
	switch c := c.(type) {
	case *calibrate.Platt:
		e.f64(c.A)
		e.f64(c.B)
	case *calibrate.Isotonic:
		e.floats(c.X)
		e.floats(c.Y)
	}
}

// calibration reads what enc.calibration wrote for the encoding encg; the
// calibrators are checked by WithCalibration.
func (d *dec) calibration(encg Encoding) *Calibration {
	m := calibrate.Method(d.u8("calibration method"))
	if d.err != nil {
		return nil
	}
	if err := m.Check(); err != nil {
		d.fail("calibration method %d", m)
		return nil
	}
	if encg.Task != TaskClassification || len(encg.Classes) < 2 {
		d.fail("calibration of a %s model with %d classes", encg.Task, len(encg.Classes))
		return nil
	}
	one := func() calibrate.Calibrator {
		if m == calibrate.MethodPlatt {
			return &calibrate.Platt{A: d.f64("Platt A"), B: d.f64("Platt B")}
		}
		x, y := d.floats("isotonic X"), d.floats("isotonic Y")
		return &calibrate.Isotonic{X: x, Y: y}
	}
	k := len(encg.Classes)
	if k == 2 {
		return &Calibration{Binary: one()}
	}
	mc := &calibrate.Multiclass{Method: m, Classes: slices.Clone(encg.Classes)}
	for j := 0; j < k && d.err == nil; j++ {
		switch c := one().(type) {
		case *calibrate.Platt:
			mc.Platt = append(mc.Platt, *c)
		case *calibrate.Isotonic:
			mc.Isotonic = append(mc.Isotonic, *c)
		}
	}
	return &Calibration{Multiclass: mc}
}

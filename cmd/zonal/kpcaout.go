package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/estimator"
	"github.com/zonal-ml/zonal/kpca"
)

// The outputs of `zonal kpca`: -out (scores CSV), -model (the kernel PCA
// with its input scaling) and the `transform` subcommand.

const kpcaTransformSynopsis = "-model FILE -data FILE|- [-format csv|libsvm] [-out scores.csv]"

// kpcaModelMagic starts a `zonal kpca -model` file; kpcaModelVersion is its
// layout: magic, version (uint32), a scaler flag (uint32) and, when set, d
// and the d means and d scales (float64), then the length (uint64) and bytes
// of kpca.Model.MarshalBinary. Everything little endian.
const (
	kpcaModelMagic   = "zonal-kpca\n"
	kpcaModelVersion = 1
)

// writeKPCAOutputs writes -out and -model for the model m fitted on the
// scaled points x (st: the input scaling, nil for none). The scores are
// m.Transform(x), the projections of the points on the model's axes: for an
// exact decomposition they equal m.Scores() = sqrt(lambda_j) U_ij up to
// rounding, and for a truncated incremental one (an approximate
// eigenbasis) they are what `zonal kpca transform` gives for the same rows.
func writeKPCAOutputs(e *env, f kpcaConfig, st *dataset.Standardizer, x *mat.Dense, m *kpca.Model) error {
	if f.out != "" {
		n, _ := x.Dims()
		sc := mat.NewDense(n, max(m.Dim(), 1), nil)
		if m.Dim() > 0 {
			if err := m.Transform(sc, x); err != nil {
				return err
			}
		}
		var buf bytes.Buffer
		if err := writeScoresCSV(&buf, sc, m.Dim()); err != nil {
			return err
		}
		if err := writeOutput(e, f.out, buf.Bytes()); err != nil {
			return err
		}
	}
	if f.model != "" {
		b, err := encodeKPCAModel(st, m)
		if err != nil {
			return err
		}
		if err := writeOutput(e, f.model, b); err != nil {
			return err
		}
	}
	return nil
}

// writeScoresCSV writes a header pc1..pcK and one row per row of s (its
// first k columns), each value in the shortest form that parses back to
// the same float64.
func writeScoresCSV(w io.Writer, s *mat.Dense, k int) error {
	r, _ := s.Dims()
	var line []byte
	for j := 0; j < k; j++ {
		if j > 0 {
			line = append(line, ',')
		}
		line = append(line, "pc"+strconv.Itoa(j+1)...)
	}
	line = append(line, '\n')
	if _, err := w.Write(line); err != nil {
		return err
	}
	for i := 0; i < r && k > 0; i++ {
		line = line[:0]
		for j := 0; j < k; j++ {
			if j > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, s.At(i, j), 'g', -1, 64)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

func encodeKPCAModel(st *dataset.Standardizer, m *kpca.Model) ([]byte, error) {
	mb, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := func(v any) { binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString(kpcaModelMagic)
	w(uint32(kpcaModelVersion))
	if st == nil {
		w(uint32(0))
	} else {
		w(uint32(1))
		w(uint32(len(st.Mean)))
		w(st.Mean)
		w(st.Scale)
	}
	w(uint64(len(mb)))
	buf.Write(mb)
	return buf.Bytes(), nil
}

// decodeKPCAModel reads what encodeKPCAModel wrote.
func decodeKPCAModel(data []byte) (*dataset.Standardizer, *kpca.Model, error) {
	bad := errors.New("not a `zonal kpca -model` file (or damaged)")
	if !bytes.HasPrefix(data, []byte(kpcaModelMagic)) {
		return nil, nil, bad
	}
	r := bytes.NewReader(data[len(kpcaModelMagic):])
	var ver, hasScaler uint32
	if binary.Read(r, binary.LittleEndian, &ver) != nil || binary.Read(r, binary.LittleEndian, &hasScaler) != nil {
		return nil, nil, bad
	}
	if ver != kpcaModelVersion {
		return nil, nil, fmt.Errorf("kpca model file version %d, this zonal reads version %d", ver, kpcaModelVersion)
	}
	var st *dataset.Standardizer
	if hasScaler > 1 {
		return nil, nil, bad
	}
	if hasScaler == 1 {
		var d uint32
		if binary.Read(r, binary.LittleEndian, &d) != nil || d == 0 || int64(d)*16 > int64(r.Len()) {
			return nil, nil, bad
		}
		st = &dataset.Standardizer{Mean: make([]float64, d), Scale: make([]float64, d)}
		if binary.Read(r, binary.LittleEndian, st.Mean) != nil || binary.Read(r, binary.LittleEndian, st.Scale) != nil {
			return nil, nil, bad
		}
		for j := range st.Mean {
			if math.IsNaN(st.Mean[j]) || math.IsInf(st.Mean[j], 0) || !(st.Scale[j] > 0) || math.IsInf(st.Scale[j], 0) {
				return nil, nil, bad
			}
		}
	}
	var ln uint64
	if binary.Read(r, binary.LittleEndian, &ln) != nil || ln != uint64(r.Len()) {
		return nil, nil, bad
	}
	rest := make([]byte, ln)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, nil, bad
	}
	m, err := kpca.UnmarshalModel(rest)
	if err != nil {
		return nil, nil, err
	}
	if st != nil && len(st.Mean) != m.InputDim() {
		return nil, nil, bad
	}
	return st, m, nil
}

// kpcaTransformConfig is a validated `zonal kpca transform` command line.
type kpcaTransformConfig struct {
	format dataFlags
	model  string
	data   string
	out    string
}

func kpcaTransformCommand(ctx context.Context, e *env, args []string) error {
	var c kpcaTransformConfig
	fs := newFlagSet("kpca transform", kpcaTransformSynopsis, e.stderr)
	fs.StringVar(&c.model, "model", "", "a model file written by zonal kpca -model")
	fs.StringVar(&c.data, "data", "", "the points to project (LIBSVM or CSV, gzip allowed, - for standard input), with the model's number of features")
	c.format.register(fs)
	fs.StringVar(&c.out, "out", "", "write the scores CSV here (default: standard output)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if c.model == "" || c.data == "" {
		return usagef("kpca transform needs -model and -data")
	}
	if err := c.format.checkInputs([2]string{"data", c.data}); err != nil {
		return err
	}
	if err := checkOutputPath("out", c.out); err != nil {
		return err
	}
	raw, err := os.ReadFile(c.model)
	if err != nil {
		return err
	}
	st, m, err := decodeKPCAModel(raw)
	if err != nil {
		return fmt.Errorf("-model %s: %w", c.model, err)
	}
	d, err := readData(e, c.format, "data", c.data, dataset.Options{})
	if err != nil {
		return err
	}
	x := d.X
	if _, cols := x.Dims(); cols != m.InputDim() {
		return fmt.Errorf("-data %s has %d features, the model was fitted on %d", c.data, cols, m.InputDim())
	}
	if x, err = estimator.Scaled(st, x); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, _ := x.Dims()
	scores := mat.NewDense(max(rows, 1), max(m.Dim(), 1), nil)
	if rows > 0 && m.Dim() > 0 {
		if err := m.Transform(scores, x); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if rows > 0 {
		if err := writeScoresCSV(&buf, scores, m.Dim()); err != nil {
			return err
		}
	}
	if c.out == "" {
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	return writeOutput(e, c.out, buf.Bytes())
}

//go:build linux

package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// form is one of the text forms the read and predict modes write the
// synthetic rows in; its name is also the file's extension.
type form struct {
	Name   string
	LIBSVM bool
	Gzip   bool
}

// forms are the four forms the read mode measures, in table order.
var forms = []form{{"csv", false, false}, {"csv.gz", false, true}, {"libsvm", true, false}, {"libsvm.gz", true, true}}

func formByName(name string) (form, error) {
	for _, f := range forms {
		if f.Name == name {
			return f, nil
		}
	}
	return form{}, fmt.Errorf("unknown form %q (want csv, csv.gz, libsvm or libsvm.gz)", name)
}

// format is the form's Options.Format.
func (f form) format() string {
	if f.LIBSVM {
		return "libsvm"
	}
	return "csv"
}

// written is one file writeSynthFiles wrote.
type written struct {
	Form      form
	Path      string
	TextBytes int64 // the uncompressed text
	FileBytes int64 // on disk (gzip: compressed)
	Lines     int64 // the rows, and the CSV's header line
}

// sink is one file being written: text goes through the gzip writer (when
// the form has one) into a buffered file, counted before compression.
type sink struct {
	written
	f   *os.File
	buf *bufio.Writer
	zw  *gzip.Writer
	w   io.Writer
}

func (s *sink) write(p []byte) error {
	n, err := s.w.Write(p)
	s.TextBytes += int64(n)
	return err
}

// close flushes and closes the file and records its size.
func (s *sink) close() error {
	var errs []error
	if s.zw != nil {
		errs = append(errs, s.zw.Close())
	}
	errs = append(errs, s.buf.Flush(), s.f.Close())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	st, err := os.Stat(s.Path)
	if err != nil {
		return err
	}
	s.FileBytes = st.Size()
	return nil
}

// writeSynthFiles writes rows [0, n) of stream of g, with regression
// labels, to base + "." + the form's name for each of fs. Each block of
// rows is made once and written in every form, so memory stays one block
// whatever n; the numbers are in the shortest form that reads back to the
// same float64, so the readers return the generator's rows exactly. CSV:
// a header y,x1,...,xd, then the label and the d values of each row;
// LIBSVM: the label and j:value for the nonzero values. On an error the
// files are removed.
func writeSynthFiles(g *synth, stream uint64, n int, base string, fs []form) (out []written, err error) {
	sinks := make([]*sink, 0, len(fs))
	defer func() {
		for _, s := range sinks {
			if cerr := s.close(); err == nil {
				err = cerr
			}
			out = append(out, s.written)
		}
		if err != nil {
			for _, s := range sinks {
				os.Remove(s.Path)
			}
			out = nil
		}
	}()
	for _, fm := range fs {
		s := &sink{written: written{Form: fm, Path: base + "." + fm.Name}}
		if s.f, err = os.Create(s.Path); err != nil {
			return nil, err
		}
		s.buf = bufio.NewWriterSize(s.f, 1<<20)
		s.w = s.buf
		if fm.Gzip {
			s.zw = gzip.NewWriter(s.buf)
			s.w = s.zw
		}
		sinks = append(sinks, s)
	}
	d := g.d
	var line []byte
	for _, s := range sinks {
		if s.Form.LIBSVM {
			continue
		}
		line = append(line[:0], 'y')
		for j := 1; j <= d; j++ {
			line = append(append(line, ",x"...), strconv.Itoa(j)...)
		}
		if err := s.write(append(line, '\n')); err != nil {
			return nil, err
		}
		s.Lines++
	}
	x, y := make([]float64, blockRows*d), make([]float64, blockRows)
	var text [2][]byte // the block's lines as CSV and as LIBSVM, each made once
	for b := 0; b*blockRows < n; b++ {
		k := min(blockRows, n-b*blockRows)
		g.block(x, y, stream, b, k, false)
		var made [2]bool
		for _, s := range sinks {
			f := 0
			if s.Form.LIBSVM {
				f = 1
			}
			if !made[f] {
				made[f], text[f] = true, text[f][:0]
				for i := range k {
					text[f] = appendRow(text[f], s.Form.LIBSVM, y[i], x[i*d:(i+1)*d])
				}
			}
			if err := s.write(text[f]); err != nil {
				return nil, err
			}
			s.Lines += int64(k)
		}
	}
	return nil, nil // the deferred close fills out
}

// appendRow appends one row's line to buf: CSV "y,x_1,...,x_d", LIBSVM
// "y j:x_j ..." over the nonzero x_j (1-based j).
func appendRow(buf []byte, libsvm bool, y float64, x []float64) []byte {
	buf = strconv.AppendFloat(buf, y, 'g', -1, 64)
	for j, v := range x {
		switch {
		case !libsvm:
			buf = append(buf, ',')
		case v == 0:
			continue
		default:
			buf = append(append(append(buf, ' '), strconv.Itoa(j+1)...), ':')
		}
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
	}
	return append(buf, '\n')
}

package serve

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The binary tensor data extension of the v2 REST protocol (as Triton and
// KServe define it): a request whose Inference-Header-Content-Length
// header is N carries its JSON in the first N bytes of the body and the
// data of each input with parameters.binary_data_size after it, raw
// little-endian values, row-major. An output is answered the same way when
// its parameters.binary_data is true, or when it does not say and the
// request's parameters.binary_data_output is true; the answer then carries
// Inference-Header-Content-Length and the binary_data_size of each binary
// output. The model takes one input, so at most one binary block follows
// the request's JSON; the answer's binary outputs follow in the order of
// the JSON ("predictions", then "outputs"). FP32 inputs are answered in
// FP32, FP64 in FP64, as in JSON.

// headerLength is the header naming the length of the JSON part.
const headerLength = "Inference-Header-Content-Length"

// decodeInfer decodes a v2 infer body (sc.body) for model m: the fast
// decoder into sc.x, or encoding/json when it declines; then the binary
// data, if any.
func (s *Server) decodeInfer(h http.Header, sc *scratch, m *model) (*v2Call, error) {
	header, tail, hasHeader, err := splitBinary(h, sc.body)
	if err != nil {
		return nil, err
	}
	c := &sc.call
	c.x = sc.x
	ok := fastV2(header, m.d, s.opts.MaxRows, c)
	sc.x = c.x
	if !ok {
		if c, err = decodeV2(header, m.d, s.opts.MaxRows); err != nil {
			return nil, err
		}
	}
	if err := c.readBinary(tail, m.d, hasHeader); err != nil {
		return nil, err
	}
	return c, nil
}

// splitBinary splits body at the length given by headerLength; without
// that header the whole body is the JSON.
func splitBinary(h http.Header, body []byte) (json, tail []byte, hasHeader bool, err error) {
	v, ok := h[headerLength]
	if !ok {
		return body, nil, false, nil
	}
	if len(v) != 1 {
		return nil, nil, true, errorf(http.StatusBadRequest, "%d %s headers; send one, the byte length of the JSON at the start of the body", len(v), headerLength)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v[0]), 10, 64)
	if err != nil || n < 0 {
		return nil, nil, true, errorf(http.StatusBadRequest, "%s is %q; want the byte length (>= 0) of the JSON at the start of the body", headerLength, v[0])
	}
	if n > int64(len(body)) {
		return nil, nil, true, errorf(http.StatusBadRequest, "%s says the JSON has %d bytes, but the body has only %d", headerLength, n, len(body))
	}
	return body[:n], body[n:], true, nil
}

// readBinary fills c.x from the bytes after the JSON header when the input
// is binary, and refuses bytes nobody asked for.
func (c *v2Call) readBinary(tail []byte, d int, hasHeader bool) error {
	if !c.binary() {
		if len(tail) > 0 {
			return errorf(http.StatusBadRequest, "%d bytes follow the JSON (%s), but input %q has no parameters.binary_data_size", len(tail), headerLength, c.name)
		}
		return nil
	}
	if !hasHeader {
		return errorf(http.StatusBadRequest, "input %q has parameters.binary_data_size, but the request has no %s header to say where the JSON ends", c.name, headerLength)
	}
	es := c.elemSize()
	need := int64(c.n) * int64(d) * int64(es)
	if c.binSize != need {
		return errorf(http.StatusBadRequest, "input %q: binary_data_size is %d bytes; shape [%d, %d] of %s needs %d", c.name, c.binSize, c.n, d, c.datatype(), need)
	}
	if int64(len(tail)) != need {
		return errorf(http.StatusBadRequest, "input %q: %d bytes follow the JSON, binary_data_size says %d", c.name, len(tail), need)
	}
	x := c.x[:c.n*d]
	readRaw(x, tail, c.fp32)
	if i := nonFinite(x, false); i >= 0 {
		return errorf(http.StatusBadRequest, "input %q: row %d, column %d is not a finite %s (%g); the model expects d = %d finite values per row",
			c.name, i/d, i%d, c.datatype(), x[i], d)
	}
	return nil
}

// readRaw decodes len(x) little-endian FP32 or FP64 values of b into x.
func readRaw(x []float64, b []byte, fp32 bool) {
	if fp32 {
		for i := range x {
			x[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return
	}
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// appendBinary appends v as little-endian FP32 or FP64 values; a
// non-finite value is an error, as in appendFloats.
func appendBinary(b []byte, v []float64, fp32 bool) ([]byte, error) {
	for i, f := range v {
		if fp32 {
			f = float64(float32(f))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("the model produced a non-finite value (%g) at position %d", f, i)
		}
		if fp32 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
	}
	return b, nil
}

var octetType = []string{"application/octet-stream"}

// writeBinary answers b, whose first jsonLen bytes are the JSON header.
func writeBinary(w http.ResponseWriter, b []byte, jsonLen int) error {
	h := w.Header()
	h["Content-Type"] = octetType
	h[headerLength] = headerInt(jsonLen)
	setLength(h, len(b))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b) // an error means the client went away
	return nil
}

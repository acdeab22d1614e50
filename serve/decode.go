package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// httpError is an error answered with its status code and message.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, a ...any) *httpError {
	return &httpError{code: code, msg: fmt.Sprintf(format, a...)}
}

// jsonProblem describes a decoding error of encoding/json for a client.
func jsonProblem(err error, body []byte) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %q: JSON %s where %s was expected (byte %d)", te.Field, te.Value, typeName(te.Type.String()), te.Offset)
		}
		return fmt.Sprintf("JSON %s where %s was expected (byte %d)", te.Value, typeName(te.Type.String()), te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		if len(bytes.TrimSpace(body)) == 0 {
			return "empty request body"
		}
		return "malformed JSON: the body ends early"
	}
	return "malformed JSON: " + err.Error()
}

func typeName(t string) string {
	switch t {
	case "float64", "float32":
		return "a number"
	case "[]float64", "[][]float64":
		return "an array of numbers"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	}
	if strings.HasPrefix(t, "[]") {
		return "an array"
	}
	return "an object"
}

// unmarshalStrict decodes one JSON value into v, refusing unknown fields
// and anything after the value.
func unmarshalStrict(body []byte, v any, unknownOK bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if !unknownOK {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more data after the request object")
	}
	return nil
}

// v1Request is the body of POST /v1/predict.
type v1Request struct {
	Rows          *[][]float64 `json:"rows"`
	Outputs       bool         `json:"outputs"`
	Probabilities bool         `json:"probabilities"`
}

// decodeV1 parses a /v1/predict body for a model of d inputs into the
// row-major n x d matrix x. Errors are *httpError (400, or 413 above maxRows).
func decodeV1(body []byte, d, maxRows int) (x []float64, n int, outputs, probabilities bool, err error) {
	var req v1Request
	if err := unmarshalStrict(body, &req, false); err != nil {
		msg := jsonProblem(err, body)
		if strings.Contains(err.Error(), "unknown field") {
			msg = err.Error()[len("json: "):]
		}
		return nil, 0, false, false, errorf(http.StatusBadRequest, "%s; want {\"rows\": [[x1, ..., x%d], ...], \"outputs\": false}", msg, d)
	}
	if req.Rows == nil {
		return nil, 0, false, false, errorf(http.StatusBadRequest, "missing \"rows\"; want {\"rows\": [[x1, ..., x%d], ...]}", d)
	}
	rows := *req.Rows
	n = len(rows)
	if n == 0 {
		return nil, 0, false, false, errorf(http.StatusBadRequest, "\"rows\" is empty; want at least one row of d = %d numbers", d)
	}
	if n > maxRows {
		return nil, 0, false, false, errorf(http.StatusRequestEntityTooLarge, "%d rows is over the limit of %d rows per request", n, maxRows)
	}
	x = make([]float64, n*d)
	for i, row := range rows {
		if len(row) != d {
			return nil, 0, false, false, errorf(http.StatusBadRequest, "row %d has %d values; the model expects d = %d", i, len(row), d)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, 0, false, false, errorf(http.StatusBadRequest, "row %d, column %d is %g; values must be finite (the model expects d = %d)", i, j, v, d)
			}
		}
		copy(x[i*d:], row)
	}
	return x, n, req.Outputs, req.Probabilities, nil
}

// v2Tensor is one tensor of an Open Inference Protocol v2 request.
type v2Tensor struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data"`
}

// v2Output names an output tensor a v2 request asks for.
type v2Output struct {
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// v2Request is the body of POST /v2/models/{name}/infer.
type v2Request struct {
	ID         string          `json:"id,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Inputs     []v2Tensor      `json:"inputs"`
	Outputs    []v2Output      `json:"outputs,omitempty"`
}

// Output tensor names of the v2 infer answer.
const (
	outPredictions   = "predictions"
	outOutputs       = "outputs"
	outProbabilities = "probabilities" // only when asked for, of a calibrated classifier
)

// v2Call is a decoded v2 infer request.
type v2Call struct {
	id          []byte    // the request's id as a JSON string for the answer; nil = none
	name        []byte    // the input tensor's name (for messages)
	x           []float64 // n x d, row-major
	n           int
	fp32        bool  // the input was FP32: answer in FP32
	binSize     int64 // >= 0: the input's data are binary_data_size bytes after the JSON header; -1: in "data"
	predictions bool  // answer the "predictions" tensor
	outputs     bool  // answer the "outputs" tensor
	binPred     bool  // answer "predictions" as binary data
	binOuts     bool  // answer "outputs" as binary data
	proba       bool  // answer the "probabilities" tensor
	binProba    bool  // answer "probabilities" as binary data
}

func (c *v2Call) binary() bool { return c.binSize >= 0 }

// elemSize is the bytes of one value of the input's (and answer's) datatype.
func (c *v2Call) elemSize() int {
	if c.fp32 {
		return 4
	}
	return 8
}

func (c *v2Call) datatype() string {
	if c.fp32 {
		return "FP32"
	}
	return "FP64"
}

// decodeV2 parses an infer body (or the JSON header of a binary one):
// exactly one input tensor, FP64 or FP32, shape [n, d], data flat
// (row-major) or nested, or parameters.binary_data_size (the data follow
// the header; c.x then has room for them). Errors are *httpError.
func decodeV2(body []byte, d, maxRows int) (*v2Call, error) {
	want := fmt.Sprintf("want {\"inputs\": [{\"name\": \"input-0\", \"datatype\": \"FP64\" or \"FP32\", \"shape\": [n, %d], \"data\": [...]}]}", d)
	var req v2Request
	err := unmarshalStrict(body, &req, true)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%s; %s", jsonProblem(err, body), want)
	}
	if len(req.Inputs) != 1 {
		return nil, errorf(http.StatusBadRequest, "%d input tensors; the model takes exactly one; %s", len(req.Inputs), want)
	}
	in := req.Inputs[0]
	c := &v2Call{name: []byte(in.Name), binSize: -1}
	if req.ID != "" {
		c.id = jsonString(req.ID)
	}
	if c.n, c.fp32, err = checkInput(in.Name, in.Datatype, in.Shape, d, maxRows); err != nil {
		return nil, err
	}
	size, hasSize, err := paramInt(in.Parameters, "binary_data_size")
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "input %q: %v", in.Name, err)
	}
	if hasSize {
		if raw := bytes.TrimSpace(in.Data); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			return nil, errorf(http.StatusBadRequest, "input %q has both \"data\" and parameters.binary_data_size; send its values one way", in.Name)
		}
		c.binSize = size
		c.x = make([]float64, c.n*d)
	} else {
		x, err := tensorData(in.Data, c.n, d)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "input %q: %v (shape [%d, %d])", in.Name, err, c.n, d)
		}
		if i := nonFinite(x, c.fp32); i >= 0 {
			return nil, errorf(http.StatusBadRequest, "input %q: row %d, column %d is not a finite %s; the model expects d = %d finite values per row",
				in.Name, i/d, i%d, in.Datatype, d)
		}
		c.x = x
	}
	binOut, _, err := paramBool(req.Parameters, "binary_data_output")
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "request %v", err)
	}
	if len(req.Outputs) == 0 {
		c.predictions, c.outputs = true, true
		c.binPred, c.binOuts = binOut, binOut
	}
	for _, o := range req.Outputs {
		bin, set, err := paramBool(o.Parameters, "binary_data")
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "output %q: %v", o.Name, err)
		}
		if !set {
			bin = binOut
		}
		switch o.Name {
		case outPredictions:
			c.predictions, c.binPred = true, bin
		case outOutputs:
			c.outputs, c.binOuts = true, bin
		case outProbabilities:
			c.proba, c.binProba = true, bin
		default:
			return nil, unknownOutput(o.Name)
		}
	}
	return c, nil
}

// unknownOutput is the error of an output name the server does not answer.
func unknownOutput(name string) error {
	return errorf(http.StatusBadRequest, "unknown output %q; the model answers %q (labels or values, shape [n]), %q (raw outputs, shape [n, k]) and, for a calibrated classifier, %q (class probabilities, shape [n, classes])",
		name, outPredictions, outOutputs, outProbabilities)
}

// checkInput checks the input tensor's datatype (FP64 or FP32) and shape
// ([n, d], 1 <= n <= maxRows) and returns n. Errors are *httpError (400,
// 413 above maxRows), for REST and gRPC alike.
func checkInput(name, datatype string, shape []int64, d, maxRows int) (n int, fp32 bool, err error) {
	switch datatype {
	case "FP64":
	case "FP32":
		fp32 = true
	default:
		return 0, false, errorf(http.StatusBadRequest, "input %q has datatype %q; the model takes FP64 or FP32", name, datatype)
	}
	if len(shape) != 2 || shape[1] != int64(d) || shape[0] < 1 {
		return 0, false, errorf(http.StatusBadRequest, "input %q has shape %v; the model expects [n, %d] with n >= 1", name, shape, d)
	}
	if shape[0] > int64(maxRows) {
		return 0, false, errorf(http.StatusRequestEntityTooLarge, "%d rows is over the limit of %d rows per request", shape[0], maxRows)
	}
	return int(shape[0]), fp32, nil
}

// nonFinite returns the index of the first value that is not finite, or
// -1; with fp32 the values are rounded to float32 first (in place).
func nonFinite(x []float64, fp32 bool) int {
	for i, v := range x {
		if fp32 {
			v = float64(float32(v))
			x[i] = v
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

// param returns the value of key in a parameters object (raw: absent,
// null or an object; anything else is an error). A key given twice counts
// once, the last time, as encoding/json decodes maps.
func param(raw json.RawMessage, key string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, errors.New("parameters must be a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("parameters must be a JSON object: " + err.Error())
	}
	return bytes.TrimSpace(m[key]), nil
}

// paramBool reads the boolean parameter key (set reports whether it is there).
func paramBool(raw json.RawMessage, key string) (v, set bool, err error) {
	p, err := param(raw, key)
	switch {
	case err != nil:
		return false, false, err
	case p == nil:
		return false, false, nil
	case string(p) == "true":
		return true, true, nil
	case string(p) == "false":
		return false, true, nil
	}
	return false, false, fmt.Errorf("parameter %q is %s; want true or false", key, p)
}

// paramInt reads the parameter key, a non-negative integer.
func paramInt(raw json.RawMessage, key string) (v int64, set bool, err error) {
	p, err := param(raw, key)
	if err != nil || p == nil {
		return 0, false, err
	}
	if err := json.Unmarshal(p, &v); err != nil || string(p) == "null" || v < 0 {
		return 0, false, fmt.Errorf("parameter %q is %s; want a number of bytes >= 0", key, p)
	}
	return v, true, nil
}

// tensorData parses v2 tensor data, flat ([n*d] numbers) or nested ([n][d]).
func tensorData(raw json.RawMessage, n, d int) ([]float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, errors.New("no \"data\"")
	}
	var flat []float64
	if err := json.Unmarshal(raw, &flat); err == nil {
		if len(flat) != n*d {
			return nil, fmt.Errorf("data has %d values, shape needs %d", len(flat), n*d)
		}
		return flat, nil
	}
	var nested [][]float64
	if err := json.Unmarshal(raw, &nested); err != nil {
		return nil, errors.New("data must be an array of numbers (row-major) or of rows of numbers: " + jsonProblem(err, raw))
	}
	if len(nested) != n {
		return nil, fmt.Errorf("data has %d rows, shape says %d", len(nested), n)
	}
	x := make([]float64, 0, n*d)
	for i, row := range nested {
		if len(row) != d {
			return nil, fmt.Errorf("row %d has %d values; the model expects d = %d", i, len(row), d)
		}
		x = append(x, row...)
	}
	return x, nil
}

// appendFloats appends v as a JSON array; bits is 64 or 32 (FP32 answers
// are rounded to float32). A non-finite value is an error.
func appendFloats(b []byte, v []float64, bits int) ([]byte, error) {
	b = append(b, '[')
	for i, f := range v {
		if bits == 32 {
			f = float64(float32(f))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("the model produced a non-finite value (%g) at position %d", f, i)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, f, 'g', -1, bits)
	}
	return append(b, ']'), nil
}

package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"
)

// fuzzSeeds are valid and invalid bodies of both routes: the seed corpus
// of FuzzDecoders and the cases of TestFastDecoders.
var fuzzSeeds = []string{
	`{"rows": [[1, 2, 3]]}`,
	`{"rows": [[1, 2, 3], [4, 5, 6]], "outputs": true}`,
	`{"rows": [[1e308, -1e-308, 0]]}`,
	`{"rows": [[1e-400, 4.9e-324, -0]]}`,
	`{"rows": []}`,
	`{"rows": [[1, 2]]}`,
	`{"rows": [[1, null, 3]]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]}], "outputs": [{"name": "outputs"}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 1e39, 3]}]}`,
	`{"id": "a", "inputs": [{"name": "x", "datatype": "FP64", "shape": [9223372036854775807, 3], "data": []}]}`,
	`{"id": "q<1>", "inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`,
	`{"id": "\u0041", "inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`,
	`{"inputs": [{"shape": [-1, 3]}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "parameters": {"binary_data_size": 24}}], "parameters": {"binary_data_output": true}}`,
	`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "parameters": {"binary_data_size": 12, "x": [{}]}}], "outputs": [{"name": "predictions", "parameters": {"binary_data": true}}, {"name": "outputs"}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "parameters": {"binary_data_size": -1}}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3], "parameters": {"binary_data_size": 24}}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3], "parameters": 5}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "outputs", "parameters": {"binary_data": 1}}]}`,
	`{"Inputs": [{"NAME": "x", "DataType": "FP64", "shape": [1, 3], "data": [1, 2, 3], "extra": {"a": [1, "b", null, true]}}], "model": "m"}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "inputs": []}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "ſhape": [1, 3], "data": [1, 2, 3]}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1.0, 3], "data": [1, 2, 3]}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [[1, 2], [3]]}]}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "probs"}]}`,
	`{"inputs": [{"name": "a"}, {"name": "b"}]}`,
	`[`, ``, `null`, `{"rows": null}`, `{}`, `{"inputs": [`,
	` {"outputs":false , "rows":[ [0,255,-0] ,[1.5e3,-2E-2,12]] } `,
	`{"rows": [[1, 2, 3]], "rows": [[4, 5, 6]]}`,
	`{"Rows": [[1, 2, 3]]}`,
	`{"rows": [[1, 2, 3]], "probabilities": true, "outputs": true}`,
	`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "probabilities", "parameters": {"binary_data": true}}]}`,
	`{"rows": [[01, 2, 3]]}`,
	`{"rows": [[1., 2, 3]]}`,
	`{"rows": [[1, 2, 3]]} {}`,
	`{"rows": [[0.1, 0.2, 0.30000000000000004]], "outputs": null}`,
	`{"rows": [[999999999999999, -123456789012345, 1234567890123456], [9007199254740993, -0, -7]]}`,
	`{"rows": [[100000000000000000000000, 0e0, 7E2], [-999, 0.0, 12e-1]]}`,
	`{"rows": [[-01, 2, 3]]}`,
	`{"rows": [[-, 2, 3]]}`,
	`{"rows": [[12e, 2, 3]]}`,
	`{"rows": [[1, 2, 3-]]}`,
}

// FuzzDecoders: the v1 and v2 request decoders never panic; they either
// refuse the body with a 400 or 413 *httpError, or return n >= 1 rows (at
// most maxRows) of d finite values; the fast decoders, when they accept a
// body, return bit for bit what the encoding/json decoders do (which
// therefore accept it too), so the server's accept/reject decisions and
// values are encoding/json's.
func FuzzDecoders(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	const d, maxRows = 3, 50
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(which string, x []float64, n int, err error) {
			if err != nil {
				var he *httpError
				if !errors.As(err, &he) || (he.code != http.StatusBadRequest && he.code != http.StatusRequestEntityTooLarge) || he.msg == "" {
					t.Fatalf("%s: error %v is not a 400/413 with a message", which, err)
				}
				return
			}
			if n < 1 || n > maxRows || len(x) != n*d {
				t.Fatalf("%s: %d rows, %d values for d = %d", which, n, len(x), d)
			}
			for i, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: value %d is %g", which, i, v)
				}
			}
		}
		x, n, outputs, proba, err := decodeV1(body, d, maxRows)
		check("v1", x, n, err)
		if fx, fn, fout, fproba, ok := fastV1(body, d, maxRows, make([]float64, 0, 2)); ok {
			if err != nil || fn != n || fout != outputs || fproba != proba || !sameBits(fx[:fn*d], x) {
				t.Fatalf("fast v1: %d rows %v outputs %v probabilities %v; encoding/json: %d rows %v outputs %v probabilities %v err %v", fn, fx, fout, fproba, n, x, outputs, proba, err)
			}
		}
		c, err := decodeV2(body, d, maxRows)
		if err == nil {
			if !c.binary() {
				check("v2", c.x, c.n, nil)
			}
			if !c.predictions && !c.outputs && !c.proba {
				t.Fatal("v2: no output selected")
			}
		} else {
			check("v2", nil, 0, err)
		}
		var fc v2Call
		if fastV2(body, d, maxRows, &fc) {
			if err != nil {
				t.Fatalf("fast v2 accepts what encoding/json refuses (%v): %+v", err, fc)
			}
			if !sameCall(&fc, c) {
				t.Fatalf("fast v2 %+v, encoding/json %+v", fc, *c)
			}
		}
	})
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// sameCall compares two decoded calls; the data of a binary input are not
// read yet (both have room for n x d values).
func sameCall(a, b *v2Call) bool {
	if !bytes.Equal(a.id, b.id) || a.n != b.n || a.fp32 != b.fp32 || a.binSize != b.binSize ||
		a.predictions != b.predictions || a.outputs != b.outputs || a.proba != b.proba ||
		a.predictions && a.binPred != b.binPred || a.outputs && a.binOuts != b.binOuts || a.proba && a.binProba != b.binProba {
		return false
	}
	if a.binary() {
		return len(a.x) == len(b.x)
	}
	return sameBits(a.x, b.x)
}

// The fast decoders take the bodies clients send (integers, decimals,
// exponents, white space, keys in any order and case, unknown v2 fields,
// binary parameters) and leave the rest to encoding/json; whatever they
// accept decodes as encoding/json decodes it.
func TestFastDecoders(t *testing.T) {
	for body, want := range map[string]bool{
		`{"rows": [[1, 2, 3]]}`: true,
		` {"outputs":true , "rows":[ [0,255,-0] ,[1.5e3,-2E-2,12]] } `: true,
		`{"rows": [[1e-320, 1.7976931348623157e308, -7]]}`:             true,
		`{"Rows": [[1, 2, 3]]}`:                                        true, // encoding/json folds case
		`{"rows": [[1, 2, 3]], "probabilities": true}`:                 true,
		`{"probabilities": 1, "rows": [[1, 2, 3]]}`:                    false, // not a boolean
		`{"rows": [[1, 2, 3]], "rows": [[4, 5, 6]]}`:                   false, // duplicate key
		`{"rows": [[1, 2]]}`:                                           false, // short row
		`{"rows": [[1, 2, 3e999]]}`:                                    false, // out of range
		`{"rows": [[01, 2, 3]]}`:                                       false, // not JSON
		`{"rows": [[999999999999999, -123456789012345, -0]]}`:          true,  // integers converted as scanned
		`{"rows": [[9007199254740993, -1234567890123456, 1e2]]}`:       true,  // more digits: ParseFloat rounds
		`{"rows": [[-01, 2, 3]]}`:                                      false, // not JSON
		`{"rows": [[1, null, 3]]}`:                                     false, // null
		`{"rows": []}`:                                                 false,
		`{"rows": [[1, 2, 3]]} x`:                                      false,
		`{"rows": [[1, 2, 3], [1, 2, 3], [1, 2, 3]]}`:                  false, // more than maxRows = 2
	} {
		x, n, _, proba, ok := fastV1([]byte(body), 3, 2, nil)
		if ok != want {
			t.Errorf("v1 %s: ok %v, want %v", body, ok, want)
			continue
		}
		if !ok {
			continue
		}
		wx, wn, _, wproba, err := decodeV1([]byte(body), 3, 2)
		if err != nil || wn != n || !sameBits(wx, x) || wproba != proba {
			t.Errorf("v1 %s: fast %v (%d rows), encoding/json %v (%d rows, %v)", body, x, n, wx, wn, err)
		}
	}
	for body, want := range map[string]bool{
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]}]}`:                                                                            true,
		`{"id": "r-1", "inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]}]}`:                                                           true,
		`{"inputs": [{"data": [0.5, 1, 2], "shape": [1, 3], "datatype": "FP64", "name": "x"}], "outputs": [{"name": "outputs"}]}`:                                                 true,
		`{"Inputs": [{"NAME": "x", "DataType": "FP64", "shape": [1, 3], "data": [1, 2, 3], "extra": {"a": [1, "b", null, true]}}], "m": "m"}`:                                     true,
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "parameters": {"binary_data_size": 24}}], "parameters": {"binary_data_output": true}}`:                    true,
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "predictions", "parameters": {"binary_data": true, "n": 1}}]}`:  true,
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "probabilities", "parameters": {"binary_data": true}}]}`:        true,
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "outputs": [{"name": "probabilities"}], "parameters": {"binary_data_output": true}}`: true,
		`{"id": "q<1>", "inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`:                                                                       false, // id escaped by json.Marshal
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}], "inputs": []}`:                                                                       false, // duplicate key
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [[1, 2], [3]]}]}`:                                                                                 false,
		`{"inputs": [{"name": "x", "datatype": "INT8", "shape": [1, 3], "data": [1, 2, 3]}]}`:                                                                                     false,
		`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 1e39, 3]}]}`:                                                                                  false, // not a finite float32
	} {
		var c v2Call
		ok := fastV2([]byte(body), 3, 2, &c)
		if ok != want {
			t.Errorf("v2 %s: ok %v, want %v", body, ok, want)
			continue
		}
		if !ok {
			continue
		}
		wc, err := decodeV2([]byte(body), 3, 2)
		if err != nil || !sameCall(&c, wc) {
			t.Errorf("v2 %s: fast %+v, encoding/json %+v (%v)", body, c, wc, err)
		}
	}
}

// The fast decoders allocate nothing once the caller's block has room for
// the rows (the server keeps the blocks in a pool).
func TestFastDecodersAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const d = 784
	rows := make([][]float64, 2)
	for i := range rows {
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			rows[i][j] = float64((i*7+j)%256) / 3
		}
	}
	v1, _ := json.Marshal(map[string]any{"rows": rows, "outputs": true})
	v2, _ := json.Marshal(map[string]any{"id": "r1", "inputs": []any{map[string]any{"name": "x", "datatype": "FP32", "shape": []int{2, d}, "data": rows}},
		"outputs": []any{map[string]any{"name": "outputs", "parameters": map[string]any{"binary_data": true}}}})
	x := make([]float64, 0, 2*d)
	if a := testing.AllocsPerRun(20, func() {
		var ok bool
		if x, _, _, _, ok = fastV1(v1, d, 10, x); !ok {
			t.Fatal("v1 declined")
		}
	}); a != 0 {
		t.Errorf("fastV1: %v allocations per body", a)
	}
	c := v2Call{x: x}
	if a := testing.AllocsPerRun(20, func() {
		if !fastV2(v2, d, 10, &c) {
			t.Fatal("v2 declined")
		}
	}); a != 0 {
		t.Errorf("fastV2: %v allocations per body", a)
	}
}

// FuzzDecodeBinary: a v2 body with any Inference-Header-Content-Length
// value decodes into n x d finite values or is refused with a 400/413
// *httpError; it never panics.
func FuzzDecodeBinary(f *testing.F) {
	hdr := `{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "parameters": {"binary_data_size": 12}}]}`
	f.Add([]byte(hdr+"\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40"), "103")
	f.Add([]byte(hdr+"\x00\x00\x80\x7f\x00\x00\x00\x40\x00\x00\x40\x40"), "103")
	f.Add([]byte(hdr), "103")
	f.Add([]byte(`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`), "")
	f.Add([]byte(hdr), "-5")
	s := &Server{opts: Options{MaxRows: 50}}
	m := &model{d: 3, k: 2}
	f.Fuzz(func(t *testing.T, body []byte, hlen string) {
		h := http.Header{}
		if hlen != "" {
			h.Set(headerLength, hlen)
		}
		sc := &scratch{body: body}
		c, err := s.decodeInfer(h, sc, m)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || (he.code != http.StatusBadRequest && he.code != http.StatusRequestEntityTooLarge) || he.msg == "" {
				t.Fatalf("error %v is not a 400/413 with a message", err)
			}
			return
		}
		if c.n < 1 || c.n > 50 || len(c.x) != 3*c.n {
			t.Fatalf("%d rows, %d values", c.n, len(c.x))
		}
		if i := nonFinite(c.x, false); i >= 0 {
			t.Fatalf("value %d is %g", i, c.x[i])
		}
	})
}

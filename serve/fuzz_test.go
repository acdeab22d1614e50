package serve

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"
)

// FuzzDecoders: the v1 and v2 request decoders never panic; they either
// refuse the body with a 400 or 413 *httpError, or return n >= 1 rows (at
// most maxRows) of d finite values; the fast v1 parser, when it accepts a
// body, returns bit for bit what encoding/json does.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"rows": [[1, 2, 3]]}`,
		`{"rows": [[1, 2, 3], [4, 5, 6]], "outputs": true}`,
		`{"rows": [[1e308, -1e-308, 0]]}`,
		`{"rows": []}`,
		`{"rows": [[1, 2]]}`,
		`{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 3], "data": [1, 2, 3]}]}`,
		`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]}], "outputs": [{"name": "outputs"}]}`,
		`{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3], "data": [1, 1e39, 3]}]}`,
		`{"id": "a", "inputs": [{"name": "x", "datatype": "FP64", "shape": [9223372036854775807, 3], "data": []}]}`,
		`{"inputs": [{"shape": [-1, 3]}]}`,
		`[`, ``, `null`, `{"rows": null}`,
		` {"outputs":false , "rows":[ [0,255,-0] ,[1.5e3,-2E-2,12]] } `,
		`{"rows": [[1, 2, 3]], "rows": [[4, 5, 6]]}`,
		`{"Rows": [[1, 2, 3]]}`,
		`{"rows": [[01, 2, 3]]}`,
		`{"rows": [[1., 2, 3]]}`,
		`{"rows": [[0.1, 0.2, 0.30000000000000004]], "outputs": null}`,
	} {
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
		x, n, outputs, err := decodeV1(body, d, maxRows)
		check("v1", x, n, err)
		// The fast path agrees with encoding/json whenever it accepts a body.
		if fx, fn, fout, ok := fastV1(body, d, maxRows); ok {
			if err != nil || fn != n || fout != outputs || len(fx) != len(x) {
				t.Fatalf("fast path: %d rows %v outputs %v; encoding/json: %d rows %v outputs %v err %v", fn, fx, fout, n, x, outputs, err)
			}
			for i := range fx {
				if math.Float64bits(fx[i]) != math.Float64bits(x[i]) {
					t.Fatalf("fast path value %d = %v, encoding/json %v", i, fx[i], x[i])
				}
			}
		}
		c, err := decodeV2(body, d, maxRows)
		if err == nil {
			check("v2", c.x, c.n, nil)
			if !c.predictions && !c.outputs {
				t.Fatal("v2: no output selected")
			}
		} else {
			check("v2", nil, 0, err)
		}
	})
}

// The fast path takes the bodies clients send (integers, decimals,
// exponents, white space, both keys in any order) and leaves the rest to
// encoding/json.
func TestFastV1(t *testing.T) {
	for body, want := range map[string]bool{
		`{"rows": [[1, 2, 3]]}`: true,
		` {"outputs":true , "rows":[ [0,255,-0] ,[1.5e3,-2E-2,12]] } `: true,
		`{"rows": [[1e-320, 1.7976931348623157e308, -7]]}`:             true,
		`{"rows": [[1, 2, 3]], "rows": [[4, 5, 6]]}`:                   false, // duplicate key
		`{"Rows": [[1, 2, 3]]}`:                                        false, // case-folded key
		`{"rows": [[1, 2]]}`:                                           false, // short row
		`{"rows": [[1, 2, 3e999]]}`:                                    false, // out of range
		`{"rows": [[01, 2, 3]]}`:                                       false, // not JSON
		`{"rows": []}`:                                                 false,
		`{"rows": [[1, 2, 3]]} x`:                                      false,
		`{"rows": [[1, 2, 3], [1, 2, 3], [1, 2, 3]]}`:                  false, // more than maxRows = 2
	} {
		x, n, _, ok := fastV1([]byte(body), 3, 2)
		if ok != want {
			t.Errorf("%s: ok %v, want %v", body, ok, want)
			continue
		}
		if !ok {
			continue
		}
		wx, wn, _, err := decodeV1([]byte(body), 3, 2)
		if err != nil || wn != n || fmt.Sprint(wx) != fmt.Sprint(x) {
			t.Errorf("%s: fast %v (%d rows), encoding/json %v (%d rows, %v)", body, x, n, wx, wn, err)
		}
	}
}

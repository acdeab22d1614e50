package serve

import (
	"errors"
	"math"
	"net/http"
	"testing"
)

// FuzzDecoders: the v1 and v2 request decoders never panic; they either
// refuse the body with a 400 or 413 *httpError, or return n >= 1 rows (at
// most maxRows) of d finite values.
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
		x, n, _, err := decodeV1(body, d, maxRows)
		check("v1", x, n, err)
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

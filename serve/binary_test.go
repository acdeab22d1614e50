package serve

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// binaryBody is a v2 infer request with the rows of x as binary data of
// datatype dt (FP32 or FP64) after the JSON; extra goes into the JSON
// object (e.g. `, "parameters": {...}`).
func binaryBody(x *mat.Dense, dt, extra string) (string, int) {
	n, d := x.Dims()
	es := 8
	if dt == "FP32" {
		es = 4
	}
	hdr := fmt.Sprintf(`{"inputs": [{"name": "x", "datatype": %q, "shape": [%d, %d], "parameters": {"binary_data_size": %d}}]%s}`, dt, n, d, n*d*es, extra)
	b := []byte(hdr)
	for _, v := range x.RawMatrix().Data {
		if es == 4 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return string(b), len(hdr)
}

// doHeader posts body with the header Inference-Header-Content-Length
// (none when hlen < 0) and returns the status, the body and the response.
func doHeader(t testing.TB, url, body string, hlen string) (int, []byte, *http.Response) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if hlen != "" {
		req.Header.Set(headerLength, hlen)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp
}

type v2Tensor2 struct {
	Name       string
	Datatype   string
	Shape      []int
	Data       []float64
	Parameters map[string]int
}

// splitAnswer parses an infer answer, JSON or binary, into its tensors,
// the binary ones decoded into Data.
func splitAnswer(t *testing.T, b []byte, resp *http.Response) []v2Tensor2 {
	t.Helper()
	hdr := b
	var tail []byte
	if h := resp.Header.Get(headerLength); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n > len(b) {
			t.Fatalf("answer header %s = %q for %d bytes", headerLength, h, len(b))
		}
		hdr, tail = b[:n], b[n:]
		if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("binary answer with Content-Type %q", ct)
		}
	}
	var a struct{ Outputs []v2Tensor2 }
	if err := json.Unmarshal(hdr, &a); err != nil {
		t.Fatalf("answer %q: %v", hdr, err)
	}
	for i, o := range a.Outputs {
		size, ok := o.Parameters["binary_data_size"]
		if !ok {
			continue
		}
		if size > len(tail) {
			t.Fatalf("output %s: binary_data_size %d, %d bytes left", o.Name, size, len(tail))
		}
		for j := 0; j < size; {
			if o.Datatype == "FP32" {
				a.Outputs[i].Data = append(a.Outputs[i].Data, float64(math.Float32frombits(binary.LittleEndian.Uint32(tail[j:]))))
				j += 4
			} else {
				a.Outputs[i].Data = append(a.Outputs[i].Data, math.Float64frombits(binary.LittleEndian.Uint64(tail[j:])))
				j += 8
			}
		}
		tail = tail[size:]
	}
	if len(tail) != 0 {
		t.Errorf("%d bytes after the binary outputs", len(tail))
	}
	return a.Outputs
}

// The binary tensor data extension: FP64 and FP32 inputs sent as binary
// data, answered in JSON, as binary data (binary_data_output) or one output
// of each (binary_data per output), give exactly the JSON path's answers.
func TestBinaryRoundTrip(t *testing.T) {
	p := testModels(t)["falkon"]
	_, ts, _ := newTestServer(t, p, Options{})
	url := ts.URL + "/v2/models/model/infer"
	if code, body, _ := do(t, "GET", ts.URL+"/v2", ""); code != 200 || !strings.Contains(body, `"binary_tensor_data"`) {
		t.Errorf("server metadata does not advertise binary_tensor_data: %d %s", code, body)
	}
	xt, _ := synth(5, 4, 17)
	for _, dt := range []string{"FP64", "FP32"} {
		flat, _ := json.Marshal(xt.RawMatrix().Data)
		code, jb, jresp := doHeader(t, url, `{"inputs": [{"name": "x", "datatype": "`+dt+`", "shape": [5, 4], "data": `+string(flat)+`}]}`, "")
		if code != 200 {
			t.Fatalf("%s JSON: %d %s", dt, code, jb)
		}
		wantOut := splitAnswer(t, jb, jresp)
		for _, extra := range []string{
			"",
			`, "parameters": {"binary_data_output": true}`,
			`, "outputs": [{"name": "outputs", "parameters": {"binary_data": true}}, {"name": "predictions"}]`,
			`, "parameters": {"binary_data_output": true}, "outputs": [{"name": "predictions", "parameters": {"binary_data": false}}, {"name": "outputs"}]`,
		} {
			body, hlen := binaryBody(xt, dt, extra)
			code, b, resp := doHeader(t, url, body, strconv.Itoa(hlen))
			if code != 200 {
				t.Fatalf("%s binary %q: %d %s", dt, extra, code, b)
			}
			got := splitAnswer(t, b, resp)
			binary := strings.Contains(extra, "true")
			if binary != (resp.Header.Get(headerLength) != "") {
				t.Errorf("%s %q: binary answer %v, header %q", dt, extra, binary, resp.Header.Get(headerLength))
			}
			if len(got) != 2 {
				t.Fatalf("%s %q: %d outputs", dt, extra, len(got))
			}
			for i, o := range got {
				w := wantOut[i]
				if o.Name != w.Name || o.Datatype != dt || fmt.Sprint(o.Shape) != fmt.Sprint(w.Shape) || !sameValues(o.Data, w.Data, dt) {
					t.Errorf("%s %q: output %+v, JSON path %+v", dt, extra, o, w)
				}
			}
		}
	}
}

// sameValues compares answers exactly, as float32 for FP32 (JSON writes
// the shortest decimal of the float32).
func sameValues(a, b []float64, dt string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && (dt != "FP32" || float32(a[i]) != float32(b[i])) {
			return false
		}
	}
	return true
}

// Malformed binary requests are 400s that say what is wrong, never a panic
// or a 500; nor is any truncation or header length of a good request.
func TestBinaryErrors(t *testing.T) {
	p := testModels(t)["krr"]
	s, ts, _ := newTestServer(t, p, Options{})
	url := ts.URL + "/v2/models/model/infer"
	xt, _ := synth(2, 4, 3)
	good, hlen := binaryBody(xt, "FP64", "")
	hdr := good[:hlen]
	nan := []byte(good)
	binary.LittleEndian.PutUint64(nan[hlen+8:], math.Float64bits(math.NaN()))
	h := strconv.Itoa(hlen)
	for _, c := range []struct {
		name, body, hlen, msg string
	}{
		{"not a number", good, "12x", `Inference-Header-Content-Length is "12x"`},
		{"negative", good, "-1", `is "-1"`},
		{"past the body", good, strconv.Itoa(len(good) + 1), "the body has only"},
		{"no header", good, "", "malformed JSON"},
		{"header only, no header length", hdr, "", "no Inference-Header-Content-Length header"},
		{"short data", good[:len(good)-3], h, "61 bytes follow the JSON, binary_data_size says 64"},
		{"long data", good + "xyz", h, "67 bytes follow the JSON"},
		{"length cuts the JSON", good, strconv.Itoa(hlen - 1), "malformed JSON"},
		{"size against shape", strings.Replace(good, `"binary_data_size": 64`, `"binary_data_size": 56`, 1), strconv.Itoa(hlen), "shape [2, 4] of FP64 needs 64"},
		{"negative size", strings.Replace(hdr, `"binary_data_size": 64`, `"binary_data_size": -6`, 1), h, `"binary_data_size" is -6`},
		{"size a string", strings.Replace(hdr, `"binary_data_size": 64`, `"binary_data_size": "6"`, 1), strconv.Itoa(hlen + 1), `"binary_data_size" is "6"`},
		{"data and size", strings.Replace(hdr, `"parameters"`, `"data": [1,2,3,4,5,6,7,8], "parameters"`, 1), "", `both "data" and parameters.binary_data_size`},
		{"bytes but no binary input", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1,2,3,4]}]}abc`, "83", "3 bytes follow the JSON"},
		{"non-finite", string(nan), h, "row 0, column 1 is not a finite FP64"},
		{"parameters not an object", strings.Replace(hdr, `{"binary_data_size": 64}`, `[64]`, 1), "", "parameters must be a JSON object"},
		{"binary_data not a bool", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1,2,3,4]}], "outputs": [{"name": "outputs", "parameters": {"binary_data": 1}}]}`, "", `"binary_data" is 1; want true or false`},
	} {
		code, b, _ := doHeader(t, url, c.body, c.hlen)
		var e struct{ Error string }
		_ = json.Unmarshal(b, &e)
		if code != 400 || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s: %d %s, want 400 with %q", c.name, code, b, c.msg)
		}
	}
	// Two header lines.
	req, _ := http.NewRequest("POST", url, strings.NewReader(good))
	req.Header.Add(headerLength, h)
	req.Header.Add(headerLength, h)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("two %s headers: %d", headerLength, resp.StatusCode)
	}
	// Every cut of the body and every header length: 200 or 400.
	for cut := 0; cut <= len(good); cut += 7 {
		for _, l := range []int{0, 1, hlen - 1, hlen, hlen + 1, cut, len(good)} {
			code, b, _ := doHeader(t, url, good[:cut], strconv.Itoa(l))
			if code != 200 && code != 400 {
				t.Fatalf("cut %d, header length %d: %d %s", cut, l, code, b)
			}
		}
	}
	if got := counter(t, s, "zonal_serve_panics_total"); got != 0 {
		t.Errorf("%g panics", got)
	}
}

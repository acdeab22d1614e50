package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// specRoute is the operation of the published REST specification
// (oip/open_inference_rest.yaml, unchanged) for method and a path of the
// versioned routes. The specification writes its path parameters as
// ${MODEL_NAME} and the server metadata path as /v2/; the test maps the
// server's paths onto those spellings.
func specRoute(t *testing.T, doc *openapi3.T, method, path string) (*routers.Route, map[string]string) {
	t.Helper()
	parts := strings.Split(strings.Trim(path, "/"), "/")
	params := map[string]string{}
	key := path
	if len(parts) >= 5 && parts[1] == "models" && parts[3] == "versions" {
		params["MODEL_NAME"], params["MODEL_VERSION"] = parts[2], parts[4]
		key = "/v2/models/${MODEL_NAME}/versions/${MODEL_VERSION}" + strings.Join(append([]string{""}, parts[5:]...), "/")
	}
	if path == "/v2" {
		key = "/v2/"
	}
	item := doc.Paths.Value(key)
	if item == nil {
		t.Fatalf("the specification has no path %s (for %s)", key, path)
	}
	op := item.GetOperation(method)
	if op == nil {
		t.Fatalf("the specification has no %s %s", method, key)
	}
	return &routers.Route{Spec: doc, Path: key, PathItem: item, Method: method, Operation: op}, params
}

// The REST requests of the test suite's v2 cases and the server's answers
// to them (success and errors) are valid under the published OpenAPI
// specification of the protocol, checked by kin-openapi's openapi3filter.
// Routes the specification does not describe (unversioned paths, the
// binary extension) are not checked here.
func TestOpenAPISpec(t *testing.T) {
	spec, err := os.ReadFile("oip/open_inference_rest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the specification does not validate: %v", err)
	}
	p := testModels(t)["falkon"]
	s, err := New(p, Options{Name: "digits", Version: "3", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const infer = "/v2/models/digits/versions/3/infer"
	x := `[0.5, -1, 2, 3.25, 1, 1, 1, 1]`
	cases := []struct {
		method, path, body string
		code               int
		validRequest       bool // the request itself is valid under the specification
	}{
		{"GET", "/v2/health/live", "", 200, true},
		{"GET", "/v2/health/ready", "", 200, true},
		{"GET", "/v2", "", 200, true},
		{"GET", "/v2/models/digits/versions/3", "", 200, true},
		{"GET", "/v2/models/digits/versions/3/ready", "", 200, true},
		{"POST", infer, `{"id": "q1", "inputs": [{"name": "x", "datatype": "FP64", "shape": [2, 4], "data": ` + x + `}]}`, 200, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 4], "data": [[1, 2, 3, 4], [5, 6, 7, 8]]}], "outputs": [{"name": "outputs"}], "parameters": {"p": 1}}`, 200, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1, 2, 3, 4]}], "outputs": [{"name": "predictions"}]}`, 200, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "INT32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}`, 400, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 5], "data": [1, 2, 3, 4, 5]}]}`, 400, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [2, 4], "data": [1, 2, 3, 4]}]}`, 400, true},
		{"POST", infer, `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1, 2, 3, 4]}], "outputs": [{"name": "probs"}]}`, 400, true},
		{"POST", infer, `{"inputs": [{"name": "a"}, {"name": "b"}]}`, 400, false},
		{"POST", infer, `{"inputs": [`, 400, false},
	}
	ctx := context.Background()
	opts := &openapi3filter.Options{IncludeResponseStatus: true}
	for _, c := range cases {
		name := fmt.Sprintf("%s %s %.40s", c.method, c.path, c.body)
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params := specRoute(t, doc, c.method, c.path)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		err := openapi3filter.ValidateRequest(ctx, in)
		if c.validRequest && err != nil {
			t.Errorf("%s: the request is invalid under the specification: %v", name, err)
		}
		if !c.validRequest && err == nil {
			t.Errorf("%s: the specification takes a request the test calls invalid", name)
		}
		// The validation read the body: give it to the server again.
		req.Body = io.NopCloser(strings.NewReader(c.body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != c.code {
			t.Errorf("%s: status %d, want %d (%s)", name, w.Code, c.code, w.Body.String())
			continue
		}
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: w.Code, Header: w.Header(), Options: opts}
		rin.SetBodyBytes(bytes.Clone(w.Body.Bytes()))
		if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
			t.Errorf("%s: answer %d %s is invalid under the specification: %v", name, w.Code, w.Body.String(), err)
		}
	}
	// The check can fail: an answer without model_name, a tensor without
	// data, is refused.
	req := httptest.NewRequest("POST", infer, strings.NewReader(cases[5].body))
	req.Header.Set("Content-Type", "application/json")
	route, params := specRoute(t, doc, "POST", infer)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	for _, bad := range []string{`{"outputs": []}`, `{"model_name": "m", "outputs": [{"name": "p", "datatype": "FP64", "shape": [1]}]}`} {
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"application/json"}}, Options: opts}
		rin.SetBodyBytes([]byte(bad))
		if err := openapi3filter.ValidateResponse(ctx, rin); err == nil {
			t.Errorf("the invalid answer %s passes", bad)
		}
	}
}

package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A body of unknown length (chunked) is read whole when within
// MaxBodyBytes and refused with 413 above it, as one with a
// Content-Length is; the pooled buffers then serve the next requests.
func TestChunkedBody(t *testing.T) {
	p := testModels(t)["krr"]
	_, ts, _ := newTestServer(t, p, Options{MaxBodyBytes: 5000})
	post := func(body string) (int, string) {
		// io.MultiReader hides the length: the client sends the body chunked.
		req, err := http.NewRequest("POST", ts.URL+"/v1/predict", io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != 0 {
			t.Fatalf("the request has Content-Length %d: it would not be chunked", req.ContentLength)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	long := `{"rows": [[1, 2, 3, 4]], "outputs": false` + strings.Repeat(" ", 4000) + `}`
	for i := 0; i < 3; i++ {
		if code, b := post(long); code != 200 || !strings.Contains(b, `"predictions"`) {
			t.Fatalf("chunked body of %d bytes: %d %s", len(long), code, b)
		}
		if code, b := post(long + strings.Repeat(" ", 1000)); code != 413 || !strings.Contains(b, "limit of 5000 bytes") {
			t.Errorf("chunked body over the limit: %d %s", code, b)
		}
	}
}

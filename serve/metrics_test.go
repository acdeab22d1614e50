package serve

import (
	"slices"
	"strings"
	"testing"
)

// The server's series, by name: the list users build dashboards on (a
// rename must change this test and the package documentation). The three
// latency histograms are labelled by route and protocol, with buckets from
// 25 µs to 10 s, and see every prediction request.
func TestMetricNames(t *testing.T) {
	p := testModels(t)["krr"]
	s, ts, _ := newTestServer(t, p, Options{})
	do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3, 4]]}`)
	do(t, "POST", ts.URL+"/v1/predict", `{"rows": [[1, 2, 3, 4], [5, 6, 7, 8]]}`)
	do(t, "POST", ts.URL+"/v2/models/model/infer", `{"inputs": [{"name": "x", "datatype": "FP64", "shape": [1, 4], "data": [1, 2, 3, 4]}]}`)
	fams, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fams {
		if n := f.GetName(); strings.HasPrefix(n, "zonal_") {
			names = append(names, n)
		}
		switch f.GetName() {
		case "zonal_request_duration_seconds", "zonal_queue_duration_seconds", "zonal_compute_duration_seconds":
			for _, m := range f.GetMetric() {
				if !hasLabel(m, "protocol", "http") {
					t.Errorf("%s: series without protocol=http: %v", f.GetName(), m.GetLabel())
				}
				var b []float64
				for _, bk := range m.GetHistogram().GetBucket() {
					b = append(b, bk.GetUpperBound())
				}
				if len(b) == 0 || b[0] != 25e-6 || b[len(b)-1] != 10 {
					t.Errorf("%s: buckets %v, want 25 µs to 10 s", f.GetName(), b)
				}
			}
		}
	}
	want := []string{
		"zonal_compute_duration_seconds",
		"zonal_queue_duration_seconds",
		"zonal_request_duration_seconds",
		"zonal_serve_batch_rows",
		"zonal_serve_in_flight_requests",
		"zonal_serve_model_info",
		"zonal_serve_model_input_dim",
		"zonal_serve_model_load_timestamp_seconds",
		"zonal_serve_model_outputs",
		"zonal_serve_panics_total",
		"zonal_serve_rejected_total",
		"zonal_serve_reloads_total",
		"zonal_serve_requests_total",
		"zonal_serve_rows_predicted_total",
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("series %v,\nwant %v", names, want)
	}
	for _, name := range []string{"zonal_request_duration_seconds", "zonal_queue_duration_seconds", "zonal_compute_duration_seconds"} {
		if got := metric(t, s, name, "route", "/v1/predict"); got != 2 {
			t.Errorf("%s{route=/v1/predict}: %g observations, want 2", name, got)
		}
		if got := metric(t, s, name, "route", "/v2/models/{name}/infer"); got != 1 {
			t.Errorf("%s{route=/v2/models/{name}/infer}: %g observations, want 1", name, got)
		}
	}
}

package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t testing.TB, method, path string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, path, nil)
}

// metric sums the values of the series of name whose label key has value
// (any series when key is "").
func metric(t testing.TB, s *Server, name, key, value string) float64 {
	t.Helper()
	fams, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if key != "" && !hasLabel(m, key, value) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

func hasLabel(m *dto.Metric, key, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == key && l.GetValue() == value {
			return true
		}
	}
	return false
}

func counter(t testing.TB, s *Server, name string) float64 { return metric(t, s, name, "", "") }
func gauge(t testing.TB, s *Server, name string) float64   { return metric(t, s, name, "", "") }
func counterWith(t testing.TB, s *Server, name, key, value string) float64 {
	return metric(t, s, name, key, value)
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

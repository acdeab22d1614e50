package serve_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/serve/oip"
	"github.com/zonal-ml/zonal/solvers"
)

// The v2 model metadata of a model whose file records training weights
// carries them as properties, over REST and gRPC alike; an unweighted
// model's metadata has none.
func TestModelMetadataWeights(t *testing.T) {
	plain := falkonModel(t, 1)
	weighted, err := plain.WithWeights(&solvers.TrainingWeights{Sum: 75.5, Rows: 140, ClassFactors: []float64{1, 2.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"weight_sum": "75.5", "weighted_rows": "140", "class_weights": "0:1,1:2.5,2:0.5"}
	for name, c := range map[string]struct {
		p    *solvers.Pipeline
		want map[string]string
	}{"weighted": {weighted, want}, "unweighted": {plain, nil}} {
		r := start(t, c.p, serve.Options{})
		md, err := r.client.ModelMetadata(context.Background(), &oip.ModelMetadataRequest{Name: "model"})
		if err != nil {
			t.Fatal(err)
		}
		if got := md.GetProperties(); !maps.Equal(got, c.want) {
			t.Errorf("%s: gRPC properties %v, want %v", name, got, c.want)
		}
		resp, err := http.Get(r.http.URL + "/v2/models/model")
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Properties map[string]string `json:"properties"`
		}
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: GET /v2/models/model: %d %v", name, resp.StatusCode, err)
		}
		if !maps.Equal(meta.Properties, c.want) {
			t.Errorf("%s: REST properties %v, want %v", name, meta.Properties, c.want)
		}
	}
}

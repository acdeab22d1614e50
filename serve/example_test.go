package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/solvers"
)

// Mount the prediction handler under /ml/ in your own mux, next to your own
// routes. A real service would read the model with solvers.Load and run
// srv.HTTPServer(addr) or its own http.Server with timeouts.
func Example_mount() {
	// A tiny regression model: exact KRR on y = x1 + x2 at four points.
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	y := mat.NewDense(4, 1, []float64{0, 1, 1, 2})
	k, _ := kernels.NewGaussian(1)
	m, err := solvers.FitKRR(context.Background(), k, x, y, 1e-9, solvers.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	model, _ := solvers.NewPipeline(nil, solvers.Encoding{Task: solvers.TaskRegression}, m)

	srv, err := serve.New(model, serve.Options{Name: "sum", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/ml/", http.StripPrefix("/ml", srv))
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi\n") })

	ts := httptest.NewServer(mux)
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/ml/v1/predict", "application/json", strings.NewReader(`{"rows": [[1, 0], [1, 1]]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var out struct{ Predictions []float64 }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d %.6f %.6f\n", resp.StatusCode, out.Predictions[0], out.Predictions[1])
	// Output:
	// 200 1.000000 2.000000
}

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// mapSpec is everything a feature-map builder may need; builders ignore the
// fields that do not concern them.
type mapSpec struct {
	Method   string         // builder name, e.g. "gegenbauer"
	Kernel   kernels.Kernel // the kernel the map approximates
	KernelID string         // "gaussian", "polynomial", ...
	Sigma    float64        // Gaussian/Laplacian bandwidth
	Gamma    float64        // polynomial scale
	Coef0    float64        // polynomial offset
	Degree   int            // polynomial degree
	Features int            // target number of features D
	Lambda   float64        // ridge parameter, for leverage-score methods
	Seed     uint64
	Backend  backend.Backend
	// Gegenbauer holds the truncation of the Gegenbauer maps (`zonal
	// approx` -q, -s, -tol, -radius; zero values: automatic).
	Gegenbauer gegenbauerTruncation
}

// gegenbauerTruncation is the (q, s) truncation of the Gegenbauer maps: q
// and s themselves, or the error tolerance and data radius they follow from.
type gegenbauerTruncation struct {
	Q, S   int
	Tol    float64
	Radius float64
}

// mapBuilder builds a feature map from training rows.
type mapBuilder func(ctx context.Context, spec mapSpec, train mat.Matrix) (kernels.FeatureMap, error)

var mapBuilders = map[string]mapBuilder{}

// addMapBuilder registers a -map / -methods name; each package's builders
// live in their own file of this command and register from init.
func addMapBuilder(name string, b mapBuilder) {
	if _, dup := mapBuilders[name]; dup {
		panic("zonal: duplicate map builder " + name)
	}
	mapBuilders[name] = b
}

func mapNames() string {
	names := make([]string, 0, len(mapBuilders))
	for n := range mapBuilders {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// buildMap builds the map named by spec.Method.
func buildMap(ctx context.Context, spec mapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	b, ok := mapBuilders[spec.Method]
	if !ok {
		return nil, fmt.Errorf("unknown feature map %q; available: %s", spec.Method, mapNames())
	}
	return b(ctx, spec, train)
}

package estimator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// Map names a feature map for MethodRidge (and for comparing maps): one of
// Maps(). The zero value is MapNystrom.
type Map string

// The maps every build registers (see Maps for the full list).
const (
	MapNystrom Map = "nystrom" // uniform Nystrom landmarks from the training rows
	MapFourier Map = "fourier" // random Fourier features (shift-invariant kernels)
)

func (m Map) String() string {
	if m == "" {
		return string(MapNystrom)
	}
	return string(m)
}

// ParseMap parses a registered map name (errors list them).
func ParseMap(s string) (Map, error) {
	s = strings.TrimSpace(s)
	mapsMu.RLock()
	_, ok := mapBuilders[s]
	mapsMu.RUnlock()
	if !ok {
		return "", &zonal.ParamError{Param: "Map", Value: fmt.Sprintf("%q", s), Reason: "unknown feature map; available: " + strings.Join(Maps(), ", "), Err: zonal.ErrUnknown}
	}
	return Map(s), nil
}

// MapSpec is everything a feature-map builder may need; builders ignore the
// fields that do not concern them.
type MapSpec struct {
	Map      Map            // which map
	Kernel   kernels.Kernel // the kernel the map approximates
	Features int            // target number of features D
	Lambda   float64        // ridge parameter, for the leverage-score maps
	Seed     uint64
	Backend  backend.Backend
	// Gegenbauer holds the truncation of the Gegenbauer maps (zero values:
	// automatic).
	Gegenbauer GegenbauerTruncation
}

// GegenbauerTruncation is the (q, s) truncation of the Gegenbauer maps: q
// and s themselves, or the error tolerance and data radius they follow from.
type GegenbauerTruncation struct {
	Q, S   int
	Tol    float64
	Radius float64
}

// MapBuilder builds a feature map from training rows (a *mat.Dense or a
// *dataset.CSR).
type MapBuilder func(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error)

var (
	mapsMu      sync.RWMutex
	mapBuilders = map[string]MapBuilder{}
)

// RegisterMap registers a map name and its builder; the builders of this
// package register from init. Registering a name twice is a programming
// error and panics.
func RegisterMap(name string, b MapBuilder) {
	mapsMu.Lock()
	defer mapsMu.Unlock()
	if _, dup := mapBuilders[name]; dup {
		panic("estimator: duplicate map builder " + name)
	}
	mapBuilders[name] = b
}

// Maps lists the registered map names, sorted.
func Maps() []string {
	mapsMu.RLock()
	defer mapsMu.RUnlock()
	names := make([]string, 0, len(mapBuilders))
	for n := range mapBuilders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// BuildMap builds the map named by spec.Map on the training rows.
// Errors: zonal.ErrUnknown (in a *zonal.ParamError) for an unregistered
// name, and the builder's errors.
func BuildMap(ctx context.Context, spec MapSpec, train mat.Matrix) (kernels.FeatureMap, error) {
	name := spec.Map.String()
	mapsMu.RLock()
	b, ok := mapBuilders[name]
	mapsMu.RUnlock()
	if !ok {
		_, err := ParseMap(name)
		return nil, err
	}
	if train == nil {
		return nil, fmt.Errorf("%w: %s: no training data", zonal.ErrEmpty, name)
	}
	return b(ctx, spec, train)
}

// mapIs reports whether name is one of the given variants.
func mapIs(m Map, names ...string) bool { return slices.Contains(names, m.String()) }

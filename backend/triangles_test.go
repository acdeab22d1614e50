package backend_test

import (
	"testing"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/backendtest"
)

// TestTrianglesGeneric runs the CholeskyLower and TriSolveUpper checks on
// every backend with its optional interfaces hidden (the generic path) and
// as it is (the backend's own), and checks that both backends do implement
// backend.TriangleSolver (FALKON's packed factors rely on it for speed).
func TestTrianglesGeneric(t *testing.T) {
	for name, b := range fusedBackends(t) {
		t.Run(name, func(t *testing.T) { backendtest.RunTriangles(t, b) })
	}
	for _, name := range backend.Names() {
		b, _ := backend.ByName(name)
		if _, ok := b.(backend.TriangleSolver); !ok {
			t.Errorf("backend %s does not implement TriangleSolver", name)
		}
	}
}

//go:build netlib

package backend_test

import (
	"testing"

	"github.com/zonal-ml/zonal/backend"
)

// wantDefault is the default backend of a build with the netlib tag.
const wantDefault = "netlib"

func TestBothCompiled(t *testing.T) {
	names := backend.Names()
	if len(names) != 2 || names[0] != "netlib" || names[1] != "purego" {
		t.Errorf("Names() = %v, want [netlib purego]", names)
	}
	t.Setenv(backend.EnvVar, "netlib")
	if got := backend.Default().Name(); got != "netlib" {
		t.Errorf("Default() with %s=netlib = %s", backend.EnvVar, got)
	}
}

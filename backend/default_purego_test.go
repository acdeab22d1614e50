//go:build !netlib

package backend_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// wantDefault is the default backend of a build without the netlib tag.
const wantDefault = "purego"

func TestNetlibNotCompiled(t *testing.T) {
	_, err := backend.ByName("netlib")
	if !errors.Is(err, zonal.ErrUnknown) || !strings.Contains(err.Error(), "-tags netlib") {
		t.Errorf("ByName(netlib) without the tag: err = %v, want a hint about -tags netlib", err)
	}
}

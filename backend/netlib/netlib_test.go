//go:build netlib

package netlib_test

import (
	"testing"

	"github.com/zonal-ml/zonal/backend/backendtest"
	"github.com/zonal-ml/zonal/backend/netlib"
)

func TestConformance(t *testing.T) { backendtest.Run(t, netlib.New()) }

func TestConcurrent(t *testing.T) { backendtest.Concurrent(t, netlib.New()) }

func TestThreads(t *testing.T) {
	old := netlib.Threads()
	defer netlib.SetThreads(old)
	netlib.SetThreads(1)
	if got := netlib.Threads(); got != 1 {
		t.Errorf("Threads() = %d after SetThreads(1)", got)
	}
	netlib.SetThreads(0)
	if got := netlib.Threads(); got != 1 {
		t.Errorf("Threads() = %d after SetThreads(0), want 1", got)
	}
	// Results do not depend on the thread count.
	backendtest.Concurrent(t, netlib.New())
}

package purego_test

import (
	"testing"

	"github.com/zonal-ml/zonal/backend/backendtest"
	"github.com/zonal-ml/zonal/backend/purego"
)

func TestConformance(t *testing.T) { backendtest.Run(t, purego.New()) }

func TestConcurrent(t *testing.T) { backendtest.Concurrent(t, purego.New()) }

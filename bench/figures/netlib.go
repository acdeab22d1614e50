//go:build netlib

package main

import (
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/backend/netlib"
)

const netlibBuilt = true

// setBLASThreads sets OpenBLAS's thread count when b is the netlib backend.
func setBLASThreads(b backend.Backend, n int) {
	if b.Name() == "netlib" {
		netlib.SetThreads(n)
	}
}

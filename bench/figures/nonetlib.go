//go:build !netlib

package main

import "github.com/zonal-ml/zonal/backend"

const netlibBuilt = false

func setBLASThreads(backend.Backend, int) {}

//go:build linux && netlib

package main

// netlibBuilt tells that this program was built with the netlib tag; the
// predict mode builds cmd/zonal with the same tag.
const netlibBuilt = true

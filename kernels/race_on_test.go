//go:build race

package kernels

// raceEnabled: the race detector instruments allocations and empties
// sync.Pools at random, so allocation counts mean nothing under it.
const raceEnabled = true

//go:build !race

package solvers

const raceEnabled = false

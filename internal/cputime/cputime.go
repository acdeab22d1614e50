// Package cputime reads the CPU time of the whole process, for the timings of
// the zonal command and of benchmarks: on a shared machine wall time grows
// while the process waits for a core, CPU time does not.
package cputime

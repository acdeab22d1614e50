package solvers

// UniformCenters returns the M centre rows FALKON draws by uniform
// sampling for n training rows and seed: M distinct indices of 0..n-1 from
// the PCG stream (seed, 0x9e3779b97f4a7c15), sorted. It is the one centre
// draw of the module: tune scores, and the Beam pipeline fits, the same
// centres FitFalkon uses with the same seed. M must be in [0, n].
func UniformCenters(n, M int, seed uint64) []int { return uniformCenters(n, M, seed) }
